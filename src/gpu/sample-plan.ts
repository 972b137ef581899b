// The sampler's shape on the host: chunking per kernel setting, its scratch sizes, its dispatches'
// grids, and how many passes over a row's vocabulary a sampling setting costs. Not the kernel
// (shaders/sample.wgsl) and not its twin (src/reference/sample.ts).
import { inverseTemperature, SAMPLE_CANDIDATE_CAP, SAMPLE_FALLBACK_LANES } from '../engine/sample-numerics';
import type { SamplingParams } from '../engine/types';
import type { KernelSetting } from './kernels';

/** Digit bins of one radix level (sample.wgsl's BINS). */
export const SAMPLE_BINS = 2048;
/** Histogram levels at most: three of the logit key, two of the id (MAX_LEVELS). */
export const SAMPLE_MAX_LEVELS = 5;
/** u32 words of a row's histograms, gather counter and padding (HIST_WORDS). */
export const SAMPLE_HIST_WORDS = SAMPLE_MAX_LEVELS * SAMPLE_BINS + 4;
/** u32 words of one LevelState (LEVEL_WORDS). */
export const SAMPLE_LEVEL_WORDS = 8;
/** Ids one main-pass invocation reads per chunk in the 'gpu' setting. */
const GPU_IDS_PER_INVOCATION = 8;

export interface SamplerShape {
  /** main's WORKGROUP_SIZE override. */
  workgroupSize: number;
  /** Ids per chunk: one workgroup of main per (chunk, row). */
  chunkSize: number;
  numChunks: number;
  /** Histogram levels: 4 for a vocabulary of at most 2048 ids (one id digit), else 5. */
  numLevels: number;
  /** u32 words of a row's state scratch: per-chunk argmax and flag, level states, gathered ids. */
  stateWords: number;
}

/**
 * 'gpu': 256-invocation workgroups over 2048-id chunks (63 per row on a 128k vocabulary, so even
 * one row fills a GPU); 'cpu': one 64-invocation workgroup over the whole row, as SwiftShader pays
 * a fixed cost per workgroup and per invocation. The tokens are the same either way.
 */
export function samplerShape(vocab: number, setting: KernelSetting): SamplerShape {
  if (vocab > 2 ** 22) throw new Error(`vocab ${vocab}: the sampler's id digits cover 2^22 ids`);
  const workgroupSize = setting === 'gpu' ? 256 : 64;
  const chunkSize = setting === 'gpu' ? workgroupSize * GPU_IDS_PER_INVOCATION : vocab;
  const numChunks = Math.ceil(vocab / chunkSize);
  return { workgroupSize, chunkSize, numChunks, numLevels: vocab <= SAMPLE_BINS ? 4 : 5, stateWords: 2 * numChunks + SAMPLE_LEVEL_WORDS * (SAMPLE_MAX_LEVELS + 1) + SAMPLE_CANDIDATE_CAP };
}

/** Whether a row with these settings keeps its ids by gathering (else the bisection fallback). */
export function sampleIsGathered(sampling: Pick<SamplingParams, 'temperature' | 'topK'>, vocab: number): boolean {
  const topK = Math.max(0, Math.floor(sampling.topK));
  return inverseTemperature(sampling.temperature) > 0 && topK !== 1 && (topK === 0 ? vocab : Math.min(topK, vocab)) <= SAMPLE_CANDIDATE_CAP;
}

/**
 * Passes over one row's [vocab] logits (every dispatch that reads them counts once) that sampling
 * with these settings costs at most, in either kernel setting:
 * - greedy (temperature <= 0, or topK 1): 1, the chunks' argmax (finish merges per-chunk results);
 * - temperature with min(topK, vocab) <= SAMPLE_CANDIDATE_CAP (topK 0 counts as the vocab): the
 *   argmax and first histogram, a histogram per further level, the gather: numLevels + 1, so 6
 *   past 2048 ids, 5 below; a level whose cut falls between bins ends the select early (usually
 *   after the logit's 3 levels: 4 passes); top-p and the draw then read only the kept ids;
 * - otherwise the bisection fallback in finish: argmax, weights, a kept-mass pass per cut, and
 *   32 + id bits passes per active cut (top-k, top-p, the draw): about 90-160.
 */
export function samplerVocabPasses(sampling: Pick<SamplingParams, 'temperature' | 'topK' | 'topP'>, vocab: number): number {
  const topK = Math.max(0, Math.floor(sampling.topK));
  if (!(inverseTemperature(sampling.temperature) > 0) || topK === 1) return 1;
  if (sampleIsGathered(sampling, vocab)) return (vocab <= SAMPLE_BINS ? 4 : 5) + 1;
  const keyBits = 32 + (32 - Math.clz32(Math.max(vocab - 1, 1)));
  const cuts = (topK > 0 && topK < vocab ? 1 : 0) + (Math.fround(sampling.topP) < 1 ? 1 : 0) + 1;
  return 2 + 3 + cuts * keyBits;
}

/** The fallback's lanes, re-exported for the registry test. */
export const SAMPLE_FINISH_SIZE = SAMPLE_FALLBACK_LANES;
