// Measures building the published Gemma 3 tokenizer (262,144 tokens, 514,906 merges) in Node: from its
// tokenizer.json, and from the GGUF vocabulary the exporter writes (conversion, then the library's build). Not a test.
// Run: npx tsx tools/models/tokenizer-build.node.ts [family]
import { ggufVocabToTokenizerFiles } from '../../src/model/gguf-vocab';
import { HfTokenizer } from '../../src/model/tokenizer';
import { PUBLISHED_TOKENIZERS, publishedTokenizerFiles, type PublishedTokenizer } from '../../src/model/testing/published-tokenizer-fixtures';
import { vocabMetadata } from './vocab-to-gguf';

const ROUNDS = 3;
const family = (process.argv[2] ?? 'gemma3') as PublishedTokenizer['family'];
const published = PUBLISHED_TOKENIZERS.find((p) => p.family === family);
if (!published) throw new Error(`unknown family ${family}`);
const files = publishedTokenizerFiles(family);
const metadata = Object.fromEntries(vocabMetadata({ config: {}, ...files }, published.rows).map(([key, v]) => [key, v.value]));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const hfMs: number[] = [];
const convertMs: number[] = [];
const ggufBuildMs: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  let t = performance.now();
  HfTokenizer.fromFiles({ tokenizerJson: files.tokenizer, tokenizerConfig: files.tokenizerConfig }, published.rows);
  hfMs.push(performance.now() - t);
  t = performance.now();
  const converted = ggufVocabToTokenizerFiles(metadata);
  convertMs.push(performance.now() - t);
  t = performance.now();
  new HfTokenizer(converted.tokenizerJson, converted.tokenizerConfig, converted.options).encode('warm');
  ggufBuildMs.push(performance.now() - t);
}
const f = (xs: number[]) => `${median(xs).toFixed(0)} ms (${xs.map((x) => x.toFixed(0)).join(', ')})`;
console.log(`${family}, median of ${ROUNDS}: tokenizer.json build ${f(hfMs)}; GGUF vocabulary conversion ${f(convertMs)} + library build ${f(ggufBuildMs)}; peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
