// Scoring of the held-out NIAH set per KV cache storage type: recall, agreement with the f32 run and
// with PyTorch's reference tokens, prompt lengths covered, and the report's Markdown. Pure: no engine, no files.
import { niahLeaks, niahPassed } from '../../src/protocol/niah';

/** One held-out prompt's greedy answer under one KV type. */
export interface KvEvalOutput {
  code: string;
  promptTokens: number;
  outputTokenIds: number[];
  text: string;
  /** PyTorch's greedy tokens for the prompt (tools/train/eval/niah-reference.json). */
  referenceTokenIds: number[];
}

/** Prompt-length bands the report splits recall by; the model card quotes ~1,230 and ~1,950. */
export const KV_EVAL_BANDS: ReadonlyArray<{ label: string; maxTokens: number }> = [
  { label: '<= 1,000', maxTokens: 1000 },
  { label: '1,001-1,500', maxTokens: 1500 },
  { label: '> 1,500', maxTokens: Infinity },
];

export interface KvTypeScore {
  kvCacheType: string;
  n: number;
  /** Share of prompts whose output holds their own code. */
  recall: number;
  /** Prompts whose output holds another prompt's code (must be 0). */
  leaks: number;
  /** Share of prompts whose output tokens equal the baseline run's, token for token. */
  sameAsBaseline: number;
  /** Output tokens that equal the baseline's up to the first difference, over the baseline's output tokens. */
  tokenAgreement: number;
  /** Share of prompts whose output tokens equal PyTorch's reference tokens. */
  sameAsReference: number;
  minPromptTokens: number;
  maxPromptTokens: number;
  /** Recall within each of KV_EVAL_BANDS (null where the band holds no prompt), with its count. */
  bands: Array<{ label: string; n: number; recall: number | null }>;
  seconds: number;
}

export function commonPrefixLength(a: readonly number[], b: readonly number[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

const sameTokens = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && commonPrefixLength(a, b) === a.length;

/** Scores one type's outputs against the baseline's (the f32 run), prompt by prompt in the same order. */
export function scoreKvType(kvCacheType: string, outputs: KvEvalOutput[], baseline: KvEvalOutput[], seconds: number): KvTypeScore {
  if (outputs.length !== baseline.length || outputs.length === 0) throw new RangeError(`${outputs.length} outputs against ${baseline.length} baseline outputs`);
  const codes = outputs.map((o) => o.code);
  const share = (count: number) => count / outputs.length;
  const agreed = outputs.reduce((n, o, i) => n + commonPrefixLength(o.outputTokenIds, baseline[i]!.outputTokenIds), 0);
  const baselineTokens = baseline.reduce((n, b) => n + b.outputTokenIds.length, 0);
  const lengths = outputs.map((o) => o.promptTokens);
  let lower = 0;
  const bands = KV_EVAL_BANDS.map(({ label, maxTokens }) => {
    const inBand = outputs.filter((o) => o.promptTokens > lower && o.promptTokens <= maxTokens);
    lower = maxTokens;
    return { label, n: inBand.length, recall: inBand.length ? inBand.filter((o) => niahPassed(o.text, o.code)).length / inBand.length : null };
  });
  return {
    kvCacheType,
    n: outputs.length,
    recall: share(outputs.filter((o) => niahPassed(o.text, o.code)).length),
    leaks: outputs.filter((o) => niahLeaks(o.text, o.code, codes).length > 0).length,
    sameAsBaseline: share(outputs.filter((o, i) => sameTokens(o.outputTokenIds, baseline[i]!.outputTokenIds)).length),
    tokenAgreement: baselineTokens === 0 ? 1 : agreed / baselineTokens,
    sameAsReference: share(outputs.filter((o) => sameTokens(o.outputTokenIds, o.referenceTokenIds)).length),
    minPromptTokens: Math.min(...lengths),
    maxPromptTokens: Math.max(...lengths),
    bands,
    seconds,
  };
}

const fixed = (x: number) => x.toFixed(3);

/** The report's table: one row per type, the baseline first. */
export function kvEvalMarkdown(scores: KvTypeScore[], heading: string, note: string): string {
  const bandHeads = KV_EVAL_BANDS.map((b) => `recall ${b.label} tok`);
  const lines = [
    `# ${heading}`,
    '',
    note,
    '',
    `| KV type | n | prompt tokens | recall | ${bandHeads.join(' | ')} | leaks | same tokens as ${scores[0]?.kvCacheType ?? 'baseline'} | token agreement | same tokens as PyTorch | seconds |`,
    `| --- | ---: | ---: | ---: | ${bandHeads.map(() => '---:').join(' | ')} | ---: | ---: | ---: | ---: | ---: |`,
    ...scores.map((s) => {
      const bands = s.bands.map((b) => (b.recall === null ? '-' : `${fixed(b.recall)} (${b.n})`));
      return `| ${s.kvCacheType} | ${s.n} | ${s.minPromptTokens}-${s.maxPromptTokens} | ${fixed(s.recall)} | ${bands.join(' | ')} | ${s.leaks} | ${fixed(s.sameAsBaseline)} | ${fixed(s.tokenAgreement)} | ${fixed(s.sameAsReference)} | ${s.seconds.toFixed(0)} |`;
    }),
    '',
  ];
  return lines.join('\n');
}
