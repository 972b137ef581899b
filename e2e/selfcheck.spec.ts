// The page's WebGPU report and the worker's kernel self-check (matmul.wgsl accumulating b into a), in a real Chromium.
// Also the page shown when a browser has no WebGPU. Does not load a model.
import { expect, test } from '@playwright/test';

test('shows the adapter and a correct kernel self-check from the worker', async ({ page }) => {
  await page.goto('/');
  // Diagnostics are folded away by default; open them as a person would.
  await page.getByTestId('gpu-diagnostics').locator(':scope > summary').click();
  await expect(page.getByTestId('gpu-report')).toBeVisible();
  await expect(page.getByTestId('gpu-adapter')).not.toHaveText('');
  await expect(page.getByTestId('gpu-adapter')).not.toHaveText('unnamed adapter');
  await expect(page.getByTestId('gpu-limits').locator('[data-limit="maxStorageBufferBindingSize"]')).toBeVisible();
  await expect(page.getByTestId('gpu-features').locator('li').first()).toBeVisible();

  const selfCheck = page.getByTestId('selfcheck');
  await expect(selfCheck).not.toHaveAttribute('data-status', 'running');
  const status = await selfCheck.getAttribute('data-status');
  const errorText = status === 'error' ? await page.getByTestId('selfcheck-error').textContent() : '';
  expect(status, `self-check ended as ${status} ${errorText}`).toBe('pass');
  await expect(page.getByTestId('selfcheck-max-error')).toHaveText('0');

  // Re-check the kernel's numbers here, independently of the worker's own comparison.
  const raw = await page.getByTestId('selfcheck-data').textContent();
  const { a, b, values } = JSON.parse(raw ?? '{}') as { a: number[]; b: number[]; values: number[] };
  expect(values.length).toBeGreaterThan(1000);
  expect(a.length).toBe(values.length);
  expect(b.length).toBe(values.length);
  expect(new Set(values).size).toBeGreaterThan(values.length / 2); // not a constant or zero fill
  const mismatches = values.flatMap((value, i) => (value === Math.fround(a[i]! + b[i]!) ? [] : [{ i, value, a: a[i], b: b[i] }]));
  expect(mismatches.slice(0, 5)).toEqual([]);
});

test('explains how to get WebGPU when the browser has none', async ({ page }) => {
  await page.addInitScript(() => {
    // Simulates a browser without WebGPU: the property is gone from navigator.
    delete (Navigator.prototype as { gpu?: unknown }).gpu;
  });
  await page.goto('/');
  await expect(page.getByTestId('no-webgpu')).toBeVisible();
  await expect(page.getByTestId('no-webgpu')).toHaveAttribute('data-reason', 'no-webgpu');
  await expect(page.getByText('chrome://flags/#enable-unsafe-webgpu')).toBeVisible();
  await expect(page.getByTestId('gpu-report')).toHaveCount(0);
});

test('the built page runs under a Content-Security-Policy that blocks injected scripts, with no violations', async ({ page }) => {
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { __cspViolations: string[] }).__cspViolations = seen;
    document.addEventListener('securitypolicyviolation', (e) => seen.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  await page.goto('/');
  await expect(page.getByTestId('model-info')).toHaveAttribute('data-state', 'ready', { timeout: 120_000 });
  const policy = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
  expect(policy).toContain("script-src 'self'");
  const injected = await page.evaluate(() => {
    const script = document.createElement('script');
    script.textContent = 'window.__injected = true';
    document.body.append(script);
    return (window as unknown as { __injected?: boolean }).__injected ?? false;
  });
  expect(injected).toBe(false);
  const violations = await page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations);
  // The only violations are the script this test injected, reported once per policy (the
  // <meta> and the response header); loading the model and the worker raised none.
  expect(violations.length).toBeGreaterThan(0);
  expect(new Set(violations)).toEqual(new Set(['script-src-elem inline']));
});
