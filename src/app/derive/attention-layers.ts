// The model card's attention line: which layers slide over a window and which see every position,
// from ModelInfo.layerWindows. Pure text; the card shows it, nothing here decides serving.

/** Layer indices as ranges: [0,1,2,4,6,7] -> "0-2, 4, 6-7". */
export function layerRanges(layers: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < layers.length; ) {
    let j = i;
    while (j + 1 < layers.length && layers[j + 1] === layers[j]! + 1) j++;
    parts.push(i === j ? `${layers[i]}` : `${layers[i]}-${layers[j]}`);
    i = j + 1;
  }
  return parts.join(', ');
}

/**
 * "local (window 512): layers 0-4, 6-10; global: 5, 11", or null when every layer is global.
 * Several window sizes are listed each with its own layers.
 */
export function attentionLayersText(layerWindows: readonly number[] | undefined): string | null {
  if (!layerWindows || !layerWindows.some((w) => w > 0)) return null;
  const byWindow = new Map<number, number[]>();
  layerWindows.forEach((w, l) => byWindow.set(w, [...(byWindow.get(w) ?? []), l]));
  const local = [...byWindow].filter(([w]) => w > 0).sort(([a], [b]) => a - b);
  const global = byWindow.get(0) ?? [];
  const text = local.map(([w, layers]) => `local (window ${w.toLocaleString('en-US')}): layers ${layerRanges(layers)}`);
  text.push(global.length > 0 ? `global: ${layerRanges(global)}` : 'no global layer');
  return text.join('; ');
}
