// The bottom panel: the cohort timeline across the full width, then the throughput and KV
// charts beside the comparison and NIAH cards.
import { CohortTimeline } from './CohortTimeline';
import { ComparePanel } from './ComparePanel';
import { LiveStats } from './LiveStats';
import { NiahSummary } from './NiahSummary';
import { KvChart, ThroughputChart } from './ThroughputCharts';
import './cohort.css';

export function CohortPanel() {
  return (
    <section className="cohort-panel" aria-label="Engine activity">
      <CohortTimeline />
      <LiveStats />
      <div className="cohort-row">
        <ThroughputChart />
        <KvChart />
        <div className="side-cards">
          <ComparePanel />
          <NiahSummary />
        </div>
      </div>
    </section>
  );
}
