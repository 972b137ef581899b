// The playground's production build of a tree, served by vite preview for benchmarks that drive Chromium.
// Not a test fixture (Playwright's webServer serves the e2e tests).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export interface ServeOptions {
  /** vite --mode (e.g. 'test' for the build that also carries the testing pages). */
  mode?: string;
  /** A path that answers once the server is up (default '/'). */
  readyPath?: string;
  /** Serve the build already in dist/ (default: build first). */
  skipBuild?: boolean;
  /** Runs after the build, before the server starts (e.g. to add files to dist/). */
  beforeServe?: () => void;
}

/** Builds the tree at `dir` and serves it on 127.0.0.1:`port`; kill the process to stop. */
export async function serveBuild(dir: string, port: number, options: ServeOptions = {}): Promise<ChildProcess> {
  const vite = join(dir, 'node_modules', '.bin', 'vite');
  const mode = options.mode ? ['--mode', options.mode] : [];
  if (!options.skipBuild) {
    const build = spawnSync(vite, ['build', ...mode, '--logLevel', 'warn'], { cwd: dir, stdio: 'inherit' });
    if (build.status !== 0) throw new Error(`vite build failed in ${dir}`);
  }
  options.beforeServe?.();
  const server = spawn(vite, ['preview', ...mode, '--host', '127.0.0.1', '--port', String(port), '--strictPort'], { cwd: dir, stdio: 'ignore' });
  for (let i = 0; i < 120; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}${options.readyPath ?? '/'}`)).ok) return server;
    } catch {
      // not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  server.kill();
  throw new Error(`vite preview did not answer on port ${port}`);
}
