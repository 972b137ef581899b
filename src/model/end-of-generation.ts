// Which tokens end a generation, as llama.cpp decides it (src/llama-vocab.cpp, the special_eog_ids
// it builds at load): the texts it knows, the eos/eot/eom ids and FIM pad/repo/sep. Not sampling.

/**
 * Token texts llama.cpp treats as end of generation whatever the file says, and forces to
 * control type (so typed text never becomes one).
 */
export const END_OF_GENERATION_TEXTS: readonly string[] = [
  '<|eot_id|>', '<|im_end|>', '<|end|>', '<|return|>', '<|call|>', '<|flush|>', '<|calls|>', '<end_of_turn>',
  '<|endoftext|>', '</s>', '<|eom_id|>', '<EOT>', '_<EOT>', '[EOT]', '[EOS]', '<|end_of_text|>',
  '<end_of_utterance>', '<eos>', '<turn|>', '<|tool_response>', '<｜end▁of▁sentence｜>', '[e~[',
];

/** FIM pad, repository and file-separator texts: llama.cpp ends generation on these too. */
const FIM_END_TEXTS: ReadonlyArray<readonly string[]> = [
  ['<|fim_pad|>', '<fim-pad>', '<fim_pad>', '<PAD>', '[PAD]'],
  ['<|fim_repo|>', '<|repo_name|>', '<fim-repo>', '<REPO>', '<reponame>'],
  ['<|file_sep|>'],
];

/** Other texts llama.cpp forces to control type when it finds them (FIM prefix, suffix, middle). */
const FIM_CONTROL_TEXTS: readonly string[] = [
  '<|fim_prefix|>', '<fim-prefix>', '<fim_prefix>', '<｜fim▁begin｜>', '<PRE>', '▁<PRE>', '<|code_prefix|>', '<|prefix|>',
  '<|fim_suffix|>', '<fim-suffix>', '<fim_suffix>', '<｜fim▁hole｜>', '<SUF>', '▁<SUF>', '<|code_suffix|>', '<|suffix|>',
  '<|fim_middle|>', '<fim-middle>', '<fim_middle>', '<｜fim▁end｜>', '<MID>', '▁<MID>', '<|code_middle|>', '<|middle|>',
];

export interface EndOfGeneration {
  /** Every id that ends a generation, ascending. */
  ids: number[];
  /** Ids llama.cpp marks control (typed text never becomes them). */
  control: number[];
  /** Ids llama.cpp takes off the end list and out of control (its gpt-oss/solar and gemma4 workarounds). */
  demoted: number[];
}

/**
 * llama.cpp's end-of-generation list for a vocabulary. `idOf` looks a token text up; the
 * explicit ids are the eos/eot/eom keys (or defaults), null when absent or out of range.
 */
export function endOfGeneration(
  idOf: (text: string) => number | undefined,
  explicit: { eos: number | null; eot?: number | null; eom?: number | null },
): EndOfGeneration {
  const ends = new Set<number>();
  const control = new Set<number>();
  const add = (id: number | null | undefined, isControl: boolean): void => {
    if (id === null || id === undefined) return;
    ends.add(id);
    if (isControl) control.add(id);
  };
  for (const texts of FIM_END_TEXTS) {
    const found = texts.map(idOf).find((id) => id !== undefined);
    add(found, true);
  }
  for (const text of END_OF_GENERATION_TEXTS) add(idOf(text), true);
  for (const text of FIM_CONTROL_TEXTS) {
    const id = idOf(text);
    if (id !== undefined) control.add(id);
  }
  add(explicit.eos, false);
  add(explicit.eot, false);
  add(explicit.eom, false);
  const demoted: number[] = [];
  const present = (text: string): number | undefined => {
    const id = idOf(text);
    return id !== undefined && ends.has(id) ? id : undefined;
  };
  const end = present('<|end|>');
  const hasCall = present('<|call|>') !== undefined || present('<|calls|>') !== undefined;
  if (end !== undefined && hasCall && (present('<|return|>') !== undefined || present('<|flush|>') !== undefined)) demoted.push(end);
  const closeS = present('</s>');
  if (closeS !== undefined && present('<|tool_response>') !== undefined) demoted.push(closeS);
  for (const id of demoted) {
    ends.delete(id);
    control.delete(id);
  }
  return { ids: [...ends].sort((a, b) => a - b), control: [...control].sort((a, b) => a - b), demoted };
}
