// ESLint flat config: typescript-eslint's recommended rules plus Cohort's folder boundaries and no
// import circle among product files (scripts/import-boundaries.js), and bans on DOM/WebGPU globals in the pure folders.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';
import { importBoundaries, importCycles } from './scripts/import-boundaries.js';

const root = path.dirname(fileURLToPath(import.meta.url));

const pureFolders = ['src/engine/**/*.ts', 'src/model/**/*.ts', 'src/reference/**/*.ts'];
const browserOnly = 'the engine, model and reference code run in Node too: no DOM or WebGPU';

export default defineConfig(
  { ignores: ['.*/**', 'tmp/**', 'dist/**', 'dist-test/**', 'node_modules/**', 'test-results/**', 'playwright-report/**', 'public/**', 'tools/train/**', '**/*.d.ts'] },
  {
    files: ['**/*.{ts,tsx}'],
    extends: [tseslint.configs.recommended],
    plugins: { cohort: { rules: { 'import-boundaries': importBoundaries, 'import-cycles': importCycles } } },
    rules: {
      'cohort/import-boundaries': ['error', { root }],
      'cohort/import-cycles': ['error', { root }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: pureFolders,
    rules: {
      'no-restricted-globals': [
        'error',
        ...['window', 'document', 'navigator', 'localStorage', 'sessionStorage', 'HTMLElement'].map((name) => ({ name, message: browserOnly })),
        ...['GPUBufferUsage', 'GPUMapMode', 'GPUShaderStage'].map((name) => ({ name, message: browserOnly })),
      ],
      '@typescript-eslint/no-restricted-types': [
        'error',
        {
          types: Object.fromEntries(
            ['GPUDevice', 'GPUAdapter', 'GPUBuffer', 'GPUQueue', 'GPUCommandEncoder', 'GPUComputePipeline', 'HTMLElement', 'Document', 'Window'].map((name) => [name, browserOnly]),
          ),
        },
      ],
    },
  },
  {
    files: ['**/*.{js,mjs}'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
