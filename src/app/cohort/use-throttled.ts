// A React hook that passes a changing value on at most once per interval (trailing edge), so
// heavy derivations (chart series) do not run on every animation frame.
import { useEffect, useRef, useState } from 'react';

export function useThrottled<T>(value: T, intervalMs: number): T {
  const [throttled, setThrottled] = useState(value);
  const lastAt = useRef(0);
  useEffect(() => {
    const wait = lastAt.current + intervalMs - Date.now();
    const timer = setTimeout(
      () => {
        lastAt.current = Date.now();
        setThrottled(value);
      },
      Math.max(0, wait),
    );
    return () => clearTimeout(timer);
  }, [value, intervalMs]);
  return throttled;
}
