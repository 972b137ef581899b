// The page shown when this browser cannot give Cohort a WebGPU device: what is missing, and
// how to get it. Not an error boundary for other failures.
import type { GpuInfo } from '../protocol/api';

type Reason = Extract<GpuInfo, { status: 'unavailable' }>['reason'];

const headlines: Record<Reason, string> = {
  'no-webgpu': 'This browser does not expose WebGPU.',
  'no-adapter': 'WebGPU is present, but no GPU adapter is available.',
  'device-failed': 'A GPU adapter was found, but it refused to create a device.',
};

export function NoWebGpu({ reason, message }: { reason: Reason; message: string }) {
  const insecure = typeof window !== 'undefined' && !window.isSecureContext;
  return (
    <main className="page" data-testid="no-webgpu" data-reason={reason}>
      <h1>Cohort needs WebGPU</h1>
      <p className="headline" data-testid="no-webgpu-reason">
        {headlines[reason]}
      </p>
      <p className="detail">Details: {message}</p>
      {insecure && (
        <p className="warning">
          This page is not a secure context: WebGPU is only offered on https:// pages and on
          http://localhost. Open Cohort through one of those.
        </p>
      )}
      <h2>How to get WebGPU</h2>
      <ul>
        <li>
          <strong>Chrome or Edge 113+</strong> on Windows, macOS and ChromeOS have WebGPU on by
          default; Chrome 121+ on Android 12+ too.
        </li>
        <li>
          <strong>Chrome on Linux</strong>: open <code>chrome://flags/#enable-unsafe-webgpu</code>, enable it
          (and <code>chrome://flags/#enable-vulkan</code>), then restart; or start Chrome with{' '}
          <code>--enable-unsafe-webgpu --enable-features=Vulkan</code>.
        </li>
        <li>
          <strong>Without a usable GPU</strong> (a VM, a server), Chromium can run WebGPU in software
          with <code>--enable-unsafe-webgpu --use-webgpu-adapter=swiftshader</code>: slow, but it works.
        </li>
        <li>
          <strong>Safari 26+</strong> and <strong>Firefox 141+ on Windows</strong> ship WebGPU as well.
        </li>
        <li>
          If WebGPU is on and there is still no adapter, check <code>chrome://gpu</code>: the GPU may be
          blocklisted or its driver too old.
        </li>
      </ul>
    </main>
  );
}
