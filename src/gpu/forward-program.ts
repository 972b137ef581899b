// The forward pass as a fixed list of dispatches built once at load: pipelines, params slots and
// bind groups for every layer. Per step only the token counts change (params + grid sizes).
// Not the step loop (gpu-runner.ts) and not the math (shaders/).
import type { ModelConfig } from '../model/desc';
import type { Activations } from './activations';
import { ACTIVATION_CODE, attentionGrid, attentionMergeOverrides, attentionShape, attentionShapeOverrides, bindingsInOrder, DTYPE_CODE, KERNELS, KV_TYPE_CODE, KV_WRITE_VALUES_PER_INVOCATION, MAX_PARAMS_BYTES, MATMUL_SHAPE, matmulGrid, matmulOverrides, packParams, type BindingName, type KernelName, type KernelSetting, type ParamValues } from './kernels';
import { layerKv, type KvArena, type KvArenas } from './kv-arena';
import type { Overrides } from './kernels';
import type { PipelineCache } from './pipeline-cache';
import { samplerShape } from './sample-plan';
import type { GpuMatrix, GpuWeights, QkvOutput } from './weights';

/** Step sizes a dispatch depends on: tokens fed, positions sampling (and of those, the ones whose sampler gathers, the ones with penalties or bias, the constrained ones), attention's work items. */
export type Counts = { numTokens: number; numSampled: number; numGathered: number; numPenalized: number; numMasked: number; numAttentionItems: number; numMergeItems: number };

export interface Dispatch {
  label: string;
  pipeline: GPUComputePipeline;
  bindGroup: GPUBindGroup;
  /** Workgroup counts for the step into out[0..1]; a 0 skips the dispatch. */
  grid(counts: Counts, out: Uint32Array): void;
  /** Runs only in steps that need it (the sampler's radix levels past 0: a row that gathers), so not counted in a step's shape. */
  conditional?: boolean;
}

export interface ForwardProgram {
  params: GPUBuffer;
  /** Rewrites the count fields of every params slot in the CPU mirror and uploads it. */
  writeParams(queue: GPUQueue, counts: Counts): void;
  /** Embedding and every layer: runs on all fed tokens. */
  body: Dispatch[];
  /** Final norm of the sampling rows' last tokens, lm_head, sampling: runs when a row samples. */
  tail: Dispatch[];
  destroy(): void;
}

export interface ProgramInputs {
  device: GPUDevice;
  cache: PipelineCache;
  config: ModelConfig;
  weights: GpuWeights;
  /** One arena per KV cache group, each layer in its group's (read through act.blockTables[group]) */
  kv: KvArenas;
  act: Activations;
  /** [numLayers] each layer's cos/sin table (rope-tables.ts): layers whose frequencies agree share one buffer */
  ropeTables: GPUBuffer[];
  ropeTableLevel: number;
  blockSize: number;
  /** The kernels' override values: shaped for a GPU or for a CPU adapter. */
  setting: KernelSetting;
  /** Positions a row may reach (the runner's maxContext): bounds attention's splits per query. */
  maxContext: number;
}

const SLOT_BYTES = 256; // minUniformBufferOffsetAlignment's largest allowed value
const SLOT_WORDS = SLOT_BYTES / 4;
const MAX_GROUPS = 65535;
const ELEMENTWISE_WORKGROUP = 64;
/** token_mask.wgsl's lanes per workgroup: 256 token ids, 8 mask words. */
const TOKEN_MASK_WORKGROUP = 256;

/** Spreads n workgroups over x (<= 65535) and y; kernels rebuild the index and guard the tail. */
function spread(n: number, out: Uint32Array): void {
  out[0] = Math.max(1, Math.min(n, MAX_GROUPS));
  out[1] = Math.ceil(n / out[0]);
}

type Fill = (counts: Counts, u32: Uint32Array, f32: Float32Array, base: number) => void;

/** A params slot: the kernel whose Params it holds and its byte offset in the params buffer. */
interface Slot {
  kernel: KernelName;
  offset: number;
}

/** One matmul dispatch: y = x m^T (+ bias) (+ y when accumulating), over `count` rows of x (default every fed token). */
interface MatmulOp {
  params: Slot;
  x: GPUBuffer;
  m: GpuMatrix;
  y: GPUBuffer;
  bias?: GPUBuffer | null;
  /** y += rather than y = (the residual adds of o_proj and down_proj). */
  accumulate?: boolean;
  count?: (cnt: Counts) => number;
  /** y2 and y3 of a split store (q, k, v apart from one fused matrix). */
  ys?: GPUBuffer[];
  /** The GLU store: interleaved gate/up rows to act(gate) * up (the model's mlpActivation). */
  glu?: boolean;
  /** [k] f32: x is the residual stream, multiplied as RMSNorm(x) with these weights (NORM_INPUT). */
  norm?: GPUBuffer | null;
}

export async function buildForwardProgram(p: ProgramInputs): Promise<ForwardProgram> {
  const { device, cache, config: c, weights: w, kv, act } = p;
  const qDim = c.numHeads * c.headDim;
  const kvDim = c.numKvHeads * c.headDim;

  // --- params: one 256-byte uniform slot per distinct dispatch shape, shared by all layers,
  // packed by field name from the kernel's Params in kernels.ts (held to the WGSL by a test)
  const fills: Fill[] = [];
  /** Registers a slot of `kernel`'s Params, recomputed from each step's counts. */
  const slot = <K extends KernelName>(kernel: K, values: (cnt: Counts) => ParamValues<K>): Slot => {
    const fields: readonly (readonly [string, string])[] = KERNELS[kernel].params;
    const stray = Object.keys(values({ numTokens: 0, numSampled: 0, numGathered: 0, numPenalized: 0, numMasked: 0, numAttentionItems: 0, numMergeItems: 0 })).filter((name) => !fields.some(([field]) => field === name));
    if (stray.length > 0) throw new Error(`${kernel} Params has no field ${stray.join(', ')}`);
    fills.push((cnt, u, f, b) => packParams(kernel, values(cnt), u, f, b));
    return { kernel, offset: (fills.length - 1) * SLOT_BYTES };
  };
  const tokens = (m: number) => (cnt: Counts) => m * cnt.numTokens;
  const sampledRows = (cnt: Counts) => cnt.numSampled;
  const slotEmbed = slot('embedding', (cnt) => ({ numTokens: cnt.numTokens, hidden: c.hiddenSize, scale: c.embedScale, rows: c.vocabSize }));
  const norm = (count: (cnt: Counts) => number, rowLen: number) => slot('rms_norm', (cnt) => ({ numVecs: count(cnt), rowLen, eps: c.rmsNormEps }));
  /** A matmul's params: n rows, every row to y unless split at splitA / splitB (y2, y3); softcap > 0 caps the stored values. */
  const mm = (count: (cnt: Counts) => number, n: number, k: number, splitA = n, splitB = n, softcap = 0) =>
    slot('matmul', (cnt) => ({ numTokens: count(cnt), n, k, splitA, splitB, softcap, eps: c.rmsNormEps }));
  const slotNormHidden = norm(tokens(1), c.hiddenSize);
  const slotQNorm = norm(tokens(c.numHeads), c.headDim);
  const slotKNorm = norm(tokens(c.numKvHeads), c.headDim);
  const slotFinalNorm = norm(sampledRows, c.hiddenSize);
  const qkvDims = { q: qDim, k: kvDim, v: kvDim };
  // one slot per q/k/v grouping the layers use (every layer usually has the same)
  const qkvSlots = new Map<string, Slot>();
  const slotMmQkv = (outputs: QkvOutput[]): Slot => {
    const key = outputs.join('');
    let s = qkvSlots.get(key);
    if (!s) {
      const sizes = outputs.map((o) => qkvDims[o]);
      const n = sizes.reduce((a, b) => a + b, 0);
      s = mm(tokens(1), n, c.hiddenSize, sizes[0], sizes.length > 2 ? sizes[0]! + sizes[1]! : n);
      qkvSlots.set(key, s);
    }
    return s;
  };
  for (const L of w.layers) for (const part of L.qkv) slotMmQkv(part.outputs); // every slot before the buffer is sized
  const slotMmO = mm(tokens(1), c.hiddenSize, qDim);
  // the GLU slot for layers whose gate/up fused, the plain one for layers that run them apart
  const slotMmGlu = w.layers.some((L) => L.mlp.kind === 'glu') ? mm(tokens(1), 2 * c.intermediateSize, c.hiddenSize) : null;
  const slotMmGateUp = w.layers.some((L) => L.mlp.kind === 'separate') ? mm(tokens(1), c.intermediateSize, c.hiddenSize) : null;
  const slotMmDown = mm(tokens(1), c.hiddenSize, c.intermediateSize);
  // gemma2's final soft-cap in lm_head's store: the logits buffer, which sampling and the probe read, holds capped values
  const slotMmLm = mm(sampledRows, c.vocabSize, c.hiddenSize, c.vocabSize, c.vocabSize, c.finalLogitSoftcap);
  // one rope_kv_write slot per arena: they differ in vOffset (a sliding group's arena holds fewer blocks)
  const ropeKvSlot = (arena: KvArena) =>
    slot('rope_kv_write', (cnt) => ({
      numTokens: cnt.numTokens,
      numHeads: c.numHeads,
      numKvHeads: c.numKvHeads,
      headDim: c.headDim,
      tableLevel: p.ropeTableLevel,
      blockSize: p.blockSize,
      kvDim,
      vOffset: arena.vOffsetWords,
    }));
  const ropeKvSlots = new Map<KvArena, Slot>(kv.arenas.map((arena) => [arena, ropeKvSlot(arena)]));
  // attention's lanes, heads and splits: the setting's (kernels.ts attentionShape), never the step's
  const attention = attentionShape(p.setting, p.maxContext);
  // the pool's storage type (every arena's): the writer rounds to it, attention decodes it (the merge pass never reads the pool)
  const kvType = kv.arenas[0]!.shape.kvCacheType;
  const kvOverride = { KV_TYPE: KV_TYPE_CODE[kvType] };
  // gemma2's soft-capped scores: an override, so other models' attention carries no branch for it
  const attentionOverrides = { ...kvOverride, SOFTCAP: c.attnLogitSoftcap > 0 ? 1 : 0, ...attentionShapeOverrides(attention) };
  const mergeOverrides = attentionMergeOverrides(attention);
  const attentionParams = (numItems: number, window: number, arena: KvArena) => ({
    numItems,
    numHeads: c.numHeads,
    numKvHeads: c.numKvHeads,
    headDim: c.headDim,
    blockSize: p.blockSize,
    kvDim,
    vOffset: arena.vOffsetWords,
    scale: c.attentionScale,
    splitKeys: attention.splitKeys,
    maxSplits: attention.maxSplits,
    softcap: c.attnLogitSoftcap,
    window,
  });
  // one pair of attention slots per distinct (layer window, group) (gemma: sliding and global
  // layers); the work items are the same for all, the kernel limits each query's keys to its window
  const attentionSlots = new Map<string, { main: Slot; merge: Slot }>();
  const attentionKey = (l: number) => `${c.layerWindows[l]!}:${layerKv(kv, l).group}`;
  c.layerWindows.forEach((window, l) => {
    const key = attentionKey(l);
    if (attentionSlots.has(key)) return;
    const { arena } = layerKv(kv, l);
    attentionSlots.set(key, {
      main: slot('paged_attention', (cnt) => attentionParams(cnt.numAttentionItems, window, arena)),
      merge: slot('paged_attention_merge', (cnt) => attentionParams(cnt.numMergeItems, window, arena)),
    });
  });
  const slotSwiglu = slot('swiglu', (cnt) => ({ numElements: cnt.numTokens * c.intermediateSize }));
  // the sampler: one slot per level pass (0: argmax and first histogram; numLevels: the gather), and finish's
  const sampler = samplerShape(c.vocabSize, p.setting);
  const samplerParams = (cnt: Counts, level: number) => ({ numRows: cnt.numSampled, vocab: c.vocabSize, chunkSize: sampler.chunkSize, numChunks: sampler.numChunks, level, numLevels: sampler.numLevels });
  const slotsSampleLevel = Array.from({ length: sampler.numLevels + 1 }, (_, level) => slot('sample', (cnt) => samplerParams(cnt, level)));
  const slotSampleFinish = slot('sample_finish', (cnt) => samplerParams(cnt, 0));
  const slotPenalties = slot('penalties', (cnt) => ({ numPenalized: cnt.numPenalized, vocab: c.vocabSize }));
  const slotTokenMask = slot('token_mask', (cnt) => ({ numMasked: cnt.numMasked, vocab: c.vocabSize, words: Math.ceil(c.vocabSize / 32) }));

  const paramsBuffer = device.createBuffer({ label: 'params', size: fills.length * SLOT_BYTES, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  const mirror = new ArrayBuffer(fills.length * SLOT_BYTES);
  const mirrorU32 = new Uint32Array(mirror);
  const mirrorF32 = new Float32Array(mirror);

  // --- pipelines: every (kernel, overrides) the model needs, compiled in parallel
  const wanted = new Map<string, [KernelName, Overrides]>();
  const want = <K extends KernelName>(kernel: K, overrides: Overrides = {}): [K, Overrides] => {
    wanted.set(JSON.stringify([kernel, overrides]), [kernel, overrides]);
    return [kernel, overrides];
  };
  const matmulShape = MATMUL_SHAPE[p.setting];
  const matmulPipe = (m: GpuMatrix, hasBias: boolean, accumulate: boolean, glu: boolean, normInput: boolean) =>
    want('matmul', matmulOverrides(m.dtype, matmulShape, { hasBias, accumulate, glu, activation: c.mlpActivation, normInput }));
  const specs: Array<() => Dispatch> = [];
  const tailSpecs: Array<() => Dispatch> = [];
  /** A dispatch of pipe's kernel: binding 0 is its params slot, every other binding by its WGSL name. */
  const add = <K extends KernelName>(list: Array<() => Dispatch>, label: string, pipe: [K, Overrides], params: Slot, buffers: Record<BindingName<K>, GPUBufferBinding>, grid: Dispatch['grid'], conditional = false) => {
    if (params.kernel !== pipe[0]) throw new Error(`${label}: ${pipe[0]} bound to a ${params.kernel} params slot`);
    const bindings = [{ buffer: paramsBuffer, offset: params.offset, size: MAX_PARAMS_BYTES }, ...bindingsInOrder(pipe[0], buffers)];
    list.push(() => ({ label, pipeline: cache.get(pipe[0], pipe[1]), bindGroup: cache.bindGroup(pipe[0], bindings, label), grid, ...(conditional ? { conditional } : {}) }));
  };
  const buf = (buffer: GPUBuffer): GPUBufferBinding => ({ buffer });
  const matmulOp = (list: Array<() => Dispatch>, label: string, { params, x, m, y, bias = null, accumulate = false, count = tokens(1), ys = [], glu = false, norm = null }: MatmulOp) =>
    add(list, label, matmulPipe(m, bias !== null, accumulate, glu, norm !== null), params, { x: buf(x), w: buf(m.buffer), bias: buf(bias ?? act.unused), y: buf(y), y2: buf(ys[0] ?? act.unusedOut[0]), y3: buf(ys[1] ?? act.unusedOut[1]), normWeight: buf(norm ?? act.unused) }, (cnt, out) =>
      matmulGrid(m.rows, count(cnt), matmulShape, out),
    );
  /** out = rmsnorm(x) (gather: of the sampling rows' last tokens), or out += rmsnorm(x) with addToOut. */
  const normOp = (list: Array<() => Dispatch>, label: string, slotB: Slot, x: GPUBuffer, weight: GPUBuffer, out: GPUBuffer, count: (cnt: Counts) => number, gather = false, addToOut = false) =>
    add(list, label, want('rms_norm', { GATHER_ROWS: gather ? 1 : 0, ADD_TO_OUT: addToOut ? 1 : 0 }), slotB, { x: buf(x), weight: buf(weight), rowIndex: buf(gather ? act.sampleTokens : act.unused), out: buf(out) }, (cnt, out2) =>
      spread(count(cnt), out2),
    );
  /** paged_attention's grids (kernels.ts attentionGrid): `main` over items and head quads, `merge` over queries and heads. */
  const attentionGrids = (pass: 'main' | 'merge', numItems: (cnt: Counts) => number): Dispatch['grid'] => (cnt, out) =>
    attentionGrid(pass, numItems(cnt), attention, c.numHeads, c.numKvHeads, out);
  const perToken = (width: number): Dispatch['grid'] => (cnt, out) => {
    out[0] = Math.ceil(width / ELEMENTWISE_WORKGROUP);
    out[1] = cnt.numTokens;
  };

  add(specs, 'embedding', want('embedding', { DTYPE: DTYPE_CODE[w.embed.dtype] }), slotEmbed, { tokens: buf(act.tokens), table: buf(w.embed.buffer), out: buf(act.x) }, perToken(c.hiddenSize));
  w.layers.forEach((L, l) => {
    // a layer reads and writes only through its group's block tables (in a sliding-window group,
    // blocks out of the window go back to the engine's pool)
    const { group, arena, binding: kvLayer } = layerKv(kv, l);
    const tables = act.blockTables[group]!;
    const qOut = act.qPre ?? act.q;
    const kOut = act.kPre ?? act.k;
    // the input norm folded into the q/k/v matmuls (each recomputes its tokens' rms), or its own dispatch into h
    if (!matmulShape.foldNorms) normOp(specs, `L${l}.input_norm`, slotNormHidden, act.x, L.inputNorm, act.h, tokens(1));
    const qkvIn = matmulShape.foldNorms ? { x: act.x, norm: L.inputNorm } : { x: act.h };
    const qkvOut = { q: qOut, k: kOut, v: act.v };
    for (const part of L.qkv) {
      const [y, ...ys] = part.outputs.map((o) => qkvOut[o]);
      matmulOp(specs, `L${l}.${part.outputs.join('')}_proj`, { params: slotMmQkv(part.outputs), ...qkvIn, m: part.matrix, bias: part.bias, y: y!, ys });
    }
    if (act.qPre && act.kPre && L.qNorm && L.kNorm) {
      normOp(specs, `L${l}.q_norm`, slotQNorm, act.qPre, L.qNorm, act.q, tokens(c.numHeads));
      normOp(specs, `L${l}.k_norm`, slotKNorm, act.kPre, L.kNorm, act.k, tokens(c.numKvHeads));
    }
    // q rotated in place; k rotated on its way into the cache with v (act.k stays unrotated), by
    // the layer's own table (gemma3's sliding layers have another base)
    // one invocation per Q rotation pair, then per whole cache words of K and V (a q8_0 block: 32 values)
    const kvWriteInvocations = (c.numHeads * c.headDim) / 2 + kvDim / KV_WRITE_VALUES_PER_INVOCATION[kvType];
    add(specs, `L${l}.rope_kv_write`, want('rope_kv_write', kvOverride), ropeKvSlots.get(arena)!, { tokens: buf(act.tokens), table: buf(p.ropeTables[l]!), blockTables: buf(tables), q: buf(act.q), k: buf(act.k), v: buf(act.v), kv: kvLayer }, perToken(kvWriteInvocations));
    const attentionBuffers = (items: GPUBuffer) => ({ rows: buf(act.rowInfo), items: buf(items), blockTables: buf(tables), q: buf(act.q), kv: kvLayer, out: buf(act.attn), states: buf(act.attentionStates) });
    const attentionSlot = attentionSlots.get(attentionKey(l))!;
    add(specs, `L${l}.attention`, want('paged_attention', attentionOverrides), attentionSlot.main, attentionBuffers(act.attentionItems), attentionGrids('main', (cnt) => cnt.numAttentionItems));
    // every query's split states, in split order, into attn (a lone split too: one path for all)
    add(specs, `L${l}.attention_merge`, want('paged_attention_merge', mergeOverrides), attentionSlot.merge, attentionBuffers(act.mergeItems), attentionGrids('merge', (cnt) => cnt.numMergeItems));
    // x += o_proj(attn), or (gemma) x += rmsnorm(o_proj(attn)): o_proj's output goes through h,
    // free between the q/k/v projections that read it and the MLP's input norm that rewrites it
    if (L.attnOutputNorm) {
      matmulOp(specs, `L${l}.o_proj`, { params: slotMmO, x: act.attn, m: L.o, y: act.h });
      normOp(specs, `L${l}.post_attention_norm`, slotNormHidden, act.h, L.attnOutputNorm, act.x, tokens(1), false, true);
    } else {
      matmulOp(specs, `L${l}.o_proj`, { params: slotMmO, x: act.attn, m: L.o, y: act.x, accumulate: true });
    }
    // the MLP's input norm, folded into gate/up like the input norm, or its own dispatch into h
    if (!matmulShape.foldNorms) normOp(specs, `L${l}.${L.attnOutputNorm ? 'pre_feedforward_norm' : 'post_attention_norm'}`, slotNormHidden, act.x, L.mlpInputNorm, act.h, tokens(1));
    const mlpIn = matmulShape.foldNorms ? { x: act.x, norm: L.mlpInputNorm } : { x: act.h };
    if (L.mlp.kind === 'glu') {
      matmulOp(specs, `L${l}.gate_up_proj`, { params: slotMmGlu!, ...mlpIn, m: L.mlp.gateUp, y: act.act, glu: true }); // act = act(gate) * up
    } else {
      const { gate, up } = act.gateUp();
      matmulOp(specs, `L${l}.gate_proj`, { params: slotMmGateUp!, ...mlpIn, m: L.mlp.gate, y: gate });
      matmulOp(specs, `L${l}.up_proj`, { params: slotMmGateUp!, ...mlpIn, m: L.mlp.up, y: up });
      add(specs, `L${l}.swiglu`, want('swiglu', { ACTIVATION: ACTIVATION_CODE[c.mlpActivation] }), slotSwiglu, { gate: buf(gate), up: buf(up), out: buf(act.act) }, (cnt, out) =>
        spread(Math.ceil((cnt.numTokens * c.intermediateSize) / ELEMENTWISE_WORKGROUP), out),
      );
    }
    // x += down(act), or (gemma) x += rmsnorm(down(act)) through h again (gate/up have read it)
    if (L.mlpOutputNorm) {
      matmulOp(specs, `L${l}.down_proj`, { params: slotMmDown, x: act.act, m: L.down, y: act.h });
      normOp(specs, `L${l}.post_feedforward_norm`, slotNormHidden, act.h, L.mlpOutputNorm, act.x, tokens(1), false, true);
    } else {
      matmulOp(specs, `L${l}.down_proj`, { params: slotMmDown, x: act.act, m: L.down, y: act.x, accumulate: true });
    }
  });
  normOp(tailSpecs, 'final_norm', slotFinalNorm, act.x, w.finalNorm, act.hLast, sampledRows, true);
  matmulOp(tailSpecs, 'lm_head', { params: slotMmLm, x: act.hLast, m: w.lmHead, y: act.logits, count: sampledRows });
  // constrained positions' forbidden tokens masked first (token_mask.wgsl: lanes along the
  // vocabulary, a grid row per such position), run only in steps that have one
  add(tailSpecs, 'token_mask', want('token_mask', { WORKGROUP_SIZE: TOKEN_MASK_WORKGROUP }), slotTokenMask, { logits: buf(act.logits), positions: buf(act.maskPositions), masks: buf(act.masks) }, (cnt, out) => {
    out[0] = cnt.numMasked > 0 ? Math.ceil(c.vocabSize / TOKEN_MASK_WORKGROUP) : 0;
    out[1] = cnt.numMasked;
  }, true);
  // bias and penalties written into the logits of the positions that use them: a pass of its own
  // (a workgroup per such position, so its cost follows their entries, not the vocabulary), run
  // only in steps that have one, so other steps pay nothing and the sampler stays one kernel
  add(tailSpecs, 'penalties', want('penalties'), slotPenalties, { logits: buf(act.logits), tokens: buf(act.tokens), infos: buf(act.penaltyInfo), entries: buf(act.penaltyEntries) }, (cnt, out) => {
    out[0] = cnt.numPenalized;
    out[1] = 1;
  }, true);
  const samplerBuffers = { logits: buf(act.logits), infos: buf(act.sampleInfo), weights: buf(act.sampleScratch), state: buf(act.sampleState), hist: buf(act.sampleHist), sampled: buf(act.sampled), logprobOut: buf(act.logprobOut) };
  slotsSampleLevel.forEach((slotLevel, level) => {
    const label = level === 0 ? 'sample' : level === sampler.numLevels ? 'sample_gather' : `sample_level${level}`;
    // rows that need no level (greedy, fallback, done early) leave at once; a step where no row
    // gathers skips the levels past 0 (each costs a dispatch; no row's token depends on it)
    add(tailSpecs, label, want('sample', { WORKGROUP_SIZE: sampler.workgroupSize }), slotLevel, samplerBuffers, (cnt, out) => {
      out[0] = sampler.numChunks;
      out[1] = level === 0 || cnt.numGathered > 0 ? cnt.numSampled : 0;
    }, level > 0);
  });
  add(tailSpecs, 'sample_finish', want('sample_finish'), slotSampleFinish, samplerBuffers, (cnt, out) => {
    out[0] = cnt.numSampled;
    out[1] = 1;
  });

  await Promise.all([...wanted.values()].map(([kernel, overrides]) => cache.prepare(kernel, overrides)));
  const body = specs.map((make) => make());
  const tail = tailSpecs.map((make) => make());

  return {
    params: paramsBuffer,
    body,
    tail,
    writeParams(queue, counts) {
      fills.forEach((fill, i) => fill(counts, mirrorU32, mirrorF32, i * SLOT_WORDS));
      queue.writeBuffer(paramsBuffer, 0, mirror);
    },
    destroy() {
      paramsBuffer.destroy();
    },
  };
}
