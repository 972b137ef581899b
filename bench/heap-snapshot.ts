// What a run kept, from two V8 heap snapshots of one JS context: totals, and the objects alive at
// the end that were allocated after the start, grouped by kind. Pure (takes the snapshots' JSON text).

interface HeapSnapshotJson {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

export interface HeapRetained {
  /** Self sizes summed over every node of each snapshot, bytes. */
  startBytes: number;
  endBytes: number;
  /** The same by node type ('object', 'code', 'string' ...; array buffers' contents as 'backing store'). */
  startByType: Record<string, number>;
  endByType: Record<string, number>;
  /** Alive at the end and allocated after the start snapshot (V8 node ids only grow within a context). */
  newAliveBytes: number;
  /** The largest groups of those: objects by constructor, other nodes by type ('code', 'string' ...). */
  byKind: Array<{ kind: string; count: number; bytes: number }>;
}

interface NodeView {
  id: number;
  type: string;
  name: string;
  selfSize: number;
}

/** Compiled code and array buffers' contents: V8 tiering code up and the model's tensors, not objects a run keeps. */
const NOT_OBJECTS = new Set(['code', 'backing store']);

/** Bytes of JS objects (strings, arrays, closures, ... included) in one snapshot's types. */
export function objectBytes(byType: Record<string, number>): number {
  return Object.entries(byType).reduce((sum, [type, bytes]) => (NOT_OBJECTS.has(type) ? sum : sum + bytes), 0);
}

function typeOf(n: NodeView): string {
  return n.type === 'native' && n.name.endsWith('ArrayBufferData') ? 'backing store' : n.type;
}

function* nodesOf(heap: HeapSnapshotJson): Generator<NodeView> {
  const fields = heap.snapshot.meta.node_fields;
  const types = heap.snapshot.meta.node_types[0];
  const [typeAt, nameAt, idAt, sizeAt] = ['type', 'name', 'id', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number, number];
  for (let i = 0; i < heap.nodes.length; i += fields.length) {
    yield { id: heap.nodes[i + idAt]!, type: types[heap.nodes[i + typeAt]!]!, name: heap.strings[heap.nodes[i + nameAt]!]!, selfSize: heap.nodes[i + sizeAt]! };
  }
}

export function diffHeapSnapshots(startJson: string, endJson: string, numKinds = 12): HeapRetained {
  let maxStartId = 0;
  let startBytes = 0;
  const startByType: Record<string, number> = {};
  for (const n of nodesOf(JSON.parse(startJson) as HeapSnapshotJson)) {
    maxStartId = Math.max(maxStartId, n.id);
    startBytes += n.selfSize;
    startByType[typeOf(n)] = (startByType[typeOf(n)] ?? 0) + n.selfSize;
  }
  const groups = new Map<string, { count: number; bytes: number }>();
  let endBytes = 0;
  let newAliveBytes = 0;
  const endByType: Record<string, number> = {};
  for (const n of nodesOf(JSON.parse(endJson) as HeapSnapshotJson)) {
    endBytes += n.selfSize;
    endByType[typeOf(n)] = (endByType[typeOf(n)] ?? 0) + n.selfSize;
    if (n.id <= maxStartId) continue;
    newAliveBytes += n.selfSize;
    const kind = n.type === 'object' || n.type === 'closure' ? `${n.type} ${n.name}` : n.type;
    const g = groups.get(kind) ?? { count: 0, bytes: 0 };
    g.count++;
    g.bytes += n.selfSize;
    groups.set(kind, g);
  }
  const byKind = [...groups].map(([kind, g]) => ({ kind, ...g })).sort((a, b) => b.bytes - a.bytes).slice(0, numKinds);
  return { startBytes, endBytes, startByType, endByType, newAliveBytes, byKind };
}
