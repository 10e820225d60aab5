// Runs that differ only by their seed, grouped: what a researcher means by "one arm, several
// seeds". Used by `attnlab compare` (mean ± sd per group, the paired interval between groups)
// and the Runs and Compare panels (a mean curve with a band). Torch-free.
// Contract:
//  - Two runs share a group when their resolved configs are equal once the seed, the name and
//    the device/threads are set aside (config_hash of that reduced config).
//  - Groups keep the order of their first run; members keep the order given.
//  - mean_curve() averages the members' series step by step over the steps every member has
//    (a run that stopped early shortens the curve rather than bending it); the band is the
//    sample sd or the 95% t-interval of the mean at each step (NaN below two members).
#pragma once
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/runs/directory/run_dir.h"

namespace attn {

std::string seed_group_key(const ExperimentConfig& config);

struct SeedGroup {
  std::string key;
  std::vector<size_t> members;  // indices into the runs given
};
std::vector<SeedGroup> group_by_seed(const std::vector<const RunDirectory*>& runs);

enum class BandKind { sd, ci95 };
struct MeanCurve {
  std::vector<double> steps, mean, lo, hi;
  int members = 0;
};
// `series`: one of the members' series (train_loss, eval_loss, eval_accuracy).
MeanCurve mean_curve(const std::vector<const RunDirectory*>& runs, const SeedGroup& group,
                     Series RunDirectory::*series, BandKind band);

}  // namespace attn
