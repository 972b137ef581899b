// Malformed and hostile model files: each must fail fast with a ModelFormatError that names
// the file and the problem, without hanging or allocating more than the file implies.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { bytesSource, mapOpener } from './byte-source';
import { ModelFormatError } from './errors';
import { MAX_METADATA_STRING_BYTES, readGgufHeader } from './gguf';
import { loadGgufModel } from './gguf-loader';
import { tokenizerFromGguf } from './gguf-vocab';
import { loadHfModel } from './hf-loader';
import { openHfModel } from './open-model';
import { HfTokenizer } from './tokenizer';
import { MAX_VOCAB_ENTRIES } from './vocab-limits';
import { largeBpeTokenizerJson } from './testing/large-tokenizer';
import { byteLevelGguf } from './testing/tokenizer-fixtures';
import { openInChild, writeModelFolder } from '../../tools/models/tokenizer-refusal.node';
import { fileSource, folderOpener } from '../../tools/models/node-files';
import { ggufContents, hfToGguf } from '../../tools/models/hf-to-gguf';
import { arr, str, u32, writeGguf, type GgufValue } from '../../tools/models/gguf-writer';
import { hfFiles, syntheticModel } from './testing/synthetic-model-fixtures';
import { writeSafetensors } from '../../tools/models/safetensors-writer';

const tiny = () => syntheticModel({ arch: 'llama', seed: 9, dims: { hidden: 64, intermediate: 128, layers: 1, heads: 2, kvHeads: 1, headDim: 32 } });
const enc = (s: string) => new TextEncoder().encode(s);
/** A pattern matching exactly `text`, for messages with brackets and dots in them. */
const exactly = (text: string) => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);

async function expectGgufError(bytes: Uint8Array, problem: RegExp): Promise<void> {
  const err = await loadGgufModel(bytesSource('bad.gguf', bytes)).then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(ModelFormatError);
  expect((err as ModelFormatError).file).toBe('bad.gguf');
  expect((err as ModelFormatError).problem).toMatch(problem);
}

async function expectHfError(files: Map<string, Uint8Array>, file: string, problem: RegExp): Promise<void> {
  const err = await loadHfModel(mapOpener(files)).then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(ModelFormatError);
  expect((err as ModelFormatError).file).toBe(file);
  expect((err as ModelFormatError).problem).toMatch(problem);
}

/** Byte offset just past a length-prefixed string `text` whose next byte passes `next`. */
function stringEndAt(bytes: Uint8Array, text: string, next: (byte: number) => boolean): number {
  const needle = enc(text);
  outer: for (let i = 8; i < bytes.length - needle.length; i++) {
    for (let j = 0; j < needle.length; j++) if (bytes[i + j] !== needle[j]) continue outer;
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    if (view.getBigUint64(i - 8, true) === BigInt(needle.length) && next(bytes[i + needle.length])) return i + needle.length;
  }
  throw new Error(`no string ${text}`);
}

/** Byte offset just past a tensor info's name (where n_dims starts). */
const tensorInfoAt = (bytes: Uint8Array, name: string) => stringEndAt(bytes, name, (b) => b <= 4);
/** Byte offset just past a metadata key (where its value type starts). */
const metadataValueAt = (bytes: Uint8Array, key: string) => stringEndAt(bytes, key, (b) => b <= 12);

/** Byte offset of a 2-D tensor info's data offset field. */
const tensorOffsetField = (bytes: Uint8Array, name: string) => tensorInfoAt(bytes, name) + 4 + 16 + 4;

function patched(bytes: Uint8Array, edit: (view: DataView) => void): Uint8Array {
  const copy = bytes.slice();
  edit(new DataView(copy.buffer));
  return copy;
}

function ggufWith(editMeta: (m: Array<[string, GgufValue]>) => Array<[string, GgufValue]>): Uint8Array {
  const { metadata, tensors } = ggufContents(tiny(), 'f32');
  return writeGguf(editMeta(metadata), tensors);
}

const setMeta = (key: string, v: GgufValue) => (m: Array<[string, GgufValue]>) => m.map(([k, old]): [string, GgufValue] => [k, k === key ? v : old]);

describe('malformed GGUF', () => {
  const good = hfToGguf(tiny(), 'f32');

  it('accepts the unmodified file (the cases below differ from it in one way)', async () => {
    await expect(loadGgufModel(bytesSource('good.gguf', good))).resolves.toBeTruthy();
  });
  it('empty file', () => expectGgufError(new Uint8Array(0), /truncated/));
  it('wrong magic', () => expectGgufError(patched(good, (v) => v.setUint32(0, 0x46554746, true)), /not a GGUF file/));
  it('unknown version 4', () => expectGgufError(patched(good, (v) => v.setUint32(4, 4, true)), /unsupported GGUF version 4/));
  it('version 1 (32-bit counts)', () => expectGgufError(patched(good, (v) => v.setUint32(4, 1, true)), /unsupported GGUF version 1/));
  it('header cut in the middle of the metadata', () => expectGgufError(good.slice(0, 3000), /truncated|malformed/));
  it('tensor data past the end of the file', () => expectGgufError(good.slice(0, good.length - 100), /runs past the end/));
  it('absurd tensor count', () => expectGgufError(patched(good, (v) => v.setBigUint64(8, 1n << 60n, true)), /tensor count .* impossible/));
  it('absurd metadata count', () => expectGgufError(patched(good, (v) => v.setBigUint64(16, 1n << 40n, true)), /metadata count .* impossible/));
  it('unknown tensor type', () => {
    const at = tensorInfoAt(good, 'blk.0.ffn_up.weight');
    return expectGgufError(patched(good, (v) => v.setUint32(at + 4 + 16, 13, true)), /"blk.0.ffn_up.weight" has unsupported GGML type 13/);
  });
  it('rows that are not whole blocks of their type', () => {
    const at = tensorInfoAt(good, 'blk.0.ffn_up.weight');
    return expectGgufError(patched(good, (v) => v.setUint32(at + 4 + 16, 12, true)), /not whole q4_K blocks/);
  });
  it('absurd dimension', () => {
    const at = tensorInfoAt(good, 'token_embd.weight');
    return expectGgufError(patched(good, (v) => v.setBigUint64(at + 4 + 8, 1n << 40n, true)), /dimension|exceeds|invalid/);
  });
  it('misaligned tensor offset', () => {
    const at = tensorInfoAt(good, 'output.weight');
    return expectGgufError(patched(good, (v) => v.setBigUint64(at + 4 + 16 + 4, v.getBigUint64(at + 4 + 16 + 4, true) + 4n, true)), /not aligned/);
  });
  it('absurd string length in metadata', () => expectGgufError(patched(good, (v) => v.setBigUint64(24, 1n << 50n, true)), /metadata key 0 is 1125899906842624 bytes long/));
  it('tensors sharing bytes (attn_k starting inside attn_q)', async () => {
    const { dataOffset, tensors } = await readGgufHeader(bytesSource('good.gguf', good));
    const q = dataOffset + tensors.find((t) => t.name === 'blk.0.attn_q.weight')!.offset;
    const bad = patched(good, (v) => v.setBigUint64(tensorOffsetField(good, 'blk.0.attn_k.weight'), BigInt(q - dataOffset + 32), true));
    // q is [64, 64] f32 (16384 bytes), k [32, 64] f32 (8192 bytes).
    return expectGgufError(bad, exactly(`tensors "blk.0.attn_q.weight" and "blk.0.attn_k.weight" overlap in the file (bytes [${q}, ${q + 16384}) and [${q + 32}, ${q + 32 + 8192}))`));
  });
  it('output.weight stored on the bytes of token_embd.weight', () => {
    const embd = new DataView(good.buffer, good.byteOffset).getBigUint64(tensorOffsetField(good, 'token_embd.weight'), true);
    const bad = patched(good, (v) => v.setBigUint64(tensorOffsetField(good, 'output.weight'), embd, true));
    return expectGgufError(bad, /^tensors "(token_embd|output)\.weight" and "(token_embd|output)\.weight" overlap in the file/);
  });
  it('a 3 MB general.name', () => expectGgufError(ggufWith(setMeta('general.name', str('n'.repeat(3_000_000)))), exactly(`metadata "general.name" is a 3000000-byte string, longer than the ${MAX_METADATA_STRING_BYTES}-byte limit for metadata strings`)));
  it('an over-long string inside a metadata array', () => {
    const tokens = Array.from({ length: 256 }, (_, i) => (i === 200 ? 'x'.repeat(MAX_METADATA_STRING_BYTES + 1) : `t${i}`));
    return expectGgufError(ggufWith(setMeta('tokenizer.ggml.tokens', arr('string', tokens))), /^metadata "tokenizer.ggml.tokens" entry 200 is a 1048577-byte string/);
  });
  it('a vocabulary of 3.5M tokens', () => {
    const count = metadataValueAt(good, 'tokenizer.ggml.tokens') + 4 + 4;
    const bad = patched(good, (v) => v.setBigUint64(count, 3_500_000n, true));
    return expectGgufError(bad, exactly(`metadata "tokenizer.ggml.tokens" has 3500000 entries, more than the limit of ${MAX_VOCAB_ENTRIES}`));
  });
  it('missing tensor', () => {
    const { metadata, tensors } = ggufContents(tiny(), 'f32');
    return expectGgufError(writeGguf(metadata, tensors.filter((t) => t.name !== 'blk.0.ffn_down.weight')), /missing tensor "model.layers.0.mlp.down_proj.weight"/);
  });
  it('shape disagreeing with the config', () => expectGgufError(ggufWith(setMeta('llama.feed_forward_length', u32(96))), /shape \[128,64\] but the config implies \[96,64\]/));
  it('unsupported architecture', () => expectGgufError(ggufWith(setMeta('general.architecture', str('mamba'))), /unsupported architecture "mamba"/));
  it('absurd layer count', () => expectGgufError(ggufWith(setMeta('llama.block_count', u32(4_000_000_000))), /"llama.block_count" must be an integer/));
  it('missing tokenizer', () => expectGgufError(ggufWith((m) => m.filter(([k]) => k !== 'tokenizer.ggml.tokens')), /missing tokenizer/));
  it('vocabulary larger than the embedding', () => expectGgufError(
    ggufWith(setMeta('tokenizer.ggml.tokens', arr('string', Array.from({ length: 300 }, (_, i) => `t${i}`)))),
    exactly("token ids 259, 260, 261, 262, 263 and 36 more lie outside the model's vocabulary of 259 tokens (ids 0 to 258, its embedding rows)"),
  ));
});

describe('malformed HF folders', () => {
  const good = () => hfFiles(tiny(), 'f32');
  const withFile = (name: string, bytes: Uint8Array | null) => {
    const files = good();
    if (bytes) files.set(name, bytes);
    else files.delete(name);
    return files;
  };
  const config = () => JSON.parse(new TextDecoder().decode(good().get('config.json'))) as Record<string, unknown>;
  const withConfig = (edit: Record<string, unknown>) => withFile('config.json', enc(JSON.stringify({ ...config(), ...edit })));
  const headerLength = (n: bigint) => {
    const bytes = good().get('model.safetensors')!.slice();
    new DataView(bytes.buffer).setBigUint64(0, n, true);
    return bytes;
  };
  const safetensorsWithHeader = (header: unknown) => {
    const json = enc(JSON.stringify(header));
    const out = new Uint8Array(8 + json.length + 64);
    new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
    out.set(json, 8);
    return out;
  };

  it('accepts the unmodified folder', async () => {
    await expect(loadHfModel(mapOpener(good()))).resolves.toBeTruthy();
  });
  it('missing config.json', () => expectHfError(withFile('config.json', null), 'config.json', /missing/));
  it('config.json is not JSON', () => expectHfError(withFile('config.json', enc('{"model_type": "llama",')), 'config.json', /invalid JSON/));
  it('unsupported architecture', () => expectHfError(withConfig({ model_type: 'mistral' }), 'config.json', /unsupported architecture "mistral"/));
  it('absurd layer count', () => expectHfError(withConfig({ num_hidden_layers: 1e9 }), 'config.json', /"num_hidden_layers" must be an integer/));
  it('heads not divisible by kv heads', () => expectHfError(withConfig({ num_key_value_heads: 3 }), 'config.json', /not a multiple/));
  it('unsupported rope scaling', () => expectHfError(withConfig({ rope_scaling: { rope_type: 'yarn', factor: 4 } }), 'config.json', /unsupported rope_scaling type "yarn"/));
  it('missing tokenizer', () => expectHfError(withFile('tokenizer.json', null), 'tokenizer.json', /missing/));
  it('missing weights', () => expectHfError(withFile('model.safetensors', null), 'model.safetensors', /missing/));
  it('shape disagreeing with config', () => expectHfError(withConfig({ intermediate_size: 96 }), 'model.safetensors', /shape \[128,64\] but the config implies \[96,64\]/));
  it('missing tensor', () => {
    const parts = tiny();
    parts.tensors.delete('model.layers.0.self_attn.v_proj.weight');
    return expectHfError(hfFiles(parts, 'f32'), 'model.safetensors', /missing tensor "model.layers.0.self_attn.v_proj.weight"/);
  });
  it('header length larger than any real header', () => expectHfError(withFile('model.safetensors', headerLength(1n << 62n)), 'model.safetensors', /exceeds the .* limit/));
  it('header length past the end of the file', () => expectHfError(withFile('model.safetensors', headerLength(90_000_000n)), 'model.safetensors', /runs past the end/));
  it('truncated to less than the length prefix', () => expectHfError(withFile('model.safetensors', new Uint8Array(5)), 'model.safetensors', /truncated/));
  it('header is not JSON', () => expectHfError(withFile('model.safetensors', headerLength(1000n).fill(0x7b, 8, 40)), 'model.safetensors', /not valid JSON/));
  it('tensor data past the end', () => expectHfError(withFile('model.safetensors', safetensorsWithHeader({ a: { dtype: 'F32', shape: [1000], data_offsets: [0, 4000] } })), 'model.safetensors', /runs past the end/));
  it('unsupported safetensors dtype', () => expectHfError(withFile('model.safetensors', safetensorsWithHeader({ a: { dtype: 'I8', shape: [4], data_offsets: [0, 4] } })), 'model.safetensors', /unsupported dtype "I8"/));
  it('byte count disagreeing with shape', () => expectHfError(withFile('model.safetensors', safetensorsWithHeader({ a: { dtype: 'F16', shape: [4, 4], data_offsets: [0, 16] } })), 'model.safetensors', /has 16 bytes but F16 \[4,4\] needs 32/));
  it('absurd dimensions in a safetensors shape', () => expectHfError(withFile('model.safetensors', safetensorsWithHeader({ a: { dtype: 'F32', shape: [2 ** 40, 2 ** 40], data_offsets: [0, 4] } })), 'model.safetensors', /invalid shape/));
  it('sharded index naming a missing shard', () => {
    const files = good();
    files.set('model.safetensors.index.json', enc(JSON.stringify({ weight_map: { 'model.norm.weight': 'model-00002-of-00002.safetensors' } })));
    return expectHfError(files, 'model-00002-of-00002.safetensors', /missing/);
  });
  it('sharded index escaping the folder', () => {
    const files = good();
    files.set('model.safetensors.index.json', enc(JSON.stringify({ weight_map: { 'model.norm.weight': '../../etc/passwd.safetensors' } })));
    return expectHfError(files, 'model.safetensors.index.json', /invalid shard file name/);
  });
  it('the same tensor in two shards', () => {
    const t = { name: 'model.norm.weight', dtype: 'f32' as const, shape: [1], data: new Uint8Array(4) };
    const files = good();
    files.set('a.safetensors', writeSafetensors([t]));
    files.set('b.safetensors', writeSafetensors([t]));
    files.set('model.safetensors.index.json', enc(JSON.stringify({ weight_map: { x: 'a.safetensors', y: 'b.safetensors' } })));
    return expectHfError(files, 'b.safetensors', /appears in more than one shard/);
  });
  it('tensors sharing bytes (k_proj on the first bytes of q_proj)', () => {
    const st = good().get('model.safetensors')!;
    const headerLen = Number(new DataView(st.buffer, st.byteOffset).getBigUint64(0, true));
    const header = JSON.parse(new TextDecoder().decode(st.subarray(8, 8 + headerLen))) as Record<string, { data_offsets: number[] }>;
    const q = header['model.layers.0.self_attn.q_proj.weight'].data_offsets;
    const k = header['model.layers.0.self_attn.k_proj.weight'];
    k.data_offsets = [q[0], q[0] + (k.data_offsets[1] - k.data_offsets[0])];
    // Padded with spaces to the old length, so the data section does not move.
    const json = enc(JSON.stringify(header).padEnd(headerLen, ' '));
    expect(json.length).toBe(headerLen);
    const bad = st.slice();
    bad.set(json, 8);
    const at = (n: number) => 8 + headerLen + n;
    // Same start: the shorter (k, [32, 64] f32) sorts first.
    return expectHfError(withFile('model.safetensors', bad), 'model.safetensors', exactly(
      `tensors "model.layers.0.self_attn.k_proj.weight" and "model.layers.0.self_attn.q_proj.weight" overlap in the file (bytes [${at(q[0])}, ${at(q[0] + 8192)}) and [${at(q[0])}, ${at(q[1])}))`,
    ));
  });
});

describe('GGUF metadata strings are read whole or refused', () => {
  const header = (metadata: Array<[string, GgufValue]>) => readGgufHeader(bytesSource('m.gguf', writeGguf(metadata, [])));

  it('keeps strings at the limit whole where they cross the reader\'s pieces', async () => {
    // Five 1 MiB strings and 400k short ones: several cross each 2 MB and 4 MiB boundary.
    const big = Array.from({ length: 5 }, (_, i): [string, GgufValue] => [`test.big${i}`, str(String.fromCharCode(97 + i).repeat(MAX_METADATA_STRING_BYTES))]);
    const tokens = Array.from({ length: 400_000 }, (_, i) => `tok${i}`);
    const { metadata } = await header([...big, ['tokenizer.ggml.tokens', arr('string', tokens)], ['general.name', str('after')]]);
    for (const [key, value] of big) expect(metadata.get(key)).toBe(value.value);
    expect(metadata.get('tokenizer.ggml.tokens')).toEqual(tokens);
    expect(metadata.get('general.name')).toBe('after');
  });

  it('refuses a string one byte past the limit, naming the key', async () => {
    const err = await header([['general.license', str('l'.repeat(MAX_METADATA_STRING_BYTES + 1))]]).then(() => null, (e: unknown) => e);
    expect(err).toEqual(new ModelFormatError('m.gguf', `metadata "general.license" is a ${MAX_METADATA_STRING_BYTES + 1}-byte string, longer than the ${MAX_METADATA_STRING_BYTES}-byte limit for metadata strings`));
  });

  it('refuses a key that appears twice', async () => {
    await expect(header([['general.name', str('a')], ['general.name', str('b')]])).rejects.toThrow(/metadata key "general.name" appears twice/);
  });

  it('decodes strings exactly as stored: a leading U+FEFF stays (Gemma 3 id 135260 is U+FEFF + "//")', async () => {
    const tokens = ['//', '\uFEFF//', '\uFEFF', '\uFEFF\uFEFF'];
    const { metadata } = await header([['tokenizer.ggml.tokens', arr('string', tokens)], ['general.name', str('\uFEFFname')]]);
    expect(metadata.get('tokenizer.ggml.tokens')).toEqual(tokens);
    expect(metadata.get('general.name')).toBe('\uFEFFname');
  });

  it('refuses a string that is not valid UTF-8 rather than replacing its bytes', async () => {
    const bytes = writeGguf([['general.name', str('a\u00ffb')]], []);
    const at = bytes.findIndex((b, i) => b === 0xc3 && bytes[i + 1] === 0xbf);
    bytes[at] = 0xff;
    const err = await readGgufHeader(bytesSource('m.gguf', bytes)).then(() => null, (e: unknown) => e);
    expect(err).toEqual(new ModelFormatError('m.gguf', `the 4-byte string at byte ${at - 1} is not valid UTF-8`));
  });

  it('a duplicate token after exact decoding is still refused', async () => {
    const { metadata } = await header([['tokenizer.ggml.tokens', arr('string', ['a', '\uFEFFa', '\uFEFFa'])]]);
    expect(() => tokenizerFromGguf({ 'tokenizer.ggml.model': 'gpt2', 'tokenizer.ggml.tokens': metadata.get('tokenizer.ggml.tokens') })).toThrow(
      new ModelFormatError('GGUF tokenizer metadata', 'token "\uFEFFa" appears twice (ids 1 and 2)'),
    );
  });
});

describe('oversized vocabularies', () => {
  it('tokenizer.json with 3.5M vocabulary entries', () => {
    const vocab = new Array<[string, number]>(3_500_000).fill(['a', 0]);
    expect(() => HfTokenizer.fromFiles({ tokenizerJson: { model: { type: 'Unigram', unk_id: 0, vocab } } })).toThrow(
      new ModelFormatError('tokenizer.json', `the vocabulary (model.vocab) has 3500000 entries, more than the limit of ${MAX_VOCAB_ENTRIES}`),
    );
  });

  it('tokenizer.json with one BPE merge past the limit', () => {
    const merges = new Array<string>(MAX_VOCAB_ENTRIES + 1).fill('a b');
    expect(() => HfTokenizer.fromFiles({ tokenizerJson: { model: { type: 'BPE', vocab: { a: 0, b: 1, ab: 2 }, merges } } })).toThrow(
      `model.merges has ${MAX_VOCAB_ENTRIES + 1} entries, more than the limit of ${MAX_VOCAB_ENTRIES}`,
    );
  });

  it('GGUF vocabulary metadata one token past the limit', () => {
    const tokens = Array.from({ length: MAX_VOCAB_ENTRIES + 1 }, (_, i) => `t${i}`);
    expect(() => tokenizerFromGguf({ ...byteLevelGguf(), 'tokenizer.ggml.tokens': tokens })).toThrow(
      `tokenizer.ggml.tokens has ${MAX_VOCAB_ENTRIES + 1} entries, more than the limit of ${MAX_VOCAB_ENTRIES}`,
    );
  });
});

describe('tokenizer.json refused from its bytes', () => {
  /** 3.5M entries in 49 MB: under the 64 MB file cap, so only the entry count can refuse it. */
  const hostile = largeBpeTokenizerJson({ vocabEntries: 3_500_000, merges: 0 });
  const folder = () => new Map(hfFiles(tiny(), 'f32')).set('tokenizer.json', hostile);
  /** Where the 1,000,001st vocabulary entry starts: the scan reads no further. */
  const firstPastLimit = new TextDecoder().decode(hostile.subarray(0, 20 << 20)).indexOf(`:${MAX_VOCAB_ENTRIES},`);
  const problem = `the vocabulary (model.vocab) has more than ${MAX_VOCAB_ENTRIES} entries, past the limit (counted up to byte ${hostile.lastIndexOf(0x2c, firstPastLimit) + 1} of ${hostile.length})`;

  it('3.5M vocabulary entries: refused before any text is decoded or parsed', async () => {
    expect(hostile.length).toBeLessThan(64 << 20);
    const parse = vi.spyOn(JSON, 'parse');
    const decode = vi.spyOn(TextDecoder.prototype, 'decode');
    try {
      const err = await openHfModel(mapOpener(folder()), 'hostile').then(() => null, (e: unknown) => e);
      expect(err).toEqual(new ModelFormatError('tokenizer.json', problem));
      // config.json and the safetensors header are parsed; the 49 MB file is neither decoded nor parsed.
      expect(parse.mock.calls.filter(([text]) => text.length > 1 << 20)).toEqual([]);
      expect(decode.mock.calls.filter(([bytes]) => ((bytes as Uint8Array | undefined)?.byteLength ?? 0) > 1 << 20)).toEqual([]);
    } finally {
      parse.mockRestore();
      decode.mockRestore();
    }
  });

  it('3.5M vocabulary entries: a fresh process refusing it peaks under 200 MB (the parse it replaced took ~820 MB)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cohort-hostile-tokenizer-'));
    try {
      writeModelFolder(dir, hostile);
      const report = openInChild(dir);
      expect(report.problem).toBe(problem);
      expect(report.peakRssBytes).toBeLessThan(200 << 20);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('token ids past the embedding', () => {
  const openWith = (parts: ReturnType<typeof tiny>) => openHfModel(mapOpener(hfFiles(parts, 'f32')), 'm').then(() => null, (e: unknown) => e);

  it('HF: a byte-level tokenizer (259 ids) on a model of 256 embedding rows', async () => {
    const parts = syntheticModel({ arch: 'llama', seed: 9, dims: { hidden: 64, intermediate: 128, layers: 1, heads: 2, kvHeads: 1, headDim: 32, vocab: 256 } });
    expect(await openWith(parts)).toEqual(new ModelFormatError('tokenizer.json', "token ids 256, 257, 258 lie outside the model's vocabulary of 256 tokens (ids 0 to 255, its embedding rows)"));
  });

  it('HF: an added token past the rows that nothing needs is set aside, not refused (Gemma 3 <image_soft_token>)', async () => {
    const parts = tiny();
    const added = parts.tokenizer.added_tokens as Array<Record<string, unknown>>;
    parts.tokenizer.added_tokens = [...added, { ...added[0], id: 70_000, content: '<|tool|>' }];
    const opened = await openHfModel(mapOpener(hfFiles(parts, 'f32')), 'm');
    expect(opened.setAsideTokens).toEqual([{ id: 70_000, content: '<|tool|>' }]);
    const tokenizer = opened.tokenizer as HfTokenizer;
    // Never matched in typed text, never written by a template without being refused.
    expect(tokenizer.encode('a<|tool|>b')).not.toContain(70_000);
    expect(() => tokenizer.encodePieces(['a', 70_000])).toThrow(/token 70000 "<\|tool\|>", which the model has no embedding row for/);
  });

  it('HF: a set-aside token that the chat template writes is refused at load, naming it', async () => {
    const parts = tiny();
    const added = parts.tokenizer.added_tokens as Array<Record<string, unknown>>;
    parts.tokenizer.added_tokens = [...added, { ...added[0], id: 70_000, content: '<|tool|>' }];
    const config = parts.tokenizerConfig as Record<string, unknown>;
    config.chat_template = `{% for m in messages %}<|tool|>{{ m.content }}{% endfor %}`;
    expect(await openWith(parts)).toEqual(new ModelFormatError('tokenizer.json', "token id 70000 lies outside the model's vocabulary of 259 tokens (ids 0 to 258, its embedding rows)"));
  });

  it('HF: a model-vocabulary token past the rows (ordinary text reaches it) is still refused', async () => {
    const parts = tiny();
    const model = parts.tokenizer.model as { vocab: Record<string, number> };
    model.vocab = { ...model.vocab, zz: 70_001 };
    expect(await openWith(parts)).toEqual(new ModelFormatError('tokenizer.json', "token id 70001 lies outside the model's vocabulary of 259 tokens (ids 0 to 258, its embedding rows)"));
  });

  it('HF: the unmodified folder loads, its tokenizer filling the embedding exactly', async () => {
    const { desc, tokenizer } = await openHfModel(mapOpener(hfFiles(tiny(), 'f32')), 'm');
    expect((tokenizer as HfTokenizer).vocabSize).toBe(desc.config.vocabSize);
  });
});

describe('files that must keep loading', () => {
  const embedded = (name: string) => fileURLToPath(new URL(`../../public/models/cohort-tiny/${name}`, import.meta.url));

  it.each([['cohort-tiny-f32.gguf'], ['cohort-tiny-q8_0.gguf']])('the embedded %s', async (name) => {
    const { desc } = await loadGgufModel(fileSource(embedded(name), name));
    expect(desc.tensors.size).toBeGreaterThan(0);
  });

  it('the embedded Hugging Face folder', async () => {
    const desc = await loadHfModel(folderOpener(embedded('')));
    expect(desc.tensors.size).toBeGreaterThan(0);
  });

  it('tied embeddings: no output tensor, so nothing shares bytes with token_embd', async () => {
    const parts = syntheticModel({ arch: 'qwen3', seed: 5, tieWordEmbeddings: true });
    const gguf = await loadGgufModel(bytesSource('m.gguf', hfToGguf(parts, 'q8_0')));
    const hf = await loadHfModel(mapOpener(hfFiles(parts, 'f32')));
    for (const desc of [gguf.desc, hf]) expect(desc.config.tieWordEmbeddings).toBe(true);
  });
});
