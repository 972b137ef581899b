#!/usr/bin/env bash
# Runs the packed headless benchmarks (.gpu-bench/ from pack.sh) on an x86-64 Linux GPU machine
# with no Node: unpacks Node, Dawn and node-llama-cpp, finds a Vulkan loader and driver, runs bench:kernels,
# bench:headless and bench:peer (Cohort vs llama.cpp's Vulkan build on the same GPU).
#
# Usage, from the repository root: bash bench/device/run.sh OUT_DIR [bench:headless options]
# Reports go to OUT_DIR. COHORT_GPU defaults to native here; set VK_DRIVER_FILES to choose the
# Vulkan driver (default: NVIDIA's ICD where one is found). COHORT_BENCH_SKIP_KERNELS=1 skips bench:kernels,
# COHORT_BENCH_SKIP_HEADLESS=1 bench:headless, COHORT_BENCH_SKIP_PEER=1 bench:peer (its settings: COHORT_PEER_*).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
pack="$root/.gpu-bench"
[ $# -ge 1 ] || { echo "usage: bash bench/device/run.sh OUT_DIR [bench:headless options]" >&2; exit 2; }
results=$(mkdir -p "$1" && cd "$1" && pwd)
shift
[ -f "$pack/node.xz" ] || { echo "no $pack/node.xz: run npm run bench:pack first, and carry .gpu-bench" >&2; exit 1; }
work=$(mktemp -d /tmp/cohort-gpu-bench.XXXXXX)

unpack_xz() {
  if command -v xz >/dev/null; then xz -dc "$1" >"$2"
  else python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$1" "$2"
  fi
}
unpack_xz "$pack/node.xz" "$work/node"
chmod +x "$work/node"
unpack_xz "$pack/dawn.node.xz" "$pack/node_modules/webgpu/dist/linux-x64/dawn.node"
# node-llama-cpp beside the bundles, where their imports look for it (once: it is the same every run)
if [ "${COHORT_BENCH_SKIP_PEER:-0}" != 1 ] && [ ! -f "$pack/node_modules/node-llama-cpp/package.json" ]; then
  if command -v xz >/dev/null; then xz -dc "$pack/llama.tar.xz" | tar -C "$pack/node_modules" -xf -
  else python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$pack/llama.tar.xz" "$pack/node_modules"
  fi
fi

# Dawn dlopens libvulkan.so.1 by name and llama.cpp's Vulkan build links it; NVIDIA's driver needs the GL dispatch libraries too. Where
# the system lacks them, the packed ones are unpacked privately (nothing under / changes).
if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1 '; then
  for deb in "$pack"/debs/*.deb; do dpkg -x "$deb" "$work/root"; done
  export LD_LIBRARY_PATH="$work/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "Vulkan loader: packed ($(ls "$work/root/usr/lib/x86_64-linux-gnu" | grep -m1 '^libvulkan\.so\.1\.'))"
fi
if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ]; then
  for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
    if [ -f "$icd" ]; then export VK_DRIVER_FILES="$icd"; break; fi
  done
  if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json ]; then
    export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
  fi
fi
echo "Vulkan driver: ${VK_DRIVER_FILES:-${VK_ICD_FILENAMES:-default search paths}}"
export COHORT_GPU="${COHORT_GPU:-native}" COHORT_BENCH_RESULTS_DIR="$results"
echo "Node $("$work/node" --version), COHORT_GPU=$COHORT_GPU, reports to $results"

cd "$root"
status=0
if [ "${COHORT_BENCH_SKIP_KERNELS:-0}" != 1 ]; then
  "$work/node" "$pack/kernels.node.mjs" || status=$?
fi
if [ "${COHORT_BENCH_SKIP_HEADLESS:-0}" != 1 ]; then
  "$work/node" "$pack/headless.node.mjs" "--out=$results" "$@" || status=$?
fi
if [ "${COHORT_BENCH_SKIP_PEER:-0}" != 1 ]; then
  "$work/node" "$pack/peer.node.mjs" || status=$?
fi
rm -rf "$work"
exit "$status"
