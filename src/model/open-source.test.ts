// Tests for resolving the embedded source: its file list matches public/models/cohort-tiny, and
// loading it requests only files that exist (no model.safetensors.index.json 404).
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EMBEDDED_MODEL_FILES, knownFilesOpener, openModelSource } from './open-source';

const FOLDER = 'public/models/cohort-tiny';

describe('the embedded model source', () => {
  it('lists every file of the HF layout in public/models/cohort-tiny', () => {
    const onDisk = readdirSync(FOLDER).filter((name) => !name.endsWith('.gguf') && name !== 'README.md');
    expect([...EMBEDDED_MODEL_FILES].sort()).toEqual(onDisk.sort());
  });

  it('answers "absent" for other names without asking the opener', async () => {
    const asked: string[] = [];
    const open = knownFilesOpener(async (name) => (asked.push(name), null), new Set(['config.json']));
    expect(await open('model.safetensors.index.json')).toBeNull();
    await open('config.json');
    expect(asked).toEqual(['config.json']);
  });

  it('loads with requests for existing files only', async () => {
    const requested: string[] = [];
    const fetchFn: typeof fetch = async (input) => {
      const name = String(input).split('/').pop()!;
      requested.push(name);
      try {
        return new Response(readFileSync(`${FOLDER}/${name}`), { status: 200 });
      } catch {
        return new Response('not found', { status: 404 });
      }
    };
    const opened = await openModelSource({ kind: 'embedded' }, { embeddedModelUrl: 'https://example.test/models/cohort-tiny/', fetchFn }, () => undefined);
    expect(opened.name).toContain('cohort-tiny');
    expect(requested).not.toContain('model.safetensors.index.json');
    for (const name of requested) expect(EMBEDDED_MODEL_FILES.has(name)).toBe(true);
  });
});
