// Runs the headless benchmark end to end on a small grid (SwiftShader in Node): the CLI, the
// embedded model through EngineHost + GpuRunner, the report files. Checks their content, not speed.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { BenchReport } from './report';

const root = fileURLToPath(new URL('..', import.meta.url));
const outDir = mkdtempSync(join(tmpdir(), 'cohort-headless-'));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe('npm run bench:headless', () => {
  it('runs the grid batched and serialized and writes the report', () => {
    const args = ['--sessions=1,3', '--repeats=1', '--workloads=chat', '--chat-tokens=5', '--join-decoders=2', '--join-tokens=200', '--speculation=off', '--features=off', '--machine=ci', `--out=${outDir}`];
    const run = spawnSync(join(root, 'node_modules/.bin/tsx'), ['bench/headless.node.ts', ...args], { cwd: root, encoding: 'utf8', timeout: 300_000 });
    expect(run.stderr + run.stdout).toMatch(/wrote .*-ci-node\.\{json,md\}/);
    expect(run.status).toBe(0);
    const files = readdirSync(outDir).sort();
    expect(files).toEqual([expect.stringMatching(/^\d{4}-\d{2}-\d{2}-ci-node\.json$/), expect.stringMatching(/-ci-node\.md$/)]);
    const report = JSON.parse(readFileSync(join(outDir, files[0]!), 'utf8')) as BenchReport;
    expect(report.model.name).toBe('cohort-tiny (embedded)');
    expect(report.runtime).toMatch(/^Node v\d+.*npm webgpu \d+\.\d+\.\d+ \(Dawn\)$/);
    expect(report.throughput.map((p) => p.sessions)).toEqual([1, 3]);
    for (const point of report.throughput) {
      expect(point.outputsMatch).toBe(true);
      for (const run of [...point.batched.runs, ...point.serialized.runs]) {
        expect(run.meanNewTokens).toBe(5); // ignoreEos: every turn runs its full length
        expect(run.decodeTokens).toBe(point.sessions * 4); // the first token comes from prefill
      }
      // The same tokens on both paths, but batched packs them into fewer forward passes.
      expect(point.batched.runs[0]!.forwardPasses).toBe(4);
      expect(point.serialized.runs[0]!.forwardPasses).toBe(point.sessions * 4);
    }
    expect(report.join?.median.joinPromptTokens).toBeGreaterThan(150);
    expect(report.join?.median.joinSteps).toBeGreaterThanOrEqual(1);
    expect(readFileSync(join(outDir, files[1]!), 'utf8')).toContain('| chat | 3 |');
  });

  it('runs the structured output and sampling features side by side and reports them', () => {
    const dir = join(outDir, 'features');
    const args = ['--features=only', '--speculation=off', '--repeats=1', '--feature-tokens=6', '--machine=ci', `--out=${dir}`];
    const run = spawnSync(join(root, 'node_modules/.bin/tsx'), ['bench/headless.node.ts', ...args], { cwd: root, encoding: 'utf8', timeout: 300_000 });
    expect(run.stderr + run.stdout).toMatch(/wrote .*-ci-node-features\.\{json,md\}/);
    expect(run.status).toBe(0);
    const files = readdirSync(dir).sort();
    const report = JSON.parse(readFileSync(join(dir, files[0]!), 'utf8')) as BenchReport;
    expect(report.throughput).toEqual([]);
    expect(report.features!.map((p) => [p.a, p.b])).toEqual([
      ['serialized', 'batched'],
      ['unconstrained', 'constrained'],
      ['plain', 'penalties + bias + logprobs (top 5)'],
    ]);
    const [modes, constrained, sampling] = report.features!;
    expect(modes!.outputsMatch).toBe(true); // greedy and constrained: the same tokens serialized and batched
    // the serialized side feeds one row a step, the batched side all 8
    expect(modes!.sideA.runs[0]!.forwardPasses).toBe(modes!.sideA.runs[0]!.decodeTokens);
    expect(modes!.sideB.runs[0]!.forwardPasses).toBeLessThan(modes!.sideB.runs[0]!.decodeTokens);
    for (const side of [modes!.sideA, modes!.sideB, constrained!.sideB]) {
      expect(side.replies!.replies).toBe(8);
      expect(side.replies!.valid).toBe(side.replies!.stopped); // every reply that stopped parses and validates
    }
    expect(constrained!.sideA.replies).toBeUndefined();
    for (const side of [sampling!.sideA, sampling!.sideB]) expect(side.runs[0]!.meanNewTokens).toBe(6); // full length
    expect(readFileSync(join(dir, files[1]!), 'utf8')).toContain('| JSON schema x8 | serialized |');
  }, 300_000);
});
