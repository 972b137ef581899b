// Drives ESLint's Node API over probe sources to show the folder boundaries hold: each
// violation is rejected and its clean twin passes. The probe paths need not exist on disk.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let eslint: ESLint;

/** Rule ids ESLint reports for `code` as if it lived at `relPath`. */
async function lintAt(relPath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, relPath) });
  return result!.messages.map((message) => message.ruleId ?? `fatal: ${message.message}`);
}

beforeAll(() => {
  eslint = new ESLint({ cwd: root });
});

describe('import boundaries', () => {
  it('keeps src/engine self-contained', async () => {
    expect(await lintAt('src/engine/probe.ts', "import type { ModelDesc } from '../model/desc';\nexport type X = ModelDesc;\n")).toContain('cohort/import-boundaries');
    expect(await lintAt('src/engine/probe.ts', "import { useState } from 'react';\nexport const x = useState;\n")).toContain('cohort/import-boundaries');
    expect(await lintAt('src/engine/probe.ts', "import { readFileSync } from 'node:fs';\nexport const x = readFileSync;\n")).toContain('cohort/import-boundaries');
    expect(await lintAt('src/engine/probe.ts', "import type { StepPlan } from './types';\nexport type X = StepPlan;\n")).toEqual([]);
  });

  it('keeps DOM and WebGPU out of the pure folders', async () => {
    expect(await lintAt('src/model/probe.ts', 'export const title = document.title;\n')).toContain('no-restricted-globals');
    expect(await lintAt('src/reference/probe.ts', 'export type D = GPUDevice;\n')).toContain('@typescript-eslint/no-restricted-types');
    expect(await lintAt('src/gpu/probe.ts', 'export type D = GPUDevice;\n')).toEqual([]);
  });

  it('lets src/app reach the worker only through protocol and engine-client, over the library\'s comlink adapter', async () => {
    expect(await lintAt('src/app/Probe.tsx', "import * as Comlink from 'comlink';\nexport const c = Comlink;\n")).toContain('cohort/import-boundaries');
    expect(await lintAt('src/app/Probe.tsx', "import { sampleUniform } from '../engine/rng';\nexport const s = sampleUniform;\n")).toContain('cohort/import-boundaries');
    expect(await lintAt('src/app/Probe.tsx', "import w from '../../workers/engine.worker?worker';\nexport const x = w;\n")).toContain('cohort/import-boundaries');
    expect(await lintAt('src/app/Probe.tsx', "import type { StepEvent } from '../protocol/api';\nexport type E = StepEvent;\n")).toEqual([]);
    expect(await lintAt('src/app/engine-client.ts', "import * as Comlink from 'comlink';\nexport const c = Comlink;\n")).toContain('cohort/import-boundaries');
    const adapter = "import { wrapEndpoint } from '../lib/remote';\nexport const w = wrapEndpoint;\n";
    expect(await lintAt('src/app/engine-client.ts', adapter)).toEqual([]);
    expect(await lintAt('src/app/Probe.tsx', adapter)).toContain('cohort/import-boundaries');
    expect(await lintAt('src/app/engine-client.ts', "import { CohortEngine } from '../lib/engine';\nexport const e = CohortEngine;\n")).toContain('cohort/import-boundaries');
  });

  it('lets src/lib reach the engine only through protocol and its one comlink file', async () => {
    const comlink = "import * as Comlink from 'comlink';\nexport const c = Comlink;\n";
    expect(await lintAt('src/lib/remote.ts', comlink)).toEqual([]);
    expect(await lintAt('src/lib/probe.ts', comlink)).toContain('cohort/import-boundaries');
    expect(await lintAt('src/lib/probe.ts', "import { decodeThroughput } from '../protocol/metrics';\nexport const d = decodeThroughput;\n")).toEqual([]);
    expect(await lintAt('src/lib/probe.ts', "import type { SamplingParams } from '../engine/types';\nexport type S = SamplingParams;\n")).toContain('cohort/import-boundaries');
    expect(await lintAt('src/lib/probe.ts', "import { getEngineClient } from '../app/engine-client';\nexport const g = getEngineClient;\n")).toContain('cohort/import-boundaries');
    expect(await lintAt('src/lib/probe.ts', "import { EngineHost } from '../host/engine-host';\nexport const h = EngineHost;\n")).toContain('cohort/import-boundaries');
    expect(await lintAt('src/lib/probe.test.ts', "import { startHost } from '../host/testing/host-fixtures';\nexport const s = startHost;\n")).toEqual([]);
    expect(await lintAt('src/lib/probe.ts', "import type { ChatCompletionChunk } from 'openai/resources/chat/completions';\nexport type C = ChatCompletionChunk;\n")).toContain('cohort/import-boundaries');
  });

  it('lets the testing/harness page use comlink and protocol, but not engine code or React', async () => {
    expect(await lintAt('testing/harness/probe.ts', "import * as Comlink from 'comlink';\nexport const c = Comlink;\n")).toEqual([]);
    expect(await lintAt('testing/harness/probe.ts', "import { makeNiahSuite } from '../../src/protocol/niah';\nexport const m = makeNiahSuite;\n")).toEqual([]);
    expect(await lintAt('testing/harness/probe.ts', "import { sampleUniform } from '../../src/engine/rng';\nexport const s = sampleUniform;\n")).toContain('cohort/import-boundaries');
    expect(await lintAt('testing/harness/probe.ts', "import { useState } from 'react';\nexport const x = useState;\n")).toContain('cohort/import-boundaries');
    expect(await lintAt('testing/harness/probe.ts', "import { EngineHost } from '../../src/host/engine-host';\nexport const h = EngineHost;\n")).toContain('cohort/import-boundaries');
  });

  it('keeps test scaffolding out of product code', async () => {
    expect(await lintAt('src/engine/probe.ts', "import { FakeRunner } from './testing/fake-runner';\nexport const f = FakeRunner;\n")).toContain('cohort/import-boundaries');
    expect(await lintAt('src/engine/probe.test.ts', "import { FakeRunner } from './testing/fake-runner';\nexport const f = FakeRunner;\n")).toEqual([]);
    expect(await lintAt('src/engine/testing/probe.ts', "import { FakeRunner } from './fake-runner';\nexport const f = FakeRunner;\n")).toEqual([]);
    expect(await lintAt('workers/probe.ts', "import { cancelStorm } from '../testing/harness/storm';\nexport const s = cancelStorm;\n")).toContain('cohort/import-boundaries');
    expect(await lintAt('src/host/probe.ts', "import { EngineHost } from './engine-host';\nexport const h = EngineHost;\n")).toEqual([]);
    expect(await lintAt('src/host/probe.ts', "import { GpuRunner } from '../gpu/gpu-runner';\nexport const g = GpuRunner;\n")).toContain('cohort/import-boundaries');
    // the synthetic test models: any test may draw one, no product file may
    const synthetic = "import { syntheticModelDesc } from '../model/testing/synthetic-model-fixtures';\nexport const s = syntheticModelDesc;\n";
    expect(await lintAt('src/gpu/probe.test.ts', synthetic)).toEqual([]);
    expect(await lintAt('src/gpu/probe.ts', synthetic)).toContain('cohort/import-boundaries');
    expect(await lintAt('src/host/probe.ts', synthetic)).toContain('cohort/import-boundaries');
  });

  it('keeps the llama.cpp emulation to tests and its own folder', async () => {
    const emulation = "import { LlamaCppRunner } from './llama-cpp/runner';\nexport const r = LlamaCppRunner;\n";
    expect(await lintAt('src/reference/probe.ts', emulation)).toContain('cohort/import-boundaries');
    expect(await lintAt('src/reference/probe.test.ts', emulation)).toEqual([]);
    expect(await lintAt('src/reference/llama-cpp/probe.ts', "import { llamaCppForward } from './forward';\nimport { matmul } from '../ops';\nexport const f = [llamaCppForward, matmul];\n")).toEqual([]);
    expect(await lintAt('workers/probe.ts', "import { llamaCppRope } from '../src/reference/llama-cpp/ops';\nexport const r = llamaCppRope;\n")).toContain('cohort/import-boundaries');
  });

  it('allows CPU twins in gpu tests only, and engine types in protocol only as types', async () => {
    const twinImport = "import { swiglu } from '../reference/ops';\nexport const f = swiglu;\n";
    expect(await lintAt('src/gpu/probe.ts', twinImport)).toContain('cohort/import-boundaries');
    expect(await lintAt('src/gpu/probe.test.ts', twinImport)).toEqual([]);
    expect(await lintAt('src/protocol/probe.ts', "import { sampleUniform } from '../engine/rng';\nexport const s = sampleUniform;\n")).toContain('cohort/import-boundaries');
    expect(await lintAt('src/protocol/probe.ts', "import type { SamplingParams } from '../engine/types';\nexport type S = SamplingParams;\n")).toEqual([]);
  });

  it('lets every folder import the shared engine leaves, which import nothing', async () => {
    expect(await lintAt('src/protocol/probe.ts', "import { mulberry32 } from '../engine/seeded-random';\nexport const m = mulberry32;\n")).toEqual([]);
    expect(await lintAt('src/lib/probe.ts', "import { Listeners } from '../engine/listeners';\nexport const l = Listeners;\n")).toEqual([]);
    expect(await lintAt('src/app/Probe.tsx', "import { Listeners } from '../engine/listeners';\nexport const l = Listeners;\n")).toEqual([]);
    expect(await lintAt('src/lib/probe.ts', "import { Listeners } from '../engine/listeners.ts';\nexport const l = Listeners;\n")).toEqual([]);
    expect(await lintAt('src/engine/seeded-random.ts', "import { fmix32 } from './rng';\nexport const f = fmix32;\n")).toContain('cohort/import-boundaries');
    expect(await lintAt('src/engine/listeners.ts', "import type { StepEvent } from './events';\nexport type E = StepEvent;\n")).toContain('cohort/import-boundaries');
  });

  it('fails on any import circle among product files, type-only imports too, and names the circle', async () => {
    const circle = async (relPath: string, code: string) => {
      const [result] = await eslint.lintText(code, { filePath: path.join(root, relPath) });
      return result!.messages.filter((m) => m.ruleId === 'cohort/import-cycles').map((m) => m.message);
    };
    // request.ts imports speculation.ts: the policy reads a view type, never Request
    const [message] = await circle('src/engine/speculation.ts', "import type { Request } from './request';\nexport type R = Request;\n");
    expect(message).toContain('src/engine/speculation.ts -> src/engine/request.ts -> src/engine/speculation.ts');
    // a longer circle: the scheduler imports types.ts
    expect(await circle('src/engine/types.ts', "import { Scheduler } from './scheduler';\nexport const s = Scheduler;\n")).toHaveLength(1);
    expect(await circle('src/engine/types.ts', "export type { Scheduler } from './scheduler';\n")).toHaveLength(1);
    expect(await circle('src/engine/types.ts', "export type S = import('./scheduler').Scheduler;\n")).toHaveLength(1);
    // the same import from a file nothing imports, or from a test, closes no circle
    expect(await circle('src/engine/probe.ts', "import { Scheduler } from './scheduler';\nexport const s = Scheduler;\n")).toEqual([]);
    expect(await circle('src/engine/types.test.ts', "import { Scheduler } from './scheduler';\nexport const s = Scheduler;\n")).toEqual([]);
    expect(await circle('src/engine/speculation.ts', "import type { StepShape } from './step-cost';\nexport type S = StepShape;\n")).toEqual([]);
  });
});
