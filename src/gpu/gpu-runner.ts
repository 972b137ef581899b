// GpuRunner: the WebGPU ModelRunner. Everything is sized and compiled at load; a step is one
// encoder, one compute pass, one submit and one small readback (sampled ids + pass timestamps);
// a step with constraint masks to fill submits the forward first and the sampling after the fill.
// Not a scheduler (rows come from the plan) and not a loader (it takes a ModelDesc).
import { DEFAULT_MAX_DRAFT_TOKENS, DEFAULT_MAX_ROWS, slidingGroupBlocks, type KvCacheGroupSpec } from '../engine/types';
import type { ModelRunner, SampledLogprobs, StepMaskFill, StepPlan, StepResult } from '../engine/types';
import { splitSampledIds } from '../engine/sampled-positions';
import type { ModelDesc } from '../model/desc';
import { DEFAULT_KV_CACHE_TYPE, kvCacheTypeProblem, type KvCacheType } from '../engine/kv-types';
import { ropeInverseFrequencies } from '../model/rope';
import { Activations, logprobReadbackOffset, READBACK_TIMESTAMP_BYTES } from './activations';
import { runsOnCpu } from './device';
import { buildForwardProgram, type Counts, type Dispatch, type ForwardProgram } from './forward-program';
import { KvArena, type KvArenas } from './kv-arena';
import { defaultKvBudgetBytes } from './kv-budget';
import { planKvGroups } from './kv-groups';
import { ATTENTION_MAX_HEAD_DIM, attentionLanes, attentionShape, type KernelSetting } from './kernels';
import { PipelineCache, type ShaderSource } from './pipeline-cache';
import { ropeTable, ropeTableLevel } from './rope-tables';
import { samplerShape } from './sample-plan';
import { ATTENTION_ITEM_WORDS, maxSampledPositions, PENALTY_ENTRY_WORDS, PENALTY_INFO_WORDS, ROW_INFO_WORDS, StepMeta, SAMPLE_INFO_WORDS, SAMPLE_LOGPROB_WORDS, TOKEN_INFO_WORDS } from './step-meta';
import { destroyWeights, uploadWeights, type GpuWeights } from './weights';

export interface GpuRunnerOptions {
  device: GPUDevice;
  model: ModelDesc;
  /** WGSL text of shaders/<file>.wgsl (Vite ?raw imports in the browser, fs in Node). */
  shaderSource: ShaderSource;
  /** Compiled pipelines to reuse across runners on the same device (e.g. after a model switch). */
  pipelines?: PipelineCache;
  /** Token positions per KV block (default 16). */
  blockSize?: number;
  /** Most KV blocks of the first (full-attention) group's pool, block 0 included (default: as many as kvBudgetBytes pays for, after a sliding-window group's). */
  numBlocks?: number;
  /** How the KV pool stores K and V (default DEFAULT_KV_CACHE_TYPE, f16); rounded once, at the write. */
  kvCacheType?: KvCacheType;
  /** Bytes the KV pools may take together (default defaultKvBudgetBytes: from the device's maxBufferSize), further capped by the device's limits. */
  kvBudgetBytes?: number;
  /**
   * Models with sliding-window layers: keep those layers' K/V in a KV cache group of their own
   * (a second entry of `kvGroups`, slidingGroupBlocks blocks, taken from the KV budget first), whose
   * blocks the engine gives back once out of the window, so the global layers' group gets the rest
   * (default true). false, or a budget that cannot pay for it (planKvGroups): one group, every
   * position of every layer kept, the window only masking.
   */
  windowKv?: boolean;
  /** Largest KV buffer (default the device's maxBufferSize); layers spread over more buffers. */
  maxKvBufferBytes?: number;
  /** Most tokens per step (default 512). */
  maxTokensPerStep?: number;
  /** Most rows per step (default the engine's DEFAULT_MAX_ROWS): with maxDraftTokens, sizes the [positions, vocab] logits and sampling buffers. */
  maxRows?: number;
  /**
   * Drafted tokens a row may carry for verification (default the engine's DEFAULT_MAX_DRAFT_TOKENS,
   * as CpuRunner's; 0: none, and the engine then never speculates). The logits and sampling
   * buffers hold a position for every row and each of its drafts, maxRows * (1 + maxDraftTokens)
   * capped at maxTokensPerStep, [vocab] f32 twice each: on a large vocabulary, a smaller value saves that memory.
   */
  maxDraftTokens?: number;
  /** Positions a session may reach (default the model's maxPositionEmbeddings). */
  maxContext?: number;
  /**
   * The kernels' override values (kernels.ts KernelSetting; default 'cpu' on a CPU adapter, 'gpu'
   * elsewhere). Either runs on any adapter and gives the same tokens; tests and benches force each.
   */
  kernels?: KernelSetting;
}

/** A step's encoder as executeWith() hands it over, between the uploads and the sampled-id copy. */
export interface StepEncoding {
  readonly encoder: GPUCommandEncoder;
  /**
   * 'whole': the step in one submission; 'forward' then 'sampling': a step whose masks are filled
   * between the two submissions (StepMaskFill), the forward's dispatches, then the tail's.
   */
  readonly part: 'whole' | 'forward' | 'sampling';
  /** The step's dispatches in order: the body, then the tail when a position samples (encode() skips those `runs` says have no workgroups). */
  readonly dispatches: readonly Dispatch[];
  readonly counts: Counts;
  /** Whether `d` has workgroups in this step. */
  runs(d: Dispatch): boolean;
  /** [counts.numSampled, vocab] f32 once the passes ran: the logits each sampled position drew from. */
  readonly logits: GPUBuffer;
  /** Records `dispatches` (of this step) into `pass` in order. */
  encode(pass: GPUComputePassEncoder, dispatches: readonly Dispatch[]): void;
}

/** Records a step's passes into step.encoder; returns true when it resolved the pass timestamps into the readback (the serving pass does). */
export type StepPasses = (step: StepEncoding) => boolean;

export class GpuRunner implements ModelRunner {
  readonly blockSize: number;
  /** Blocks of the first group's pool (the global layers' when the sliding layers have a group of their own). */
  readonly numBlocks: number;
  /** Its KV cache groups, one arena each (kv.arenas): every row carries a block table per group. */
  readonly kvGroups: readonly KvCacheGroupSpec[];
  /** Why a model with sliding layers keeps them in the first group though windowKv asked otherwise (planKvGroups), for logs. */
  readonly kvNote?: string;
  readonly maxTokensPerStep: number;
  readonly maxRows: number;
  readonly maxContext: number;
  /** Drafted tokens one row may carry: a verify row samples after its last known token and after each. */
  readonly maxDraftTokens: number;
  /** The KV pool's storage type (what its bytes per token are counted in). */
  readonly kvCacheType: KvCacheType;
  /** The kernels' override values: shaped for a GPU or for a CPU adapter. */
  readonly kernelSetting: KernelSetting;
  /** Dispatches in a step that samples: the fixed shape of every forward pass. */
  get dispatchesPerStep(): number {
    return this.dispatchLabels.length;
  }
  /** Every such dispatch's label in step order (e.g. 'L0.qkv_proj'): which fused paths the model took. */
  get dispatchLabels(): string[] {
    return this.sampledStep.filter((d) => !d.conditional).map((d) => d.label);
  }
  /** GPU bytes held: weights, KV pools (both arenas), activations; and how many buffers hold the KV pools. */
  readonly memory: { weights: number; kv: number; activations: number; kvBuffers: number };
  private readonly grid = new Uint32Array(2);
  /** Byte offset of the logprob slots in the readback. */
  private readonly logprobOffset: number;
  /** The body and the tail: a step in which a position samples. */
  private readonly sampledStep: readonly Dispatch[];
  private readonly querySet: GPUQuerySet | null;
  private inFlight = false;
  private disposed = false;

  private constructor(
    /** The device the runner's buffers live on (testing/step-probe.ts makes its query sets there). */
    readonly device: GPUDevice,
    readonly vocabSize: number,
    private readonly weights: GpuWeights,
    /** The KV arenas, one per group (tests reach a sliding group's buffers to poison freed blocks). */
    readonly kv: KvArenas,
    private readonly act: Activations,
    /** The distinct RoPE tables, each layer binding its own (gemma3's sliding layers have another base). */
    private readonly ropeTableBuffers: readonly GPUBuffer[],
    private readonly program: ForwardProgram,
    private readonly meta: StepMeta,
    kvNote: string | undefined,
    kernelSetting: KernelSetting,
  ) {
    this.kernelSetting = kernelSetting;
    this.blockSize = meta.limits.blockSize;
    this.kvGroups = meta.limits.kvGroups;
    this.numBlocks = this.kvGroups[0]!.numBlocks;
    if (kvNote) this.kvNote = kvNote;
    this.maxTokensPerStep = meta.limits.maxTokens;
    this.logprobOffset = logprobReadbackOffset(maxSampledPositions(meta.limits));
    this.maxRows = meta.limits.maxRows;
    this.maxContext = meta.limits.maxPositions;
    this.maxDraftTokens = meta.limits.maxDraftTokens ?? 0;
    this.sampledStep = [...program.body, ...program.tail];
    this.kvCacheType = kv.arenas[0]!.shape.kvCacheType;
    const kvBuffers = kv.arenas.flatMap((arena) => arena.buffers);
    this.memory = { weights: weights.bytes, kv: kvBuffers.reduce((n, b) => n + b.size, 0), activations: act.bytes, kvBuffers: kvBuffers.length };
    this.querySet = act.timestamps ? device.createQuerySet({ type: 'timestamp', count: 2 }) : null;
  }

  static async create(options: GpuRunnerOptions): Promise<GpuRunner> {
    const { device, model } = options;
    const c = model.config;
    const blockSize = options.blockSize ?? 16;
    const maxTokens = options.maxTokensPerStep ?? 512;
    const maxRows = options.maxRows ?? DEFAULT_MAX_ROWS;
    const maxContext = options.maxContext ?? c.maxPositionEmbeddings;
    const maxDraftTokens = options.maxDraftTokens ?? DEFAULT_MAX_DRAFT_TOKENS;
    if (!Number.isInteger(maxDraftTokens) || maxDraftTokens < 0) throw new Error(`maxDraftTokens ${maxDraftTokens}: a non-negative integer`);
    if (c.headDim % 4 !== 0 || c.headDim > ATTENTION_MAX_HEAD_DIM) throw new Error(`headDim ${c.headDim}: kernels need a headDim that is a multiple of 4, <= ${ATTENTION_MAX_HEAD_DIM}`);
    if (c.numHeads % c.numKvHeads !== 0) throw new Error(`numHeads ${c.numHeads} is not a multiple of numKvHeads ${c.numKvHeads}`);
    if (maxTokens > 65535 || maxRows > 65535) throw new Error('maxTokensPerStep and maxRows must stay below 65536 (one grid dimension)');

    const setting = options.kernels ?? (runsOnCpu(device) ? 'cpu' : 'gpu');
    const kvCacheType = options.kvCacheType ?? DEFAULT_KV_CACHE_TYPE;
    const kvDim = c.numKvHeads * c.headDim;
    const kvProblem = kvCacheTypeProblem(kvCacheType, kvDim);
    if (kvProblem) throw new Error(`kvCacheType ${kvCacheType}: ${kvProblem}`);

    device.pushErrorScope('out-of-memory');
    device.pushErrorScope('validation');
    const weights = uploadWeights(device, model);
    const kvShape = { numLayers: c.numLayers, blockSize, kvDim, kvCacheType };
    const kvLimits = {
      maxStorageBufferBindingSize: device.limits.maxStorageBufferBindingSize,
      maxBufferSize: Math.min(device.limits.maxBufferSize, options.maxKvBufferBytes ?? Infinity),
      minStorageBufferOffsetAlignment: device.limits.minStorageBufferOffsetAlignment,
    };
    const kvBudget = options.kvBudgetBytes ?? defaultKvBudgetBytes({ maxBufferSize: device.limits.maxBufferSize, onCpu: runsOnCpu(device), weightBytes: weights.bytes });
    // a sliding-window group holds what the engine relies on (slidingGroupBlocks over the runner's
    // own maxRows and maxTokensPerStep, which bound the engine's), paid first; the first group the rest
    const maxWindow = Math.max(0, ...c.layerWindows);
    const slidingBlocks = maxWindow > 0 && (options.windowKv ?? true) ? slidingGroupBlocks(maxWindow, blockSize, maxRows, maxTokens) : null;
    const kvPlan = planKvGroups(kvShape, c.layerWindows, kvLimits, kvBudget, slidingBlocks, options.numBlocks);
    const kv: KvArenas = {
      arenas: kvPlan.groups.map((group, g) => new KvArena(device, { ...kvShape, numLayers: group.numLayers }, group.plan, g === 0 ? 'kv' : `kv-g${g}`)),
      layerGroup: kvPlan.layerGroup,
    };
    const kvGroups = kvPlan.groups.map((group) => ({ numBlocks: group.plan.numBlocks, window: group.window }));
    // attention's splits come from the setting and each query's position alone; its scratch holds
    // every token's states at its most splits, so no query's path depends on what else the step holds
    const attention = attentionShape(setting, maxContext);
    if (maxTokens * attention.maxSplits > 65535) throw new Error(`maxTokensPerStep ${maxTokens} x ${attention.maxSplits} attention splits exceed one grid dimension (65535)`);
    const limits = { maxTokens, maxRows, blockSize, kvGroups, maxPositions: maxContext, vocabSize: c.vocabSize, attentionSplits: attention, attentionQueriesPerItem: attentionLanes(c.numHeads, c.numKvHeads).queriesPerItem, maxDraftTokens };
    const meta = new StepMeta(limits);
    const act = new Activations(
      device,
      c,
      { maxTokens, maxRows, maxSampled: maxSampledPositions(limits), maxBlockTableEntries: meta.blockTables[0]!.length, numKvGroups: kvGroups.length, maxAttentionItems: StepMeta.maxItems(limits), maxMergeItems: StepMeta.maxMergeItems(limits), maxAttentionSplits: attention.maxSplits, sampleStateWords: samplerShape(c.vocabSize, setting).stateWords, maxPenaltyEntries: meta.maxPenaltyEntries },
      device.features.has('timestamp-query'),
    );
    const level = ropeTableLevel(maxContext);
    // one table per distinct set of inverse frequencies, shared by the layers that agree
    const tablesByFreqs = new Map<string, GPUBuffer>();
    const ropeTables = Array.from({ length: c.numLayers }, (_, l) => {
      const invFreq = ropeInverseFrequencies(c, l);
      const key = invFreq.join();
      let buffer = tablesByFreqs.get(key);
      if (!buffer) {
        const table = ropeTable(invFreq, level); // [2, level, headDim / 2, 2]
        buffer = device.createBuffer({ label: `rope-table-${tablesByFreqs.size}`, size: table.byteLength, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
        device.queue.writeBuffer(buffer, 0, table);
        tablesByFreqs.set(key, buffer);
      }
      return buffer;
    });
    const ropeTableBuffers = [...tablesByFreqs.values()];
    if (options.pipelines && options.pipelines.device !== device) throw new Error('pipelines belong to another GPUDevice');
    const cache = options.pipelines ?? new PipelineCache(device, options.shaderSource);
    const program = await buildForwardProgram({ device, cache, config: c, weights, kv, act, ropeTables, ropeTableLevel: level, blockSize, setting, maxContext });
    const validation = await device.popErrorScope();
    const oom = await device.popErrorScope();
    if (validation || oom) {
      destroyWeights(weights);
      for (const arena of kv.arenas) arena.destroy();
      act.destroy();
      for (const buffer of ropeTableBuffers) buffer.destroy();
      throw new Error(`GpuRunner setup failed: ${(validation ?? oom)!.message}`);
    }
    return new GpuRunner(device, c.vocabSize, weights, kv, act, ropeTableBuffers, program, meta, kvPlan.note, setting);
  }

  /**
   * With `masks`, vLLM's order: the forward is submitted, the masks filled on the CPU while it runs,
   * then written (queue order puts the write after the forward, before the sampling) and the
   * sampling submitted. Without, one submission.
   */
  async execute(plan: StepPlan, masks?: StepMaskFill): Promise<StepResult> {
    return this.executeWith(plan, this.servingPass, masks);
  }

  /**
   * The serving pass: every dispatch of the step (or of its part) in one compute pass, timed by the
   * pass's two timestamps where the device has them; a split step's span runs from the forward's
   * start to the sampling's end, so it holds any wait for the fill.
   * execute() records this; testing/step-probe.ts copies the logits out after it.
   */
  readonly servingPass: StepPasses = (step) => {
    const begin = step.part !== 'sampling';
    const end = step.part !== 'forward';
    const pass = step.encoder.beginComputePass(
      this.querySet ? { timestampWrites: { querySet: this.querySet, ...(begin ? { beginningOfPassWriteIndex: 0 } : {}), ...(end ? { endOfPassWriteIndex: 1 } : {}) } } : {},
    );
    step.encode(pass, step.dispatches);
    pass.end();
    if (!this.querySet || !this.act.timestamps || !end) return false;
    step.encoder.resolveQuerySet(this.querySet, 0, 2, this.act.timestamps, 0);
    step.encoder.copyBufferToBuffer(this.act.timestamps, 0, this.act.readback, 0, READBACK_TIMESTAMP_BYTES);
    return true;
  };

  /**
   * execute() with `passes` recording the step's dispatches instead of servingPass (testing/: the
   * profiler times each in its own pass, the probe copies the logits out): the plan's checks,
   * uploads, submit and sampled-id readback are execute()'s own. gpuTimeMs only where `passes`
   * resolved the pass timestamps.
   */
  async executeWith(plan: StepPlan, passes: StepPasses, masks?: StepMaskFill): Promise<StepResult> {
    if (this.disposed) throw new Error('GpuRunner used after dispose()');
    if (this.inFlight) throw new Error('GpuRunner.execute called while a step is running');
    this.inFlight = true;
    try {
      return await this.run(plan, passes, masks);
    } finally {
      this.inFlight = false;
    }
  }

  private async run(plan: StepPlan, passes: StepPasses, masks?: StepMaskFill): Promise<StepResult> {
    const { device, act, meta } = this;
    const queue = device.queue;
    meta.pack(plan, masks?.rows); // validates the plan before any GPU work
    const counts = this.counts();

    device.pushErrorScope('validation');
    let encoder = device.createCommandEncoder({ label: `step ${plan.stepIndex}` });
    let timed = false;
    if (counts.numTokens > 0) {
      queue.writeBuffer(act.tokens, 0, meta.tokens.buffer, 0, counts.numTokens * TOKEN_INFO_WORDS * 4);
      act.blockTables.forEach((buffer, g) => queue.writeBuffer(buffer, 0, meta.blockTables[g]!.buffer, 0, meta.numBlockTableEntries * 4));
      queue.writeBuffer(act.rowInfo, 0, meta.rowInfo.buffer, 0, meta.numRows * ROW_INFO_WORDS * 4);
      queue.writeBuffer(act.attentionItems, 0, meta.attentionItems.buffer, 0, meta.numAttentionItems * ATTENTION_ITEM_WORDS * 4);
      queue.writeBuffer(act.mergeItems, 0, meta.mergeItems.buffer, 0, meta.numMergeItems * ATTENTION_ITEM_WORDS * 4);
      if (counts.numSampled > 0) {
        queue.writeBuffer(act.sampleInfo, 0, meta.sampleInfo.buffer, 0, counts.numSampled * SAMPLE_INFO_WORDS * 4);
        queue.writeBuffer(act.sampleTokens, 0, meta.sampleTokens.buffer, 0, counts.numSampled * 4);
      }
      if (counts.numMasked > 0) {
        // the constrained positions' masks: one upload for the step, only in steps that have one
        queue.writeBuffer(act.maskPositions, 0, meta.maskPositions.buffer, 0, counts.numMasked * 4);
        if (!masks) queue.writeBuffer(act.masks, 0, meta.masks);
      }
      if (counts.numPenalized > 0) {
        queue.writeBuffer(act.penaltyInfo, 0, meta.penaltyInfo.buffer, 0, counts.numPenalized * PENALTY_INFO_WORDS * 4);
        if (meta.numPenaltyEntries > 0) queue.writeBuffer(act.penaltyEntries, 0, meta.penaltyEntries.buffer, 0, meta.numPenaltyEntries * PENALTY_ENTRY_WORDS * 4);
      }
      this.program.writeParams(queue, counts);
      const dispatches = counts.numSampled > 0 ? this.sampledStep : this.program.body;
      const step = (part: StepEncoding['part'], list: readonly Dispatch[]): StepEncoding => ({ encoder, part, dispatches: list, counts, logits: act.logits, runs: (d) => this.fillGrid(d, counts), encode: (pass, l) => this.encode(pass, l, counts) });
      try {
        if (!masks) timed = passes(step('whole', dispatches));
        else {
          // the forward runs while the CPU fills the masks; the write lands between the two submissions
          passes(step('forward', this.program.body));
          queue.submit([encoder.finish()]);
          await masks.fill();
          meta.packMasks(plan);
          queue.writeBuffer(act.masks, 0, meta.masks);
          encoder = device.createCommandEncoder({ label: `step ${plan.stepIndex} sampling` });
          timed = passes(step('sampling', this.program.tail));
        }
      } catch (err) {
        await device.popErrorScope(); // the next step's scope must not sit on this one
        throw err;
      }
      if (counts.numSampled > 0) encoder.copyBufferToBuffer(act.sampled, 0, act.readback, READBACK_TIMESTAMP_BYTES, counts.numSampled * 4);
      // logprob slots only for the positions that asked (none: nothing more read back)
      if (meta.numLogprobSlots > 0) encoder.copyBufferToBuffer(act.logprobOut, 0, act.readback, this.logprobOffset, meta.numLogprobSlots * SAMPLE_LOGPROB_WORDS * 4);
    }
    queue.submit([encoder.finish()]);
    const error = await device.popErrorScope();
    if (error) throw new Error(`GpuRunner step ${plan.stepIndex}: ${error.message}`);

    // The one readback: timestamps, sampled ids and the logprob slots asked for (its mapping also paces the loop to the GPU).
    const readBytes = meta.numLogprobSlots > 0 ? this.logprobOffset + meta.numLogprobSlots * SAMPLE_LOGPROB_WORDS * 4 : READBACK_TIMESTAMP_BYTES + counts.numSampled * 4;
    await act.readback.mapAsync(GPUMapMode.READ, 0, readBytes);
    const mapped = act.readback.getMappedRange(0, readBytes);
    // ids in sampled-position order (u32 read as i32) -> each row's first, then the ids after its drafts
    const result: StepResult = splitSampledIds(plan.rows, new Int32Array(mapped, READBACK_TIMESTAMP_BYTES, counts.numSampled));
    if (meta.numLogprobSlots > 0) result.logprobs = this.logprobsOf(plan, new Float32Array(mapped, this.logprobOffset, meta.numLogprobSlots * SAMPLE_LOGPROB_WORDS));
    if (timed) {
      const [begin, end] = new BigUint64Array(mapped, 0, 2);
      if (begin! > 0n && end! > begin!) result.gpuTimeMs = Number(end! - begin!) / 1e6;
    }
    act.readback.unmap();
    return result;
  }

  /**
   * Per row, the logprobs of its sampled positions from `slots` ([numLogprobSlots,
   * SAMPLE_LOGPROB_WORDS]: the token's, then per top id its id bits and logprob), in plan order.
   */
  private logprobsOf(plan: StepPlan, slots: Float32Array): (SampledLogprobs[] | undefined)[] {
    const { meta } = this;
    const out: (SampledLogprobs[] | undefined)[] = plan.rows.map(() => undefined);
    const ids = new Int32Array(slots.buffer, slots.byteOffset, slots.length);
    for (let i = 0; i < meta.numSampled; i++) {
      const slot = meta.logprobSlots[i]!;
      if (slot < 0) continue;
      const r = meta.sampleRows[i]!;
      const o = slot * SAMPLE_LOGPROB_WORDS;
      const numTop = Math.min(plan.rows[r]!.sampling.logprobs ?? 0, this.vocabSize);
      const topIds = new Int32Array(numTop);
      const topLogprobs = new Float32Array(numTop);
      for (let t = 0; t < numTop; t++) {
        topIds[t] = ids[o + 1 + 2 * t]!;
        topLogprobs[t] = slots[o + 2 + 2 * t]!;
      }
      (out[r] ??= []).push({ logprob: slots[o]!, topIds, topLogprobs });
    }
    return out;
  }

  /** The packed step's sizes, as the dispatches' grids and params read them. */
  private counts(): Counts {
    const { meta } = this;
    return { numTokens: meta.numTokens, numSampled: meta.numSampled, numGathered: meta.numGathered, numPenalized: meta.numPenalized, numMasked: meta.numMasked, numAttentionItems: meta.numAttentionItems, numMergeItems: meta.numMergeItems };
  }

  /** Fills this.grid for d; false when it has no workgroups. */
  private fillGrid(d: Dispatch, counts: Counts): boolean {
    d.grid(counts, this.grid);
    return this.grid[0]! > 0 && this.grid[1]! > 0;
  }

  private encode(pass: GPUComputePassEncoder, dispatches: readonly Dispatch[], counts: Counts): void {
    for (const d of dispatches) {
      if (!this.fillGrid(d, counts)) continue;
      pass.setPipeline(d.pipeline);
      pass.setBindGroup(0, d.bindGroup);
      pass.dispatchWorkgroups(this.grid[0]!, this.grid[1]!);
    }
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    destroyWeights(this.weights);
    for (const arena of this.kv.arenas) arena.destroy();
    this.act.destroy();
    this.program.destroy();
    for (const buffer of this.ropeTableBuffers) buffer.destroy();
    this.querySet?.destroy();
  }
}
