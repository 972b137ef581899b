// Example: eight streaming chat completions fired at once at one Cohort engine, each printed as its
// tokens arrive, then its usage. Plain DOM, no framework; in your page import from 'cohort' instead.
import { createEngine, type CompletionUsage } from '../src/lib';

const NUM_REQUESTS = 8;
const CODES = ['ALPHA-1234', 'BETA-2345', 'GAMMA-3456', 'DELTA-4567', 'PINE-5678', 'MAPLE-6789', 'OAK-7890', 'BIRCH-8901'];

/** The embedded model is trained for one task: find the secret code among padding lines. */
function question(code: string, numLines: number): string {
  const lines = Array.from({ length: numLines }, (_, i) => `Note ${String(i).padStart(4, '0')}: this paragraph is unrelated padding and does not contain the answer.`);
  lines.splice(Math.floor(numLines / 2), 0, '', `IMPORTANT: the secret code is ${code}.`, '');
  return `${lines.join('\n')}\n\nQuestion: what is the secret code? Answer:`;
}

function describeUsage(usage: CompletionUsage): string {
  const t = usage.timings;
  return `${usage.prompt_tokens} prompt + ${usage.completion_tokens} completion tokens (${usage.prompt_tokens_details.cached_tokens} cached); ` +
    `decode ${t.decode_tokens_per_second.toFixed(1)} tok/s, first token ${t.time_to_first_token_ms?.toFixed(0) ?? '?'} ms, mean cohort ${t.mean_cohort_size.toFixed(1)}`;
}

const engineLine = document.getElementById('engine')!;
const status = document.getElementById('status')!;
const out = document.getElementById('out')!;

const engine = await createEngine({ model: { kind: 'embedded' }, onProgress: (p) => (engineLine.textContent = p.message) });
// 'shared': one engine for every tab of this origin (where WebGPU works in a SharedWorker)
engineLine.textContent = `${engine.models[0]!.id} loaded (${engine.workerKind} worker)`;
status.textContent = `sending ${NUM_REQUESTS} requests at once`;

const startedMs = performance.now();
await Promise.all(
  CODES.slice(0, NUM_REQUESTS).map(async (code, i) => {
    const block = out.appendChild(document.createElement('section'));
    block.dataset.testid = `request-${i}`;
    const text = block.appendChild(document.createElement('pre'));
    const usageLine = block.appendChild(document.createElement('p'));
    const stream = await engine.chat.completions.create({
      messages: [{ role: 'user', content: question(code, 2 + i) }],
      max_tokens: 24,
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const chunk of stream) {
      text.textContent += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usageLine.textContent = describeUsage(chunk.usage);
    }
    block.dataset.done = 'true';
  }),
);
status.textContent = `all ${NUM_REQUESTS} done in ${((performance.now() - startedMs) / 1000).toFixed(1)} s`;
document.body.dataset.done = 'true';
