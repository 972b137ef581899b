// Constrained decoding through the whole engine on GpuRunner (a random-weight byte model, XGrammar):
// greedy replies are CpuRunner's; at temperature 1 every reply stops, parses and validates, and is
// the same alone, in a cohort of 8, serialized and under speculation.
import { Validator, type Schema } from '@cfworker/json-schema';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ModelDesc } from '../model/desc';
import { CpuRunner } from '../reference/cpu-runner';
import { randomByteModel, runConstrained, type ConstrainedTurn } from '../reference/testing/constrained-engine.node';
import { JSON_SCHEMAS } from '../reference/testing/json-schemas';
import { GpuRunner } from './gpu-runner';
import { testPipelineCache } from './testing/kernel-harness';
import { kernelSettingFromEnv, loadShader } from './testing/node-gpu';

let model: ModelDesc;
beforeAll(() => {
  model = randomByteModel();
});

async function makeRunner(maxDraftTokens = 0): Promise<GpuRunner> {
  const pipelines = await testPipelineCache();
  return GpuRunner.create({ device: pipelines.device, pipelines, model, shaderSource: loadShader, numBlocks: 512, maxContext: 2048, maxRows: 8, maxDraftTokens, kernels: kernelSettingFromEnv() });
}

const names = ['person', 'nested', 'invoice', 'scores', 'status', 'address', 'extraction', 'nullable'];
const turns = (subset: string[]): ConstrainedTurn[] =>
  subset.map((name) => ({ prompt: `Reply with ${name} as JSON.`, constraint: { kind: 'json_schema', schema: JSON.stringify(JSON_SCHEMAS[name]) }, seed: 900 + names.indexOf(name) }));

describe('constrained decoding on GpuRunner (random weights)', () => {
  it("greedy: CpuRunner's replies", async () => {
    const subset = names.slice(0, 4);
    const gpu = await runConstrained(await makeRunner(), turns(subset), { temperature: 0 });
    const cpu = await runConstrained(new CpuRunner(model, { numBlocks: 512 }), turns(subset), { temperature: 0 });
    expect(gpu.map((r) => r.ids)).toEqual(cpu.map((r) => r.ids));
  }, 600_000);

  it('temperature 1: every reply stops and validates, the same alone, in a cohort of 8, serialized and under speculation', async () => {
    const together = await runConstrained(await makeRunner(), turns(names));
    together.forEach((reply, i) => {
      expect(reply.finishReason, `${names[i]}: ${reply.text}`).toBe('eos');
      expect(new Validator(JSON_SCHEMAS[names[i]!] as Schema, '2020-12').validate(JSON.parse(reply.text)).valid, reply.text).toBe(true);
    });
    const alone = await runConstrained(await makeRunner(), turns(names.slice(2, 3)));
    expect(alone[0]!.ids).toEqual(together[2]!.ids);
    const serialized = await runConstrained(await makeRunner(), turns(names), { mode: 'serialized' });
    const speculated = await runConstrained(await makeRunner(8), turns(names), { speculation: { maxDraftTokens: 8 } });
    expect(speculated.reduce((n, r) => n + r.numDrafted, 0)).toBeGreaterThan(0);
    expect(serialized.map((r) => r.ids)).toEqual(together.map((r) => r.ids));
    expect(speculated.map((r) => r.ids)).toEqual(together.map((r) => r.ids));
  }, 900_000);
});
