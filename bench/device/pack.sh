#!/usr/bin/env bash
# Packs the headless benchmarks (bench:headless, bench:kernels) into .gpu-bench/ for an x86-64 Linux
# GPU machine that has no Node, no browser and no network. Runs here, where npm and apt work; run.sh runs there.
#
# .gpu-bench/ holds: node.xz (this machine's Node binary), the two benchmarks bundled into single
# .mjs files, npm webgpu's linux-x64 build alone (dawn.node.xz), and the Vulkan loader and GL
# dispatch packages (.deb) that NVIDIA's Vulkan driver needs. The repository beside it supplies
# shaders/ and the embedded model. Usage: npm run bench:pack
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/.gpu-bench"
cd "$root"

[ "$(uname -m)" = x86_64 ] || { echo "pack.sh packs this machine's Node binary, so it must run on x86-64 (here: $(uname -m))" >&2; exit 1; }
node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 19 || (a === 19 && b >= 8) ? 0 : 1)' ||
  { echo "Node >= 19.8 is needed (fs.openAsBlob); this is $(node --version)" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out/node_modules/webgpu/dist/linux-x64" "$out/debs"

echo "bundling the benchmarks"
# ESM bundles; the CommonJS dependencies inside them get a require() through the banner.
node_modules/.bin/esbuild bench/headless.node.ts bench/kernels.node.ts --bundle --platform=node --format=esm \
  --target=node20 --external:webgpu --outdir="$out" --out-extension:.js=.mjs --log-level=warning \
  --banner:js="import { createRequire as __cohortRequire } from 'node:module'; const require = __cohortRequire(import.meta.url);"

echo "compressing Node $(node --version) and webgpu's linux-x64 build"
xz -T0 -6 -c "$(command -v node)" >"$out/node.xz"
cp node_modules/webgpu/index.js node_modules/webgpu/package.json "$out/node_modules/webgpu/"
xz -T0 -6 -c node_modules/webgpu/dist/linux-x64/dawn.node >"$out/dawn.node.xz"

echo "downloading the Vulkan loader and GL dispatch packages (amd64)"
lists=$(mktemp -d)
apt_opts=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 "-oDir::State::Lists=$lists")
mkdir -p "$lists/partial"
apt-get "${apt_opts[@]}" update -qq
(cd "$out/debs" && apt-get "${apt_opts[@]}" download -qq libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
rm -rf "$lists"

du -shc "$out"/*
echo "packed $out; on the GPU machine, from the repository root: bash bench/device/run.sh OUT_DIR"
