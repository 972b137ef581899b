// Where to load a model from: the embedded default, a Hugging Face repo (suggested ones in one
// click, or any repo with its file list when huggingface.co answers), an https URL, or local files.
import { useRef, useState, type RefObject } from 'react';
import { checkModelUrl, isRepoId } from '../../protocol/model-source';
import { FetchFailure, fetchWithDiagnosis } from '../../protocol/fetch-diagnosis';
import { formatBytes, listingHttpError, parseRepoListing, repoListingUrl, type RepoListing } from '../derive/model-sources';
import { errorMessage } from '../derive/error-message';
import { loadModel, showModelError } from '../state/model-actions';
import { useModelStore } from '../state/model-store';
import { loadLocalFiles } from './local-files';
import { SuggestedModels } from './SuggestedModels';

type Tab = 'embedded' | 'huggingface' | 'url' | 'files';
const TABS: { tab: Tab; label: string }[] = [
  { tab: 'embedded', label: 'Default' },
  { tab: 'huggingface', label: 'Hugging Face' },
  { tab: 'url', label: 'URL' },
  { tab: 'files', label: 'Files' },
];

function HuggingFaceSource({ busy }: { busy: boolean }) {
  const [repoId, setRepoId] = useState('');
  const [file, setFile] = useState('');
  const [listing, setListing] = useState<RepoListing | null>(null);
  const [listNote, setListNote] = useState('');
  /** Why the last listing failed (offline, timeout, cors, unreachable, http), for tests and styling. */
  const [listFailure, setListFailure] = useState('');
  const valid = isRepoId(repoId);

  async function listFiles() {
    setListNote('asking huggingface.co…');
    setListFailure('');
    try {
      // Offline, a silent server or a CORS refusal each say so within seconds, not a raw "Failed to fetch".
      const response = await fetchWithDiagnosis(repoListingUrl(repoId));
      if (!response.ok) {
        setListFailure('http');
        throw new Error(listingHttpError(repoId, response.status));
      }
      const parsed = parseRepoListing(await response.json());
      setListing(parsed);
      setFile(parsed.hasHfLayout ? '' : (parsed.ggufFiles[0]?.name ?? ''));
      setListNote(`${parsed.numFiles} files, ${parsed.ggufFiles.length} GGUF${parsed.hasHfLayout ? ', HF layout' : ''}`);
    } catch (error) {
      setListing(null);
      if (error instanceof FetchFailure) setListFailure(error.kind);
      setListNote(`Could not list files: ${errorMessage(error)} You can still type a .gguf name, or leave it empty for the HF layout.`);
    }
  }

  return (
    <form
      className="source-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (valid) void loadModel({ kind: 'huggingface', repoId: repoId.trim(), ...(file.trim() ? { file: file.trim() } : {}) });
      }}
    >
      <label>
        Repo id
        <input data-testid="hf-repo" value={repoId} placeholder="owner/name" spellCheck={false} onChange={(e) => setRepoId(e.target.value)} />
      </label>
      {listing && listing.ggufFiles.length > 0 ? (
        <label>
          File
          <select data-testid="hf-file" value={file} onChange={(e) => setFile(e.target.value)}>
            {listing.hasHfLayout && <option value="">HF layout (safetensors)</option>}
            {listing.ggufFiles.map((f) => (
              <option key={f.name} value={f.name}>
                {f.name}
                {f.size !== undefined ? ` (${formatBytes(f.size)})` : ''}
              </option>
            ))}
          </select>
        </label>
      ) : (
        <label>
          .gguf file (optional)
          <input data-testid="hf-file" value={file} placeholder="model-q8_0.gguf" spellCheck={false} onChange={(e) => setFile(e.target.value)} />
        </label>
      )}
      {listNote && (
        <p className="muted small" data-testid="hf-list-note" data-failure={listFailure} role={listFailure ? 'alert' : undefined}>
          {listNote}
        </p>
      )}
      <div className="row">
        <button type="button" disabled={!valid} onClick={() => void listFiles()}>
          List files
        </button>
        <button type="submit" className="primary" disabled={!valid || busy}>
          Load
        </button>
      </div>
    </form>
  );
}

function UrlSource({ busy }: { busy: boolean }) {
  const [url, setUrl] = useState('');
  return (
    <form
      className="source-form"
      onSubmit={(e) => {
        e.preventDefault();
        const checked = checkModelUrl(url, window.location.origin);
        if (checked.ok) void loadModel({ kind: 'url', url: checked.url });
        else showModelError(checked.error);
      }}
    >
      <label>
        https URL of a .gguf file or an HF folder (or a path on this site)
        <input data-testid="model-url" value={url} placeholder="https://…/model.gguf" spellCheck={false} onChange={(e) => setUrl(e.target.value)} />
      </label>
      <button type="submit" className="primary" disabled={!url.trim() || busy}>
        Load
      </button>
    </form>
  );
}

/** The pickers stay mounted whatever tab is open, so other code (and tests) can always reach them. */
function FilePickers({ filesInput, folderInput }: { filesInput: RefObject<HTMLInputElement | null>; folderInput: RefObject<HTMLInputElement | null> }) {
  const onPicked = (input: HTMLInputElement) => {
    const files = Array.from(input.files ?? []);
    input.value = '';
    if (files.length > 0) void loadLocalFiles(files);
  };
  return (
    <>
      <input ref={filesInput} data-testid="model-file-input" type="file" multiple hidden accept=".gguf,.json,.safetensors,.txt,.jinja" onChange={(e) => onPicked(e.currentTarget)} />
      <input ref={folderInput} data-testid="model-folder-input" type="file" hidden {...{ webkitdirectory: '' }} onChange={(e) => onPicked(e.currentTarget)} />
    </>
  );
}

function FileSource({ busy, pickFiles, pickFolder }: { busy: boolean; pickFiles: () => void; pickFolder: () => void }) {
  return (
    <div className="source-form">
      <p className="muted small">A .gguf file, or a Hugging Face folder's files (config.json, tokenizer.json, *.safetensors). Or drop them anywhere on the page.</p>
      <div className="row">
        <button type="button" disabled={busy} onClick={pickFiles}>
          Choose files…
        </button>
        <button type="button" disabled={busy} onClick={pickFolder}>
          Choose folder…
        </button>
      </div>
    </div>
  );
}

export function ModelSourceForm() {
  const [tab, setTab] = useState<Tab>('embedded');
  const busy = useModelStore((s) => s.loading !== null);
  const filesInput = useRef<HTMLInputElement>(null);
  const folderInput = useRef<HTMLInputElement>(null);
  return (
    <section className="card">
      <h2>Load a model</h2>
      <FilePickers filesInput={filesInput} folderInput={folderInput} />
      <div className="tabs" role="tablist">
        {TABS.map((t) => (
          <button key={t.tab} type="button" role="tab" aria-selected={tab === t.tab} data-testid={`source-tab-${t.tab}`} onClick={() => setTab(t.tab)}>
            {t.label}
          </button>
        ))}
      </div>
      {tab === 'embedded' && (
        <div className="source-form">
          <p className="muted small">cohort-tiny: the 0.85M-parameter llama model that ships with Cohort, trained only to find a code hidden in a long text (needle in a haystack); it cannot chat.</p>
          <button type="button" className="primary" disabled={busy} data-testid="load-embedded" onClick={() => void loadModel({ kind: 'embedded' })}>
            Load default model
          </button>
        </div>
      )}
      {tab === 'huggingface' && (
        <>
          <SuggestedModels />
          <HuggingFaceSource busy={busy} />
        </>
      )}
      {tab === 'url' && <UrlSource busy={busy} />}
      {tab === 'files' && <FileSource busy={busy} pickFiles={() => filesInput.current?.click()} pickFolder={() => folderInput.current?.click()} />}
    </section>
  );
}
