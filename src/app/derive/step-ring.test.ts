// Tests for the StepEvent ring buffer: order, overwrite of the oldest, clearing.
// Pure data structure; no events needed.
import { describe, expect, it } from 'vitest';
import { StepRing } from './step-ring';

describe('StepRing', () => {
  it('keeps items oldest first until full', () => {
    const ring = new StepRing<number>(3);
    expect(ring.toArray()).toEqual([]);
    expect(ring.last()).toBeUndefined();
    ring.push(1);
    ring.push(2);
    expect(ring.toArray()).toEqual([1, 2]);
    expect(ring.last()).toBe(2);
    expect(ring.size).toBe(2);
  });

  it('overwrites the oldest item once full and counts every push', () => {
    const ring = new StepRing<number>(3);
    for (let i = 1; i <= 7; i++) ring.push(i);
    expect(ring.toArray()).toEqual([5, 6, 7]);
    expect(ring.size).toBe(3);
    expect(ring.totalPushed).toBe(7);
    expect(ring.last()).toBe(7);
  });

  it('clears back to empty', () => {
    const ring = new StepRing<string>(2);
    ring.push('a');
    ring.push('b');
    ring.push('c');
    ring.clear();
    expect(ring.toArray()).toEqual([]);
    expect(ring.totalPushed).toBe(0);
    ring.push('d');
    expect(ring.toArray()).toEqual(['d']);
  });

  it('rejects a capacity that is not a positive integer', () => {
    expect(() => new StepRing(0)).toThrow(/positive integer/);
    expect(() => new StepRing(1.5)).toThrow(/positive integer/);
  });
});
