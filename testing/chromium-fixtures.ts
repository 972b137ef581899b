// The Chromium launch every browser test and benchmark uses: the system Chromium with WebGPU on,
// SwiftShader (CPU Vulkan) unless COHORT_GPU=native. Not an installer: Cohort never downloads browsers.
import { existsSync } from 'node:fs';

const commonFlags = ['--no-sandbox', '--enable-unsafe-webgpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
// SwiftShader is Chromium's CPU Vulkan: WebGPU without a GPU. COHORT_GPU=native uses the real GPU.
const swiftShaderFlags = ['--enable-features=Vulkan', '--use-vulkan=swiftshader', '--use-webgpu-adapter=swiftshader', '--disable-vulkan-surface'];

/** Chromium's path and flags; throws a sentence saying how to install one when it is missing. */
export function chromiumLaunchOptions(): { executablePath: string; args: string[] } {
  const executablePath = process.env.CHROME_PATH || '/usr/bin/chromium';
  if (!existsSync(executablePath)) {
    throw new Error(
      `No Chromium at ${executablePath}. Install one (Debian/Ubuntu: sudo apt-get install -y chromium) ` +
        'or point CHROME_PATH at a Chrome/Chromium binary. Cohort never downloads browsers.',
    );
  }
  const gpuFlags = process.env.COHORT_GPU === 'native' ? ['--enable-features=Vulkan'] : swiftShaderFlags;
  return { executablePath, args: [...commonFlags, ...gpuFlags] };
}
