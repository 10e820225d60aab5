// What `attnlab reproduce` trains (app/cli/repro/cli_reproduce.cpp): a paper's repro.json read into
// tuned arms (core/training/headless/tuned_arms.h), and the finished runs of each arm.
//
// repro.json: "title", "seeds" (default 3), "lr_grid" (multipliers of each arm's train.lr,
// default [0.5, 1, 2]), "lr_extend" (how many rates beyond the grid's edge an arm may try when
// its best rate is the edge, default 2), "quick" (overrides of --quick, with optional
// "lr_grid", "seeds" and "lr_extend"),
// "arms" [{"name", "config" (a file beside repro.json), "set" {key: value}, "quick" {key: value},
// "seeds" (this arm's count, e.g. 5 where a verdict hinges on it), "lr_grid", "note" (how the
// arm differs from the others beyond its mechanism, a line of the report)}], "claims"
// (repro_claims.h), "benchmark" (repro_bench.h), "paper_size" (below).
// Contract:
//  - Every arm's config is validated before anything trains; errors name repro.json, the arm
//    and the key. Arms of one task train the same number of steps, and an arm with a grid of
//    more than one rate needs a validation set (length_eval.h's validation_refusal), else
//    attn::Error.
//  - --seeds N replaces every arm's count.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/models/model_size.h"
#include "core/runs/directory/run_dir.h"
#include "core/training/headless/sweep.h"
#include "core/training/headless/tuned_arms.h"

namespace attn {

struct ReproPlan {
  std::string paper, title, dir;  // dir: the paper's configs directory
  nlohmann::json manifest;
  std::vector<TunedArm> arms;
  std::vector<std::string> notes;  // per arm, "" when none
};

ReproPlan load_repro_plan(const std::string& configs_dir, const std::string& paper, bool quick,
                          int seeds_override);

// The finished runs of every arm at its chosen rate, in arm order; group_of[i] names runs[i]'s
// arm. tuned[k] is arms[k]'s choice.
struct ReproRuns {
  std::vector<RunDirectory> runs;
  std::vector<std::string> group_of;
  std::vector<TunedRuns> tuned;
  // repro.json "paper_size" {"set": {key: value}, "patch_dim", "length", "vocab"} (with an arm's
  // own "paper_size_set"): each arm's whole-model and attention parameter counts at the paper's
  // dimensions, by formula (core/models/model_size.h), no training. Empty without it.
  std::map<std::string, ModelSize> paper_size;
  // Each arm's resolved config (to_json of the parsed config: defaults filled in), for the
  // claims' "paper_at" (repro_claims.h).
  std::map<std::string, nlohmann::json> configs;
  // The runs of one arm, in seed order.
  std::vector<const RunDirectory*> of(const std::string& arm) const;
};
ReproRuns collect_repro_runs(const ReproPlan& plan, const std::string& runs_dir);

}  // namespace attn
