#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang-14) and runs each for a while.
# usage: scripts/fuzz.sh [seconds per target, default 30] [target ...]
#   targets: fuzz_config fuzz_expression fuzz_matrix fuzz_legacy (default: all four)
# Needs the Release build's core libraries (build/core/libattnlab_{core,core_torchfree,base}.a; built here
# if missing).
# A crash leaves build-fuzz/artifacts/<target>/crash-* and fails; turn each one into a
# regression input under fuzz/regressions/<target>/ (the normal suite replays them: ctest -R
# fuzz_regressions) and fix the parser.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_config fuzz_expression fuzz_matrix fuzz_legacy)
jobs=$(nproc 2>/dev/null || echo 2)
if [ ! -f build/core/libattnlab_core.a ] || [ ! -f build/core/libattnlab_core_torchfree.a ] \
    || [ ! -f build/core/libattnlab_base.a ]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build --target attnlab_core -j "$jobs"
fi
cmake -S fuzz -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
  -DATTN_CORE_LIB="$PWD/build/core/libattnlab_core.a" >/dev/null
cmake --build build-fuzz --target "${targets[@]}" -j "$jobs"
# LibTorch and libgomp are not instrumented: leaks inside them at exit are not ours.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for t in "${targets[@]}"; do
  corpus=build-fuzz/corpus/$t artifacts=build-fuzz/artifacts/$t
  mkdir -p "$corpus" "$artifacts"
  seeds=fuzz/corpus/${t#fuzz_}
  echo "== $t: ${seconds}s (seeds: $seeds)"
  # One input at a time (-rss_limit_mb: the parsers must not need much); a finding stops it.
  if ! build-fuzz/$t -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
      -artifact_prefix="$artifacts/" -print_final_stats=1 "$corpus" "$seeds" 2>"build-fuzz/$t.log"; then
    echo "FAIL $t: a finding in $artifacts/ (log: build-fuzz/$t.log)"
    tail -40 "build-fuzz/$t.log"
    status=1
  else
    grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "build-fuzz/$t.log" | tr '\n' ' '
    echo
  fi
done
exit $status
