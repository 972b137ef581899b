// Reads a server's /slots and /metrics once per sample, keeping the counters between polls so each
// sample reports its own interval. A failing endpoint is named in the sample; chat never waits on it.
import type { ServerInfo, ServerSample, ServerSlot } from '../protocol/server';
import { parsePrometheus, type PromSample } from './prometheus';
import { getJson, getResponse, type ConnectOptions, type ServerAddress } from './server-connect';
import { sampleFromPoll, parseSlots, type ServerCounters } from './server-metrics';

/** A poll slower than this is dropped from its sample: the view must keep pace with the streams. */
const POLL_TIMEOUT_MS = 2_000;

export class ServerPoller {
  private counters: ServerCounters = {};

  constructor(
    private readonly address: ServerAddress,
    private readonly server: ServerInfo,
    private readonly options: ConnectOptions,
  ) {}

  async poll(): Promise<ServerSample> {
    const errors: string[] = [];
    const [slots, metrics] = await Promise.all([
      this.server.endpoints.slots ? this.read('/slots', errors, async () => parseSlots(await getJson(this.address, '/slots', this.options, POLL_TIMEOUT_MS))) : undefined,
      this.server.endpoints.metrics
        ? this.read('/metrics', errors, async () => parsePrometheus(await (await getResponse(this.address, '/metrics', this.options, POLL_TIMEOUT_MS)).text()))
        : undefined,
    ]);
    const { sample, counters } = sampleFromPoll(this.server.kind, { slots: slots as ServerSlot[] | undefined, metrics: metrics as PromSample[] | undefined, errors }, this.counters);
    this.counters = counters;
    return sample;
  }

  private async read<T>(path: string, errors: string[], get: () => Promise<T>): Promise<T | undefined> {
    try {
      return await get();
    } catch (err) {
      errors.push(`${path}: ${(err as Error).message}`);
      return undefined;
    }
  }
}
