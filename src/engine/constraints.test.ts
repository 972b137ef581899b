// The engine's side of output constraints, with a scripted compiler (no XGrammar): a request waits
// for its compile outside the steps while others run, a failed compile ends only its turn, a cancel
// while compiling ends it, compiles are cached by kind and text, and malformed constraints are refused.
import { describe, expect, it } from 'vitest';
import { ConstraintCache, constraintKey, validateConstraint, type CompiledConstraint, type ConstraintCompiler, type ConstraintMatcher } from './constraints';
import { EngineCore } from './engine-core';
import { InvalidOptionError } from './errors';
import type { StepEvent } from './events';
import { FakeRunner } from './testing/fake-runner';
import { RunnerWrapper } from './testing/runner-wrapper';
import { ByteTokenizer, PlainChatTemplate } from './testing/test-support';
import type { ModelRunner, OutputConstraint, StepMaskFill, StepPlan, StepResult } from './types';

/** A matcher that allows every token and counts what it was given. */
function openMatcher(words: number, accepted: number[]): ConstraintMatcher {
  return {
    nextTokenBitmask: () => Promise.resolve(new Int32Array(words).fill(-1)),
    acceptToken: (id) => (accepted.push(id), true),
    rollBack: (n) => void accepted.splice(accepted.length - n, n),
    isTerminated: () => false,
    dispose: () => {},
  };
}

/** Compiles when the test says so: each compile waits on its own gate. */
class ScriptedCompiler implements ConstraintCompiler {
  readonly vocabSize = 300;
  readonly gates = new Map<string, { resolve: () => void; reject: (why: Error) => void }>();
  numCompiles = 0;
  readonly accepted: number[] = [];
  compile(c: OutputConstraint): Promise<CompiledConstraint> {
    this.numCompiles++;
    return new Promise((resolve, reject) => {
      this.gates.set(constraintKey(c), {
        resolve: () => resolve({ newMatcher: () => Promise.resolve(openMatcher(Math.ceil(this.vocabSize / 32), this.accepted)), dispose: () => {} }),
        reject,
      });
    });
  }
}

function makeEngine(compiler: ScriptedCompiler, runner: ModelRunner = new FakeRunner({ numBlocks: 100, blockSize: 4, vocabSize: 200, eosEvery: 0 })): EngineCore {
  return new EngineCore({ runner, tokenizer: new ByteTokenizer(), chatTemplate: new PlainChatTemplate(), manualSteps: true, constraints: compiler });
}

const schema: OutputConstraint = { kind: 'json_schema', schema: '{"type":"object"}' };

describe('constrained requests in the engine', () => {
  it('wait for their compile outside the steps while later requests run, then join with masks on their rows', async () => {
    const compiler = new ScriptedCompiler();
    const engine = makeEngine(compiler);
    const events: StepEvent[] = [];
    engine.subscribe((e) => events.push(e));
    const constrained = engine.createSession({ maxNewTokens: 4, sampling: { constraint: schema } });
    const plain = engine.createSession({ maxNewTokens: 4 });
    engine.send(constrained, 'first');
    engine.send(plain, 'second');
    await engine.step();
    expect(events[0]!.rows.map((r) => r.sessionId)).toEqual([plain]);
    expect(events[0]!.waiting).toEqual([expect.objectContaining({ sessionId: constrained, reason: 'grammar' })]);
    while (engine.scheduler.hasWork()) await engine.step(); // the plain turn ends; nothing else can run
    expect((await engine.waitForTurn(plain)).finishReason).toBe('length');
    const next = engine.step(); // waits for the compile rather than returning idle
    compiler.gates.get(constraintKey(schema))!.resolve();
    await next;
    while (await engine.step());
    const result = await engine.waitForTurn(constrained);
    expect(result.finishReason).toBe('length');
    expect(compiler.accepted).toEqual(result.outputTokenIds); // the matcher saw every sampled token, in order
  });

  it('a failed compile ends only its own turn, with the reason, naming response_format', async () => {
    const compiler = new ScriptedCompiler();
    const engine = makeEngine(compiler);
    const bad: OutputConstraint = { kind: 'ebnf', grammar: 'root ::= nothing' };
    const a = engine.createSession({ maxNewTokens: 3, sampling: { constraint: bad } });
    const b = engine.createSession({ maxNewTokens: 3 });
    engine.send(a, 'x');
    engine.send(b, 'y');
    compiler.gates.get(constraintKey(bad))!.reject(new Error('Rule "nothing" is not defined'));
    while (await engine.step());
    expect(await engine.waitForTurn(a)).toMatchObject({ finishReason: 'error', error: 'response_format: the constraint cannot be compiled (Rule "nothing" is not defined)' });
    expect((await engine.waitForTurn(b)).finishReason).toBe('length');
  });

  it('a cancel while compiling ends the turn as cancelled', async () => {
    const compiler = new ScriptedCompiler();
    const engine = makeEngine(compiler);
    const a = engine.createSession({ sampling: { constraint: { kind: 'json_object' } } });
    engine.send(a, 'x');
    engine.cancel(a);
    while (await engine.step());
    expect((await engine.waitForTurn(a)).finishReason).toBe('cancelled');
  });

  it('a constraint without a compiler ends its turn with an error', async () => {
    const engine = new EngineCore({ runner: new FakeRunner({ numBlocks: 100, blockSize: 4 }), tokenizer: new ByteTokenizer(), chatTemplate: new PlainChatTemplate(), manualSteps: true });
    const a = engine.createSession({ sampling: { constraint: { kind: 'json_object' } } });
    engine.send(a, 'x');
    while (await engine.step());
    expect(await engine.waitForTurn(a)).toMatchObject({ finishReason: 'error', error: expect.stringMatching(/^response_format: .*no constraint compiler/) });
  });
});

/** Records, at each execute(), the masks it was handed and whether their rows were filled yet. */
class MaskRecordingRunner extends RunnerWrapper {
  readonly seen: { rows: number[]; filledBefore: boolean; filledAfter: boolean; sampling: boolean[] }[] = [];
  constructor(private readonly callFill: boolean) {
    super(new FakeRunner({ numBlocks: 100, blockSize: 4, vocabSize: 200, eosEvery: 0 }));
  }
  override async execute(plan: StepPlan, masks?: StepMaskFill): Promise<StepResult> {
    if (!masks) return this.inner.execute(plan);
    const filled = () => masks.rows.every((r) => plan.rows[r]!.tokenBitmask !== undefined);
    const filledBefore = masks.rows.some((r) => plan.rows[r]!.tokenBitmask !== undefined);
    if (this.callFill) await masks.fill();
    this.seen.push({ rows: [...masks.rows], filledBefore, filledAfter: filled(), sampling: plan.rows.map((row) => row.sample) });
    return this.inner.execute(plan); // the masks are already in (or never will be)
  }
}

describe('constraint masks during the step', () => {
  it('reach the runner unfilled, for the constrained sampling rows only, and are filled by its call', async () => {
    const compiler = new ScriptedCompiler();
    const runner = new MaskRecordingRunner(true);
    const engine = makeEngine(compiler, runner);
    const plain = engine.createSession({ maxNewTokens: 3 });
    const constrained = engine.createSession({ maxNewTokens: 3, sampling: { constraint: schema } });
    engine.send(plain, 'first');
    engine.send(constrained, 'second');
    compiler.gates.get(constraintKey(schema))!.resolve();
    while (await engine.step());
    expect((await engine.waitForTurn(constrained)).finishReason).toBe('length');
    expect(runner.seen.length).toBeGreaterThan(0);
    for (const step of runner.seen) {
      expect(step.filledBefore).toBe(false);
      expect(step.filledAfter).toBe(true);
      expect(step.rows).toHaveLength(1);
      expect(step.sampling[step.rows[0]!]).toBe(true);
    }
  });

  it("a runner that samples without filling them fails the step's rows, saying so", async () => {
    const compiler = new ScriptedCompiler();
    const engine = makeEngine(compiler, new MaskRecordingRunner(false));
    const constrained = engine.createSession({ maxNewTokens: 3, sampling: { constraint: schema } });
    engine.send(constrained, 'x');
    compiler.gates.get(constraintKey(schema))!.resolve();
    while (await engine.step());
    expect(await engine.waitForTurn(constrained)).toMatchObject({ finishReason: 'error', error: expect.stringContaining('without filling its constraint masks') });
  });
});

describe('ConstraintCache', () => {
  it('compiles a kind and text once, and a failure again next time', async () => {
    const compiler = new ScriptedCompiler();
    const cache = new ConstraintCache(compiler, 2);
    const first = cache.compile(schema);
    expect(cache.compile({ ...schema })).toBe(first);
    compiler.gates.get(constraintKey(schema))!.resolve();
    await first;
    const regex: OutputConstraint = { kind: 'regex', pattern: 'a+' };
    const failing = cache.compile(regex);
    compiler.gates.get(constraintKey(regex))!.reject(new Error('no'));
    await expect(failing).rejects.toThrow('no');
    expect(cache.compile(regex)).not.toBe(failing);
    expect(compiler.numCompiles).toBe(3);
    cache.compile({ kind: 'json_object' });
    cache.compile({ kind: 'ebnf', grammar: 'root ::= "a"' });
    expect(cache.size).toBe(2); // the least recently used went
  });
});

describe('validateConstraint', () => {
  it('refuses what is not a constraint, naming sampling.constraint', () => {
    for (const bad of [null, 'json', { kind: 'xml' }, { kind: 'json_schema' }, { kind: 'json_schema', schema: '{not json' }, { kind: 'json_schema', schema: '3' }, { kind: 'ebnf', grammar: ' ' }, { kind: 'regex', pattern: '' }, { kind: 'tool_calls', tools: '[]', parallel: true }, { kind: 'tool_calls', tools: '[{"function": {}}]', parallel: true }, { kind: 'tool_calls', tools: '[{"function": {"name": "f"}}]' }, { kind: 'tool_calls', tools: '{', parallel: false }]) {
      expect(() => validateConstraint(bad), JSON.stringify(bad)).toThrow(InvalidOptionError);
      expect(() => validateConstraint(bad)).toThrow(/^sampling\.constraint must be/);
    }
    for (const good of [{ kind: 'json_object' }, schema, { kind: 'json_schema', schema: 'true' }, { kind: 'ebnf', grammar: 'root ::= "a"' }, { kind: 'regex', pattern: 'a' }, { kind: 'tool_calls', tools: '[{"type": "function", "function": {"name": "f"}}]', parallel: false }]) validateConstraint(good);
  });
});
