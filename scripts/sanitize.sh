#!/usr/bin/env bash
# The sanitizers (docs/guide/hardening.md, "Sanitizers"). Two kinds:
#  - stage (what CI runs, from scripts/test.sh, every time): instrumented copies of the targets
#    that are cheap to instrument, built in the Release build/ beside the originals
#    (tests/sanitizers/CMakeLists.txt: EXCLUDE_FROM_ALL targets with their own flags; no second
#    build of core). `stage` = `stage-asan stage-tsan`.
#     stage-asan: ASan+UBSan on the torch-free libraries (attnlab_base, attnlab_core_torchfree: config, strict
#       JSON, views.rec, safetensors, run files; attnlab_plot and the figure builders; the
#       window's panels where the headless harness exists) with their suites test_base,
#       test_figure, test_app, test_render and the panel harness. LibTorch code those suites
#       call (core) is the uninstrumented Release library.
#     stage-tsan: TSan on the trainer, its thread policy, the run watcher, the sweep and the
#       views, with the suites that run threads (test_threads' list, test_thread_policy,
#       test_run_follow), linked against the uninstrumented Release core: TSan sees the locks
#       taken there (pthread is intercepted) but not the accesses made there.
#    Each stage first checks that every object it built carries its sanitizer's calls, then runs
#    each suite's self-check (a deliberate heap overflow, signed overflow, data race: they must
#    die with the sanitizer's report), then the suites with the arguments ctest gives the
#    originals. A report anywhere fails the stage.
#  - asan, tsan (whole-build passes, ATTN_SANITIZE_PASSES=1 scripts/test.sh or by hand): a whole
#    second build of core (LibTorch-heavy) in build-asan/ or build-tsan/, 17 min for the ASan
#    build alone on 2 cores (2026-11-27), which with the Release build and suite does not fit
#    CI's 90 minutes. They cover what the stage cannot: core's torch code, the CLI e2e tests.
#     asan (build-asan/, no GUI): the core suite, the figure suite and the headless CLI e2e
#       tests, without the slow and soak labels (configs_converge trains every shipped config:
#       minutes in Release, far longer instrumented; the soak measures memory, which ASan's shadow
#       memory distorts) and without the tests that mostly train or repeat code test_core already
#       runs instrumented (fmnist_cli, reproduce_quick, compare_cli, geometry_cli, and
#       input_safety, whose parsers test_core covers instrumented).
#     tsan (build-tsan/): the suites that run threads (test_threads).
#    Run them before a release and after changing threads, memory handling or a parser.
# Sanitizer builds are -O1 -g1: half the compile time of -O2 -g (measured: 58 s against 123 s for
# core/training/session/session.cpp).
# usage: scripts/sanitize.sh [stage|stage-asan|stage-tsan|asan|tsan ...]   (default: asan tsan).
# The stage needs build/ (scripts/setup.sh --tests); ATTN_BUILD_DIR names another Release build,
# ATTN_BUILD_LOCK a lock file to hold while building (flock; machines shared by several builds).
set -euo pipefail
cd "$(dirname "$0")/.."
passes=("$@")
[ ${#passes[@]} -gt 0 ] || passes=(asan tsan)
jobs=$(nproc 2>/dev/null || echo 2)
supp=$PWD/tests/sanitizers
san_opt="-O1 -DNDEBUG"  # plus -g1 from ATTN_SANITIZE (CMakeLists.txt)
build=${ATTN_BUILD_DIR:-build}
# detect_leaks=0 for the suites that load LibTorch: it and libgomp keep thread pools and caches
# alive at exit. Leaks that matter (growth while running) are what soak_short and
# scripts/soak.sh measure. The torch-free suites run with LeakSanitizer on.
asan_env="abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
ubsan_env="print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp"
tsan_env="halt_on_error=1 second_deadlock_stack=1 suppressions=$supp/tsan.supp"
stage() { echo "== attnlab sanitize: $1 ($(date -u +%H:%M:%S))"; }
fail() { echo "scripts/sanitize.sh: $*" >&2; exit 1; }

# The objects a stage target was compiled into must all call its sanitizer's runtime: a copy
# that lost its flags fails here, before any test could pass without them.
check_objects() {  # <runtime symbol prefix> <target dir name>...
  local prefix=$1 n=0 bad=()
  shift
  for t in "$@"; do
    while IFS= read -r -d '' o; do
      n=$((n + 1))
      grep -q " ${prefix}" <<<"$(nm -u "$o")" || bad+=("$o")  # not a pipe: grep -q + pipefail
    done < <(find "$build/tests/sanitizers/CMakeFiles/$t.dir" -name '*.o' -print0)
  done
  [ "$n" -gt 0 ] || fail "no objects found for $*"
  [ ${#bad[@]} -eq 0 ] || fail "not instrumented (no ${prefix} calls): ${bad[*]}"
  echo "   $n objects, all instrumented (${prefix})"
}

# The ctest command of the original suite (tests/sanitizers/stage_suites.txt pairs each copy
# with its original): its arguments, one per line, so a copy runs as its original does in ctest.
ctest_args() {  # <original target>
  (cd "$build" && ctest --show-only=json-v1) | python3 -c '
import json, os, sys
orig = sys.argv[1]
for t in json.load(sys.stdin)["tests"]:
    cmd = t.get("command") or []
    if cmd and os.path.basename(cmd[0]) == orig:
        print("\n".join(cmd[1:]))
        break' "$1"
}

# Runs <copy>'s self-check case <name>; it must fail with <report> in its output.
self_check() {  # <binary> <case> <report>
  local out rc=0
  out=$("$1" --no-skip -tc="$2" 2>&1) || rc=$?
  if [ "$rc" -eq 0 ] || ! grep -q "$3" <<<"$out"; then
    echo "$out" | tail -20 >&2
    fail "$(basename "$1"): the self-check '$2' did not die with '$3' (exit $rc): the suite is not instrumented"
  fi
  echo "   $(basename "$1"): '$2' caught ($3)"
}

run_suites() {  # <kind> <env assignments...> -- from stage_suites.txt lines of that kind
  local kind=$1 list="$build/tests/sanitizers/stage_suites.txt" copy orig leaks skip
  while read -r k copy orig leaks skip; do
    [ "$k" = "$kind" ] || continue
    local bin="$build/tests/sanitizers/$copy" t0=$SECONDS
    [ -x "$bin" ] || fail "$bin was not built"
    mapfile -t args < <(ctest_args "$orig")
    # The self-checks run with the suite's own options (halt_on_error: UBSan stops at a report).
    if [ "$kind" = asan ]; then
      export ASAN_OPTIONS="detect_leaks=$leaks:$asan_env" UBSAN_OPTIONS="$ubsan_env"
      self_check "$bin" "sanitizer self-check: ASan*" "AddressSanitizer: heap-buffer-overflow"
      self_check "$bin" "sanitizer self-check: UBSan*" "runtime error: signed integer overflow"
    else
      export TSAN_OPTIONS="$tsan_env"
      self_check "$bin" "sanitizer self-check: TSan*" "ThreadSanitizer: data race"
    fi
    (cd "$build/tests" && "$bin" "${args[@]}" --test-case-exclude="sanitizer self-check*${skip:+,$skip}") ||
      fail "$copy failed under $kind (its report is above)"
    echo "   $copy passed ($((SECONDS - t0)) s)"
  done <"$list"
}

stage_pass() {  # asan|tsan
  local kind=$1 t0=$SECONDS prefix=__asan_
  [ "$kind" = tsan ] && prefix=__tsan_
  [ -f "$build/CMakeCache.txt" ] || fail "no Release build in $build/ (run scripts/setup.sh --tests)"
  build=$(cd "$build" && pwd)  # the suites run from its tests/ folder, as ctest runs them
  stage "$kind stage: build (sanitize_stage_$kind in $build/)"
  ${ATTN_BUILD_LOCK:+flock "$ATTN_BUILD_LOCK"} cmake --build "$build" --target "sanitize_stage_$kind" -j "$jobs"
  echo "   built in $((SECONDS - t0)) s"
  mapfile -t targets < <(sed -n "s/^target $kind //p" "$build/tests/sanitizers/stage_suites.txt")
  check_objects "$prefix" "${targets[@]}"
  stage "$kind stage: suites"
  local t1=$SECONDS
  run_suites "$kind"
  echo "   $kind stage: build $((t1 - t0)) s, suites $((SECONDS - t1)) s"
}

for pass in "${passes[@]}"; do
  case $pass in
    stage) stage_pass asan; stage_pass tsan ;;
    stage-asan) stage_pass asan ;;
    stage-tsan) stage_pass tsan ;;
    asan)
      stage "ASan+UBSan build"
      cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$san_opt" \
        -DATTN_SANITIZE=address,undefined -DATTN_BUILD_GUI=OFF -DATTN_CHECK_KERNELS=OFF >/dev/null
      cmake --build build-asan --target test_core test_base test_figure test_app attnlab -j "$jobs"
      stage "ASan+UBSan suite"
      (cd build-asan && \
        ASAN_OPTIONS="detect_leaks=0:$asan_env" UBSAN_OPTIONS="$ubsan_env" \
        ctest --output-on-failure -LE 'slow|soak' -E '^(fmnist_cli|reproduce_quick|compare_cli|geometry_cli|input_safety)$')
      ;;
    tsan)
      stage "TSan build"
      cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$san_opt" \
        -DATTN_SANITIZE=thread -DATTN_BUILD_GUI=OFF -DATTN_CHECK_KERNELS=OFF >/dev/null
      cmake --build build-tsan --target test_threads -j "$jobs"
      stage "TSan suite"
      (cd build-tsan && TSAN_OPTIONS="$tsan_env" ctest --output-on-failure -R '^threads$')
      ;;
    *) echo "scripts/sanitize.sh: unknown pass '$pass' (allowed: stage, stage-asan, stage-tsan, asan, tsan)" >&2
       exit 2 ;;
  esac
done
stage "done"
