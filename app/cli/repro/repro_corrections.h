// The corrections a reproduction's verdicts get beyond each claim's own 95% interval
// (repro_claims.h): the looks taken before the seeds were complete, Holm's adjustment over the
// paper's claims, and the arms that did not learn. Rules from repro.json:
//
//   "looks" [{"at": commit, "note": why, "seeds": {arm: count}, "rounds": count}]
//       every earlier report that was read before seeds (or benchmark rounds) were added, in
//       order: the counts each named arm had then (arms not named: as now; "rounds": the
//       benchmark's rounds then, default as now). A claim's looks are the distinct sets of its
//       values those counts give (the first seeds in seed order, the first rounds), then this
//       report's; a look that saw the same values as a later one is not counted twice.
//   "learned" [{"arms": [names], "metric": "eval_accuracy" | "eval_loss", "above" | "below":
//       number, "why": how the floor was set}]: an arm learned when the mean of the metric over
//       its finished seeds is above (below) the floor. An arm without a floor counts as learned.
//
// Sequential correction: Bonferroni over looks, p_looks = min(1, looks x p_raw), and the
// interval at level 1 - 0.05 / looks. Valid whatever rule chose when to add seeds, and
// conservative. Multiplicity: Holm's step-down over the paper's measured claims that are
// testable (counted claims are exact and take no part). Verdict: the interval's side when
// p_holm < 0.05, else "not resolved"; a claim on eval_loss or eval_accuracy with an arm that did
// not learn: "not testable: ARM did not learn" (claims on counts, the spectral radius and the
// benchmark are properties of the weights and the kernels, not of learning: no floor applies).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/cli/repro/repro_claims.h"

namespace attn {

// Checks repro.json's "looks" and "learned" against the arm names (attn::Error naming the key).
void validate_claim_rules(const nlohmann::json& manifest, const std::vector<std::string>& arms);

// Fills looks, p_looks, lo_looks/hi_looks, testable/why, p_holm and the corrected verdict of
// every claim (in place), keeping each claim's uncorrected verdict in `uncorrected`.
void correct_claims(std::vector<ClaimResult>& claims, const nlohmann::json& claim_specs,
                    const ReproRuns& runs, const nlohmann::json& rules);

}  // namespace attn
