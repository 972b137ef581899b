// Random mutations of valid model files (GGUF, safetensors header, tokenizer.json, config.json),
// 2,000 seeded cases per format: every load must end, either loading or throwing a
// ModelFormatError, and keep no large buffers. Counts are printed; a failure names its seed.
import { describe, expect, it } from 'vitest';
import { bytesSource, mapOpener } from './byte-source';
import { ModelFormatError } from './errors';
import { openGgufModel, openHfModel } from './open-model';
import { makeRandom } from '../engine/testing/test-support';
import { hfToGguf } from '../../tools/models/hf-to-gguf';
import { hfFiles, syntheticModel } from './testing/synthetic-model-fixtures';

const CASES = Number(process.env.COHORT_FUZZ_CASES ?? 2000);
/** Array-buffer memory a failed or finished load may leave behind (the files themselves are ~100 KB). */
const RETAINED_CAP_BYTES = 64 << 20;

const EXTREMES = [0, 1, 0xff, 0xffff, 0x7fffffff, 0xffffffff, 0x80000000, 3, 1 << 20];

/** One random edit of a byte file: flips, extreme u32/u64 values, truncation, insertion, deletion. */
function mutateBytes(bytes: Uint8Array, random: () => number, headerBytes: number): Uint8Array {
  const at = (limit = bytes.length) => Math.floor(random() * Math.min(limit, bytes.length));
  const kind = Math.floor(random() * 6);
  const out = bytes.slice();
  const view = new DataView(out.buffer);
  // Most edits land in the header, where the parser makes its decisions.
  const where = () => (random() < 0.8 ? at(headerBytes) : at());
  if (kind === 0) {
    for (let i = 0, n = 1 + Math.floor(random() * 8); i < n; i++) out[where()] ^= 1 << Math.floor(random() * 8);
  } else if (kind === 1) {
    const p = Math.min(where(), out.length - 4);
    view.setUint32(Math.max(0, p), EXTREMES[Math.floor(random() * EXTREMES.length)]!, true);
  } else if (kind === 2) {
    const p = Math.min(where(), out.length - 8);
    view.setBigUint64(Math.max(0, p), BigInt.asUintN(64, BigInt(Math.floor(random() * 2 ** 53)) << BigInt(Math.floor(random() * 12))), true);
  } else if (kind === 3) {
    return bytes.slice(0, at());
  } else if (kind === 4) {
    const p = where();
    const junk = Uint8Array.from({ length: 1 + Math.floor(random() * 16) }, () => Math.floor(random() * 256));
    return Uint8Array.from([...bytes.subarray(0, p), ...junk, ...bytes.subarray(p)]);
  } else {
    const p = where();
    return Uint8Array.from([...bytes.subarray(0, p), ...bytes.subarray(p + 1 + Math.floor(random() * 16))]);
  }
  return out;
}

/** One random edit of a JSON file: a value replaced by another type or an extreme, or raw byte damage. */
function mutateJson(text: string, random: () => number): Uint8Array {
  const enc = new TextEncoder();
  if (random() < 0.3) return mutateBytes(enc.encode(text), random, text.length);
  const value = JSON.parse(text) as unknown;
  const replacements = [null, -1, 0, 1e308, 2 ** 53, 'x', '', [], {}, true, 1.5, '\u0000', 'a'.repeat(1000), [1, 2, 3], { type: 'Unknown' }];
  const containers: Array<Record<string, unknown> | unknown[]> = [];
  const walk = (v: unknown) => {
    if (v && typeof v === 'object') {
      containers.push(v as Record<string, unknown>);
      for (const child of Object.values(v)) walk(child);
    }
  };
  walk(value);
  for (let i = 0, n = 1 + Math.floor(random() * 3); i < n; i++) {
    const c = containers[Math.floor(random() * containers.length)]!;
    const keys = Object.keys(c);
    if (keys.length === 0) continue;
    const key = keys[Math.floor(random() * keys.length)]!;
    const replacement = replacements[Math.floor(random() * replacements.length)];
    if (random() < 0.15) delete (c as Record<string, unknown>)[key];
    else (c as Record<string, unknown>)[key] = structuredClone(replacement);
  }
  return enc.encode(JSON.stringify(value));
}

const parts = syntheticModel({ arch: 'qwen2', seed: 4, dims: { hidden: 64, intermediate: 128, layers: 1, heads: 2, kvHeads: 1, headDim: 32, vocab: 300 } });
const hf = hfFiles(parts, 'f32');
const gguf = hfToGguf(parts, 'q8_0');
const text = (name: string) => new TextDecoder().decode(hf.get(name)!);

interface Tally {
  loaded: number;
  typedErrors: number;
  problems: string[];
}

async function fuzz(format: string, makeCase: (random: () => number) => () => Promise<unknown>): Promise<Tally> {
  const tally: Tally = { loaded: 0, typedErrors: 0, problems: [] };
  for (let seed = 1; seed <= CASES; seed++) {
    const load = makeCase(makeRandom(seed).next);
    const before = process.memoryUsage().arrayBuffers;
    try {
      await load();
      tally.loaded++;
    } catch (e) {
      if (e instanceof ModelFormatError) tally.typedErrors++;
      else tally.problems.push(`${format} seed ${seed}: untyped ${(e as Error)?.name}: ${(e as Error)?.message}`);
    }
    const retained = process.memoryUsage().arrayBuffers - before;
    if (retained > RETAINED_CAP_BYTES) tally.problems.push(`${format} seed ${seed}: ${retained} bytes retained`);
  }
  console.log(`fuzz ${format}: ${CASES} cases, ${tally.loaded} loaded, ${tally.typedErrors} ModelFormatErrors, ${tally.problems.length} problems`);
  return tally;
}

describe('parser fuzzing', () => {
  it('GGUF files', async () => {
    const tally = await fuzz('gguf', (random) => {
      const bytes = mutateBytes(gguf, random, 8192);
      return () => openGgufModel(bytesSource('fuzz.gguf', bytes));
    });
    expect(tally.problems).toEqual([]);
    expect(tally.typedErrors).toBeGreaterThan(CASES / 4);
  }, 600_000);

  const hfCase = (file: string, mutate: (random: () => number) => Uint8Array) => (random: () => number) => {
    const files = new Map(hf);
    files.set(file, mutate(random));
    return () => openHfModel(mapOpener(files), 'fuzz');
  };

  it('safetensors headers', async () => {
    const st = hf.get('model.safetensors')!;
    const headerBytes = 8 + Number(new DataView(st.buffer, st.byteOffset).getBigUint64(0, true));
    const tally = await fuzz('safetensors', hfCase('model.safetensors', (random) => mutateBytes(st, random, headerBytes)));
    expect(tally.problems).toEqual([]);
    expect(tally.typedErrors).toBeGreaterThan(CASES / 4);
  }, 600_000);

  it('tokenizer.json', async () => {
    const tally = await fuzz('tokenizer.json', hfCase('tokenizer.json', (random) => mutateJson(text('tokenizer.json'), random)));
    expect(tally.problems).toEqual([]);
  }, 600_000);

  it('config.json', async () => {
    const tally = await fuzz('config.json', hfCase('config.json', (random) => mutateJson(text('config.json'), random)));
    expect(tally.problems).toEqual([]);
    expect(tally.typedErrors).toBeGreaterThan(CASES / 4);
  }, 600_000);
});
