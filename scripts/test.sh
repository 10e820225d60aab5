#!/usr/bin/env bash
# Command 2: set up, build everything, and run the whole test suite (GUI tests under Xvfb),
# then the core suite (trainer thread, snapshots, commands) again under ThreadSanitizer.
# ATTN_SKIP_TSAN=1 skips the sanitizer pass (it builds core a second time).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
jobs=$(nproc 2>/dev/null || echo 2)
if [ -z "${ATTN_SKIP_TSAN:-}" ]; then
  cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTN_SANITIZE=thread \
    -DATTN_BUILD_GUI=OFF >/dev/null
  cmake --build build-tsan --target test_core -j "$jobs"
  (cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
    ctest --output-on-failure -R '^core$')
fi
cd build
ctest --output-on-failure --timeout 1800 "$@"
