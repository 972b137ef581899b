#!/usr/bin/env bash
# Packs the headless benchmarks (bench:headless, bench:kernels, bench:peer) into .gpu-bench/ for an x86-64 Linux
# GPU machine that has no Node, no browser and no network. Runs here, where npm and apt work; run.sh runs there.
#
# .gpu-bench/ holds: node.xz (this machine's Node binary), the three benchmarks bundled into single
# .mjs files, npm webgpu's linux-x64 build alone (dawn.node.xz), llama.tar.xz (node-llama-cpp, its
# production dependencies and its linux-x64 CPU and Vulkan prebuilts, for bench:peer's llama.cpp), and
# the Vulkan loader and GL dispatch packages (.deb) that NVIDIA's Vulkan driver needs. The repository
# beside it supplies shaders/ and the embedded model. Must stay under 64 MiB. Usage: npm run bench:pack
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
# node-llama-cpp stays a package: it finds its binaries and prebuilt packages from its own path.
node_modules/.bin/esbuild bench/headless.node.ts bench/kernels.node.ts bench/peer.node.ts --bundle --platform=node --format=esm \
  --target=node20 --external:webgpu --external:node-llama-cpp --outdir="$out" --out-extension:.js=.mjs --log-level=warning \
  --banner:js="import { createRequire as __cohortRequire } from 'node:module'; const require = __cohortRequire(import.meta.url);"

echo "compressing Node $(node --version) and webgpu's linux-x64 build"
xz -T0 -6 -c "$(command -v node)" >"$out/node.xz"
cp node_modules/webgpu/index.js node_modules/webgpu/package.json "$out/node_modules/webgpu/"
xz -T0 -6 -c node_modules/webgpu/dist/linux-x64/dawn.node >"$out/dawn.node.xz"

llama_version=$(node -p 'require("./node_modules/node-llama-cpp/package.json").version')
for prebuilt in linux-x64 linux-x64-vulkan; do
  v=$(node -p "require('./node_modules/@node-llama-cpp/$prebuilt/package.json').version")
  [ "$v" = "$llama_version" ] || { echo "@node-llama-cpp/$prebuilt is $v, node-llama-cpp $llama_version: reinstall" >&2; exit 1; }
done
echo "packing node-llama-cpp $llama_version, its production dependencies and its linux-x64 CPU and Vulkan prebuilts (xz -9)"
# Every production dependency, not only those one run imports: one found missing there cannot be fetched.
# Left out: llama.cpp's sources and build scripts (never built there), templates, source maps and typings.
# The two prebuilts share their ggml CPU variants byte for byte; adjacent in one -9 stream (64 MiB window), xz keeps them once.
mapfile -t llama_packages < <(node bench/device/node-deps.cjs node-llama-cpp)
tar -C node_modules --exclude='node-llama-cpp/llama/gitRelease.bundle' --exclude='node-llama-cpp/llama/addon' \
  --exclude='node-llama-cpp/llama/xpack' --exclude='node-llama-cpp/llama/toolchains' --exclude='node-llama-cpp/llama/patches' \
  --exclude='node-llama-cpp/llama/cmake' --exclude='node-llama-cpp/llama/profiles' --exclude='node-llama-cpp/llama/CMakeLists.txt' \
  --exclude='node-llama-cpp/templates' --exclude='*.map' --exclude='*.d.ts' \
  -cf - "${llama_packages[@]}" @node-llama-cpp/linux-x64 @node-llama-cpp/linux-x64-vulkan | xz -T1 -9 >"$out/llama.tar.xz"

echo "downloading the Vulkan loader and GL dispatch packages (amd64)"
lists=$(mktemp -d)
apt_opts=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 "-oDir::State::Lists=$lists")
mkdir -p "$lists/partial"
apt-get "${apt_opts[@]}" update -qq
(cd "$out/debs" && apt-get "${apt_opts[@]}" download -qq libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
rm -rf "$lists"

du -shc "$out"/*
echo "$(du -sb "$out" | cut -f1) bytes in $out (at most 64 MiB = 67108864 travel)"
echo "packed $out; on the GPU machine, from the repository root: bash bench/device/run.sh OUT_DIR"
