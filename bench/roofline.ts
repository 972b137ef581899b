// Kernels against the device's own limit: every projection's matmul of published model shapes, per
// stored type, at 1 and 8 tokens, in both kernel settings: workgroups launched, GPU time, achieved
// GB/s and that as a fraction of a plain copy kernel's GB/s (bench/copy.wgsl) measured in the same
// run. Not a model step (kernels.node.ts times those); weights are random bytes with finite scales.
import { readFileSync } from 'node:fs';
import { MATMUL_SHAPE, matmulGrid, matmulOverrides, type KernelSetting } from '../src/gpu/kernels';
import { REPACKED_DTYPES, repackForGpu } from '../src/gpu/repack';
import type { PipelineCache } from '../src/gpu/pipeline-cache';
import { repoPath } from '../src/gpu/testing/node-gpu';
import type { DType, ModelConfig } from '../src/model/desc';
import { tensorBytes } from '../src/model/quant-layout';
import { median } from '../src/protocol/metrics';
import { MODEL_SHAPES, randomBytes } from '../tools/models/published-shapes';

/** One matmul dispatch of a model's layer (or its lm_head) as the forward program runs it. */
export interface Projection {
  name: 'qkv_proj' | 'o_proj' | 'gate_up_proj' | 'down_proj' | 'lm_head';
  /** Weight rows and columns. */
  n: number;
  k: number;
  /** o_proj and down_proj add into the residual stream (y read and written). */
  accumulate: boolean;
  /** gate_up stores act(gate) * up: n / 2 outputs per token. */
  glu: boolean;
}

export function projections(c: ModelConfig): Projection[] {
  const q = c.numHeads * c.headDim;
  const kv = c.numKvHeads * c.headDim;
  return [
    { name: 'qkv_proj', n: q + 2 * kv, k: c.hiddenSize, accumulate: false, glu: false },
    { name: 'o_proj', n: c.hiddenSize, k: q, accumulate: true, glu: false },
    { name: 'gate_up_proj', n: 2 * c.intermediateSize, k: c.hiddenSize, accumulate: false, glu: true },
    { name: 'down_proj', n: c.hiddenSize, k: c.intermediateSize, accumulate: true, glu: false },
    { name: 'lm_head', n: c.vocabSize, k: c.hiddenSize, accumulate: false, glu: false },
  ];
}

/** Columns a row of `dtype` must hold a whole number of (its block). */
const BLOCK_COLUMNS: Record<DType, number> = { f32: 4, f16: 4, bf16: 4, q8_0: 32, q4_0: 32, q4_K: 256, q6_K: 256 };

/** Bytes one dispatch moves at the least: the weights once, x once, y once (twice when accumulating). */
export function projectionBytes(p: Projection, dtype: DType, tokens: number): number {
  const outputs = p.glu ? p.n / 2 : p.n;
  return tensorBytes(dtype, [p.n, p.k]) + 4 * tokens * p.k + 4 * tokens * outputs * (p.accumulate ? 2 : 1);
}

export interface ProjectionPoint {
  model: string;
  projection: Projection['name'];
  dtype: DType;
  setting: KernelSetting;
  tokens: number;
  workgroups: number;
  invocationsPerWorkgroup: number;
  ms: number;
  gbs: number;
  /** gbs / the copy kernel's GB/s, measured in the same run on the same device. */
  ofCopy: number;
}

export interface RooflineReport {
  copy: { bytes: number; ms: number; gbs: number };
  points: ProjectionPoint[];
}

/** Random bytes (xorshift32) for a weight matrix, with every block scale set to a small finite f16. */
function randomWeights(dtype: DType, n: number, k: number, seed: number): Uint8Array<ArrayBuffer> {
  const bytes = tensorBytes(dtype, [n, k]);
  const out = padded(randomBytes(bytes, seed));
  const half = new Uint16Array(out.buffer);
  const SCALE = 0x1400; // 2^-10
  if (dtype === 'f16') for (let i = 0; i < half.length; i++) half[i] = 0x3800 | (half[i]! & 0x83ff); // +-[0.5, 1)
  if (dtype === 'bf16') for (let i = 0; i < half.length; i++) half[i] = 0x3f00 | (half[i]! & 0x807f);
  if (dtype === 'f32') new Float32Array(out.buffer).fill(0.5);
  const put = (at: number) => {
    out[at] = SCALE & 0xff;
    out[at + 1] = SCALE >> 8;
  };
  const block = { q8_0: 34, q4_0: 18, q4_K: 144, q6_K: 210 } as Partial<Record<DType, number>>;
  const size = block[dtype];
  if (size) {
    for (let at = 0; at + size <= bytes; at += size) {
      if (dtype === 'q6_K') put(at + 208);
      else put(at);
      if (dtype === 'q4_K') put(at + 2); // dmin
    }
  }
  // as the runner uploads them: q8_0 / q4_0 repacked into quant and scale planes
  return REPACKED_DTYPES.has(dtype) ? padded(repackForGpu(out.subarray(0, bytes), dtype, n, k)) : out;
}

/** Bytes padded to 16 plus a word, as the runner uploads weights. */
function padded(data: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(Math.ceil(data.byteLength / 16) * 16 + 16);
  out.set(data);
  return out;
}

async function gpuMs(device: GPUDevice, record: (pass: GPUComputePassEncoder) => void, repeats: number): Promise<number> {
  const querySet = device.createQuerySet({ type: 'timestamp', count: 2 });
  const resolved = device.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
  const readback = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const times: number[] = [];
  try {
    for (let i = 0; i <= repeats; i++) {
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass({ timestampWrites: { querySet, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } });
      record(pass);
      pass.end();
      encoder.resolveQuerySet(querySet, 0, 2, resolved, 0);
      encoder.copyBufferToBuffer(resolved, 0, readback, 0, 16);
      device.queue.submit([encoder.finish()]);
      await readback.mapAsync(GPUMapMode.READ);
      const stamps = new BigUint64Array(readback.getMappedRange().slice(0));
      readback.unmap();
      if (i > 0) times.push(Number(stamps[1]! - stamps[0]!) / 1e6); // the first is a warm-up
    }
    return median(times);
  } finally {
    querySet.destroy();
    resolved.destroy();
    readback.destroy();
  }
}

function storage(device: GPUDevice, size: number, label: string, data?: Uint8Array<ArrayBuffer>): GPUBuffer {
  const buffer = device.createBuffer({ label, size: Math.max(16, Math.ceil(size / 16) * 16), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC });
  if (data) device.queue.writeBuffer(buffer, 0, data);
  return buffer;
}

/** GB/s of bench/copy.wgsl over `bytes` (read once, written once), median of `repeats` runs. */
export async function copyBandwidth(device: GPUDevice, bytes: number, repeats: number): Promise<RooflineReport['copy']> {
  const module = device.createShaderModule({ code: readFileSync(repoPath('bench/copy.wgsl'), 'utf8') });
  const workgroupSize = 256;
  const pipeline = await device.createComputePipelineAsync({ layout: 'auto', compute: { module, entryPoint: 'main', constants: { WORKGROUP_SIZE: workgroupSize } } });
  const src = storage(device, bytes, 'copy-src', new Uint8Array(bytes).fill(7));
  const dst = storage(device, bytes, 'copy-dst');
  try {
    const bindGroup = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: src } }, { binding: 1, resource: { buffer: dst } }] });
    const groups = Math.ceil(bytes / 16 / workgroupSize);
    const x = Math.min(groups, 65535);
    const ms = await gpuMs(device, (pass) => {
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bindGroup);
      pass.dispatchWorkgroups(x, Math.ceil(groups / x));
    }, repeats);
    return { bytes: 2 * bytes, ms, gbs: (2 * bytes) / (ms * 1e6) };
  } finally {
    src.destroy();
    dst.destroy();
  }
}

export interface RooflineOptions {
  models: string[];
  dtypes: DType[];
  tokens: number[];
  settings: KernelSetting[];
  repeats: number;
  copyBytes: number;
  log?: (line: string) => void;
}

/** Every (model, projection, dtype) whose columns hold whole blocks, timed in each setting and token count. */
export async function rooflineSweep(cache: PipelineCache, o: RooflineOptions): Promise<RooflineReport> {
  const device = cache.device;
  const copy = await copyBandwidth(device, o.copyBytes, o.repeats);
  o.log?.(`copy kernel: ${copy.gbs.toFixed(2)} GB/s over ${(copy.bytes / 2 ** 20).toFixed(0)} MiB`);
  const points: ProjectionPoint[] = [];
  let seed = 1;
  for (const model of o.models) {
    const config = MODEL_SHAPES[model];
    if (!config) throw new Error(`unknown model shape ${model}`);
    for (const p of projections(config)) {
      for (const dtype of o.dtypes) {
        if (p.k % BLOCK_COLUMNS[dtype] !== 0) continue; // no such file: converters store these rows in another type
        const maxTokens = Math.max(...o.tokens);
        const outputs = p.glu ? p.n / 2 : p.n;
        const params = device.createBuffer({ size: 32, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
        const w = storage(device, tensorBytes(dtype, [p.n, p.k]) + 16, 'w', randomWeights(dtype, p.n, p.k, seed++));
        const x = storage(device, 4 * maxTokens * p.k, 'x', new Uint8Array(new Float32Array(maxTokens * p.k).fill(0.25).buffer));
        const y = storage(device, 4 * maxTokens * outputs, 'y');
        const unused = [storage(device, 16, 'bias'), storage(device, 16, 'y2'), storage(device, 16, 'y3'), storage(device, 16, 'normWeight')];
        try {
          for (const setting of o.settings) {
            const shape = MATMUL_SHAPE[setting];
            const pipeline = await cache.prepare('matmul', matmulOverrides(dtype, shape, { accumulate: p.accumulate, glu: p.glu }));
            const bindGroup = cache.bindGroup('matmul', [params, x, w, unused[0]!, y, unused[1]!, unused[2]!, unused[3]!].map((buffer) => ({ buffer })));
            for (const tokens of o.tokens) {
              const values = new Uint32Array([tokens, p.n, p.k, p.n, p.n, 0, 0, 0]);
              device.queue.writeBuffer(params, 0, values);
              const grid = [0, 0];
              matmulGrid(p.n, tokens, shape, grid);
              const ms = await gpuMs(device, (pass) => {
                pass.setPipeline(pipeline);
                pass.setBindGroup(0, bindGroup);
                pass.dispatchWorkgroups(grid[0]!, grid[1]!);
              }, o.repeats);
              const gbs = projectionBytes(p, dtype, tokens) / (ms * 1e6);
              const point: ProjectionPoint = { model, projection: p.name, dtype, setting, tokens, workgroups: grid[0]! * grid[1]!, invocationsPerWorkgroup: shape.workgroupSize, ms, gbs, ofCopy: gbs / copy.gbs };
              points.push(point);
              o.log?.(`${model} ${p.name} ${dtype} ${setting} T=${tokens}: ${point.workgroups} x ${point.invocationsPerWorkgroup}, ${ms.toFixed(3)} ms, ${gbs.toFixed(2)} GB/s (${(100 * point.ofCopy).toFixed(0)}% of copy)`);
            }
          }
        } finally {
          for (const b of [params, w, x, y, ...unused]) b.destroy();
        }
      }
    }
  }
  return { copy, points };
}

/**
 * The launch-shape check for one model at batch 1 in the 'gpu' setting: every matmul at least
 * `minWorkgroups` workgroups of at least `minInvocations` invocations (from matmulGrid, so it holds
 * on any adapter). Returns the projections that fall short.
 */
export function launchShortfalls(c: ModelConfig, minWorkgroups = 128, minInvocations = 64): string[] {
  const shape = MATMUL_SHAPE.gpu;
  return projections(c).flatMap((p) => {
    const grid = [0, 0];
    matmulGrid(p.n, 1, shape, grid);
    const workgroups = grid[0]! * grid[1]!;
    return workgroups >= minWorkgroups && shape.workgroupSize >= minInvocations ? [] : [`${p.name}: ${workgroups} x ${shape.workgroupSize}`];
  });
}
