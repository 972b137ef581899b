// Compiled compute pipelines keyed by kernel + override constants (never shapes), with the
// explicit bind group layouts of kernels.ts. Not a buffer manager and not a dispatcher.
import { KERNELS, type BindingKind, type KernelName, type KernelSpec, type Overrides } from './kernels';

/** WGSL source of shaders/<file>.wgsl: Vite ?raw imports in the browser, fs in Node tests. */
export type ShaderSource = (file: string) => string;

const bufferBindingType: Record<BindingKind, GPUBufferBindingType> = {
  uniform: 'uniform',
  read: 'read-only-storage',
  write: 'storage',
};

export class PipelineCache {
  private readonly modules = new Map<string, GPUShaderModule>();
  private readonly layouts = new Map<KernelName, GPUBindGroupLayout>();
  private readonly pipelines = new Map<string, GPUComputePipeline>();

  constructor(
    readonly device: GPUDevice,
    private readonly shaderSource: ShaderSource,
  ) {}

  static key(kernel: KernelName, overrides: Overrides = {}): string {
    const parts = Object.keys(overrides)
      .sort()
      .map((name) => `${name}=${overrides[name]}`);
    return [kernel, ...parts].join('|');
  }

  bindGroupLayout(kernel: KernelName): GPUBindGroupLayout {
    let layout = this.layouts.get(kernel);
    if (!layout) {
      layout = this.device.createBindGroupLayout({
        label: kernel,
        entries: KERNELS[kernel].bindings.map(([, kind], binding) => ({
          binding,
          visibility: GPUShaderStage.COMPUTE,
          buffer: { type: bufferBindingType[kind] },
        })),
      });
      this.layouts.set(kernel, layout);
    }
    return layout;
  }

  /** Compiles (once) and returns the pipeline; fails with the WGSL compiler's messages. */
  async prepare(kernel: KernelName, overrides: Overrides = {}): Promise<GPUComputePipeline> {
    const key = PipelineCache.key(kernel, overrides);
    const cached = this.pipelines.get(key);
    if (cached) return cached;
    const module = await this.module(KERNELS[kernel].file);
    const pipeline = await this.device.createComputePipelineAsync({
      label: key,
      layout: this.device.createPipelineLayout({ bindGroupLayouts: [this.bindGroupLayout(kernel)] }),
      compute: { module, entryPoint: (KERNELS[kernel] as KernelSpec).entry ?? 'main', constants: { ...overrides } },
    });
    this.pipelines.set(key, pipeline);
    return pipeline;
  }

  /** A pipeline prepared earlier; the step loop only calls this, so it never compiles. */
  get(kernel: KernelName, overrides: Overrides = {}): GPUComputePipeline {
    const pipeline = this.pipelines.get(PipelineCache.key(kernel, overrides));
    if (!pipeline) throw new Error(`pipeline ${PipelineCache.key(kernel, overrides)} was not prepared`);
    return pipeline;
  }

  bindGroup(kernel: KernelName, buffers: readonly GPUBufferBinding[], label?: string): GPUBindGroup {
    const expected = KERNELS[kernel].bindings.length;
    if (buffers.length !== expected) throw new Error(`${kernel} takes ${expected} bindings, got ${buffers.length}`);
    return this.device.createBindGroup({
      label: label ?? kernel,
      layout: this.bindGroupLayout(kernel),
      entries: buffers.map((resource, binding) => ({ binding, resource })),
    });
  }

  private async module(file: string): Promise<GPUShaderModule> {
    let module = this.modules.get(file);
    if (!module) {
      module = this.device.createShaderModule({ label: file, code: this.shaderSource(file) });
      const info = await module.getCompilationInfo();
      const errors = info.messages.filter((m) => m.type === 'error');
      if (errors.length > 0) {
        throw new Error(`${file}.wgsl: ${errors.map((m) => `${m.lineNum}:${m.linePos} ${m.message}`).join('; ')}`);
      }
      this.modules.set(file, module);
    }
    return module;
  }
}
