// Shows the engine worker's adapter, its features and the device limits.
// Display only: the numbers come from EngineApi.gpuInfo().
import type { GpuInfo } from '../protocol/api';

type AvailableGpu = Extract<GpuInfo, { status: 'ok' }>;

export function GpuReport({ info }: { info: AvailableGpu }) {
  const { adapter } = info;
  const adapterName = [adapter.vendor, adapter.architecture, adapter.device].filter(Boolean).join(' / ') || 'unnamed adapter';
  return (
    <section data-testid="gpu-report" className="panel">
      <h2>GPU</h2>
      <dl className="facts">
        <dt>Adapter</dt>
        <dd data-testid="gpu-adapter">{adapterName}</dd>
        <dt>Description</dt>
        <dd data-testid="gpu-adapter-description">{adapter.description || '—'}</dd>
        <dt>Fallback adapter</dt>
        <dd>{adapter.isFallbackAdapter ? 'yes (software)' : 'no'}</dd>
      </dl>
      <h3>Features</h3>
      <ul data-testid="gpu-features" className="chips">
        {info.features.map((feature) => (
          <li key={feature} className={info.deviceFeatures.includes(feature) ? 'enabled' : undefined}>
            {feature}
          </li>
        ))}
      </ul>
      <h3>Device limits</h3>
      <table data-testid="gpu-limits" className="limits">
        <tbody>
          {Object.entries(info.limits)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([name, value]) => (
              <tr key={name} data-limit={name}>
                <th>{name}</th>
                <td>{value.toLocaleString('en-US')}</td>
              </tr>
            ))}
        </tbody>
      </table>
    </section>
  );
}
