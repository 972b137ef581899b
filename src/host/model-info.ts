// ModelInfo for the page: a loaded model's shape, stored encodings, size and KV pool geometry and type.
// Pure: read from the opened model and its runner, nothing fetched or computed on a device.
import type { ModelRunner } from '../engine/types';
import type { ModelDesc } from '../model/desc';
import type { OpenedModel } from '../model/open-model';
import type { KvCacheType, ModelInfo } from '../protocol/api';
import { kvBytesPerToken } from '../protocol/kv-options';

export function weightBytes(desc: ModelDesc): number {
  let n = 0;
  for (const t of desc.tensors.values()) n += t.data.byteLength;
  return n;
}

/** All but contextTokens, which the host reads from the engine's scheduler (its one definition). */
export function describeModel(opened: OpenedModel, runner: ModelRunner, kvCacheType: KvCacheType): Omit<ModelInfo, 'contextTokens'> {
  const { desc } = opened;
  const c = desc.config;
  let numParams = 0;
  const dtypes = new Set<string>();
  for (const t of desc.tensors.values()) {
    numParams += t.shape.reduce((a, b) => a * b, 1);
    dtypes.add(t.dtype);
  }
  return {
    name: opened.name,
    arch: c.arch,
    numLayers: c.numLayers,
    hiddenSize: c.hiddenSize,
    vocabSize: c.vocabSize,
    maxPositionEmbeddings: c.maxPositionEmbeddings,
    dtypes: [...dtypes].sort(),
    numParams,
    weightBytes: weightBytes(desc),
    blockSize: runner.blockSize,
    numBlocks: runner.kvGroups[0]!.numBlocks,
    kvCacheType,
    kvBytesPerToken: kvBytesPerToken(c, kvCacheType),
    ...(opened.templateNote ? { templateNote: opened.templateNote } : {}),
    toolsRendering: opened.toolsRendering,
    toolCallFormat: opened.toolCallFormat,
    endTokens: opened.endTokens,
    ...(opened.setAsideTokens.length > 0 ? { setAsideTokens: opened.setAsideTokens } : {}),
    ...(c.layerWindows.some((w) => w > 0) ? { layerWindows: [...c.layerWindows] } : {}),
    kvGroups: runner.kvGroups.map((group, g) => {
      // a group past the first holds the sliding layers (a runner keeps them apart), the first the rest
      const numSliding = runner.kvGroups.length > 1 ? c.layerWindows.filter((w) => w > 0).length : 0;
      const numLayers = g === 0 ? c.numLayers - numSliding : numSliding;
      return { numBlocks: group.numBlocks, window: group.window, bytesPerToken: kvBytesPerToken({ ...c, numLayers }, kvCacheType) };
    }),
  };
}
