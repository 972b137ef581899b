// Counter-based RNG for sampling: one uniform per (seed, position), so a session's draws do
// not depend on which other sessions share the step. Mirrored bit-for-bit in shaders/sample.wgsl.

/** murmur3's 32-bit finalizer. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Uniform in [0, 1) with 24 bits, for the token generated at sequence position `pos`. */
export function sampleUniform(seed: number, pos: number): number {
  const h = fmix32((seed ^ Math.imul(pos, 0x9e3779b9)) >>> 0);
  return (h >>> 8) / 16777216;
}
