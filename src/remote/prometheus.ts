// A reader for the Prometheus text exposition format that llama.cpp's and vLLM's /metrics serve.
// Samples only (name, labels, value); HELP/TYPE lines, timestamps and exemplars are skipped.

export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Every sample in the text; malformed lines are skipped, not fatal (a server's extras must not break the view). */
export function parsePrometheus(text: string): PromSample[] {
  const samples: PromSample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) continue;
    const value = parseValue(match[3]!);
    if (value === null) continue;
    const labels: Record<string, string> = {};
    for (const [, key, val] of (match[2] ?? '').matchAll(LABEL)) labels[key!] = val!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: match[1]!, labels, value });
  }
  return samples;
}

function parseValue(token: string): number | null {
  if (token === 'NaN') return NaN;
  if (token === '+Inf' || token === 'Inf') return Infinity;
  if (token === '-Inf') return -Infinity;
  const value = Number(token);
  return Number.isNaN(value) ? null : value;
}

/** The sum of a metric over its label sets (e.g. vLLM's per-model or per-engine series); undefined when absent. */
export function metricSum(samples: readonly PromSample[], name: string): number | undefined {
  let total: number | undefined;
  for (const sample of samples) if (sample.name === name) total = (total ?? 0) + sample.value;
  return total;
}

/** The first of `names` that the server exposes (metric names change between versions). */
export function firstMetric(samples: readonly PromSample[], names: readonly string[]): number | undefined {
  for (const name of names) {
    const value = metricSum(samples, name);
    if (value !== undefined) return value;
  }
  return undefined;
}
