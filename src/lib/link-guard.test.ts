// LinkGuard over scripted links: a released comlink proxy's throw becomes a rejection, close() ends
// the calls waiting, and a dropped tab is reported once while later calls wait for the new link.
import * as Comlink from 'comlink';
import { describe, expect, it, vi } from 'vitest';
import { TAB_EXPIRED_ERROR_NAME } from '../protocol/tab-errors';
import type { EngineLink } from './completions';
import { LinkGuard } from './link-guard';
import { linkOverEndpoint } from './remote';

const expired = () => Object.assign(new Error('dropped'), { name: TAB_EXPIRED_ERROR_NAME });

describe('LinkGuard', () => {
  it('turns the synchronous throw of a released comlink proxy into a rejection', async () => {
    const { port1, port2 } = new MessageChannel();
    Comlink.expose({ ping: async () => true }, port2);
    const remote = linkOverEndpoint(port1);
    remote.release();
    expect(() => remote.link.closeSession('s1')).toThrow(/Proxy has been released/);
    const guard = new LinkGuard(remote.link);
    await expect(guard.link.closeSession('s1')).rejects.toThrow(/Proxy has been released/);
    port1.close();
    port2.close();
  });

  it('close() rejects the calls waiting for an answer and every later one with its error', async () => {
    const guard = new LinkGuard({ ping: () => new Promise(() => {}) } as unknown as EngineLink);
    const waiting = guard.link.ping();
    const error = new Error('terminated');
    guard.close(error);
    await expect(waiting).rejects.toBe(error);
    await expect(guard.link.ping()).rejects.toBe(error);
  });

  it('reports a dropped tab once, and sends the calls made meanwhile over the link it was given', async () => {
    const dropped = { ping: vi.fn(async () => Promise.reject(expired())), closeSession: vi.fn(async () => Promise.reject(expired())) };
    const next = { ping: vi.fn(async () => true as const), closeSession: vi.fn(async () => undefined) };
    let replace!: (link: EngineLink) => void;
    const guard = new LinkGuard(dropped as unknown as EngineLink);
    const onExpired = vi.fn(() => {
      void guard.link.closeSession('s1').catch(() => undefined); // what the engine does: its refusal is no news
      return new Promise<EngineLink>((resolve) => (replace = resolve));
    });
    guard.onExpired = onExpired;
    await expect(guard.link.ping()).rejects.toMatchObject({ name: TAB_EXPIRED_ERROR_NAME });
    const meanwhile = guard.link.ping();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(onExpired).toHaveBeenCalledTimes(1);
    expect(dropped.ping).toHaveBeenCalledTimes(1);
    replace(next as unknown as EngineLink);
    await expect(meanwhile).resolves.toBe(true);
    expect(next.ping).toHaveBeenCalledTimes(1);
  });

  it('where joining again fails, every call rejects with why', async () => {
    const guard = new LinkGuard({ ping: async () => Promise.reject(expired()) } as unknown as EngineLink);
    const failure = new Error('the worker did not answer');
    guard.onExpired = () => Promise.reject(failure);
    await expect(guard.link.ping()).rejects.toMatchObject({ name: TAB_EXPIRED_ERROR_NAME });
    await expect(guard.link.ping()).rejects.toBe(failure);
    expect(guard.closed).toBe(true);
  });
});
