// InvalidOptionError: an option or setting the engine refuses, named and shown. A leaf: every engine
// file may throw it without depending on another's policy.

/** A session option the engine refuses; `.option` names it (e.g. 'sampling.topP'), `.value` is what came. */
export class InvalidOptionError extends Error {
  readonly option: string;
  readonly value: unknown;

  constructor(option: string, value: unknown, expected: string) {
    super(`${option} must be ${expected}, got ${show(value)}`);
    // comlink carries an error's name and message across the worker boundary, not its fields
    this.name = 'InvalidOptionError';
    this.option = option;
    this.value = value;
  }
}

/** The bad value as the message shows it: NaN and Infinity as such, strings quoted. */
function show(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' || value === undefined) return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
