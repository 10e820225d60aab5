#!/usr/bin/env bash
# The README's causal filmstrip (docs/attribution_film.png): the shipped recall experiment,
# recorded every 100 steps with attribution patching (train.record_attribution, on by default),
# then every head's recorded attribution at steps 0, 200, 400, 600 and 800 side by side.
# About 2-3 minutes on one core. usage: scripts/attribution_film.sh [RUN_DIR] [OUT_PNG]
set -euo pipefail
cd "$(dirname "$0")/.."
run=${1:-runs/recall_attribution}
out=${2:-docs/attribution_film.png}
build/app/attnlab train --config assets/configs/recall.json --out "$run" --set threads=1 \
  --set train.record_every=100
build/app/attnlab export --run "$run" --figure attribution --steps 0:800:200 --out "$out"
