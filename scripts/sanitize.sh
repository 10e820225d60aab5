#!/usr/bin/env bash
# The two sanitizer passes (docs/guide/hardening.md), on their own: each is a whole second build
# of core (LibTorch-heavy) that, with the Release build and suite, no longer fits CI's 90 minutes
# on two cores (measured 2026-11-27: Release build 24 min, Release suite 25-32 min, the ASan
# build alone 17 min before its suite). Run it before a release and after changing threads,
# memory handling or a parser (docs/guide/hardening.md says when they last ran).
#  - ASan + UBSan (build-asan/, no GUI): the core suite, the figure suite and the headless CLI
#    e2e tests, without the slow and soak labels (configs_converge trains every shipped config:
#    minutes in Release, far longer instrumented; the soak measures memory, which ASan's shadow
#    memory distorts) and without the tests that mostly train or repeat code test_core already
#    runs instrumented (fmnist_cli, reproduce_quick, compare_cli, geometry_cli, and input_safety,
#    whose parsers test_core covers instrumented).
#  - TSan (build-tsan/): the suites that run threads (test_threads: trainer thread, snapshots,
#    commands, runs side by side).
# Sanitizer builds are -O1 -g1: half the compile time of -O2 -g (measured: 58 s against 123 s for
# core/training/session/session.cpp).
# usage: scripts/sanitize.sh [asan|tsan ...]   (default: both). Needs scripts/setup.sh --tests.
set -euo pipefail
cd "$(dirname "$0")/.."
passes=("$@")
[ ${#passes[@]} -gt 0 ] || passes=(asan tsan)
jobs=$(nproc 2>/dev/null || echo 2)
supp=$PWD/tests/sanitizers
san_opt="-O1 -DNDEBUG"  # plus -g1 from ATTN_SANITIZE (CMakeLists.txt)
stage() { echo "== attnlab sanitize: $1 ($(date -u +%H:%M:%S))"; }
for pass in "${passes[@]}"; do
  case $pass in
    asan)
      stage "ASan+UBSan build"
      cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$san_opt" \
        -DATTN_SANITIZE=address,undefined -DATTN_BUILD_GUI=OFF -DATTN_CHECK_KERNELS=OFF >/dev/null
      cmake --build build-asan --target test_core test_figure test_app attnlab -j "$jobs"
      stage "ASan+UBSan suite"
      # detect_leaks=0: LibTorch and libgomp are not instrumented and keep thread pools and
      # caches alive at exit. Leaks that matter (growth while running) are what soak_short and
      # scripts/soak.sh measure.
      (cd build-asan && \
        ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1" \
        UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp" \
        ctest --output-on-failure -LE 'slow|soak' -E '^(fmnist_cli|reproduce_quick|compare_cli|geometry_cli|input_safety)$')
      ;;
    tsan)
      stage "TSan build"
      cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$san_opt" \
        -DATTN_SANITIZE=thread -DATTN_BUILD_GUI=OFF -DATTN_CHECK_KERNELS=OFF >/dev/null
      cmake --build build-tsan --target test_threads -j "$jobs"
      stage "TSan suite"
      (cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$supp/tsan.supp" \
        ctest --output-on-failure -R '^threads$')
      ;;
    *) echo "scripts/sanitize.sh: unknown pass '$pass' (allowed: asan, tsan)" >&2; exit 2 ;;
  esac
done
stage "done"
