// Page-side checks of model sources before they reach the worker: HF file listings, dropped
// files; byte formatting. Pure; repo ids, URL policy and labels live in src/protocol/model-source.ts.
import { HF_BASE } from '../../protocol/model-source';

export const HF_API = `${HF_BASE}/api/models`;

export function repoListingUrl(repoId: string): string {
  return `${HF_API}/${repoId.trim()}?blobs=true`;
}

/** What an HTTP error from the listing API means for the repo a person typed. */
export function listingHttpError(repoId: string, status: number): string {
  if (status === 404) return `huggingface.co has no repo "${repoId.trim()}" (HTTP 404): check the spelling (owner/name).`;
  if (status === 401 || status === 403) return `"${repoId.trim()}" is private or gated (HTTP ${status}): pick a public repo, or download the files and load them from Files.`;
  if (status === 429) return 'huggingface.co is rate-limiting this browser (HTTP 429): wait a minute and try again.';
  return `huggingface.co answered HTTP ${status}.`;
}

export interface RepoFile {
  name: string;
  /** Bytes, when the listing says. */
  size?: number;
}

export interface RepoListing {
  ggufFiles: RepoFile[];
  /** config.json + tokenizer.json + safetensors weights: loadable without picking a file. */
  hasHfLayout: boolean;
  numFiles: number;
}

/** Reads the JSON of https://huggingface.co/api/models/<repo>; throws when it is not a listing. */
export function parseRepoListing(json: unknown): RepoListing {
  const siblings = (json as { siblings?: unknown } | null)?.siblings;
  if (!Array.isArray(siblings)) throw new Error('the Hugging Face answer has no file list (is the repo private or gated?)');
  const files: RepoFile[] = siblings
    .filter((s): s is { rfilename: string; size?: unknown } => typeof (s as { rfilename?: unknown })?.rfilename === 'string')
    .map((s) => ({ name: s.rfilename, ...(typeof s.size === 'number' ? { size: s.size } : {}) }));
  const names = new Set(files.map((f) => f.name));
  return {
    ggufFiles: files.filter((f) => f.name.toLowerCase().endsWith('.gguf')).sort((a, b) => a.name.localeCompare(b.name)),
    hasHfLayout: names.has('config.json') && names.has('tokenizer.json') && files.some((f) => f.name.endsWith('.safetensors')),
    numFiles: files.length,
  };
}

/** Whether these file names look like a model Cohort can open, before the worker parses them. */
export function checkLocalFiles(names: readonly string[]): { ok: true } | { ok: false; error: string } {
  if (names.length === 0) return { ok: false, error: 'no files were given' };
  const lower = names.map((n) => n.toLowerCase());
  const numGguf = lower.filter((n) => n.endsWith('.gguf')).length;
  if (numGguf === 1) return { ok: true };
  if (numGguf > 1) return { ok: false, error: `${numGguf} .gguf files were given: pick one` };
  const base = lower.map((n) => n.split('/').pop() ?? n);
  if (base.includes('config.json') && base.some((n) => n.endsWith('.safetensors'))) return { ok: true };
  return { ok: false, error: `not a model: expected one .gguf file, or a Hugging Face folder (config.json, tokenizer.json, *.safetensors); got ${names.slice(0, 4).join(', ')}${names.length > 4 ? ', …' : ''}` };
}

export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '?';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(value < 10 ? 2 : value < 100 ? 1 : 0)} ${units[unit]}`;
}

export function formatCount(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)}B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}K`;
  return String(n);
}
