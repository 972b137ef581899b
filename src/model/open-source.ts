// Resolves a ModelSource (embedded, Hugging Face repo, URL, local files) into an opened model:
// URL policy, where downloads are kept, which opener reads the bytes. Not a parser: open-model.ts is.
import type { ModelSource } from '../protocol/api';
import { ModelLoadFailure, toLoadFailure } from '../protocol/load-errors';
import { checkModelSource, checkModelUrl, HF_BASE } from '../protocol/model-source';
import { blobSource, mapOpener, urlOpener, urlSource, type ByteSource, type FileOpener, type ProgressCallback } from './byte-source';
import { cachedUrlOpener, cachedUrlSource, type BlobStore } from './download-cache';
import { diagnosedFetch } from '../protocol/fetch-diagnosis';
import { openGgufModel, openHfModel, type OpenedModel } from './open-model';

export interface SourceOptions {
  /** Base URL of the embedded default model's folder. */
  embeddedModelUrl: string;
  /** Origin of the page: URL sources must be https or this origin. */
  pageOrigin?: string;
  fetchFn?: typeof fetch;
  /** Where downloaded model files are kept (Cache Storage in the browser); none: read in ranges. */
  downloadStore?: BlobStore;
}

/**
 * The embedded model's files (public/models/cohort-tiny, checked by open-source.test.ts). Names
 * the loader asks for that are not here (model.safetensors.index.json) are absent without a
 * request, so a normal load logs no 404.
 */
export const EMBEDDED_MODEL_FILES: ReadonlySet<string> = new Set(['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']);

/** An opener that answers "absent" for names outside `names` instead of fetching them. */
export function knownFilesOpener(open: FileOpener, names: ReadonlySet<string>): FileOpener {
  return async (name) => (names.has(name) ? open(name) : null);
}

/**
 * Opens the model `source` names. Rejects with a ModelLoadFailure (src/protocol/load-errors.ts) whose
 * code says why: a source of the wrong shape (any value may arrive from a page), not found, bad files,
 * an unsupported architecture, the network.
 */
export async function openModelSource(source: ModelSource, options: SourceOptions, onProgress: ProgressCallback): Promise<OpenedModel> {
  const bad = checkModelSource(source);
  if (bad) throw new ModelLoadFailure('invalid_model_source', bad.message, bad.param);
  try {
    return await openChecked(source, options, onProgress);
  } catch (err) {
    throw toLoadFailure(err);
  }
}

async function openChecked(source: ModelSource, options: SourceOptions, onProgress: ProgressCallback): Promise<OpenedModel> {
  // A dead network or a silent server fails within seconds, saying which it was.
  const fetchFn = diagnosedFetch(options.fetchFn ?? fetch);
  // A downloaded file is kept whole in the download store when there is one, else read in ranges.
  const remoteFile = (url: string): Promise<ByteSource> =>
    options.downloadStore ? cachedUrlSource(url, options.downloadStore, fetchFn, onProgress) : urlSource(url, fetchFn);
  const remoteFolder = (baseUrl: string): FileOpener =>
    options.downloadStore ? cachedUrlOpener(baseUrl, options.downloadStore, fetchFn, onProgress) : urlOpener(baseUrl, fetchFn);

  switch (source.kind) {
    case 'embedded':
      return openHfModel(knownFilesOpener(urlOpener(options.embeddedModelUrl, fetchFn), EMBEDDED_MODEL_FILES), 'cohort-tiny (embedded)', onProgress);
    case 'huggingface': {
      const base = `${HF_BASE}/${source.repoId.trim()}/resolve/${encodeURIComponent(source.revision ?? 'main')}`;
      if (source.file) return openGgufModel(await remoteFile(`${base}/${encodeURIComponent(source.file)}`), onProgress);
      return openHfModel(remoteFolder(base), source.repoId, onProgress);
    }
    case 'url': {
      const checked = checkModelUrl(source.url, options.pageOrigin);
      if (!checked.ok) throw new ModelLoadFailure('invalid_model_source', checked.error, 'model.url');
      const url = new URL(checked.url);
      if (url.pathname.toLowerCase().endsWith('.gguf')) return openGgufModel(await remoteFile(url.href), onProgress);
      return openHfModel(remoteFolder(url.href), url.href, onProgress);
    }
    case 'files': {
      const gguf = source.files.filter((f) => f.name.toLowerCase().endsWith('.gguf'));
      if (gguf.length === 1) return openGgufModel(blobSource(gguf[0], gguf[0].name), onProgress);
      if (gguf.length > 1) throw new ModelLoadFailure('invalid_model_source', `${gguf.length} GGUF files were given: pick one`, 'model.files');
      const files = new Map<string, Blob>(source.files.map((f) => [f.name, f]));
      return openHfModel(mapOpener(files), folderName(source.files), onProgress);
    }
    case 'server':
      throw new ModelLoadFailure('invalid_model_source', 'a server holds its own model: connect to it with a server backend (src/remote), not a model loader', 'model.kind');
    default:
      // checkModelSource let through a kind this switch does not know: a compile error once ModelSource grows
      throw new ModelLoadFailure('invalid_model_source', `no loader for model.kind ${JSON.stringify((source satisfies never as ModelSource).kind)}`, 'model.kind');
  }
}

function folderName(files: File[]): string {
  const rel = (files[0] as File & { webkitRelativePath?: string }).webkitRelativePath;
  return rel ? rel.split('/')[0] : `${files.length} local files`;
}
