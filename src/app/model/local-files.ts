// Local model files from a picker or a drop: folder entries walked into Files, a quick sanity
// check of the names, then a load. Browser-only helpers; parsing happens in the worker.
import { checkLocalFiles } from '../derive/model-sources';
import { loadModel, showModelError } from '../state/model-actions';

export async function loadLocalFiles(files: File[]): Promise<void> {
  const names = files.map((f) => f.webkitRelativePath || f.name);
  const checked = checkLocalFiles(names);
  if (!checked.ok) {
    showModelError(checked.error);
    return;
  }
  await loadModel({ kind: 'files', files });
}

function readEntries(reader: FileSystemDirectoryReader): Promise<FileSystemEntry[]> {
  return new Promise((resolve, reject) => reader.readEntries(resolve, reject));
}

async function entryFiles(entry: FileSystemEntry): Promise<File[]> {
  if (entry.isFile) {
    return [await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject))];
  }
  if (!entry.isDirectory) return [];
  const reader = (entry as FileSystemDirectoryEntry).createReader();
  const out: File[] = [];
  // readEntries hands out a directory in batches; an empty batch means done.
  for (let batch = await readEntries(reader); batch.length > 0; batch = await readEntries(reader)) {
    for (const child of batch) out.push(...(await entryFiles(child)));
  }
  return out;
}

/** Every file in a drop, folders walked; falls back to dataTransfer.files where entries are absent. */
export async function droppedFiles(data: DataTransfer): Promise<File[]> {
  const entries = Array.from(data.items ?? [])
    .filter((item) => item.kind === 'file')
    .map((item) => item.webkitGetAsEntry?.() ?? null);
  if (entries.length > 0 && entries.every((e): e is FileSystemEntry => e !== null)) {
    const nested = await Promise.all(entries.map(entryFiles));
    return nested.flat();
  }
  return Array.from(data.files ?? []);
}
