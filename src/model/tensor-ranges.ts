// The check that no two tensors of one file share stored bytes, for the GGUF and safetensors
// loaders alike. Not bounds against the file size: each loader checks those while placing tensors.
import { ModelFormatError } from './errors';

export interface StoredRange {
  name: string;
  /** Absolute byte offsets in the file, end exclusive. */
  begin: number;
  end: number;
}

/**
 * Throws naming both tensors when two of them overlap. No writer produces such files and
 * llama.cpp refuses them; loaded, one stored block would stand for several weights.
 * Empty tensors own no bytes and never overlap.
 */
export function checkNoOverlap(file: string, ranges: readonly StoredRange[]): void {
  const sorted = ranges.filter((r) => r.end > r.begin).sort((a, b) => a.begin - b.begin || a.end - b.end);
  // Sorted by start, and disjoint so far: only the previous range can reach past the next start.
  for (let i = 1; i < sorted.length; i++) {
    const a = sorted[i - 1];
    const b = sorted[i];
    if (b.begin < a.end) {
      throw new ModelFormatError(file, `tensors "${a.name}" and "${b.name}" overlap in the file (bytes [${a.begin}, ${a.end}) and [${b.begin}, ${b.end}))`);
    }
  }
}
