// Output constraints compiled by XGrammar (@mlc-ai/web-xgrammar, the WebAssembly build WebLLM
// uses): one TokenizerInfo per loaded model's vocabulary, its GrammarCompiler, and matchers. Not
// the engine's cache or masks (src/engine/constraints.ts) and not the logits (the runners).
import type { CompiledConstraint, ConstraintCompiler, ConstraintMatcher } from '../engine/constraints';
import type { OutputConstraint, ToolDefinition } from '../engine/types';
import type { ToolCallFormatName } from '../protocol/tool-call-format';
import type { GrammarVocabulary } from './grammar-vocab';
import { parametersSchema, toolCallsStructuralTag } from './tool-call-grammar';

type XGrammar = typeof import('@mlc-ai/web-xgrammar').default;
type GrammarCompiler = Awaited<ReturnType<XGrammar['GrammarCompiler']['createGrammarCompiler']>>;

let loading: Promise<XGrammar> | null = null;
/** Lines XGrammar wrote to stderr while a compile ran (its C++ errors say why there, not in what it throws). */
let stderrLines: string[] | null = null;

/**
 * The library, loaded once. Its Emscripten glue, in Node (tests, benches), asks a CommonJS
 * `require('url')` and `__filename` for its own location, which an ES module has not: both are
 * lent while it loads and starts (the WebAssembly is inlined, so the location is never read).
 */
function loadXGrammar(): Promise<XGrammar> {
  loading ??= (async () => {
    const g = globalThis as { process?: { versions?: { node?: string } }; require?: unknown; __filename?: unknown; exports?: unknown; module?: unknown };
    const lend = g.process?.versions?.node !== undefined && g.require === undefined;
    // its UMD wrapper writes to a global CommonJS `exports` where one exists (Node's eval workers
    // have one), which no import can read: hidden while it loads, so it sets globalThis.xgrammar
    const commonJs = { exports: g.exports, module: g.module };
    if (commonJs.exports !== undefined) g.exports = undefined;
    if (commonJs.module !== undefined) g.module = undefined;
    if (lend) {
      g.require = (name: string) => {
        if (name === 'url') return { pathToFileURL: (path: string) => new URL(`file://${path}`) };
        throw new Error(`web-xgrammar asked for ${name}`);
      };
      g.__filename = '/web-xgrammar/index.js';
    }
    // its stderr is console.error as it was when the instance started: a forwarder that can listen
    const consoleError = console.error;
    console.error = (...args: unknown[]) => (stderrLines ? stderrLines.push(args.join(' ')) : consoleError(...args));
    try {
      const mod: { default?: XGrammar } = await import('@mlc-ai/web-xgrammar');
      // its file is a UMD bundle marked as an ES module: loaded as one it exports nothing and sets
      // globalThis.xgrammar instead (Node, and Vite's worker bundle); a CommonJS-aware bundler gives the default
      const lib = mod.default ?? (globalThis as { xgrammar?: XGrammar }).xgrammar;
      if (!lib) throw new Error('@mlc-ai/web-xgrammar did not load');
      // the WebAssembly instance starts at its first use: with the loan still in place
      (await lib.TokenizerInfo.createTokenizerInfo([''], 'raw', false, 1)).dispose();
      return lib;
    } finally {
      if (commonJs.exports !== undefined) g.exports = commonJs.exports;
      if (commonJs.module !== undefined) g.module = commonJs.module;
      console.error = consoleError;
      if (lend) {
        delete g.require;
        delete g.__filename;
      }
    }
  })();
  return loading;
}

/** Whitespace characters a JSON-schema reply may put between two elements. */
export const MAX_JSON_WHITESPACE = 20;

/** XGrammar's compiler for one model's vocabulary of `vocabSize` logits. */
export class XGrammarCompiler implements ConstraintCompiler {
  private queue: Promise<void> = Promise.resolve();

  private constructor(
    private readonly lib: XGrammar,
    private readonly compiler: GrammarCompiler,
    readonly vocabSize: number,
    private readonly toolCallFormat: ToolCallFormatName | null,
  ) {}

  /**
   * Builds the TokenizerInfo and compiler (once per loaded model: it preprocesses every token).
   * `toolCallFormat`: the model's call format, which 'tool_calls' constraints are compiled to.
   */
  static async create(vocab: GrammarVocabulary, vocabSize: number, toolCallFormat: ToolCallFormatName | null = null): Promise<XGrammarCompiler> {
    const lib = await loadXGrammar();
    const info = await lib.TokenizerInfo.createTokenizerInfo(vocab.encoded, vocab.vocabType, false, vocabSize, vocab.stopTokenIds);
    const compiler = await lib.GrammarCompiler.createGrammarCompiler(info, false);
    return new XGrammarCompiler(lib, compiler, vocabSize, toolCallFormat);
  }

  async compile(c: OutputConstraint): Promise<CompiledConstraint> {
    // one compile at a time (each is one synchronous WebAssembly call anyway), so its stderr is its own
    const run = this.queue.then(async () => {
      stderrLines = [];
      try {
        return await this.compileGrammar(c);
      } catch (err) {
        throw new Error(describeError(err, stderrLines));
      } finally {
        stderrLines = null;
      }
    });
    this.queue = run.then(
      () => undefined,
      () => undefined,
    );
    const compiled = await run;
    const lib = this.lib;
    return {
      newMatcher: async (): Promise<ConstraintMatcher> => {
        const m = await lib.GrammarMatcher.createGrammarMatcher(compiled);
        return {
          nextTokenBitmask: () => m.getNextTokenBitmask(),
          acceptToken: (id) => m.acceptToken(id),
          rollBack: (n) => m.rollBack(n),
          isTerminated: () => m.isTerminated(),
          dispose: () => m.dispose(),
        };
      },
      dispose: () => compiled.dispose(),
    };
  }

  private async compileGrammar(c: OutputConstraint) {
    switch (c.kind) {
      case 'json_object':
        return this.compiler.compileBuiltinJSONGrammar();
      case 'json_schema':
        // any whitespace, as WebLLM compiles it, but at most MAX_JSON_WHITESPACE characters between
        // elements (llama.cpp's bound: pretty-printing fits, endless padding does not); strict: no
        // properties or items the schema does not name
        return this.compiler.compileJSONSchema(c.schema, true, undefined, undefined, true, MAX_JSON_WHITESPACE);
      case 'ebnf':
        return this.compiler.compileGrammar(c.grammar);
      case 'regex':
        return this.compiler.compileStructuralTag({ type: 'structural_tag', format: { type: 'regex', pattern: c.pattern } });
      case 'tool_calls': {
        if (!this.toolCallFormat) throw new Error("this model's chat template shows no tool-call format Cohort can constrain");
        const tools = JSON.parse(c.tools) as ToolDefinition[];
        // each tool's arguments as json_schema compiles them (bounded whitespace, strict), as EBNF
        const argumentGrammars: string[] = [];
        for (const tool of tools) argumentGrammars.push(await this.jsonSchemaEbnf(JSON.stringify(parametersSchema(tool))));
        return this.compiler.compileStructuralTag(toolCallsStructuralTag(this.toolCallFormat, tools, argumentGrammars, c.parallel));
      }
    }
  }

  private async jsonSchemaEbnf(schema: string): Promise<string> {
    const grammar = await this.lib.Grammar.fromJSONSchema(schema, true, undefined, undefined, true, MAX_JSON_WHITESPACE);
    try {
      return grammar.toString();
    } finally {
      grammar.dispose();
    }
  }
}

/**
 * XGrammar for a loaded model, built at the first compile (its TokenizerInfo preprocesses every
 * token, which a model nobody constrains should not pay for), then kept for the model's life.
 */
export function lazyXGrammar(tokenizer: object, vocabSize: number, toolCallFormat: ToolCallFormatName | null = null): ConstraintCompiler {
  let built: Promise<XGrammarCompiler> | null = null;
  const source = tokenizer as { grammarVocabulary?: (rows: number) => GrammarVocabulary };
  return {
    vocabSize,
    compile(c) {
      if (typeof source.grammarVocabulary !== 'function') return Promise.reject(new Error("this model's tokenizer gives no vocabulary a grammar can read"));
      built ??= XGrammarCompiler.create(source.grammarVocabulary(vocabSize), vocabSize, toolCallFormat);
      return built.then((compiler) => compiler.compile(c));
    },
  };
}

/**
 * Why a compile failed: XGrammar's own "[FATAL] file.cc:line: why" line when it wrote one (the
 * WebAssembly then aborts with a bare "Aborted()"), else what it threw.
 */
function describeError(err: unknown, stderr: string[]): string {
  const fatal = stderr.map((line) => /\[FATAL\][^:]*:\d+:\s*(.*)$/s.exec(line)?.[1]).filter((why) => why !== undefined);
  if (fatal.length > 0) return fatal[fatal.length - 1]!.trim();
  if (err instanceof Error) return err.message;
  return typeof err === 'string' ? err : `XGrammar error ${String(err)}`;
}
