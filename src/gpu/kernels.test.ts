// Holds the kernel registry to the WGSL text: every kernel's Params fields (names, order, types),
// its bindings (names, order, kinds), matmul's tile constants, paged attention's RowInfo, WorkItem
// and SLOTS, and the shared TokenInfo struct. Compiles nothing.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ATTENTION_MAX_HEAD_DIM, ATTENTION_MAX_LANE_QUADS, ATTENTION_TILE, attentionShape, KERNELS, MATMUL_ROWS_PER_INVOCATION, MATMUL_TOKENS_PER_INVOCATION, SHADER_FILES, type BindingKind, type KernelName } from './kernels';
import { SAMPLE_CANDIDATE_CAP } from '../engine/sample-numerics';
import { SAMPLE_BINS, SAMPLE_FINISH_SIZE, SAMPLE_HIST_WORDS, SAMPLE_LEVEL_WORDS, SAMPLE_MAX_LEVELS } from './sample-plan';
import { ATTENTION_ITEM_WORDS, PENALTY_ENTRY_WORDS, PENALTY_INFO_WORDS, ROW_INFO_WORDS, SAMPLE_INFO_WORDS, SAMPLE_LOGPROB_WORDS, TOKEN_INFO_WORDS } from './step-meta';
import { MAX_TOP_LOGPROBS } from '../engine/penalties';

const shaderDir = join(import.meta.dirname, '../../shaders');
const wgsl = (file: string): string => readFileSync(join(shaderDir, `${file}.wgsl`), 'utf8').replace(/\/\/[^\n]*/g, '');

/** [name, type] of each field of `struct <name> { ... }`, in order; null when not declared. */
function structFields(source: string, name: string): [string, string][] | null {
  const body = new RegExp(`struct\\s+${name}\\s*\\{([^}]*)\\}`).exec(source)?.[1];
  if (body === undefined) return null;
  return body
    .split(',')
    .map((field) => field.trim())
    .filter((field) => field.length > 0)
    .map((field) => {
      const [fieldName, type] = field.split(':').map((part) => part.trim());
      return [fieldName!, type!];
    });
}

/** [name, kind] of each binding by binding number, from `@group(0) @binding(i) var<space[, access]> name`. */
function bindings(source: string): [string, BindingKind][] {
  const found: [string, BindingKind][] = [];
  for (const m of source.matchAll(/@group\((\d+)\)\s*@binding\((\d+)\)\s*var<([^>]*)>\s*(\w+)/g)) {
    expect(m[1], 'every binding is in group 0').toBe('0');
    const [space, access] = m[3]!.split(',').map((part) => part.trim());
    found[Number(m[2])] = [m[4]!, space === 'uniform' ? 'uniform' : access === 'read_write' ? 'write' : 'read'];
  }
  return found;
}

describe('kernel registry vs shaders/', () => {
  for (const kernel of Object.keys(KERNELS) as KernelName[]) {
    const spec = KERNELS[kernel];
    it(`${kernel}: Params fields and bindings (names, kinds) match ${spec.file}.wgsl`, () => {
      const source = wgsl(spec.file);
      expect(structFields(source, 'Params')).toEqual(spec.params.map(([name, type]) => [name, type]));
      expect(bindings(source)).toEqual(spec.bindings.map(([name, kind]) => [name, kind]));
      expect(source).toMatch(/@group\(0\)\s*@binding\(0\)\s*var<uniform>\s*params\s*:\s*Params\s*;/);
    });
  }

  it('every shaders/*.wgsl is a registered kernel', () => {
    const onDisk = readdirSync(shaderDir).filter((name) => name.endsWith('.wgsl')).map((name) => name.slice(0, -'.wgsl'.length));
    expect(onDisk.sort()).toEqual([...SHADER_FILES].sort());
  });

  it("paged attention's RowInfo, WorkItem, TILE and MAX_LANE_QUADS are the host's", () => {
    const source = wgsl(KERNELS.paged_attention.file);
    expect(structFields(source, 'RowInfo')).toEqual([
      ['firstToken', 'u32'],
      ['numTokens', 'u32'],
      ['startPos', 'u32'],
      ['blockTableOffset', 'u32'],
    ]);
    expect(structFields(source, 'WorkItem')).toEqual([
      ['row', 'u32'],
      ['query', 'u32'],
      ['split', 'u32'],
      ['numQueries', 'u32'],
    ]);
    expect([ROW_INFO_WORDS, ATTENTION_ITEM_WORDS]).toEqual([4, 4]);
    const constant = (name: string) => Number(new RegExp(`const\\s+${name}\\s*:\\s*u32\\s*=\\s*(\\d+)u\\s*;`).exec(source)?.[1]);
    expect(constant('TILE')).toBe(ATTENTION_TILE);
    expect(constant('MAX_LANE_QUADS')).toBe(ATTENTION_MAX_LANE_QUADS);
  });

  it.each(['gpu', 'cpu'] as const)("paged attention's %s shape fits its registers and MAX_HEAD_DIM", (setting) => {
    const shape = attentionShape(setting, 1 << 20);
    expect(shape.lanes * shape.laneQuads * 4).toBeGreaterThanOrEqual(ATTENTION_MAX_HEAD_DIM);
    expect(shape.laneQuads).toBeLessThanOrEqual(ATTENTION_MAX_LANE_QUADS);
    expect(shape.splitKeys % ATTENTION_TILE).toBe(0);
    if (setting === 'gpu') expect(shape.lanes * shape.quads * shape.items).toBeGreaterThanOrEqual(64); // DESIGN: >= 64 invocations on GPUs
    expect(shape.lanes * shape.mergeHeads).toBeGreaterThanOrEqual(setting === 'gpu' ? 64 : 4);
  });

  it("matmul's tile constants are the host's", () => {
    const source = wgsl(KERNELS.matmul.file);
    const constant = (name: string) => Number(new RegExp(`const\\s+${name}\\s*:\\s*u32\\s*=\\s*(\\d+)u\\s*;`).exec(source)?.[1]);
    expect(constant('TILE')).toBe(MATMUL_TOKENS_PER_INVOCATION);
    expect(constant('ROWS')).toBe(MATMUL_ROWS_PER_INVOCATION);
  });

  it("sample's SampleInfo, LevelState and scratch constants are the host's", () => {
    const source = wgsl(KERNELS.sample.file);
    const constant = (name: string) => Number(new RegExp(`const\\s+${name}\\s*:\\s*u32\\s*=\\s*(\\d+)u\\s*;`).exec(source)?.[1]);
    expect(structFields(source, 'SampleInfo')).toEqual([
      ['temperature', 'f32'],
      ['topK', 'u32'],
      ['topP', 'f32'],
      ['seed', 'u32'],
      ['pos', 'u32'],
      ['invTemperature', 'f32'],
      ['logprobs', 'u32'],
      ['logprobSlot', 'u32'],
    ]);
    expect(SAMPLE_INFO_WORDS).toBe(8);
    expect(constant('MAX_TOP_LOGPROBS')).toBe(MAX_TOP_LOGPROBS);
    expect(constant('LOGPROB_WORDS')).toBe(SAMPLE_LOGPROB_WORDS);
    expect(structFields(source, 'LevelState')).toHaveLength(SAMPLE_LEVEL_WORDS);
    expect(constant('CAP')).toBe(SAMPLE_CANDIDATE_CAP);
    expect(constant('BINS')).toBe(SAMPLE_BINS);
    expect(constant('MAX_LEVELS')).toBe(SAMPLE_MAX_LEVELS);
    expect(constant('HIST_WORDS')).toBe(SAMPLE_HIST_WORDS);
    expect(constant('LEVEL_WORDS')).toBe(SAMPLE_LEVEL_WORDS);
    expect(constant('FINISH_SIZE')).toBe(SAMPLE_FINISH_SIZE);
  });

  it("penalties' PenaltyInfo and Entry are the host's", () => {
    const source = wgsl(KERNELS.penalties.file);
    expect(structFields(source, 'PenaltyInfo')).toEqual([
      ['position', 'u32'],
      ['first', 'u32'],
      ['numEntries', 'u32'],
      ['firstDraft', 'u32'],
      ['numDrafts', 'u32'],
      ['frequency', 'f32'],
      ['presence', 'f32'],
      ['repetition', 'f32'],
      ['invRepetition', 'f32'],
      ['pad0', 'u32'],
      ['pad1', 'u32'],
      ['pad2', 'u32'],
    ]);
    expect(PENALTY_INFO_WORDS).toBe(12);
    expect(structFields(source, 'Entry')).toEqual([
      ['id', 'u32'],
      ['count', 'u32'],
      ['inPrompt', 'u32'],
      ['bias', 'f32'],
    ]);
    expect(PENALTY_ENTRY_WORDS).toBe(4);
  });

  it('every copy of TokenInfo has the layout step-meta packs', () => {
    const copies = SHADER_FILES.flatMap((file) => {
      const fields = structFields(wgsl(file), 'TokenInfo');
      return fields ? [{ file, fields }] : [];
    });
    expect(copies.map((c) => c.file).sort()).toEqual(['embedding', 'penalties', 'rope_kv_write']);
    for (const { fields } of copies) {
      expect(fields).toEqual([
        ['id', 'u32'],
        ['pos', 'u32'],
        ['row', 'u32'],
        ['blockTableOffset', 'u32'],
      ]);
    }
    expect(copies[0]!.fields.length).toBe(TOKEN_INFO_WORDS);
  });
});
