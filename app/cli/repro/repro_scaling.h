// The scaling benchmarks of `attnlab reproduce` (issue 49, item 5): a training step's time and
// memory as one config key sweeps a list of values (sequence length L, d', ...), each point timed
// alone in a fresh `attnlab bench-step` process (repro_bench.h), one torch thread.
//
// repro.json "scaling": [{
//   "name": "ky-length",                 the sweep's name, which claims cite ("sweep")
//   "key": "task.context",               the swept config key
//   "values": [128, 256, 512, 1024],     its values (numbers for slopes; any JSON otherwise)
//   "set": {"train.batch_size": 2},      applied to every arm's config (optional)
//   "arms": [{"name": "ky", "arm": "ky", "set": {...}, "unfused": false}],
//                                        a label, the repro arm whose config it starts from,
//                                        its own overrides, and --unfused (LibTorch ops)
//   "rounds": 3, "warmup": 2, "steps": 3,
//   "quick": {...}                       with --quick, merged over the entry (shallow)
// }]
// Contract:
//  - Rounds alternate the order of the (value, arm) points (forward, then backward, ...), so that
//    load drift on a shared machine falls on every point alike; every point is measured once per
//    round. /proc/loadavg is recorded before and after, so a reader sees the load measured under.
//  - Per round, a point gives the mean seconds per timed step and the memory increment (the peak
//    RSS over the process's floor before the first step: step_benchmark.h), the latter from the
//    memory pass (repro_bench.h's bench_timed_then_measured; in the timed process in files that
//    predate it, "memory" absent).
//  - sweep_values() gives one value per round, so claims pair by round (repro_claims.h):
//      "sweep_seconds_per_step" / "sweep_memory_mib" at one value ("at"),
//      "sweep_time_slope" / "sweep_memory_slope": the least-squares slope of log(metric) against
//      log(value) over all the sweep's values, fitted within each round
//      (core/analysis/scaling_fit.h).
#pragma once
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/cli/repro/repro_plan.h"
#include "core/analysis/verdict.h"

namespace attn {

struct ScalingPoint {
  double mean_seconds = 0, best_seconds = 0, increment_mib = 0, floor_mib = 0;
  double heap_increment_mib = std::nan("");  // the timed process's (repro_bench.h); NaN if older
};
struct ScalingArm {
  std::string name;
  std::vector<std::vector<ScalingPoint>> rounds;  // [round][value index]
};
struct ScalingSweep {
  std::string name, key;
  nlohmann::json values = nlohmann::json::array();
  nlohmann::json spec;  // the entry as measured (quick merged), for the report
  int rounds = 3, warmup = 2, steps = 3;
  std::vector<ScalingArm> arms;
  std::string load_before, load_after;  // /proc/loadavg
  nlohmann::json memory;  // memory_pass_json() (repro_bench.h); null: taken in the timed process
  nlohmann::json measured_by;  // measured_by_json() (repro_bench.h); null in older files
  const ScalingArm* find(const std::string& arm) const;
};
struct ScalingResults {
  std::vector<ScalingSweep> sweeps;
  const ScalingSweep* find(const std::string& name) const;
};

// The manifest's "scaling" with each entry's "quick" merged in quick mode (null when absent).
nlohmann::json resolve_scaling_spec(const nlohmann::json& manifest, bool quick);
// Checks it (arms known, keys and counts in range); throws attn::Error naming the entry.
void validate_scaling_spec(const nlohmann::json& spec, const std::vector<std::string>& arms,
                           const std::string& where);
ScalingResults run_scaling(const ReproPlan& plan, const nlohmann::json& spec,
                           const std::string& work_dir,
                           const std::function<void(const std::string&)>& log);
nlohmann::json scaling_json(const ScalingResults& s);
ScalingResults scaling_from_json(const nlohmann::json& j);
std::string scaling_markdown(const ScalingResults& s);

// One value per round of arm `arm` in `sweep` for `metric` (above); `at` the value for the
// per-point metrics. Empty when the sweep lacks the arm or the value. Throws attn::Error for a
// slope over a non-numeric value.
KeyedValues sweep_values(const ScalingSweep& sweep, const std::string& arm,
                         const std::string& metric, const nlohmann::json& at);
// The metrics above.
const std::vector<std::string>& sweep_metrics();

}  // namespace attn
