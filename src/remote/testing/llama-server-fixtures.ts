// Starts a real llama-server (scripts/llama-server.mjs builds and caches it) on the embedded model's
// GGUF for tests and benchmarks, and stops it. Scaffolding only: product code never imports it.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const EMBEDDED_GGUF = path.join(root, 'public/models/cohort-tiny/cohort-tiny-f32.gguf');

export interface LlamaServerOptions {
  numSlots: number;
  /** Context of each slot, in tokens (llama-server splits -c across slots). */
  slotContext?: number;
  apiKey?: string;
  /** Serve /metrics and /slots (default true). */
  monitoring?: boolean;
  gguf?: string;
  port?: number;
  threads?: number;
  /** Tokens per llama_decode call (-b/-ub); small values stretch a prefill over many calls. */
  batchSize?: number;
}

export interface RunningLlamaServer {
  baseUrl: string;
  port: number;
  process: ChildProcess;
  stop(): Promise<void>;
  log(): string;
}

/** The binary's path, or null when it has not been built yet (`node scripts/llama-server.mjs`). */
export async function llamaServerBinary(): Promise<string | null> {
  // @ts-expect-error plain ESM script without types
  const { llamaServerPath } = (await import('../../../scripts/llama-server.mjs')) as { llamaServerPath(): string };
  const binary = llamaServerPath();
  return existsSync(binary) ? binary : null;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

export async function startLlamaServer(options: LlamaServerOptions): Promise<RunningLlamaServer> {
  const binary = await llamaServerBinary();
  if (!binary) throw new Error('llama-server is not built: run `node scripts/llama-server.mjs` (npm test does it when missing)');
  const port = options.port ?? (await freePort());
  const slotContext = options.slotContext ?? 2048;
  const args = [
    '-m', options.gguf ?? EMBEDDED_GGUF,
    '--host', '127.0.0.1',
    '--port', String(port),
    '--parallel', String(options.numSlots),
    '-c', String(slotContext * options.numSlots),
    '--threads', String(options.threads ?? 2),
    ...(options.batchSize ? ['--batch-size', String(options.batchSize), '--ubatch-size', String(options.batchSize)] : []),
    '--no-webui',
    '--alias', 'cohort-tiny',
    ...(options.monitoring === false ? ['--no-slots'] : ['--metrics', '--slots']),
    ...(options.apiKey ? ['--api-key', options.apiKey] : []),
  ];
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`llama-server exited (${child.exitCode}):\n${output.slice(-2000)}`);
    const healthy = await fetch(`${baseUrl}/health`).then((r) => r.ok, () => false);
    if (healthy) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`llama-server did not become healthy in 60 s:\n${output.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { baseUrl, port, process: child, stop, log: () => output };
}
