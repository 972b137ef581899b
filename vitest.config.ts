// Vitest settings: Node environment, tests beside their sources, WebGPU via SwiftShader. The
// runner-level GPU tests run twice: in the adapter's kernel setting and with the 'gpu' one forced.
// Browser (Playwright) specs under e2e/ are not run here.
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

const swiftShaderIcd = '/usr/lib/chromium/vk_swiftshader_icd.json';
const env = { VK_ICD_FILENAMES: process.env.VK_ICD_FILENAMES ?? swiftShaderIcd };

/**
 * GpuRunner's parity, batch, chunk and verify invariance tests: run again with COHORT_KERNELS=gpu,
 * so the GPU shapes (lanes along K, splits merged, chunked sampling) are held to the same bits on
 * SwiftShader, whose default is the 'cpu' setting. Kernel-level tests loop over both settings
 * themselves. Not engine-loop.test.ts (the loop's races, not the kernels: 3.5 min in the 'gpu'
 * setting on 2 cores) nor speculative-decoding.test.ts (the engine's speculation; verify rows'
 * bits are speculative-verify.test.ts's).
 */
const runnerTests = [
  'src/gpu/gpu-runner.test.ts',
  'src/gpu/gemma-runner.test.ts',
  'src/gpu/window-kv.test.ts',
  'src/gpu/speculative-verify.test.ts',
  'src/gpu/non-finite-logits.test.ts',
];

export default defineConfig({
  test: {
    environment: 'node',
    // Processes, not threads: the Vulkan loader reads VK_ICD_FILENAMES from the real environment.
    pool: 'forks',
    maxWorkers: Math.max(1, Math.min(4, availableParallelism() - 1)),
    // SwiftShader runs kernels on the CPU, so GPU tests get room; never used to assert speed.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    env,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'src/**/*.test.tsx', 'workers/**/*.test.ts', 'testing/**/*.test.ts', 'scripts/**/*.test.ts', 'tools/**/*.test.ts', 'bench/**/*.test.ts'],
        },
      },
      { extends: true, test: { name: 'gpu-kernels', include: runnerTests, env: { ...env, COHORT_KERNELS: 'gpu' } } },
    ],
  },
});
