// The built library package (what `npm run build:lib` puts in dist-lib/) in a browser: a page
// imports cohort.js, whose bundled worker and shaders answer a NIAH prompt. Builds its own copy.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { makeNiahSuite, NIAH_MAX_NEW_TOKENS } from '../src/protocol/niah';

/** Same-origin path the package is served under (the page's CSP allows scripts of this origin only). */
const PACKAGE_PATH = '/__cohort-package__/';
let outDir: string;

test.beforeAll(() => {
  outDir = mkdtempSync(path.join(os.tmpdir(), 'cohort-lib-'));
  // the library build of vite.lib.config.ts, into a scratch folder instead of dist-lib/
  execFileSync(path.resolve('node_modules/.bin/vite'), ['build', '-c', 'vite.lib.config.ts', '--outDir', outDir, '--emptyOutDir', '--logLevel', 'warn'], { stdio: 'inherit' });
});

test.afterAll(() => {
  if (outDir) rmSync(outDir, { recursive: true, force: true });
});

for (const shared of [false, true]) {
  test(`a page imports the built cohort.js and gets an answer (${shared ? 'shared' : 'dedicated'} worker)`, async ({ context, page }) => {
    await context.route(`**${PACKAGE_PATH}**`, (route) => {
      const file = path.join(outDir, new URL(route.request().url()).pathname.slice(PACKAGE_PATH.length));
      return existsSync(file) ? route.fulfill({ path: file, contentType: 'text/javascript' }) : route.fulfill({ status: 404, body: 'not found' });
    });
    await page.goto('/testing/library.html');
    const [c] = makeNiahSuite(31, 1, 200, 200);
    const result = await page.evaluate(
      async ({ url, prompt, shared, maxTokens }) => {
        const { createEngine } = (await import(url)) as typeof import('../src/lib');
        const engine = await createEngine({ shared, model: { kind: 'embedded' } });
        const completion = await engine.chat.completions.create({ messages: [{ role: 'user', content: prompt }], max_tokens: maxTokens });
        return { workerKind: engine.workerKind, text: completion.choices[0]!.message.content };
      },
      { url: `${PACKAGE_PATH}cohort.js`, prompt: c!.prompt, shared, maxTokens: NIAH_MAX_NEW_TOKENS },
    );
    expect(result.workerKind).toBe(shared ? 'shared' : 'dedicated');
    expect(result.text).toContain(c!.code);
  });
}
