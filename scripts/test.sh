#!/usr/bin/env bash
# Command 2: set up, build everything, and run the whole test suite (GUI tests under Xvfb).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
cd build
ctest --output-on-failure --timeout 1800 "$@"
