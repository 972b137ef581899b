// The browser bundle of WGSL (?raw imports) covers every registered kernel with the files on disk.
// Does not compile anything: the kernel tests do.
import { describe, expect, it } from 'vitest';
import { SHADER_FILES } from './kernels';
import { loadShader } from './testing/node-gpu';
import { bundledShaderSource } from './shader-sources';

describe('bundledShaderSource', () => {
  it('holds every kernel file, identical to shaders/ on disk', () => {
    for (const file of SHADER_FILES) expect(bundledShaderSource(file)).toBe(loadShader(file));
  });
});
