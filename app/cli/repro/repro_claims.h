// The claim-by-claim verdicts of `attnlab reproduce` (app/cli/repro/cli_reproduce.cpp). Each
// paper's repro.json lists the claims taken from its seed document under "claims"; each becomes one
// row with an interval and a verdict.
//
// A claim (JSON object):
//   "claim"    what the paper says, in one sentence
//   "paper"    the paper's number(s) and where they are ("Table 1: 6.33 vs 6.57")
//   "setting"  "same" or what differs ("no: character LM on fortunes, 64 wide, ...")
//   "kind"     better          arm beats `than` on `metric` (lower loss, higher accuracy, ...)
//              within          |arm - than| <= `tolerance` on `metric`
//              ratio_at_most / ratio_at_least
//                              arm / than on `metric` against `value`
//              at_most         arm's `metric` <= `value` (e.g. final_spectral_radius <= 0.95)
//   "metric"   from the runs:  eval_loss | eval_accuracy | final_spectral_radius (conn runs) |
//                              steps_to_loss (the first evaluated step at which a run's eval
//                              loss is at most "loss_threshold": a loss, or "common", the
//                              default: the higher of the two arms' mean final eval losses; a
//                              run that never reaches it counts as its last step plus one
//                              evaluation interval, said in the figures; lower is better; the
//                              learned floors apply as to eval_loss)
//              counted:        parameters | attention_parameters (exact; no interval needed),
//                              and the same "_at_paper_size" (repro.json's paper_size, by
//                              formula: repro_plan.h)
//              benchmarked:    steps_per_second | memory_increment_mib (repro_bench.h, one
//                              value per round; never the training runs' own figures)
//              swept:          sweep_seconds_per_step | sweep_memory_mib (at "at") and
//                              sweep_time_slope | sweep_memory_slope (log-log, per round) from
//                              repro.json's "scaling" sweep named "sweep" (repro_scaling.h);
//                              "arm" and "than" then name the sweep's arms; "than_at" (default
//                              "at") compares an arm at two values of the swept key
//   "arm", "than"  arm names of repro.json
//   "paper_at" optional: {arm: {config key: the paper's value}} for the claim's arms, e.g.
//              {"fortunes-neural": {"task.context": 1024}}. Where an arm's resolved config
//              differs, the verdict line says "not tested at the paper's setting (context 64
//              vs 1,024)" (report.json: "away"), whatever the verdict.
//   "path"     benchmarked metrics only: "libtorch" (every arm on LibTorch ops) or "as_trained"
//              (fused kernels where an arm has them). Default: as_trained when both arms took a
//              fused kernel, else libtorch, so the two sides are equally optimised.
// Statistics: runs are paired by seed (the same seed gives arms the same data order), benchmark
// figures by round. The interval is the 95% t-interval of the mean paired difference (Welch's
// when fewer than two seeds pair), with the exact sign-flip permutation p beside it as a check;
// ratio kinds use the mean of the log ratios, exponentiated. Every verdict turns on one boundary
// (verdict.h): p_raw is the t-test's p against it. Corrections (repro_corrections.h): p_looks =
// p_raw x the claim's looks (Bonferroni over looks), p_holm = Holm's adjustment of p_looks over the
// paper's testable measured claims; the verdict is the interval's side when p_holm < 0.05, else
// not resolved. A claim on eval_loss or eval_accuracy whose arm did not learn (repro.json's
// "learned" floors) is "not testable: ARM did not learn". Uncorrected, the verdicts are:
//   better   held when the interval excludes zero in the claimed direction, did not hold when it
//            excludes zero the other way, else not resolved;
//   within   held when the interval lies inside [-tolerance, tolerance], did not hold when it
//            lies wholly outside it, else not resolved;
//   ratio_*  held / did not hold when the interval lies wholly on one side of `value`;
//   at_most  the same for the arm's own interval against `value`.
// A "not resolved" row says how many seeds (pairs) would resolve it if the mean and spread
// stayed as observed. Fewer than 2 values leave it not resolved. A claim whose arm has no
// finished run is "not checked".
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/cli/repro/repro_bench.h"
#include "app/cli/repro/repro_plan.h"
#include "app/cli/repro/repro_scaling.h"
#include "core/analysis/verdict.h"

namespace attn {

struct ClaimResult {
  std::string claim, paper, setting, kind, metric, arm, than;
  std::string ours;     // the figures in words
  std::string verdict;  // "held" | "did not hold" | "not resolved" | "not checked" |
                        // "not testable: ARM did not learn"
  std::string source;   // "runs, paired by seed", "benchmark, LibTorch ops", "parameter count"
  // The judged interval (core/analysis/verdict.h): judged.n the pairs (or values) it rests on;
  // judged.estimate for better/within the mean of arm - than, for ratio kinds the ratio
  // arm / than, for at_most the arm's mean; judged.lo/hi its 95% t-interval; judged.p_value
  // against no difference (ratio: 1); judged.boundary and judged.p_decisive (written as p_raw)
  // the value the verdict turns on and the t-test's p against it; judged.p_permutation the exact
  // sign-flip p; judged.direction the verdict when the boundary is excluded;
  // judged.seeds_to_resolve (not resolved only; 0 when it cannot say). A counted claim sets n 1
  // and estimate = lo = hi = the count's difference or ratio.
  Verdict judged;
  // The corrections (repro_corrections.h). uncorrected: the 95% interval's own verdict, before
  // looks, Holm and the learned floors.
  std::string uncorrected;
  double p_looks = NAN;                   // min(1, p_raw x looks)
  double p_holm = NAN;                    // Holm over the paper's testable measured claims' p_looks
  double lo_looks = NAN, hi_looks = NAN;  // the 1 - 0.05 / looks interval
  struct Look {
    int seeds = 0;   // pairs (rounds, values) the look's interval rested on
    double p = NAN;  // its p_raw
    std::string at;  // the commit that added seeds after it, or "this report"
  };
  std::vector<Look> looks;
  bool testable = true;
  std::string why;  // when not testable
  // Where the claim's arms differ from the paper's setting (the claim's "paper_at"):
  // "context 64 vs 1,024"; empty when it names none or every key matches.
  std::string away;
  // Internal: the judged values (not written out).
  KeyedValues a_values, b_values;
};

// The verdict of claim `c` (its kind, metric, value or tolerance) on values a and b.
Verdict judge_claim_values(const nlohmann::json& c, const KeyedValues& a, const KeyedValues& b);

// Checks the manifest's claims against the arm names before anything trains (throws attn::Error
// naming the claim's index and key). bench_arms: the arms the benchmark measures.
// scaling: the resolved "scaling" spec (repro_scaling.h; null when none).
void validate_claims(const nlohmann::json& claims, const std::vector<std::string>& arms,
                     const std::vector<std::string>& bench_arms,
                     const nlohmann::json& scaling = nlohmann::json());

// The claims' verdicts, corrected: `rules` is repro.json itself (its "looks" and "learned", or
// an object without them, as --quick passes: repro_corrections.h).
// scaling: the sweeps' results (null until scaling.json exists: their claims "not checked").
std::vector<ClaimResult> evaluate_claims(const nlohmann::json& claims, const ReproRuns& runs,
                                         const ReproBench* bench, const nlohmann::json& rules,
                                         const ScalingResults* scaling = nullptr);

// "| claim | the paper | ours | 95% interval | p | looks | same setting? | verdict |", one row per
// claim.
std::string claims_markdown(const std::vector<ClaimResult>& results);
// [{"claim", "paper", "setting", "kind", "metric", "arms": [a, b], "paired", "seeds",
//   "difference", "ci95": [lo, hi], "p_value", "boundary", "p_raw", "p_permutation", "p_looks",
//   "p_holm", "ci_looks", "looks": [{"seeds", "p", "at"}], "testable", "why", "verdict",
//   "verdict_uncorrected", "source", "seeds_to_resolve", "ours", and for steps_to_loss "values":
//   {arm: {seed: steps}}, which the arms' seed records do not carry}]; unknown numbers are null.
nlohmann::json claims_json(const std::vector<ClaimResult>& results);

}  // namespace attn
