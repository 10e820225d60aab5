// The claim-by-claim table of `attnlab reproduce` (app/cli/cli_reproduce.cpp). Each paper's
// repro.json lists the claims taken from its seed document under "claims"; each becomes one row:
// the claim, the paper's number, ours (mean ± sd over seeds), whether the setting is the
// paper's, and the verdict.
//
// A claim (JSON object):
//   "claim"    what the paper says, in one sentence
//   "paper"    the paper's number(s) and where they are ("Table 1: 6.33 vs 6.57")
//   "setting"  "same" or what differs ("no: character LM on fortunes, 64 wide, ...")
//   "kind"     better     arm beats `than` on `metric` (lower loss, higher accuracy, ...):
//                         held; did not hold; or not resolved when the difference of the means
//                         is within the seeds' spread (root of the summed variances)
//              within     |arm - than| <= `tolerance` on `metric`
//              ratio_at_most / ratio_at_least
//                         arm / than on `metric` against `value` (parameter and cost claims)
//              at_most    arm's `metric` <= `value` (e.g. final_spectral_radius <= 0.95)
//   "metric"   eval_loss | eval_accuracy | parameters | attention_parameters | steps_per_second |
//              peak_rss_mib | final_spectral_radius (conn runs: summary.json's conn section)
//   "arm", "than"  group names of the plan
// Throws attn::Error naming the claim's index and key when the manifest is malformed; a claim
// whose arm did not finish is reported "not checked".
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/runs/run_dir.h"
#include "core/training/headless/sweep.h"

namespace attn {

struct ClaimResult {
  std::string claim, paper, ours, setting;
  std::string verdict;  // "held" | "did not hold" | "not resolved" | "not checked"
};

// Checks the manifest's claims against the plan's groups (throws attn::Error on a malformed
// claim or an arm the plan does not have), before anything trains.
void validate_claims(const nlohmann::json& claims, const std::vector<std::string>& groups);

std::vector<ClaimResult> evaluate_claims(const nlohmann::json& claims,
                                         const std::vector<GroupSummary>& groups,
                                         const std::vector<RunDirectory>& runs);

// "| claim | the paper | ours | same setting? | verdict |" with one row per claim.
std::string claims_markdown(const std::vector<ClaimResult>& results);
nlohmann::json claims_json(const std::vector<ClaimResult>& results);

}  // namespace attn
