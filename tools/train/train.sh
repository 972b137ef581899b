#!/usr/bin/env bash
# Trains the embedded default model from its seed, exports it (HF layout + F32/Q8_0 GGUF) to
# public/models/cohort-tiny and evaluates it. Resumable: rerun after an interruption.
# Needs Debian's PyTorch: apt-get install -y python3-torch libopenblas0-pthread
set -euo pipefail
cd "$(dirname "$0")/../.."
export OMP_WAIT_POLICY=PASSIVE
out=public/models/cohort-tiny
/usr/bin/python3 tools/train/train.py "$@"
npx tsx tools/models/export-gguf.ts "$out" "$out/cohort-tiny-f32.gguf" --type f32
npx tsx tools/models/export-gguf.ts "$out" "$out/cohort-tiny-q8_0.gguf" --type q8_0
/usr/bin/python3 tools/train/eval.py --model "$out"
