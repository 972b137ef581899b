// The page shell: NoWebGpu when the browser has no WebGPU; else header, model sidebar, session
// grid and the cohort panel. Starts the engine once; holds no state of its own.
import { useEffect, type CSSProperties } from 'react';
import { CohortPanel } from './cohort/CohortPanel';
import { Header } from './Header';
import { DropZone } from './model/DropZone';
import { ModelSidebar } from './model/ModelSidebar';
import { NoWebGpu } from './NoWebGpu';
import { SessionGrid } from './sessions/SessionGrid';
import { SessionsToolbar } from './sessions/SessionsToolbar';
import { useLayoutStore } from './state/layout-store';
import { startEngine } from './state/model-actions';
import { useModelStore } from './state/model-store';
import { startSessionPersistence } from './state/session-persistence';

/** Sessions above the activity panel, which takes a share of the height the person sets. */
function Workspace() {
  const collapsed = useLayoutStore((s) => s.cohortCollapsed);
  const share = useLayoutStore((s) => s.cohortShare);
  return (
    <main className={`workspace${collapsed ? ' cohort-collapsed' : ''}`} style={collapsed ? undefined : ({ '--cohort-share': `${(share * 100).toFixed(1)}%` } as CSSProperties)}>
      <SessionsToolbar />
      <SessionGrid />
      <CohortPanel />
    </main>
  );
}

export function App() {
  const hasWebGpu = typeof navigator !== 'undefined' && 'gpu' in navigator && Boolean(navigator.gpu);
  const gpu = useModelStore((s) => s.gpu);

  useEffect(() => {
    void startSessionPersistence();
    if (hasWebGpu) startEngine();
  }, [hasWebGpu]);

  if (!hasWebGpu) {
    return <NoWebGpu reason="no-webgpu" message="navigator.gpu is undefined on this page." />;
  }
  if (gpu.status === 'unavailable') {
    return <NoWebGpu reason={gpu.reason} message={gpu.message} />;
  }
  return (
    <div className="app">
      <Header />
      <div className="app-body">
        <ModelSidebar />
        <Workspace />
      </div>
      <DropZone />
    </div>
  );
}
