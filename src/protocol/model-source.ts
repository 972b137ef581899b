// What both sides of the worker boundary say and check about a model source: its label, whether a
// string is a Hugging Face repo id, and which URLs may be fetched. Pure functions; no fetching.
import type { ModelSource } from './api';

export const HF_BASE = 'https://huggingface.co';

const REPO_ID = /^[\w.-]+\/[\w.-]+$/;

/** `owner/name`, as the Hugging Face Hub spells a repository (surrounding spaces ignored). */
export function isRepoId(value: string): boolean {
  return REPO_ID.test(value.trim());
}

/** https anywhere, or the page's own origin (where the embedded model is served); else why not. */
export function checkModelUrl(raw: string, pageOrigin?: string): { ok: true; url: string } | { ok: false; error: string } {
  let url: URL;
  try {
    url = new URL(raw.trim(), pageOrigin);
  } catch {
    return { ok: false, error: `"${raw}" is not a URL` };
  }
  if (url.protocol !== 'https:' && url.origin !== pageOrigin) return { ok: false, error: `only https:// URLs (or this page's own origin) can be loaded, not ${url.protocol}//` };
  return { ok: true, url: url.href };
}

/** A short label for progress lines and errors. */
export function describeSource(source: ModelSource): string {
  switch (source.kind) {
    case 'embedded':
      return 'the embedded model';
    case 'huggingface':
      return `${source.repoId}${source.file ? `/${source.file}` : ''}`;
    case 'url':
      return source.url;
    case 'files':
      return source.files.length === 1 ? source.files[0].name : `${source.files.length} local files`;
    case 'server':
      return `the server at ${source.baseUrl}`;
  }
}
