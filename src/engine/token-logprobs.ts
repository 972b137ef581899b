// A row's sampled logprobs as its step event carries them: per new token, its text and the top
// alternatives' texts, the EOS token left out. Not where they are computed (the runners).
import type { TokenLogprob } from './events';
import type { SampledLogprobs, Tokenizer } from './types';

/**
 * The run's tokens' logprobs (the runner's sampled positions line up with the run: the j-th token
 * was sampled at the row's j-th position) with their texts (the tokenizer's decode of that one id);
 * the EOS token that ended it left out. null when the runner returned too few.
 */
export function tokenLogprobs(tokenizer: Tokenizer, tokenIds: readonly number[], endsWithEos: boolean, logprobs: readonly SampledLogprobs[] | undefined): TokenLogprob[] | null {
  const n = tokenIds.length - (endsWithEos ? 1 : 0);
  if (n > 0 && (!logprobs || logprobs.length < n)) return null;
  const text = (id: number) => tokenizer.decode([id]);
  return tokenIds.slice(0, n).map((id, j) => {
    const at = logprobs![j]!;
    return { id, token: text(id), logprob: at.logprob, top: Array.from(at.topIds, (topId, t) => ({ id: topId, token: text(topId), logprob: at.topLogprobs[t]! })) };
  });
}
