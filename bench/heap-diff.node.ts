// `tsx bench/heap-diff.node.ts start.heapsnapshot end.heapsnapshot`: what a long run kept (the soak
// writes its worker's pair to test-results/soak-heap/). Prints heap-snapshot.ts's figures; reads only.
import { readFileSync } from 'node:fs';
import { diffHeapSnapshots, objectBytes } from './heap-snapshot';

const [startPath, endPath] = process.argv.slice(2);
if (!startPath || !endPath) {
  console.error('Usage: tsx bench/heap-diff.node.ts start.heapsnapshot end.heapsnapshot');
  process.exit(2);
}
const kept = diffHeapSnapshots(readFileSync(startPath, 'utf8'), readFileSync(endPath, 'utf8'), 40);
const kib = (b: number) => (b / 1024).toFixed(1);
console.log(`start ${kib(kept.startBytes)} KiB, end ${kib(kept.endBytes)} KiB, allocated since start and still alive ${kib(kept.newAliveBytes)} KiB`);
console.log(`objects (compiled code and array buffer contents left out): ${kib(objectBytes(kept.startByType))} KiB to ${kib(objectBytes(kept.endByType))} KiB`);
console.log(`by type, start -> end KiB: ${Object.keys(kept.endByType).map((t) => `${t} ${kib(kept.startByType[t] ?? 0)} -> ${kib(kept.endByType[t]!)}`).join(', ')}`);
console.log('| kind | count | KiB |');
console.log('| --- | --- | --- |');
for (const g of kept.byKind) console.log(`| ${g.kind} | ${g.count} | ${kib(g.bytes)} |`);
