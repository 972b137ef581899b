// An earlier commit checked out beside the repository (a git worktree under the temp folder) with
// its own locked dependencies, for side-by-side benchmarks. Not a benchmark itself.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoPath } from '../src/gpu/testing/node-gpu';

export function git(...gitArgs: string[]): string {
  const r = spawnSync('git', gitArgs, { cwd: repoPath('.'), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${gitArgs.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** The commit `sha` checked out once under the temp folder, with `npm ci` run there. */
export function baseWorktree(sha: string): string {
  const dir = join(tmpdir(), `cohort-baseline-${sha.slice(0, 12)}`);
  if (!existsSync(join(dir, 'package.json'))) git('worktree', 'add', '--force', '--detach', dir, sha);
  if (!existsSync(join(dir, 'node_modules', '.bin', 'tsx'))) {
    const r = spawnSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`npm ci failed in ${dir}`);
  }
  return dir;
}
