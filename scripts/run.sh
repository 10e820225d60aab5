#!/usr/bin/env bash
# Command 1: set up, build, and open the window on the default experiment. Without a display,
# train the default experiment headless and say where its outputs are.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
config=assets/configs/copy.json
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  # No --config: the bundled default experiment, with the Geometry explorer opened first.
  rc=0; build/app/attnlab gui || rc=$?
  [ $rc != 2 ] && exit $rc   # 2: no window could be opened; fall through to headless
fi
echo "attnlab: no display; training the default experiment headless instead."
build/app/attnlab train --config "$config" --out runs/copy
echo "Open it later with a display: build/app/attnlab gui --config $config"
