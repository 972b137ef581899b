// Output constraints as the engine sees them: the compiler and matcher seams (XGrammar's in
// src/model implements them), the compile cache, each request's matcher and the step's bitmasks.
// Not the logit arithmetic: src/reference/token-mask.ts and shaders/token_mask.wgsl, twins, do that.
import { InvalidOptionError } from './errors';
import type { OutputConstraint, StepRow } from './types';

/**
 * The logit a runner writes for a token the bitmask forbids. Finite on purpose: the samplers read
 * any non-finite logit as a model fault (NON_FINITE_LOGITS), and -1e30 stays finite through every
 * later f32 step (bias, repetition x100, 1/T) while exp() of it is exactly 0.
 */
export const MASKED_LOGIT = -1e30;

/** Int32 words of one bitmask row: one bit per token id. */
export function maskWords(vocab: number): number {
  return Math.ceil(vocab / 32);
}

/** Whether token `id` is allowed by the bitmask row starting at word `offset`. */
export function maskAllows(mask: Int32Array, offset: number, id: number): boolean {
  return ((mask[offset + (id >>> 5)]! >>> (id & 31)) & 1) === 1;
}

/** A compiled constraint's state along one reply (XGrammar's GrammarMatcher). */
export interface ConstraintMatcher {
  /** [maskWords] the tokens allowed next, bit set = allowed (stop tokens only where it can end). */
  nextTokenBitmask(): Promise<Int32Array>;
  /** Advances by one token; false (and no change) when the constraint forbids it. */
  acceptToken(id: number): boolean;
  /** Takes back the last `numTokens` accepted tokens. */
  rollBack(numTokens: number): void;
  /** A stop token was accepted: the reply is complete. */
  isTerminated(): boolean;
  dispose(): void;
}

export interface CompiledConstraint {
  newMatcher(): Promise<ConstraintMatcher>;
  dispose(): void;
}

/** Compiles constraints for one loaded model's vocabulary; rejects with why a constraint cannot be. */
export interface ConstraintCompiler {
  /** Logit rows' width: the bitmask covers ids 0..vocabSize-1. */
  readonly vocabSize: number;
  compile(constraint: OutputConstraint): Promise<CompiledConstraint>;
}

/** The cache key of a constraint: its kind and its text. */
export function constraintKey(c: OutputConstraint): string {
  switch (c.kind) {
    case 'json_object':
      return 'json_object';
    case 'json_schema':
      return `json_schema\n${c.schema}`;
    case 'ebnf':
      return `ebnf\n${c.grammar}`;
    case 'regex':
      return `regex\n${c.pattern}`;
    case 'tool_calls':
      return `tool_calls\n${c.parallel ? 'parallel' : 'one'}\n${c.tools}`;
  }
}

/** Throws InvalidOptionError('sampling.constraint') unless `value` is an OutputConstraint. */
export function validateConstraint(value: unknown): void {
  const bad = (expected: string): never => {
    throw new InvalidOptionError('sampling.constraint', value, expected);
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) bad("an object with kind 'json_object', 'json_schema', 'ebnf', 'regex' or 'tool_calls'");
  const c = value as Record<string, unknown>;
  if (c.kind === 'json_object') return;
  if (c.kind === 'json_schema') {
    if (typeof c.schema !== 'string') bad('a JSON Schema as JSON text in schema');
    try {
      const parsed: unknown = JSON.parse(c.schema as string);
      if (typeof parsed !== 'object' && typeof parsed !== 'boolean') bad('a JSON Schema (an object or a boolean)');
    } catch {
      bad('a JSON Schema as JSON text in schema (it does not parse)');
    }
    return;
  }
  if (c.kind === 'ebnf') {
    if (typeof c.grammar !== 'string' || c.grammar.trim() === '') bad('an EBNF grammar text in grammar');
    return;
  }
  if (c.kind === 'regex') {
    if (typeof c.pattern !== 'string' || c.pattern === '') bad('a regular expression in pattern');
    return;
  }
  if (c.kind === 'tool_calls') {
    if (typeof c.parallel !== 'boolean') bad('parallel true or false');
    let tools: unknown;
    try {
      tools = JSON.parse(typeof c.tools === 'string' ? c.tools : '');
    } catch {
      bad('the tools as JSON text in tools (it does not parse)');
    }
    const isTool = (t: unknown) => typeof t === 'object' && t !== null && typeof (t as { function?: { name?: unknown } }).function?.name === 'string';
    if (!Array.isArray(tools) || tools.length === 0 || !tools.every(isTool)) bad('a non-empty JSON array of function tools in tools');
    return;
  }
  bad("kind 'json_object', 'json_schema', 'ebnf', 'regex' or 'tool_calls'");
}

/** Compiled constraints kept for reuse, least recently used dropped past `capacity`. */
export class ConstraintCache {
  private readonly entries = new Map<string, Promise<CompiledConstraint>>();

  constructor(
    readonly compiler: ConstraintCompiler,
    private readonly capacity = 64,
  ) {}

  /** The compiled constraint (from the cache when compiled before); a failed compile is not kept. */
  compile(c: OutputConstraint): Promise<CompiledConstraint> {
    const key = constraintKey(c);
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    const compiled = this.compiler.compile(c);
    this.entries.set(key, compiled);
    compiled.catch(() => {
      if (this.entries.get(key) === compiled) this.entries.delete(key);
    });
    while (this.entries.size > this.capacity) {
      const [oldest, entry] = this.entries.entries().next().value as [string, Promise<CompiledConstraint>];
      this.entries.delete(oldest);
      // a matcher holds its own reference to the grammar, so dropping the cache's is safe
      entry.then((g) => g.dispose(), () => {});
    }
    return compiled;
  }

  get size(): number {
    return this.entries.size;
  }
}

/** One request's constraint: compiling, then its matcher (or why it cannot be). */
export class RequestConstraint {
  status: 'compiling' | 'ready' | 'failed' = 'compiling';
  matcher: ConstraintMatcher | null = null;
  error = '';
  private disposed = false;

  /** Compiles (through the cache) and makes the matcher; `settled` runs once either way. */
  start(cache: ConstraintCache | null, c: OutputConstraint, settled: () => void): void {
    if (!cache) {
      this.fail('this engine has no constraint compiler');
      settled();
      return;
    }
    cache
      .compile(c)
      .then((compiled) => compiled.newMatcher())
      .then(
        (matcher) => {
          if (this.disposed) return matcher.dispose();
          this.matcher = matcher;
          this.status = 'ready';
        },
        (err: unknown) => this.fail(err instanceof Error ? err.message : String(err)),
      )
      .finally(settled);
  }

  private fail(why: string): void {
    this.status = 'failed';
    this.error = `response_format: the constraint cannot be compiled (${why})`;
  }

  dispose(): void {
    this.disposed = true;
    this.matcher?.dispose();
    this.matcher = null;
  }
}

/**
 * Fills `row.tokenBitmask` for a constrained sampling row: the mask after its last known token,
 * then the matcher advanced along each draft for the mask after it, and rolled back to where it
 * was. Past a draft the constraint forbids, the positions repeat the last mask: verification
 * rejects that draft (its sampled token differs), so what is sampled after it is never used.
 */
export async function fillRowBitmask(row: StepRow, matcher: ConstraintMatcher, words: number): Promise<void> {
  const numDrafts = row.numDraftTokens ?? 0;
  const mask = new Int32Array((numDrafts + 1) * words); // [numDrafts + 1, words]
  mask.set(await matcher.nextTokenBitmask());
  let advanced = 0;
  let live = true; // the matcher follows the drafts until one is forbidden or ends the reply
  for (let j = 0; j < numDrafts; j++) {
    const draft = row.tokenIds[row.tokenIds.length - numDrafts + j]!;
    live = live && maskAllows(mask, j * words, draft) && matcher.acceptToken(draft);
    if (live) advanced++;
    live = live && !matcher.isTerminated();
    if (live) mask.set(await matcher.nextTokenBitmask(), (j + 1) * words);
    else mask.copyWithin((j + 1) * words, j * words, (j + 1) * words);
  }
  if (advanced > 0) matcher.rollBack(advanced);
  row.tokenBitmask = mask;
}
