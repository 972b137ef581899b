// Measures what refusing an oversized tokenizer.json costs: a model folder whose tokenizer.json
// holds 3.5M vocabulary entries (under the 64 MB file cap) opened in a fresh Node process, its
// time and peak RSS beside the same folder with a real tokenizer and beside the way it was
// refused before (parsed whole, then its tables counted); and the scan alone on a Gemma 3-sized
// file beside JSON.parse of it. Prints a table. Not a test (timings are not asserted).
//
//   npx tsx tools/models/tokenizer-refusal.node.ts                # the whole measurement
//   npx tsx tools/models/tokenizer-refusal.node.ts --open DIR     # one open, one JSON line (used by tests)
//   npx tsx tools/models/tokenizer-refusal.node.ts --parsed DIR   # the same, parsing tokenizer.json first
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { ModelFormatError } from '../../src/model/errors';
import { openHfModel } from '../../src/model/open-model';
import { largeBpeTokenizerJson } from '../../src/model/testing/large-tokenizer';
import { checkTokenizerJsonEntries } from '../../src/model/tokenizer-json-scan';
import { HfTokenizer } from '../../src/model/tokenizer';
import { fileSource, folderOpener } from './node-files';
import { hfFiles, syntheticModel } from '../../src/model/testing/synthetic-model-fixtures';

export interface OpenReport {
  /** The ModelFormatError's problem, or null when the folder loaded. */
  problem: string | null;
  ms: number;
  peakRssBytes: number;
}

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = fileURLToPath(import.meta.url);

/** Writes a tiny synthetic llama to `dir`, with `tokenizerJson` in place of its own when given. */
export function writeModelFolder(dir: string, tokenizerJson?: Uint8Array): void {
  mkdirSync(dir, { recursive: true });
  const parts = syntheticModel({ arch: 'llama', seed: 9, dims: { hidden: 64, intermediate: 128, layers: 1, heads: 2, kvHeads: 1, headDim: 32 } });
  for (const [name, bytes] of hfFiles(parts, 'f32')) writeFileSync(join(dir, name), bytes);
  if (tokenizerJson) writeFileSync(join(dir, 'tokenizer.json'), tokenizerJson);
}

/** Opens `dir` in a new Node process (nothing else in its memory) and returns its report. */
export function openInChild(dir: string, mode: '--open' | '--parsed' = '--open'): OpenReport {
  const run = spawnSync(process.execPath, ['--import', 'tsx', SCRIPT, mode, dir], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`child exited ${run.status}: ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').pop() as string) as OpenReport;
}

/** How tokenizer.json was refused before its bytes were counted: parsed whole, then its tables. */
async function openParsedFirst(dir: string): Promise<void> {
  const src = fileSource(join(dir, 'tokenizer.json'), 'tokenizer.json');
  const text = new TextDecoder().decode(await src.read(0, src.size));
  HfTokenizer.fromFiles({ tokenizerJson: text });
}

async function openOnce(dir: string, open: (dir: string) => Promise<unknown>): Promise<void> {
  const start = performance.now();
  let problem: string | null = null;
  try {
    await open(dir);
  } catch (e) {
    if (!(e instanceof ModelFormatError)) throw e;
    problem = e.problem;
  }
  const report: OpenReport = { problem, ms: performance.now() - start, peakRssBytes: process.resourceUsage().maxRSS * 1024 };
  console.log(JSON.stringify(report));
}

function timed(run: () => void): number {
  const start = performance.now();
  try {
    run();
  } catch {
    // Only the time matters here.
  }
  return performance.now() - start;
}

function measureAll(): void {
  const root = mkdtempSync(join(tmpdir(), 'cohort-tokenizer-refusal-'));
  const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
  try {
    const hostile = largeBpeTokenizerJson({ vocabEntries: 3_500_000, merges: 0 });
    writeModelFolder(join(root, 'hostile'), hostile);
    writeModelFolder(join(root, 'real'));
    console.log('| folder | tokenizer.json | result | time | peak RSS |\n| --- | --- | --- | --- | --- |');
    const rows = [['real', 'the model\'s own', '--open'], ['hostile', `${mb(hostile.length)} MB, 3.5M entries`, '--open'], ['hostile', 'the same, parsed whole first', '--parsed']] as const;
    for (const [name, what, mode] of rows) {
      const r = openInChild(join(root, name), mode);
      console.log(`| ${name} | ${what} | ${r.problem ?? 'loaded'} | ${r.ms.toFixed(0)} ms | ${mb(r.peakRssBytes)} MB |`);
    }
    // Gemma 3's table sizes: 262,144 tokens and 514,906 merges (here ["a","b"] pairs, the larger form).
    const gemmaSized = largeBpeTokenizerJson({ vocabEntries: 262_144, merges: 514_906 });
    const scanMs = timed(() => checkTokenizerJsonEntries('tokenizer.json', gemmaSized));
    const text = new TextDecoder().decode(gemmaSized);
    const parseMs = timed(() => JSON.parse(text));
    console.log(`\nGemma 3-sized tokenizer.json (${mb(gemmaSized.length)} MB): the scan ${scanMs.toFixed(0)} ms, JSON.parse ${parseMs.toFixed(0)} ms`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const [mode, dir] = process.argv.slice(2);
if (mode === '--open') await openOnce(dir, (d) => openHfModel(folderOpener(d), d));
else if (mode === '--parsed') await openOnce(dir, openParsedFirst);
else if (process.argv[1] === SCRIPT) measureAll();
