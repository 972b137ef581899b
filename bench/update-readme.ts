// `npm run bench:readme`: rewrites README.md's "Benchmark" section from the newest full report in
// bench/results/ (or the one given). Text only: it never runs the benchmark.
// Usage: npx tsx bench/update-readme.ts [results.json] [--readme=README.md] [--allow-quick]
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readmeSection, type BenchReport } from './report';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const resultsDir = path.join(root, 'bench', 'results');
const START = '<!-- bench:start (written by npm run bench:readme) -->';
const END = '<!-- bench:end -->';

/** The newest report by date, then by file time; quick-grid reports only when allowed. */
function latestReport(allowQuick: boolean): string {
  const files = existsSync(resultsDir) ? readdirSync(resultsDir).filter((f) => f.endsWith('.json')) : [];
  const candidates = files
    .map((f) => ({ file: path.join(resultsDir, f), report: JSON.parse(readFileSync(path.join(resultsDir, f), 'utf8')) as BenchReport }))
    // throughput reports only: the kernel benchmark writes its own kind of JSON beside them
    .filter((c) => c.report.schema === 1 && Array.isArray(c.report.throughput) && (allowQuick || !c.report.quick))
    .sort((a, b) => a.report.date.localeCompare(b.report.date) || fileTime(a.file) - fileTime(b.file));
  const latest = candidates[candidates.length - 1];
  if (!latest) throw new Error(`no ${allowQuick ? '' : 'full-grid '}benchmark report in ${path.relative(root, resultsDir)}/: run npm run bench first`);
  return latest.file;
}

function fileTime(file: string): number {
  return statSync(file).mtimeMs;
}

/** Replaces the marked section, or adds "## Benchmark" before "## Tests" (else at the end). */
export function spliceSection(readme: string, body: string): string {
  const block = `${START}\n${body}\n${END}`;
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start >= 0 && end > start) return readme.slice(0, start) + block + readme.slice(end + END.length);
  const section = `## Benchmark\n\n${block}\n\n`;
  const tests = readme.search(/^## Tests\b/m);
  return tests >= 0 ? readme.slice(0, tests) + section + readme.slice(tests) : `${readme.trimEnd()}\n\n${section}`;
}

function main(): void {
  const args = process.argv.slice(2);
  const allowQuick = args.includes('--allow-quick');
  const readmePath = path.resolve(root, args.find((a) => a.startsWith('--readme='))?.slice('--readme='.length) ?? 'README.md');
  const given = args.find((a) => !a.startsWith('--'));
  const jsonFile = given ? path.resolve(given) : latestReport(allowQuick);
  const report = JSON.parse(readFileSync(jsonFile, 'utf8')) as BenchReport;
  const rel = (file: string): string => path.relative(path.dirname(readmePath), file).split(path.sep).join('/');
  const base = jsonFile.replace(/\.json$/, '');
  const body = readmeSection(report, rel(`${base}.md`), rel(`${base}.png`));
  writeFileSync(readmePath, spliceSection(readFileSync(readmePath, 'utf8'), body));
  console.log(`${path.relative(root, readmePath)}: Benchmark section from ${path.relative(root, jsonFile)}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
