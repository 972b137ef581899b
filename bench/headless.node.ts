// The batching benchmark without a browser: grid.ts's grid on EngineHost + GpuRunner in Node over
// npm webgpu (Dawn): SwiftShader here, the machine's GPU with COHORT_GPU=native. No chart: see usage.
import { basename, join, resolve } from 'node:path';
import { GpuRunner } from '../src/gpu/gpu-runner';
import { loadShader, repoPath } from '../src/gpu/testing/node-gpu';
import { runTurns, StepLog } from '../testing/harness/driver';
import type { EngineApi } from '../src/protocol/api';
import { EngineHost } from '../src/host/engine-host';
import { buildReport, reportBaseName, runGrid, writeReport } from './grid';
import { modelFiles, nodeBenchDevice, webgpuVersion } from './node-device';
import { GRID_USAGE, parseOptions } from './options';
import { benchSettings } from './settings';

const usage = `Usage: npm run bench:headless -- [grid options] [--model=PATH] [--out=DIR]
${GRID_USAGE}
  --model=PATH         a Hugging Face model folder or a .gguf file (default: the embedded cohort-tiny)
  --out=DIR            where the report goes (default: bench/results, or COHORT_BENCH_RESULTS_DIR)
Environment: COHORT_GPU=native uses the machine's Vulkan driver (default SwiftShader).
It writes <date>-<machine>-node.{json,md}; draw its chart with npm run bench -- --chart=FILE.json.`;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) return void console.log(usage);
  const { env, other } = parseOptions(args);
  for (const name of other.keys()) if (name !== 'model' && name !== 'out') throw new Error(`unknown option --${name}\n${usage}`);
  const settings = benchSettings({ ...process.env, ...env });
  const outDir = resolve(other.get('out') || process.env.COHORT_BENCH_RESULTS_DIR || repoPath('bench/results'));
  const modelPath = resolve(other.get('model') || repoPath('public/models/cohort-tiny'));
  const startedAtMs = Date.now();

  const { device, adapter, machine } = await nodeBenchDevice(env.COHORT_BENCH_MACHINE || process.env.COHORT_BENCH_MACHINE);
  const host = new EngineHost({
    makeRunner: (model) => GpuRunner.create({ device, model, shaderSource: loadShader }),
    embeddedModelUrl: 'file:///unused/',
  });
  // The host's API as the page's worker serves it; the driver only needs EngineApi's shape.
  const api = host as unknown as EngineApi;
  const log = new StepLog();
  await api.subscribe((event) => log.push(event));
  const model = await api.loadModel({ kind: 'files', files: await modelFiles(modelPath) });
  // The files source names a model by its file count; the report names what was benchmarked.
  model.name = other.get('model') ? basename(modelPath) : 'cohort-tiny (embedded)';
  console.log(`${model.name} on ${adapter}; settings ${JSON.stringify(settings)}`);

  const grid = await runGrid((request) => runTurns(api, log, request), settings);
  const report = buildReport(
    {
      settings,
      startedAtMs,
      model,
      gpu: { adapter, backend: process.env.COHORT_GPU === 'native' ? 'native' : 'swiftshader' },
      runtime: `Node ${process.version}, npm webgpu ${webgpuVersion()} (Dawn)`,
      machine,
    },
    grid,
  );
  const base = reportBaseName(report, 'node');
  writeReport(report, outDir, base);
  console.log(`wrote ${join(outDir, base)}.{json,md} after ${Math.round(report.runtimeSeconds)} s`);
}

main().then(
  () => process.exit(0), // Dawn's live instance and device would keep the process alive
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
