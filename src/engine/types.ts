// The engine's contracts: what a step asks of a ModelRunner and what comes back, plus the
// Tokenizer/ChatTemplate seams. Data only: no buffers, no GPU, no DOM.

/**
 * An output constraint: the reply must match it (constraints.ts; compiled by a ConstraintCompiler,
 * XGrammar's in src/model). `schema` is a JSON Schema as JSON text; compiles are cached by kind + text.
 */
export type OutputConstraint =
  | { kind: 'json_object' }
  | { kind: 'json_schema'; schema: string }
  | { kind: 'ebnf'; grammar: string }
  | { kind: 'regex'; pattern: string }
  /**
   * tool_choice 'auto': text, or calls to `tools` (JSON text of ToolDefinition[]) in the model's own
   * call format, each held to its tool's parameters once it opens; `parallel` false: at most one call.
   */
  | { kind: 'tool_calls'; tools: string; parallel: boolean };

/** Per-session sampling settings. temperature 0 = greedy (argmax, lowest id on ties). */
export interface SamplingParams {
  temperature: number;
  /** 0 = no top-k cut. */
  topK: number;
  /** 1 = no top-p cut. */
  topP: number;
  /** Seeds the per-position RNG (see sampleUniform): same seed + position -> same draw. */
  seed: number;
  /**
   * OpenAI's frequency_penalty (-2..2; absent 0): subtracted from a token's logit once per time it
   * occurs in the request's output so far. penalties.ts says the order and arithmetic.
   */
  frequencyPenalty?: number;
  /** OpenAI's presence_penalty (-2..2; absent 0): subtracted once from every token the output holds. */
  presencePenalty?: number;
  /**
   * llama.cpp's and vLLM's repetition_penalty (> 0; absent 1 = off) over the prompt and output
   * tokens (vLLM's set): a positive logit is divided by it, a negative one multiplied.
   */
  repetitionPenalty?: number;
  /** OpenAI's logit_bias: token id -> -100..100 added to its logit before everything else. */
  logitBias?: Readonly<Record<number, number>>;
  /**
   * Return the log-probability of each sampled token and of this many most likely tokens (0-20),
   * from the distribution the token was drawn from (logprobs.ts); absent: none.
   */
  logprobs?: number;
  /** Only tokens the constraint allows are sampled (StepRow.tokenBitmask); absent: any token. */
  constraint?: OutputConstraint;
}

/** One row of a step: one session's contiguous run of tokens at positions startPos.. */
export interface StepRow {
  sessionId: string;
  /** [numTokens] token ids fed this step (a prefill chunk, or the one decode token). */
  tokenIds: Int32Array;
  /** Position of tokenIds[0] in the session's sequence. */
  startPos: number;
  /**
   * [runner's kvGroups.length] one block table per KV cache group, in the runner's group order:
   * position p lives in blockTables[g][floor(p / blockSize)] of group g's pool. In a sliding-window
   * group, entries before the first block the row's first token reads (firstReadBlock) are 0 (given
   * back, never read).
   */
  blockTables: Int32Array[];
  sampling: SamplingParams;
  /** Sample a token after the last fed token (false for non-final prefill chunks). */
  sample: boolean;
  /**
   * Drafted tokens at the tail of tokenIds, to verify (absent or 0: none). Only on a row with
   * sample = true, only up to the runner's maxDraftTokens, and fewer than tokenIds.length (the
   * row's last known token always leads). The runner then samples after the last known token and
   * after each drafted one, each keyed by its own position: numDraftTokens + 1 ids (StepResult).
   */
  numDraftTokens?: number;
  /**
   * [known tokens] the sequence up to the row's last known token (prompt, then output): present on
   * a sampling row whose penalties count its tokens (penalties.ts countsTokens; not for logit_bias alone).
   */
  penaltyTokens?: Int32Array;
  /** Of penaltyTokens, how many are the prompt (the rest are output); present with it. */
  numPromptTokens?: number;
  /**
   * [(numDraftTokens + 1) * maskWords(vocab)] the tokens a constrained row may sample at each of its
   * sampled positions (after the last known token, then after each draft), one bit per token id,
   * bit (id & 31) of word (id >> 5), set = allowed: present on a sampling row whose sampling has a
   * constraint. Runners set every other token's logit to MASKED_LOGIT (constraints.ts) first.
   */
  tokenBitmask?: Int32Array;
}

/** Plain data handed from scheduler to runner; the runner never chooses rows. */
export interface StepPlan {
  stepIndex: number;
  rows: StepRow[];
}

/**
 * The sampled id of a row whose logits hold a NaN or an infinity: the sampler returns it instead
 * of a token, and the scheduler ends that row's turn with an error. Not -1 (0xffffffff), which
 * marks a row that did not sample; the GPU sampler writes it as the u32 0xfffffffe
 * (NON_FINITE_LOGITS in shaders/sample.wgsl, held equal by src/gpu/sample.test.ts).
 */
export const NON_FINITE_LOGITS = -2;

export interface StepResult {
  /**
   * [rows.length] sampled token id per row, -1 where the row had sample=false, NON_FINITE_LOGITS.
   * For a row with drafts: the id sampled after its last known token (before the first draft).
   */
  sampledIds: Int32Array;
  /**
   * [sum of rows' numDraftTokens] the ids sampled after each drafted token, rows in plan order:
   * a row's k drafts own the next k entries (its offset = the drafts of the rows before it).
   * Absent when no row drafted. Each id is sampled from the target's distribution at its position
   * exactly as plain decode would (the same RNG draw), whether or not the drafts before it match;
   * the scheduler, not the runner, decides how many drafts are accepted.
   */
  draftSampledIds?: Int32Array;
  /**
   * [rows.length] for rows whose sampling asks for logprobs: one entry per sampled position (after
   * the last known token, then after each draft), undefined for other rows. Absent when none asked.
   */
  logprobs?: (SampledLogprobs[] | undefined)[];
  /** GPU execution time when timestamp queries exist. */
  gpuTimeMs?: number;
}

/** Log-probabilities at one sampled position (logprobs.ts says of which distribution). */
export interface SampledLogprobs {
  /** The sampled token's log-probability. */
  logprob: number;
  /** The sampling's `logprobs` most likely ids, most likely first (equal logits: lower id first). */
  topIds: Int32Array;
  topLogprobs: Float32Array;
}

/** Batched mode's row cap unless the caller sets one; runners size their per-row buffers to it. */
export const DEFAULT_MAX_ROWS = 16;

/** Drafted tokens a runner verifies per row unless its caller sets maxDraftTokens (CpuRunner, GpuRunner). */
export const DEFAULT_MAX_DRAFT_TOKENS = 8;

/**
 * One KV cache group a runner declares (vLLM's KVCacheGroupSpec): a pool of `numBlocks` blocks
 * (block 0 included, reserved) holding some layers' K/V, and its kind. `window` null: full
 * attention, every position kept while the request runs; a number: a sliding window of that many
 * positions (the query's own included), whose blocks wholly before the window go back.
 */
export interface KvCacheGroupSpec {
  readonly numBlocks: number;
  readonly window: number | null;
}

/**
 * The first logical block a query at `position` reads in a group of this kind: 0 under full
 * attention; under a sliding window, the block its window starts in. Blocks before it are never
 * read again (positions only grow), so the KV manager may give them back.
 */
export function firstReadBlock(window: number | null, blockSize: number, position: number): number {
  return window === null ? 0 : Math.floor(Math.max(0, position - window + 1) / blockSize);
}

/**
 * Blocks a sliding-window group needs so it never runs out before the full pool does: every
 * running row holds at most ceil((window - 1) / blockSize) + 1 blocks between steps, plus what one
 * step's tokens (maxTokensPerStep over all rows, drafts included) add, a block more per row for
 * alignment; and block 0. Runners size such a group's pool with this; the engine relies on it.
 */
export function slidingGroupBlocks(window: number, blockSize: number, maxRows: number, maxTokensPerStep: number): number {
  return 1 + maxRows * (Math.ceil((window - 1) / blockSize) + 2) + Math.ceil(maxTokensPerStep / blockSize);
}

/**
 * A step's constraint masks, filled while the runner's forward pass runs (vLLM's order: the grammar
 * bitmask is needed only at sampling). `rows`: the plan rows (indices) that carry a tokenBitmask
 * once `fill()` resolves. A runner given one calls fill() exactly once, after it has started the
 * step's forward and before it samples; a fill that rejects fails the step as a runner error does.
 */
export interface StepMaskFill {
  readonly rows: readonly number[];
  fill(): Promise<void>;
}

export interface ModelRunner {
  /** Token positions per KV block. */
  readonly blockSize: number;
  /**
   * Its KV cache groups, each a preallocated pool (block 0 included) and a kind; every row carries
   * one block table per group, in this order. The first keeps every position (full attention):
   * its blocks bound a request's length and name cached prefixes. A full-attention model has
   * exactly one group; a model with sliding-window layers may keep them in a second group, sized
   * with slidingGroupBlocks.
   */
  readonly kvGroups: readonly KvCacheGroupSpec[];
  /** Most tokens one step can carry (activation arena size). */
  readonly maxTokensPerStep: number;
  /** Most rows one step can carry. */
  readonly maxRows: number;
  /** Positions one session may reach (the model's context); none: only the KV pool limits it. */
  readonly maxContext?: number;
  /**
   * Most drafted tokens one row may carry for verification (StepRow.numDraftTokens). None or 0:
   * the runner does not verify drafts, and the engine never sends it any.
   */
  readonly maxDraftTokens?: number;
  /** Runs a step; `masks`: rows whose tokenBitmask is filled during it (StepMaskFill), absent when none is. */
  execute(plan: StepPlan, masks?: StepMaskFill): Promise<StepResult>;
  dispose(): void;
}

export interface Tokenizer {
  encode(text: string): number[];
  decode(ids: ArrayLike<number>): string;
  readonly eosTokenIds: number[];
  /**
   * Renders and encodes a chat. Special tokens count only where the template wrote them;
   * special-token strings typed in messages stay plain text (encode(render()) cannot tell
   * the two apart). Prefer this over encode(template.render(...)) when present.
   */
  encodeChat?(template: ChatTemplate, messages: ChatMessage[], addGenerationPrompt: boolean, tools?: readonly ToolDefinition[]): number[];
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** An assistant message's function calls (OpenAI's `tool_calls`). */
  toolCalls?: ToolCall[];
  /** A tool message: the id of the call it answers. */
  toolCallId?: string;
}

/** A function the model may call, in OpenAI's `tools[i]` shape (chat templates read it as given). */
export interface ToolDefinition {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean | null };
}

/** One call an assistant made: `arguments` is JSON text, as OpenAI returns it. */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatTemplate {
  /** `tools`: the functions the model may call this turn (absent or empty: none). */
  render(messages: ChatMessage[], addGenerationPrompt: boolean, tools?: readonly ToolDefinition[]): string;
}
