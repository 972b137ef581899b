// A React hook: calls onEscape when Escape is pressed anywhere while `active` (open popovers,
// the sidebar drawer). Not a focus trap; it only closes things.
import { useEffect } from 'react';

export function useEscape(active: boolean, onEscape: () => void): void {
  useEffect(() => {
    if (!active) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') onEscape();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [active, onEscape]);
}
