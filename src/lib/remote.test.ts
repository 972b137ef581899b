// wrapEndpoint over a MessageChannel: any verb called by name, callbacks proxied back, typed arrays
// transferred, local `own` members, an api that can be awaited, and release. No engine.
import { afterEach, describe, expect, it } from 'vitest';
import * as Comlink from 'comlink';
import { wrapEndpoint } from './remote';

/** A service with verbs this file's adapter has never heard of. */
const service = {
  async echo(text: string): Promise<string> {
    return text;
  },
  async sum(ids: Int32Array): Promise<number> {
    return ids.reduce((total, id) => total + id, 0);
  },
  async countTo(n: number, onTick: (tick: number) => void): Promise<string> {
    for (let tick = 1; tick <= n; tick++) await onTick(tick);
    return 'done';
  },
};

const channels: MessageChannel[] = [];

function wrapped<Own extends object>(own?: Own) {
  const channel = new MessageChannel();
  channels.push(channel);
  Comlink.expose(service, channel.port1);
  return wrapEndpoint<typeof service, Own>(channel.port2, own);
}

afterEach(() => {
  for (const channel of channels.splice(0)) {
    channel.port1.close();
    channel.port2.close();
  }
});

describe('wrapEndpoint', () => {
  it('sends any verb by name, proxying callbacks and transferring typed arrays', async () => {
    const { api } = wrapped();
    expect(await api.echo('hello')).toBe('hello');
    const ticks: number[] = [];
    expect(await api.countTo(3, (tick) => void ticks.push(tick))).toBe('done');
    expect(ticks).toEqual([1, 2, 3]);
    const ids = Int32Array.from([1, 2, 3, 4]);
    expect(await api.sum(ids)).toBe(10);
    expect(ids.byteLength).toBe(0); // moved to the other side, not copied
  });

  it('answers `own` members here and can be awaited without calling the endpoint', async () => {
    let asked = 0;
    const { api } = wrapped({ local: () => ++asked });
    expect(api.local()).toBe(1);
    expect(await (async () => api)()).toBe(api);
    expect(await api.echo('still there')).toBe('still there');
  });

  it('refuses calls once released', () => {
    const { api, release } = wrapped();
    release();
    expect(() => api.echo('gone')).toThrow(/released/);
  });
});
