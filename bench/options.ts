// Command-line options shared by `npm run bench` (Chromium) and `npm run bench:headless` (Node):
// each grid option becomes the COHORT_BENCH_* variable settings.ts reads. Parsing only.

export const GRID_USAGE = `  --quick              1, 2 and 4 sessions and 32 new tokens per chat turn (still 3 repeats)
  --sessions=1,2,4,8,16  --repeats=3  --workloads=chat,niah  --chat-tokens=64
  --join-decoders=4  --join-tokens=1900   decoding sessions a long prompt joins, and its length (0 decoders: no join)
 --speculation=on    speculation off vs on after the grid (on), instead of it (only), or not (off)
  --features=on        structured output and sampling features side by side after the grid (on), instead of it (only), or not (off)
  --features-full      their full rounds: 128 new tokens a turn (default 48; --feature-tokens=N sets it)
  --machine=NAME       used in bench/results/<date>-<machine>.* (default: the GPU adapter's vendor and architecture)`;

const OPTION_ENV: Record<string, string> = {
  sessions: 'COHORT_BENCH_SESSIONS',
  repeats: 'COHORT_BENCH_REPEATS',
  workloads: 'COHORT_BENCH_WORKLOADS',
  'chat-tokens': 'COHORT_BENCH_CHAT_TOKENS',
  'join-decoders': 'COHORT_BENCH_JOIN_DECODERS',
  'join-tokens': 'COHORT_BENCH_JOIN_TOKENS',
  machine: 'COHORT_BENCH_MACHINE',
  speculation: 'COHORT_BENCH_SPECULATION',
  features: 'COHORT_BENCH_FEATURES',
  'feature-tokens': 'COHORT_BENCH_FEATURE_TOKENS',
};

export interface ParsedOptions {
  /** COHORT_BENCH_* variables the grid options set. */
  env: Record<string, string>;
  /** Everything else as name -> value ('' for a bare flag), for the caller's own options. */
  other: Map<string, string>;
}

/** `--name=value` and `--flag` arguments; grid options go to `env`, the rest to `other`. */
export function parseOptions(args: string[]): ParsedOptions {
  const env: Record<string, string> = {};
  const other = new Map<string, string>();
  for (const arg of args) {
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const value = eq < 0 ? '' : arg.slice(eq + 1);
    if (name === 'quick' && value === '') env.COHORT_BENCH_QUICK = '1';
    else if (name === 'features-full' && value === '') env.COHORT_BENCH_FEATURES_FULL = '1';
    else if (OPTION_ENV[name] !== undefined) {
      if (value === '') throw new Error(`--${name} needs a value (--${name}=...)`);
      env[OPTION_ENV[name]] = value;
    } else other.set(name, value);
  }
  return { env, other };
}
