// mulberry32: the one seeded stream of uniforms in [0, 1), for NIAH prompts, synthetic test
// models and random test schedules. Not the sampling RNG (rng.ts, one draw per position).

/**
 * Uniforms in [0, 1) with 32 bits from a 32-bit seed; the same sequence in every JS engine.
 * A dependency-free leaf: the protocol and the library may import it (scripts/import-boundaries.js).
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
