// The Compare card's two result lists: batched vs serialized decode tok/s and their speed-up, or
// speculation off vs on with the drafting side's acceptance and tokens per row-step. Read-only views.
import type { DecodeThroughput } from '../../protocol/metrics';
import type { CompareState } from '../state/runs-store';

function detail(rate: DecodeThroughput | undefined, unit: string): string | undefined {
  return rate && `${rate.decodeTokens} decode tokens in ${rate.forwardPasses} decode-only ${unit}, ${(rate.decodeMs / 1000).toFixed(2)} s`;
}

const rateText = (rate: DecodeThroughput | undefined): string => (rate ? `${rate.tokensPerSec.toFixed(1)} tok/s` : '…');
const ratioText = (compare: CompareState): string => (compare.ratio ? `${compare.ratio.toFixed(2)}×` : compare.status === 'done' ? 'n/a' : '…');

export function ModeCompareResult({ compare, unit }: { compare: CompareState; unit: string }) {
  return (
    <dl className="facts compact" data-testid="compare-result">
      <dt>Serialized</dt>
      <dd data-testid="compare-serialized" title={detail(compare.serialized, unit)}>
        {rateText(compare.serialized)}
      </dd>
      <dt>Batched</dt>
      <dd data-testid="compare-batched" title={detail(compare.batched, unit)}>
        {rateText(compare.batched)}
      </dd>
      <dt>Speed-up</dt>
      <dd data-testid="compare-ratio" data-ratio={compare.ratio ?? ''} className="big">
        {ratioText(compare)}
      </dd>
    </dl>
  );
}

export function SpeculationCompareResult({ compare, unit }: { compare: CompareState; unit: string }) {
  const figures = compare.speculationFigures;
  return (
    <dl className="facts compact" data-testid="compare-speculation-result">
      <dt>Speculation off</dt>
      <dd data-testid="compare-speculation-off" title={detail(compare.speculationOff, unit)}>
        {rateText(compare.speculationOff)}
      </dd>
      <dt>Speculation on</dt>
      <dd data-testid="compare-speculation-on" title={detail(compare.speculationOn, unit)}>
        {rateText(compare.speculationOn)}
      </dd>
      {figures && (
        <>
          <dt>Drafts accepted</dt>
          <dd data-testid="compare-acceptance" title={`${figures.numAccepted} of ${figures.numDrafted} drafted tokens`}>
            {figures.acceptanceRate === null ? 'none drafted' : `${(figures.acceptanceRate * 100).toFixed(0)}%`}
          </dd>
          <dt>Tokens per row-step</dt>
          <dd data-testid="compare-tokens-per-row-step" title={`${figures.decodeTokens} tokens over ${figures.decodeRowSteps} decode row-steps`}>
            {figures.tokensPerRowStep.toFixed(2)}
          </dd>
        </>
      )}
      <dt>Speed-up</dt>
      <dd data-testid="compare-ratio" data-ratio={compare.ratio ?? ''} className="big">
        {ratioText(compare)}
      </dd>
    </dl>
  );
}
