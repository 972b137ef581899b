// The bottom panel: a bar to collapse it, drag its height, pick its window of steps or clear it;
// the cohort timeline across the full width, then the charts beside the comparison, NIAH and Extract cards.
import { useRef, type KeyboardEvent, type PointerEvent } from 'react';
import { useLayoutStore } from '../state/layout-store';
import { ActivityControls } from './ActivityControls';
import { CohortTimeline } from './CohortTimeline';
import { ComparePanel } from './ComparePanel';
import { LiveStats } from './LiveStats';
import { ExtractSummary } from './ExtractSummary';
import { NiahSummary } from './NiahSummary';
import { KvChart, ThroughputChart } from './ThroughputCharts';
import './cohort.css';

/** The bar above the panel: drag (or arrow keys) to resize, the button to collapse. */
function PanelBar() {
  const collapsed = useLayoutStore((s) => s.cohortCollapsed);
  const share = useLayoutStore((s) => s.cohortShare);
  const { setCohortCollapsed, setCohortShare } = useLayoutStore.getState();
  const dragging = useRef(false);
  const shareAt = (e: PointerEvent<HTMLDivElement>) => {
    const workspace = e.currentTarget.closest('.workspace')?.getBoundingClientRect();
    if (workspace && workspace.height > 0) setCohortShare((workspace.bottom - e.clientY) / workspace.height);
  };
  const onKey = (e: KeyboardEvent<HTMLDivElement>) => {
    if (e.key !== 'ArrowUp' && e.key !== 'ArrowDown') return;
    e.preventDefault();
    setCohortShare(share + (e.key === 'ArrowUp' ? 0.05 : -0.05));
  };
  return (
    <div className="panel-bar">
      {!collapsed && (
        <div
          className="resize-handle"
          role="separator"
          aria-orientation="horizontal"
          aria-label="Resize the activity panel"
          aria-valuenow={Math.round(share * 100)}
          aria-valuemin={15}
          aria-valuemax={75}
          tabIndex={0}
          data-testid="cohort-resize"
          onKeyDown={onKey}
          onPointerDown={(e) => {
            dragging.current = true;
            e.currentTarget.setPointerCapture(e.pointerId);
          }}
          onPointerMove={(e) => dragging.current && shareAt(e)}
          onPointerUp={() => (dragging.current = false)}
        />
      )}
      <h2 className="panel-title">Engine activity</h2>
      <span className="spacer" />
      {!collapsed && <ActivityControls />}
      <button type="button" className="link" aria-expanded={!collapsed} aria-controls="cohort-body" data-testid="cohort-toggle" onClick={() => setCohortCollapsed(!collapsed)}>
        {collapsed ? 'show ▴' : 'hide ▾'}
      </button>
    </div>
  );
}

export function CohortPanel() {
  const collapsed = useLayoutStore((s) => s.cohortCollapsed);
  return (
    <section className="cohort-panel" aria-label="Engine activity" data-testid="cohort-panel" data-collapsed={collapsed}>
      <PanelBar />
      {!collapsed && (
        <div className="cohort-body" id="cohort-body">
          <CohortTimeline />
          <LiveStats />
          <div className="cohort-row">
            <ThroughputChart />
            <KvChart />
            <div className="side-cards">
              <ComparePanel />
              <NiahSummary />
              <ExtractSummary />
            </div>
          </div>
        </div>
      )}
    </section>
  );
}
