// The speculation comparison's results and the step tooltip's speculation cells, rendered in Node
// (server-side rendering stands in for the DOM): figures shown as the metrics module gives them.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { decodeThroughput, speculationFigures } from '../../protocol/metrics';
import { row, step } from '../../protocol/testing/step-fixtures';
import { SpeculationField } from '../sessions/SpeculationField';
import { SpeculationCompareResult } from './CompareResults';
import { StepTooltip } from './StepTooltip';

const verifyStep = step(3, 0, 12, [row('d1', 'decode', 5, [1, 2, 3, 4], '', { numDrafted: 4, numAccepted: 3 }), row('d2', 'decode', 1, [9])]);

describe('speculation in the page', () => {
  it('the Compare card shows both sides, the acceptance and tokens per row-step', () => {
    const off = decodeThroughput([step(0, 0, 10, [row('o1', 'decode', 1, [1])])]);
    const on = decodeThroughput([verifyStep]);
    const html = renderToStaticMarkup(
      createElement(SpeculationCompareResult, { compare: { status: 'done', phase: '', numPrompts: 2, kind: 'speculation', speculationOff: off, speculationOn: on, speculationFigures: speculationFigures([verifyStep]), ratio: on.tokensPerSec / off.tokensPerSec }, unit: 'steps' }),
    );
    expect(html).toMatch(/data-testid="compare-speculation-off"[^>]*>100.0 tok\/s</);
    expect(html).toMatch(/data-testid="compare-speculation-on"[^>]*>416.7 tok\/s</);
    expect(html).toMatch(/data-testid="compare-acceptance"[^>]*>75%</);
    expect(html).toMatch(/data-testid="compare-tokens-per-row-step"[^>]*>2.50</);
    expect(html).toMatch(/data-testid="compare-ratio"[^>]*>4.17×</);
  });

  it('the step tooltip gives each row its drafted and accepted counts and the step its tokens per row-step', () => {
    const html = renderToStaticMarkup(createElement(StepTooltip, { event: verifyStep, x: 0, width: 400 }));
    expect(html).toContain('drafted 4, accepted 3');
    expect(html).toMatch(/data-testid="tooltip-speculation"[^>]*>speculation: 3\/4 drafts accepted · 2.50 tokens per row-step</);
  });

  it('the settings field shows the mode, and the length only when fixed', () => {
    const fixed = renderToStaticMarkup(createElement(SpeculationField, { value: { maxDraftTokens: 6 }, onChange: () => undefined }));
    expect(fixed).toMatch(/<option value="fixed" selected="">/);
    expect(fixed).toMatch(/data-testid="setting-maxDraftTokens"[^>]*value="6"/);
    const auto = renderToStaticMarkup(createElement(SpeculationField, { value: 'auto', onChange: () => undefined }));
    expect(auto).not.toContain('setting-maxDraftTokens');
  });
});
