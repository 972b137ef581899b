// What an error thrown by the engine (or anything else) says to a person: its message. Not
// where errors are shown: the stores and panes do that.
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'object' && error !== null && 'message' in error) return String((error as { message: unknown }).message);
  return String(error);
}
