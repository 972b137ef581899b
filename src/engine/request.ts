// Request: one generation (a turn) as the scheduler tracks it: known tokens, computed tokens,
// sampling and stop settings, output text. No block ids (the KV manager keeps those).
import type { FinishReason } from './events';
import type { RequestConstraint } from './constraints';
import { OutputText } from './output-text';
import { DEFAULT_SPECULATION, newDraftStats, type DraftStats, type Speculation } from './speculation';
import type { SamplingParams, Tokenizer } from './types';

export interface RequestParams {
  requestId: string;
  sessionId: string;
  promptTokenIds: readonly number[];
  sampling: SamplingParams;
  /** Most tokens to generate: an integer from 1 to MAX_NEW_TOKENS, checked where sessions are created (session-options.ts). */
  maxTokens: number;
  stopStrings?: readonly string[];
  /** Keep generating past EOS until maxTokens (benchmarks, like vLLM's ignore_eos). */
  ignoreEos?: boolean;
  /** Speculative decoding for this request (default 'auto'; the engine's setting and the runner bound it). */
  speculation?: Speculation;
  /** The expected output, as tokens: drafts come from it first (OpenAI's Predicted Outputs). */
  predictionTokenIds?: readonly number[];
}

export type RequestStatus = 'waiting' | 'running' | 'finished';

export class Request {
  readonly requestId: string;
  readonly sessionId: string;
  readonly sampling: SamplingParams;
  readonly maxTokens: number;
  readonly numPromptTokens: number;
  /** Prompt followed by generated tokens. */
  readonly tokenIds: number[];
  /** Tokens whose KV is written; reset to 0 on preemption. */
  numComputedTokens = 0;
  /** Prompt tokens found in the prefix cache at the latest admission. */
  numCachedTokens = 0;
  status: RequestStatus = 'waiting';
  /** Set by the scheduler on admission; lower arrived earlier. */
  arrivalSeq = 0;
  numPreemptions = 0;
  cancelRequested = false;
  readonly speculation: Speculation;
  readonly predictionTokenIds: readonly number[] | undefined;
  /** Its drafts' statistics (acceptance, 'auto' backoff): the scheduler's to update. */
  readonly draftStats: DraftStats = newDraftStats();
  finishReason?: FinishReason;
  error?: string;
  /** The sampling's constraint being compiled, then its matcher (the scheduler sets it); null without. */
  constraint: RequestConstraint | null = null;
  private readonly eosTokenIds: ReadonlySet<number>;
  private readonly output: OutputText;

  constructor(params: RequestParams, tokenizer: Tokenizer) {
    if (params.promptTokenIds.length === 0) throw new Error(`request ${params.requestId} has an empty prompt`);
    this.requestId = params.requestId;
    this.sessionId = params.sessionId;
    this.sampling = params.sampling;
    this.maxTokens = params.maxTokens;
    this.numPromptTokens = params.promptTokenIds.length;
    this.tokenIds = params.promptTokenIds.slice();
    this.speculation = params.speculation ?? DEFAULT_SPECULATION;
    this.predictionTokenIds = params.predictionTokenIds?.slice();
    this.eosTokenIds = new Set(params.ignoreEos ? [] : tokenizer.eosTokenIds);
    this.output = new OutputText(tokenizer, params.stopStrings ?? [], params.promptTokenIds);
  }

  get numTokens(): number {
    return this.tokenIds.length;
  }

  get numOutputTokens(): number {
    return this.tokenIds.length - this.numPromptTokens;
  }

  get outputTokenIds(): number[] {
    return this.tokenIds.slice(this.numPromptTokens);
  }

  get outputText(): string {
    return this.output.emittedText;
  }

  /**
   * Appends a sampled token. Returns its text and, when the request must stop here, why.
   * `capacityTokens` is the most tokens one request may hold: the model's context or the KV pool.
   */
  appendToken(tokenId: number, capacityTokens: number): { delta: string; finishReason?: FinishReason } {
    this.tokenIds.push(tokenId);
    if (this.eosTokenIds.has(tokenId)) return { delta: '', finishReason: 'eos' };
    const { delta, stopped } = this.output.push(tokenId);
    if (stopped) return { delta, finishReason: 'stop' };
    // the new token sits at position numTokens-1 and must be fed to continue
    if (this.numOutputTokens >= this.maxTokens || this.numTokens > capacityTokens) return { delta, finishReason: 'length' };
    return { delta };
  }

  /** Text held back until the end (partial stop string, unfinished character). */
  flushText(): string {
    return this.output.flush();
  }
}
