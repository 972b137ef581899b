// The page's fetch diagnosis is the worker's (src/model/fetch-diagnosis.ts, tested there) line
// for line: import boundaries keep src/app from importing it, so this test keeps the twins equal.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { classifyFetchFailure } from './fetch-diagnosis';

const body = (path: string) => readFileSync(path, 'utf8').split('\n').slice(2).join('\n');

describe('the page twin of src/model/fetch-diagnosis.ts', () => {
  it('has the same code below its header', () => {
    expect(body('src/app/derive/fetch-diagnosis.ts')).toBe(body('src/model/fetch-diagnosis.ts'));
  });

  it('classifies like the worker', () => {
    expect(classifyFetchFailure({ onLine: true, timedOut: false, reachableWithoutCors: true })).toBe('cors');
  });
});
