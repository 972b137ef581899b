// EngineHost's KV options in process on the embedded model (CpuRunner): bad ones refused naming the
// option before anything loads; good ones reach the runner factory, the model's info and a rebuilt runner.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { kvBytesPerToken } from '../model/kv-types';
import type { KvCacheOptions, ModelSource } from '../protocol/api';
import { CpuRunner } from '../reference/cpu-runner';
import { EngineHost, type RunnerKvOptions } from './engine-host';

const MODEL_DIR = new URL('../../public/models/cohort-tiny/', import.meta.url);

function embeddedFiles(): ModelSource {
  const names = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json'];
  return { kind: 'files', files: names.map((name) => new File([readFileSync(new URL(name, MODEL_DIR))], name)) };
}

function host() {
  const built: RunnerKvOptions[] = [];
  const h = new EngineHost({
    makeRunner: async (desc, kv) => {
      built.push(kv);
      return new CpuRunner(desc, { numBlocks: 65 });
    },
    embeddedModelUrl: MODEL_DIR.href,
  });
  return { host: h, built };
}

describe('EngineHost KV options', () => {
  it.each([
    [{ kvCacheType: 'q4_0' }, 'kvCacheType', /kvCacheType must be one of 'f32', 'f16', 'q8_0', got "q4_0"/],
    [{ kvCacheType: 16 }, 'kvCacheType', /got 16/],
    [{ kvCacheBytes: 0 }, 'kvCacheBytes', /kvCacheBytes must be an integer number of bytes from 1048576/],
    [{ kvCacheBytes: 2 ** 30 + 0.5 }, 'kvCacheBytes', /got 1073741824.5/],
    [{ kvCacheBytes: '1GB' }, 'kvCacheBytes', /got "1GB"/],
    [{ kvCacheBytes: Number.NaN }, 'kvCacheBytes', /got NaN/],
    [{ kvCacheBytes: 2 ** 41 }, 'kvCacheBytes', /to 1099511627776/],
  ])('refuses %j with an InvalidOptionError naming %s, building no runner', async (kv, option, message) => {
    const { host: h, built } = host();
    const err = (await h.loadModel({ kind: 'embedded' }, undefined, kv as unknown as KvCacheOptions).then(
      () => new Error('loaded'),
      (e: unknown) => e,
    )) as Error & { option: string };
    expect(err).toMatchObject({ name: 'InvalidOptionError', option });
    expect(err.message).toMatch(message);
    expect(built).toEqual([]);
  });

  it('passes the type and budget to the runner and reports the bytes a token costs in the pool', async () => {
    const { host: h, built } = host();
    const info = await h.loadModel(embeddedFiles(), undefined, { kvCacheType: 'q8_0', kvCacheBytes: 2 ** 24 });
    expect(built).toEqual([{ kvCacheType: 'q8_0', kvCacheBytes: 2 ** 24 }]);
    const perToken = kvBytesPerToken('q8_0', 4, 2 * 32); // 4 layers, 2 KV heads of 32
    expect(perToken).toBe(2 * 4 * 68);
    expect(info.kvCache).toEqual({ type: 'q8_0', bytesPerToken: perToken, bytes: 65 * 16 * perToken });
    // a runner rebuilt after GPU loss gets the same pool
    await h.recoverRunner('test loss');
    expect(built).toEqual([{ kvCacheType: 'q8_0', kvCacheBytes: 2 ** 24 }, { kvCacheType: 'q8_0', kvCacheBytes: 2 ** 24 }]);
    await h.unloadModel();
  });

  it('defaults the type to f16 and leaves the budget to the runner', async () => {
    const { host: h, built } = host();
    const info = await h.loadModel(embeddedFiles());
    expect(built).toEqual([{ kvCacheType: 'f16' }]);
    expect(info.kvCache?.type).toBe('f16');
    expect(info.kvCache?.bytesPerToken).toBe(2 * 4 * 64 * 2);
    await h.unloadModel();
  });
});
