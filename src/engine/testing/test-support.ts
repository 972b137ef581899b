// Test helpers for the engine: a byte tokenizer, a plain-text chat template, and a driver that
// steps an EngineCore to completion. Test-only; the real tokenizer and template live in src/model.
import type { EngineCore } from '../engine-core';
import type { StepEvent } from '../events';
import type { ChatMessage, ChatTemplate, Tokenizer } from '../types';
import { mulberry32 } from '../seeded-random';

/** UTF-8 bytes are ids 0..255; 256 is EOS and decodes to nothing. */
export class ByteTokenizer implements Tokenizer {
  readonly eosTokenIds = [256];
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder();

  encode(text: string): number[] {
    return Array.from(this.encoder.encode(text));
  }

  decode(ids: ArrayLike<number>): string {
    const bytes: number[] = [];
    for (let i = 0; i < ids.length; i++) if (ids[i] < 256) bytes.push(ids[i]);
    return this.decoder.decode(new Uint8Array(bytes));
  }
}

/** `<|role|>content\n` per message, then `<|assistant|>` when a reply is wanted. */
export class PlainChatTemplate implements ChatTemplate {
  render(messages: ChatMessage[], addGenerationPrompt: boolean): string {
    const text = messages.map((m) => `<|${m.role}|>${m.content}\n`).join('');
    return addGenerationPrompt ? `${text}<|assistant|>` : text;
  }
}

/** Steps a manual-stepping engine until idle; returns every event. */
export async function runToIdle(engine: EngineCore, maxSteps = 100_000): Promise<StepEvent[]> {
  const events: StepEvent[] = [];
  for (let i = 0; i < maxSteps; i++) {
    const event = await engine.step();
    if (!event) return events;
    events.push(event);
  }
  throw new Error(`engine still busy after ${maxSteps} steps`);
}

/** mulberry32 with integer and pick helpers, for reproducible random schedules. */
export function makeRandom(seed: number): { next(): number; int(lo: number, hi: number): number; pick<T>(items: readonly T[]): T } {
  const next = mulberry32(seed);
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (items) => items[Math.floor(next() * items.length)],
  };
}
