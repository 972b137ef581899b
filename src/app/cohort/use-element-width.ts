// A React hook that tracks an element's content width with a ResizeObserver, for the canvas
// timeline and the uPlot charts, which need pixel sizes.
import { useCallback, useRef, useState } from 'react';

export function useElementWidth<T extends HTMLElement>(): [(el: T | null) => void, number] {
  const [width, setWidth] = useState(0);
  const observer = useRef<ResizeObserver | null>(null);
  const ref = useCallback((el: T | null) => {
    observer.current?.disconnect();
    observer.current = null;
    if (!el) return;
    setWidth(el.clientWidth);
    observer.current = new ResizeObserver((entries) => setWidth(Math.floor(entries[0].contentRect.width)));
    observer.current.observe(el);
  }, []);
  return [ref, width];
}
