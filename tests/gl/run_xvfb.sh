#!/usr/bin/env bash
# Runs a GL test executable under its own Xvfb (Mesa llvmpipe): usage run_xvfb.sh <exe> [args...]
# Fails with a clear message when xvfb-run is missing rather than skipping silently.
set -euo pipefail
command -v xvfb-run >/dev/null || { echo "run_xvfb: xvfb-run not found (apt-get install xvfb xauth)" >&2; exit 1; }
exec timeout 600 xvfb-run -a -s "-screen 0 640x480x24" "$@"
