// Vitest settings: Node environment, tests beside their sources, WebGPU via SwiftShader.
// Browser (Playwright) specs under e2e/ are not run here.
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

const swiftShaderIcd = '/usr/lib/chromium/vk_swiftshader_icd.json';

export default defineConfig({
  test: {
    environment: 'node',
    include: ['src/**/*.test.ts', 'src/**/*.test.tsx', 'workers/**/*.test.ts', 'testing/**/*.test.ts', 'scripts/**/*.test.ts', 'tools/**/*.test.ts', 'bench/**/*.test.ts'],
    // Processes, not threads: the Vulkan loader reads VK_ICD_FILENAMES from the real environment.
    pool: 'forks',
    maxWorkers: Math.max(1, Math.min(4, availableParallelism() - 1)),
    // SwiftShader runs kernels on the CPU, so GPU tests get room; never used to assert speed.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    env: { VK_ICD_FILENAMES: process.env.VK_ICD_FILENAMES ?? swiftShaderIcd },
  },
});
