// The speed and memory benchmark of `attnlab reproduce` (app/cli/repro/cli_reproduce.cpp): each
// arm's training step timed alone, in a fresh process per arm and round (`attnlab bench-step`, one
// torch thread), never from the training runs, which share the cores.
//
// repro.json "benchmark": {"arms": [names], "rounds" (5), "warmup" (3), "steps" (20)}.
// Contract:
//  - Rounds alternate the arms (A B, then B A, ...) so that drift on a busy machine falls on
//    both. An arm whose default run took a fused CPU kernel (dot with a learned or no position,
//    neural with ReLU, gaussian) is measured a second time with the kernels off, so a claim can
//    compare equally optimised paths: `libtorch` is every arm's LibTorch-ops figure, `default`
//    its figure as it trains (fused where it can be).
//  - A round's figures: the mean seconds per timed step, then the memory increment over the
//    process floor (step_benchmark.h) from a second process, the memory pass: the same config
//    under MALLOC_MMAP_THRESHOLD_=131072 with min(warmup, 1) warm-up and min(steps, 3) steps.
//    The timed process runs attnlab's kept heap, whose increment follows how the heap fragments
//    (it moved by a third between builds); the memory pass's follows the live tensors (builds
//    agree to 0.1 MiB) but its steps are slower, so neither process gives both figures. The
//    timed process's increment is kept as heap_increment_mib, for the record.
//  - Files measured before the memory pass existed (no "memory" object) took the increment in
//    the timed process; memory_method_text() says which method a file used.
//  - bench_values() gives one value per round: steps per second (1 / mean seconds) or
//    memory_increment_mib.
#pragma once
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/cli/repro/repro_plan.h"

namespace attn {

struct BenchRound {
  double mean_seconds = 0, best_seconds = 0, increment_mib = 0, floor_mib = 0;
  double heap_increment_mib = std::nan("");  // the timed process's; NaN in older files
  bool fused_path = false;
  std::string allocator;  // bench-step's "allocator" (core/base/memory.h)
};
struct ArmBench {
  std::string arm;
  std::vector<BenchRound> as_trained;  // fused kernels on: the path its runs took
  std::vector<BenchRound> libtorch;    // fused kernels off (the same as as_trained when unfused)
  bool fused() const;                  // as_trained took a fused kernel
};
struct ReproBench {
  int rounds = 5, warmup = 3, steps = 20;
  nlohmann::json memory;  // memory_pass_json(); null: measured in the timed process (older files)
  nlohmann::json measured_by;  // measured_by_json(); null in older files
  std::vector<ArmBench> arms;
  const ArmBench* find(const std::string& arm) const;
};

// Checks repro.json's "benchmark" (arms known, counts in range); throws attn::Error naming it.
void validate_bench_spec(const nlohmann::json& spec, const std::vector<std::string>& arms,
                         const std::string& where);
ReproBench run_repro_bench(const ReproPlan& plan, const nlohmann::json& spec,
                           const std::string& work_dir,
                           const std::function<void(const std::string&)>& log);
// One `attnlab bench-step --config config_file` in a fresh process (--unfused when asked), with
// `environment` ("NAME=value ...") before it when given: its one JSON line (throws attn::Error
// when it fails).
BenchRound bench_once(const std::string& exe, const std::string& config_file, int warmup, int steps,
                      bool unfused, const std::string& environment = "");

// The memory pass's environment, and its step counts for a benchmark of warmup + steps.
extern const char* const kMemoryPassEnvironment;  // "MALLOC_MMAP_THRESHOLD_=131072"
int memory_pass_warmup(int warmup);               // min(warmup, 1)
int memory_pass_steps(int steps);                 // min(steps, 3)
// A timed round: bench_once as given, then the memory pass, whose increment and floor replace
// the timed process's (kept as heap_increment_mib). Throws attn::Error when the memory pass did
// not run under kMemoryPassEnvironment (its "allocator" says so).
BenchRound bench_timed_then_measured(const std::string& exe, const std::string& config_file,
                                     int warmup, int steps, bool unfused);
// {"process": "separate", "environment", "warmup", "steps"} for a benchmark of warmup + steps.
nlohmann::json memory_pass_json(int warmup, int steps);
// {"commit", "binary_sha256", "date"}: the binary that measures (benchmark.json, each sweep of
// scaling.json), which need not be the one that trained the runs or writes the report.
nlohmann::json measured_by_json();
// "Measured 2026-11-30 13:48 UTC by commit `0123456789ab` (binary sha256 `...16 digits`)." or ""
// for null.
std::string measured_by_text(const nlohmann::json& measured_by);
// How the memory figures were taken ("taken in ...", for a report's sentence), from
// memory_pass_json() or null; `per` names what a process measures ("arm", "point").
std::string memory_method_text(const nlohmann::json& memory, const std::string& per = "arm");
nlohmann::json bench_json(const ReproBench& b);
ReproBench bench_from_json(const nlohmann::json& j);

// Per round: "steps_per_second" or "memory_increment_mib", on path "as_trained" or "libtorch".
std::vector<double> bench_values(const ArmBench& arm, const std::string& metric,
                                 const std::string& path);

// The benchmark's table (Markdown): per arm, its path, steps/s and memory increment on both
// paths, best and mean over rounds.
std::string bench_markdown(const ReproBench& b);

// `arg`, quoted for a POSIX shell when it needs it (a plain word stays as it is, so the commands
// a report prints read as typed; core/training/headless/slurm.h's shell_quote always quotes).
std::string shell_word(const std::string& arg);

}  // namespace attn
