#!/usr/bin/env bash
# Command 2: set up, build everything, and run the whole test suite (GUI tests under Xvfb) in
# two lanes (ctest -j 2; tests/CMakeLists.txt says which suites run alone and why),
# then a short fuzzing run (scripts/fuzz.sh: 30 s per libFuzzer target, clang-14).
# Then the sanitizer stage (scripts/sanitize.sh stage, every time): ASan+UBSan on instrumented
# copies of the torch-free libraries (readers, parsers, run files, figures, the window's panels)
# and their suites, TSan on the trainer and the suites that run threads, each linked against the
# uninstrumented Release core; each suite first proves its instrumentation live with a deliberate
# error. The whole-build passes (scripts/sanitize.sh asan|tsan: second and third builds of core
# that do not fit CI's 90 minutes on two cores beside this one) run with ATTN_SANITIZE_PASSES=1.
# docs/guide/hardening.md says what runs instrumented where, and the times measured.
# The slow label's configs_converge trains a quick slice of the shipped configs here
# (ATTN_CONVERGE_ALL=1: every one; tests/e2e/converge.sh says which and why).
# ATTN_SKIP_FUZZ=1 and ATTN_SKIP_SANITIZE=1 skip the fuzzing and sanitizer stages locally; CI
# runs both.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
stage() { echo "== attnlab test: $1 ($(date -u +%H:%M:%S))"; }

stage "Release suite"
(cd build && ctest -j 2 --output-on-failure --timeout 1800 "$@")

if [ -z "${ATTN_SKIP_SANITIZE:-}" ]; then
  stage "sanitizer stage (ASan+UBSan, TSan)"
  scripts/sanitize.sh stage
fi
if [ -n "${ATTN_SANITIZE_PASSES:-}" ]; then
  scripts/sanitize.sh asan tsan
fi
if [ -z "${ATTN_SKIP_FUZZ:-}" ]; then
  stage "fuzz (30 s per target)"
  scripts/fuzz.sh 30
fi
stage "done"
