// The KV options of a load through an in-process EngineHost on CpuRunner: defaults (f16, size from
// the runner), the request the runner factory gets, the model card's figures, and bad options refused.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeSyntheticModel } from '../model/testing/synthetic-model-fixtures';
import { kvBytesPerToken } from '../engine/kv-types';
import type { ModelSource } from '../protocol/api';
import { CpuRunner } from '../reference/cpu-runner';
import { EngineHost, type KvPoolRequest } from './engine-host';

const dir = mkdtempSync(join(tmpdir(), 'cohort-kv-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A synthetic llama with numKvHeads * headDim = kvHeads * 16, as a 'files' source. */
function model(name: string, kvHeads: number): ModelSource {
  const at = join(dir, name);
  writeSyntheticModel({ arch: 'llama', format: 'hf', dtype: 'f32', dir: at, seed: 5, dims: { hidden: 64, intermediate: 128, layers: 2, heads: 2 * kvHeads, kvHeads, headDim: 16 } });
  return { kind: 'files', files: readdirSync(at).map((f) => new File([readFileSync(join(at, f))], f)) };
}

/** A host whose runner factory records each request and sizes CpuRunner's pool from kvCacheBytes in the type asked, as GpuRunner does. */
function host(): { host: EngineHost; requests: KvPoolRequest[] } {
  const requests: KvPoolRequest[] = [];
  const h = new EngineHost({
    embeddedModelUrl: 'http://127.0.0.1:1/none/',
    makeRunner: async (desc, kv) => {
      requests.push(kv);
      const c = desc.config;
      const blockBytes = 16 * kvBytesPerToken(c, kv.kvCacheType);
      return new CpuRunner(desc, { kvCacheType: kv.kvCacheType, numBlocks: kv.kvCacheBytes === undefined ? 65 : Math.floor(kv.kvCacheBytes / blockBytes) });
    },
  });
  return { host: h, requests };
}

const twoKvHeads = model('kv32', 2); // kvDim 32: every type fits
const threeKvHeads = model('kv48', 3); // kvDim 48: not whole q8_0 blocks

describe('EngineHost KV options', () => {
  it('asks for f16 and leaves the size to the runner when none is given, and reports bytes per token', async () => {
    const { host: h, requests } = host();
    const info = await h.loadModel(twoKvHeads);
    expect(requests).toEqual([{ kvCacheType: 'f16' }]);
    expect(info.kvCacheType).toBe('f16');
    expect(info.kvBytesPerToken).toBe(2 * 2 * 32 * 2); // K + V, 2 layers, 32 values, 2 bytes
    await h.unloadModel();
  });

  it('passes the type and size on, and the same again when the runner is rebuilt', async () => {
    const { host: h, requests } = host();
    const info = await h.loadModel(twoKvHeads, undefined, { kvCacheType: 'q8_0', kvCacheBytes: 1 << 20 });
    expect(info.kvCacheType).toBe('q8_0');
    expect(info.kvBytesPerToken).toBe(2 * 2 * 34);
    await h.recoverRunner('test');
    expect(requests).toEqual([{ kvCacheType: 'q8_0', kvCacheBytes: 1 << 20 }, { kvCacheType: 'q8_0', kvCacheBytes: 1 << 20 }]);
    await h.unloadModel();
  });

  it('refuses an unknown type or a size that is not a positive whole number, naming the option', async () => {
    const { host: h, requests } = host();
    await expect(h.loadModel(twoKvHeads, undefined, { kvCacheType: 'q4_0' as never })).rejects.toMatchObject({ name: 'InvalidKvCacheError', message: expect.stringMatching(/^kvCacheType: "q4_0" is not one of f32, f16, q8_0/) });
    for (const bytes of [0, -5, 1.5, Number.NaN, '1024' as never]) {
      await expect(h.loadModel(twoKvHeads, undefined, { kvCacheBytes: bytes })).rejects.toMatchObject({ name: 'InvalidKvCacheError', param: 'kvCacheBytes' });
    }
    expect(requests).toEqual([]);
  });

  it('refuses q8_0 on a model whose numKvHeads * headDim is not a multiple of 32', async () => {
    const { host: h } = host();
    await expect(h.loadModel(threeKvHeads, undefined, { kvCacheType: 'q8_0' })).rejects.toMatchObject({ name: 'InvalidKvCacheError', param: 'kvCacheType', message: expect.stringMatching(/multiple of 32; this model has 48/) });
    expect((await h.loadModel(threeKvHeads, undefined, { kvCacheType: 'f16' })).kvCacheType).toBe('f16');
    await h.unloadModel();
  });

  it('refuses a size that buys fewer than 2 blocks, saying how many bytes would do', async () => {
    const { host: h } = host();
    const blockBytes = 16 * 2 * 2 * 32 * 2; // f16, 16 positions
    await expect(h.loadModel(twoKvHeads, undefined, { kvCacheBytes: 2 * blockBytes - 1 })).rejects.toMatchObject({ name: 'InvalidKvCacheError', param: 'kvCacheBytes', message: expect.stringMatching(new RegExp(`buy 1 f16 KV blocks .* i\\.e\\. ${2 * blockBytes} bytes`)) });
    const info = await h.loadModel(twoKvHeads, undefined, { kvCacheBytes: 2 * blockBytes });
    expect(info.numBlocks).toBe(2);
    await h.unloadModel();
  });
});
