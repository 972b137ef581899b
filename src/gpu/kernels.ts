// The kernel registry: for every kernel, its shaders/<file>.wgsl, the explicit bind group layout
// of its bindings by name (binding i = entry i) and its uniform Params fields, each packed by name.
// Not a compiler or a cache: see pipeline-cache.ts. kernels.test.ts holds all of it to the WGSL.
import type { DType, MlpActivation } from '../model/desc';
import type { KvCacheType } from '../engine/kv-types';

/** A pipeline's WGSL override constants by name (the pipeline cache keys on kernel + these). */
export type Overrides = Readonly<Record<string, number>>;

/**
 * Which override values the kernels run with, chosen per adapter (runsOnCpu), never per step:
 * 'gpu' the shapes for real GPUs (lanes along K and along head_dim, hundreds of workgroups, split
 * reductions in a fixed order); 'cpu' the shapes measured fastest on CPU adapters (SwiftShader),
 * where every invocation and workgroup costs a fixed few microseconds. One kernel set either way:
 * a setting is override values, never another file. GpuRunnerOptions.kernels forces either.
 */
export type KernelSetting = 'gpu' | 'cpu';

/** uniform = params struct; read = read-only storage; write = read_write storage. */
export type BindingKind = 'uniform' | 'read' | 'write';

/** WGSL scalar type of a Params field: every field is one 4-byte word. */
export type ParamType = 'u32' | 'f32';

export interface KernelSpec {
  /** shaders/<file>.wgsl. */
  file: string;
  /** Its entry point (default `main`): a second pass of a kernel shares the file's definitions. */
  entry?: string;
  /** The WGSL `var` name and kind of every binding in binding-number order, all in group 0; binding 0 is `params`. */
  bindings: readonly (readonly [name: string, kind: BindingKind])[];
  /** The WGSL `struct Params` fields in declaration order. Fields named pad* are written as 0. */
  params: readonly (readonly [name: string, type: ParamType])[];
}

/** paged_attention.wgsl's bindings, shared by both of its entry points. */
const ATTENTION_BINDINGS = [
  ['params', 'uniform'],
  ['rows', 'read'],
  ['items', 'read'],
  ['blockTables', 'read'],
  ['q', 'read'],
  ['kv', 'read'],
  ['out', 'write'],
  ['states', 'write'],
] as const;

/** paged_attention.wgsl's Params, shared by both of its entry points. */
const ATTENTION_PARAMS = [
  ['numItems', 'u32'],
  ['numHeads', 'u32'],
  ['numKvHeads', 'u32'],
  ['headDim', 'u32'],
  ['blockSize', 'u32'],
  ['kvDim', 'u32'],
  ['vOffset', 'u32'],
  ['scale', 'f32'],
  ['splitKeys', 'u32'],
  ['maxSplits', 'u32'],
  ['softcap', 'f32'],
  ['window', 'u32'],
] as const;

/** sample.wgsl's bindings, shared by both of its entry points. */
const SAMPLE_BINDINGS = [
  ['params', 'uniform'],
  ['logits', 'read'],
  ['infos', 'read'],
  ['weights', 'write'],
  ['state', 'write'],
  ['hist', 'write'],
  ['sampled', 'write'],
  ['logprobOut', 'write'],
] as const;

/** sample.wgsl's Params, shared by both of its entry points. */
const SAMPLE_PARAMS = [
  ['numRows', 'u32'],
  ['vocab', 'u32'],
  ['chunkSize', 'u32'],
  ['numChunks', 'u32'],
  ['level', 'u32'],
  ['numLevels', 'u32'],
  ['pad0', 'u32'],
  ['pad1', 'u32'],
] as const;

export const KERNELS = {
  embedding: {
    file: 'embedding',
    bindings: [['params', 'uniform'], ['tokens', 'read'], ['table', 'read'], ['out', 'write']],
    params: [['numTokens', 'u32'], ['hidden', 'u32'], ['scale', 'f32'], ['rows', 'u32']],
  },
  rms_norm: {
    file: 'rms_norm',
    bindings: [['params', 'uniform'], ['x', 'read'], ['weight', 'read'], ['rowIndex', 'read'], ['out', 'write']],
    params: [['numVecs', 'u32'], ['rowLen', 'u32'], ['eps', 'f32'], ['pad', 'u32']],
  },
  matmul: {
    file: 'matmul',
    bindings: [['params', 'uniform'], ['x', 'read'], ['w', 'read'], ['bias', 'read'], ['y', 'write'], ['y2', 'write'], ['y3', 'write'], ['normWeight', 'read']],
    params: [
      ['numTokens', 'u32'],
      ['n', 'u32'],
      ['k', 'u32'],
      ['splitA', 'u32'],
      ['splitB', 'u32'],
      ['softcap', 'f32'],
      ['eps', 'f32'],
      ['pad2', 'u32'],
    ],
  },
  rope_kv_write: {
    file: 'rope_kv_write',
    bindings: [['params', 'uniform'], ['tokens', 'read'], ['table', 'read'], ['blockTables', 'read'], ['q', 'write'], ['k', 'read'], ['v', 'read'], ['kv', 'write']],
    params: [
      ['numTokens', 'u32'],
      ['numHeads', 'u32'],
      ['numKvHeads', 'u32'],
      ['headDim', 'u32'],
      ['tableLevel', 'u32'],
      ['blockSize', 'u32'],
      ['kvDim', 'u32'],
      ['vOffset', 'u32'],
    ],
  },
  paged_attention: {
    file: 'paged_attention',
    bindings: ATTENTION_BINDINGS,
    params: ATTENTION_PARAMS,
  },
  // the same bindings (items: merge items, one per query): every query's split states into out
  paged_attention_merge: {
    file: 'paged_attention',
    entry: 'merge',
    bindings: ATTENTION_BINDINGS,
    params: ATTENTION_PARAMS,
  },
  swiglu: {
    file: 'swiglu',
    bindings: [['params', 'uniform'], ['gate', 'read'], ['up', 'read'], ['out', 'write']],
    params: [['numElements', 'u32'], ['pad0', 'u32'], ['pad1', 'u32'], ['pad2', 'u32']],
  },
  // bias and penalties into the logits of the positions that use them, before the sampler reads them
  penalties: {
    file: 'penalties',
    bindings: [['params', 'uniform'], ['logits', 'write'], ['tokens', 'read'], ['infos', 'read'], ['entries', 'read']],
    params: [['numPenalized', 'u32'], ['vocab', 'u32'], ['pad0', 'u32'], ['pad1', 'u32']],
  },
  // an output constraint's bitmask into the logits of the constrained positions, before penalties
  token_mask: {
    file: 'token_mask',
    bindings: [['params', 'uniform'], ['logits', 'write'], ['positions', 'read'], ['masks', 'read']],
    params: [['numMasked', 'u32'], ['vocab', 'u32'], ['words', 'u32'], ['pad0', 'u32']],
  },
  // sample.wgsl's level passes (level 0: the chunks' argmax and first histogram; the last: the gather)
  sample: {
    file: 'sample',
    bindings: SAMPLE_BINDINGS,
    params: SAMPLE_PARAMS,
  },
  // the same bindings: one workgroup per row merges the chunks' argmax and draws
  sample_finish: {
    file: 'sample',
    entry: 'finish',
    bindings: SAMPLE_BINDINGS,
    params: SAMPLE_PARAMS,
  },
} as const satisfies Record<string, KernelSpec>;

export type KernelName = keyof typeof KERNELS;

/** Every WGSL file a runner needs, for bundling (?raw imports) and load-time checks. */
export const SHADER_FILES: readonly string[] = [...new Set(Object.values(KERNELS).map((k) => k.file))];

/** Most Params words of any kernel: the bound size of every params slot. */
export const MAX_PARAMS_BYTES = 4 * Math.max(...Object.values(KERNELS).map((k) => k.params.length));

/** A kernel's binding names after `params` (which the runner binds to its params slot). */
export type BindingName<K extends KernelName> = Exclude<(typeof KERNELS)[K]['bindings'][number][0], 'params'>;

/** `named`'s values in binding order after `params`; throws on a name the kernel does not bind. */
export function bindingsInOrder<K extends KernelName, T>(kernel: K, named: Readonly<Record<BindingName<K>, T>>): T[] {
  const bindings: KernelSpec['bindings'] = KERNELS[kernel].bindings;
  const byName = named as Readonly<Record<string, T>>;
  const stray = Object.keys(byName).filter((name) => name === 'params' || !bindings.some(([binding]) => binding === name));
  if (stray.length > 0) throw new Error(`${kernel} has no binding ${stray.join(', ')}`);
  return bindings.slice(1).map(([name]) => byName[name]!);
}

type ParamName<K extends KernelName> = (typeof KERNELS)[K]['params'][number][0];

/** A kernel's Params by field name; padding fields are left out. */
export type ParamValues<K extends KernelName> = { [F in ParamName<K> as F extends `pad${string}` ? never : F]: number };

/** Writes `values` as kernel's Params struct at word `base` of a buffer viewed as u32 and f32. */
export function packParams<K extends KernelName>(kernel: K, values: ParamValues<K>, u32: Uint32Array, f32: Float32Array, base: number): void {
  const fields: KernelSpec['params'] = KERNELS[kernel].params;
  const byName = values as Readonly<Record<string, number>>;
  for (let i = 0; i < fields.length; i++) {
    const [name, type] = fields[i]!;
    const value = byName[name] ?? 0;
    if (type === 'f32') f32[base + i] = value;
    else u32[base + i] = value;
  }
}

/**
 * The DTYPE override of embedding.wgsl and matmul.wgsl for a stored dtype: both kernels decode
 * every dtype from the same u32 words, one code path per value.
 */
export const DTYPE_CODE: Record<DType, number> = {
  f32: 0,
  f16: 1,
  bf16: 2,
  q8_0: 3,
  q4_0: 4,
  q4_K: 5,
  q6_K: 6,
};

/**
 * The KV_TYPE override of rope_kv_write.wgsl and paged_attention.wgsl: the pool's storage type, in
 * the codes of DTYPE_CODE (one numbering for every stored encoding).
 */
export const KV_TYPE_CODE: Record<KvCacheType, number> = { f32: DTYPE_CODE.f32, f16: DTYPE_CODE.f16, q8_0: DTYPE_CODE.q8_0 };

/** K/V values one rope_kv_write invocation writes: whole words of the cache (a q8_0 block shares one amax). */
export const KV_WRITE_VALUES_PER_INVOCATION: Record<KvCacheType, number> = { f32: 1, f16: 2, q8_0: 32 };

/** Tokens one matmul workgroup covers (the TILE const of matmul.wgsl). */
export const MATMUL_TOKENS_PER_INVOCATION = 8;
/** Weight rows one matmul row group covers (the ROWS const of matmul.wgsl). */
export const MATMUL_ROWS_PER_INVOCATION = 4;

/** matmul.wgsl's launch shape: invocations per workgroup, lanes along K per row group, guarded token tile. */
export interface MatmulShape {
  workgroupSize: number;
  lanes: number;
  guardedTile: boolean;
  /** The RMSNorm before q/k/v and the MLP folded into those matmuls (NORM_INPUT): two dispatches fewer per layer. */
  foldNorms: boolean;
}

/**
 * Each setting's matmul shape. 'gpu': 32 lanes along K per row group (a warp's loads cover
 * contiguous bytes of one row), 2 row groups per 64-invocation workgroup, so every Llama-3.2-1B
 * projection at batch 1 launches 256 workgroups or more, and the RMSNorms before q/k/v and the MLP
 * fold into those matmuls (132 -> 100 dispatches a Llama-3.2-1B step; each workgroup rereads its
 * tokens' hidden vectors, a few KB from cache, by analysis cheaper than a dispatch on a GPU).
 * 'cpu': one lane walks all of K and a workgroup holds 64 row groups (256 rows), norms apart: on
 * SwiftShader lane reductions measured ~5x slower (bench:kernels' roofline), folded norms 1.55x
 * slower at B=1 (an ad-hoc A/B of the embedded model's decode step, no committed report: each
 * workgroup's barriers cost more there than a dispatch).
 */
export const MATMUL_SHAPE: Record<KernelSetting, MatmulShape> = {
  gpu: { workgroupSize: 64, lanes: 32, guardedTile: true, foldNorms: true },
  cpu: { workgroupSize: 64, lanes: 1, guardedTile: false, foldNorms: false },
};

/** Keys per online-softmax update of paged_attention (its TILE const); splits are whole tiles. */
export const ATTENTION_TILE = 8;
/** Dim quads one paged_attention invocation can hold (its MAX_LANE_QUADS const, which sizes its arrays). */
export const ATTENTION_MAX_LANE_QUADS = 64;

/**
 * How paged_attention lays its work over invocations in a kernel setting. An invocation carries
 * four lanes, (query, head) pairs of one head quad (attentionLanes), so every K/V value it loads
 * serves four lanes; `lanes` invocations an item along head_dim, each holding `laneQuads` dim quads
 * (invocation i: quads i, i + lanes, ...); a `main` workgroup takes `items` items and `quads` head
 * quads; a `merge` workgroup `mergeHeads` heads; splits of splitKeys keys, widened so a query has at
 * most maxSplits.
 * 'gpu': 16 invocations an item along head_dim (a key row one coalesced read), 4 head quads a
 * workgroup (64 invocations; a GQA group's heads share each K/V load), 256-key splits spread over
 * workgroups. 'cpu' (SwiftShader, whose loads cost several times their arithmetic and whose
 * invocations run four to a SIMD group): one invocation an item holding every dim, 4 items a
 * workgroup (a chunk's consecutive query groups, or a long decode query's 256-key splits, which
 * walk as many tiles each, so the SIMD group stays full even for one decode row).
 */
export interface AttentionShape {
  lanes: number;
  laneQuads: number;
  items: number;
  quads: number;
  mergeHeads: number;
  splitKeys: number;
  /** Most splits of one query (the setting's, capped by the context's narrow splits): sizes scratch and items. */
  maxSplits: number;
}

const ATTENTION_SHAPES: Record<KernelSetting, AttentionShape> = {
  gpu: { lanes: 16, laneQuads: 4, items: 1, quads: 4, mergeHeads: 4, splitKeys: 256, maxSplits: 16 },
  cpu: { lanes: 1, laneQuads: 64, items: 4, quads: 1, mergeHeads: 4, splitKeys: 256, maxSplits: 16 },
};

/**
 * Largest headDim paged_attention takes: 256, Gemma's (every setting's lanes * laneQuads * 4).
 * headDim must also be a multiple of 4: K/V rows are read in dim quads.
 */
export const ATTENTION_MAX_HEAD_DIM = 256;

/** The setting's attention shape for queries reaching maxContext positions. */
export function attentionShape(setting: KernelSetting, maxContext: number): AttentionShape {
  const shape = ATTENTION_SHAPES[setting];
  return { ...shape, maxSplits: Math.max(1, Math.min(shape.maxSplits, Math.ceil(maxContext / shape.splitKeys))) };
}

/** paged_attention's `main` overrides for a shape (with KV_TYPE and SOFTCAP from the model). */
export function attentionShapeOverrides(shape: AttentionShape): Overrides {
  return { LANES: shape.lanes, LANE_QUADS: shape.laneQuads, ITEMS: shape.items, QUADS: shape.quads };
}

/** paged_attention's `merge` overrides for a shape. */
export function attentionMergeOverrides(shape: AttentionShape): Overrides {
  return { LANES: shape.lanes, LANE_QUADS: shape.laneQuads, HEADS: shape.mergeHeads };
}

/**
 * An invocation's four lanes in a model (paged_attention's main): a head quad holds quadHeads
 * heads of one GQA group (at most 4), a work item queriesPerItem consecutive queries (4 / quadHeads,
 * so the lanes are full where the group is 1, 2 or 4 wide), quadsPerKvHead quads cover a group.
 */
export interface AttentionLanes {
  quadHeads: number;
  queriesPerItem: number;
  numQuads: number;
}

export function attentionLanes(numHeads: number, numKvHeads: number): AttentionLanes {
  const group = numHeads / numKvHeads;
  const quadHeads = Math.min(4, group);
  return { quadHeads, queriesPerItem: Math.floor(4 / quadHeads), numQuads: numKvHeads * Math.ceil(group / quadHeads) };
}

/**
 * paged_attention's workgroups for `numItems` items: `main` x over groups of shape.quads head quads
 * and y over groups of shape.items items; `merge` x over groups of mergeHeads heads and y over its
 * items (one a query).
 */
export function attentionGrid(pass: 'main' | 'merge', numItems: number, shape: AttentionShape, numHeads: number, numKvHeads: number, out: Uint32Array | number[]): void {
  if (pass === 'main') {
    out[0] = Math.ceil(attentionLanes(numHeads, numKvHeads).numQuads / shape.quads);
    out[1] = Math.ceil(numItems / shape.items);
  } else {
    out[0] = Math.ceil(numHeads / shape.mergeHeads);
    out[1] = numItems;
  }
}

/**
 * Keys per split of a query seeing `keys` keys (paged_attention's splitWidth): splitKeys, times
 * the least whole factor that leaves at most maxSplits splits. A function of the query's own
 * position only, so a query's splits never depend on its step.
 */
export function attentionSplitWidth(keys: number, shape: Pick<AttentionShape, 'splitKeys' | 'maxSplits'>): number {
  return shape.splitKeys * Math.ceil(Math.ceil(keys / shape.splitKeys) / shape.maxSplits);
}

/** Splits of a query seeing `keys` keys. */
export function attentionNumSplits(keys: number, shape: Pick<AttentionShape, 'splitKeys' | 'maxSplits'>): number {
  return Math.ceil(keys / attentionSplitWidth(keys, shape));
}

/** The ACTIVATION override of matmul.wgsl (its GLU store) and swiglu.wgsl: the MLP's gate activation. */
export const ACTIVATION_CODE: Record<MlpActivation, number> = { silu: 0, gelu_tanh: 1 };

/** matmul.wgsl's overrides for weights stored as `dtype` (`activation` only matters with `glu`). */
export function matmulOverrides(
  dtype: DType,
  shape: MatmulShape,
  options: { hasBias?: boolean; accumulate?: boolean; glu?: boolean; activation?: MlpActivation; normInput?: boolean } = {},
): Overrides {
  const overrides: Record<string, number> = {
    DTYPE: DTYPE_CODE[dtype],
    HAS_BIAS: options.hasBias ? 1 : 0,
    ACCUMULATE: options.accumulate ? 1 : 0,
    GLU: options.glu ? 1 : 0,
    WORKGROUP_SIZE: shape.workgroupSize,
    LANES: shape.lanes,
    GUARDED_TILE: shape.guardedTile ? 1 : 0,
    NORM_INPUT: options.normInput ? 1 : 0,
  };
  // only GLU pipelines carry it, so the other matmuls keep one pipeline whatever the model's activation
  if (options.glu) overrides.ACTIVATION = ACTIVATION_CODE[options.activation ?? 'silu'];
  return overrides;
}

/** The most workgroups one grid dimension takes (WebGPU's default maxComputeWorkgroupsPerDimension). */
const MAX_GROUPS_PER_DIMENSION = 65535;

/**
 * Workgroups of a matmul of `rows` weight rows over `numTokens` tokens: x over row groups, y over
 * token tiles; past 65535 row-group workgroups (a 262k vocabulary's lm_head on the GPU shape) y
 * also counts chunks of x, which the kernel folds back.
 */
export function matmulGrid(rows: number, numTokens: number, shape: MatmulShape, out: Uint32Array | number[]): void {
  const groups = Math.ceil(rows / ((MATMUL_ROWS_PER_INVOCATION * shape.workgroupSize) / shape.lanes));
  const tiles = Math.ceil(numTokens / MATMUL_TOKENS_PER_INVOCATION);
  out[0] = Math.min(groups, MAX_GROUPS_PER_DIMENSION);
  out[1] = tiles === 0 ? 0 : tiles * Math.ceil(groups / out[0]);
}
