// Collects the process's unhandled rejections for the rest of the running test, so a test can
// assert there were none (vitest would report them, but not against the test that caused them).
import { onTestFinished } from 'vitest';

export function watchUnhandledRejections(): unknown[] {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  onTestFinished(() => void process.off('unhandledRejection', onUnhandled));
  return unhandled;
}
