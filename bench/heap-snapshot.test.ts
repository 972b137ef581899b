// diffHeapSnapshots on hand-made snapshots: totals, and only nodes newer than the start counted as kept.
import { describe, expect, it } from 'vitest';
import { diffHeapSnapshots, objectBytes } from './heap-snapshot';

/** A V8 heap snapshot's shape, with nodes given as [type, name, id, selfSize]. */
function snapshot(nodes: Array<[string, string, number, number]>): string {
  const types = ['object', 'code', 'string'];
  const strings = [...new Set(nodes.map((n) => n[1]))];
  return JSON.stringify({
    snapshot: { meta: { node_fields: ['type', 'name', 'id', 'self_size', 'edge_count'], node_types: [types, 'string'] } },
    nodes: nodes.flatMap(([type, name, id, size]) => [types.indexOf(type), strings.indexOf(name), id, size, 0]),
    strings,
  });
}

describe('diffHeapSnapshots', () => {
  it('sums both heaps and groups what was allocated after the start and is still alive', () => {
    const start = snapshot([['object', 'Session', 1, 100], ['code', 'f', 3, 50]]);
    const end = snapshot([['object', 'Session', 1, 100], ['object', 'Session', 5, 40], ['object', 'Session', 7, 40], ['code', 'g', 9, 30]]);
    const kept = diffHeapSnapshots(start, end);
    expect(kept).toEqual({
      startBytes: 150,
      endBytes: 210,
      startByType: { object: 100, code: 50 },
      endByType: { object: 180, code: 30 },
      newAliveBytes: 110,
      byKind: [{ kind: 'object Session', count: 2, bytes: 80 }, { kind: 'code', count: 1, bytes: 30 }],
    });
  });

  it('leaves compiled code and array buffer contents out of object bytes', () => {
    expect(objectBytes({ object: 10, string: 5, code: 100, 'backing store': 1000, array: 2 })).toBe(17);
  });
});
