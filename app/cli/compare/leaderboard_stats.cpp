#include "app/cli/compare/leaderboard_stats.h"

#include <algorithm>
#include <cmath>

#include "core/analysis/statistics.h"
#include "core/config/config.h"

namespace attn {
using nlohmann::json;

namespace {

json interval_json(const Interval& i) {
  return std::isfinite(i.lo) && std::isfinite(i.hi) ? json::array({i.lo, i.hi}) : json(nullptr);
}

std::vector<double> numbers(const json& a) {
  std::vector<double> out;
  if (a.is_array())
    for (const auto& v : a) out.push_back(v.is_number() ? v.get<double>() : NAN);
  return out;
}

json clamped(const json& ci) {
  if (!ci.is_array() || ci.size() != 2 || !ci[0].is_number()) return ci;
  return interval_json(clamp_interval({ci[0].get<double>(), ci[1].get<double>()}, 0, 1));
}

// The chosen rate strictly inside the finished rates tried (not the lowest or highest). A rate
// that diverged counts: it bounds the choice as a worse one does, and the chooser
// (tuned_arms.h's extend_lr_choice) stops growing the grid there, by the same rule.
json lr_interior(const json& cell) {
  if (!cell.value("lr_chosen", json()).is_number()) return nullptr;
  const double chosen = cell["lr_chosen"].get<double>();
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& t : cell.value("lr_grid", json::array()))
    if (t.value("finished", true) && t.contains("lr")) {
      lo = std::min(lo, t["lr"].get<double>());
      hi = std::max(hi, t["lr"].get<double>());
    }
  return chosen > lo && chosen < hi;
}

json eval_sequences(const SuitePlan& plan, const json& cell) {
  for (const auto& p : plan.pairs)
    if (plan.tasks[p.task].name == cell["task"] &&
        plan.mechanisms[p.mechanism].name == cell["mechanism"]) {
      const ExperimentConfig c = parse_config(p.config, p.dir);
      return c.train.eval_batches * c.train.batch_size;
    }
  return nullptr;
}

// Length extrapolation over the seeds that solved at the training length only.
void solved_lengths(json& cell, const std::vector<bool>& solved, double threshold) {
  for (auto& l : cell["length_eval"]) {
    if (!l.contains("values")) continue;
    if (!l.contains("values_all")) l["values_all"] = l["values"];
    const std::vector<double> all = numbers(l["values_all"]);
    std::vector<double> kept;
    for (size_t i = 0; i < all.size() && i < solved.size(); ++i)
      if (solved[i]) kept.push_back(all[i]);
    const MeanInterval m = mean_interval(kept);
    l["seeds_solved"] = kept.size();
    l["values"] = kept;
    l["mean"] = m.n ? json(m.mean) : json(nullptr);
    l["ci95"] = interval_json(clamp_interval({m.lo, m.hi}, 0, 1));
    const int k = static_cast<int>(
        std::count_if(kept.begin(), kept.end(), [&](double v) { return v >= threshold; }));
    l["solved"] = k;
    l["ci95_exact"] = kept.empty() ? json(nullptr) : interval_json(clopper_pearson(k, kept.size()));
  }
}

void analyze_cell(json& cell, const SuitePlan& plan, double threshold, bool stale) {
  const std::vector<double> values = numbers(cell.value("values", json::array()));
  std::vector<bool> solved;
  for (double v : values) solved.push_back(v >= threshold);
  const int k = static_cast<int>(std::count(solved.begin(), solved.end(), true));
  const int n = static_cast<int>(values.size());
  cell["solved"] = k;
  cell["n"] = n;
  cell["threshold"] = threshold;
  cell["ci95_exact"] = n ? interval_json(clopper_pearson(k, n)) : json(nullptr);
  if (cell.contains("ci95")) cell["ci95"] = clamped(cell["ci95"]);
  cell["lr_interior"] = lr_interior(cell);
  // A stale board (made under another manifest) keeps the eval set size it was made with.
  if (!stale || !cell.contains("eval_sequences"))
    cell["eval_sequences"] = eval_sequences(plan, cell);
  if (cell.contains("length_eval")) solved_lengths(cell, solved, threshold);
}

const json* cell_of(const json& board, const json& task, const std::string& mechanism) {
  for (const auto& c : board["cells"])
    if (c["task"] == task && c["mechanism"] == mechanism) return &c;
  return nullptr;
}

std::string reference_of(const json& board) {
  if (board.contains("reference") && board["reference"].is_string())
    return board["reference"].get<std::string>();
  for (const auto& m : board["mechanisms"])
    if (m["name"] == "dot-rope") return "dot-rope";
  return board["mechanisms"].empty() ? "" : board["mechanisms"][0]["name"].get<std::string>();
}

}  // namespace

void analyze_leaderboard(json& board, const SuitePlan& plan) {
  const double threshold = board.value("threshold", plan.threshold);
  const bool stale = board.contains("stale");
  for (auto& cell : board["cells"]) analyze_cell(cell, plan, threshold, stale);
  const std::string ref = reference_of(board);
  json comparisons = json::array();
  std::vector<double> p;
  for (auto& t : board["tasks"]) {
    const json* r = cell_of(board, t["name"], ref);
    const int rk = r ? r->value("solved", 0) : 0, rn = r ? r->value("n", 0) : 0;
    t["reference"] = ref;
    t["reference_solved"] = {rk, rn};
    t["learned_at_budget"] = rn > 0 && rk >= kLearnedShare * rn - 1e-9;
    if (!t["learned_at_budget"].get<bool>()) continue;
    for (const auto& c : board["cells"]) {
      if (c["task"] != t["name"] || c["mechanism"] == ref || c.value("n", 0) == 0) continue;
      const double pf = fisher_exact_two_sided(c["solved"], c["n"], rk, rn);
      p.push_back(pf);
      comparisons.push_back({{"task", t["name"]},
                             {"mechanism", c["mechanism"]},
                             {"against", ref},
                             {"solved", {c["solved"], c["n"]}},
                             {"against_solved", {rk, rn}},
                             {"p_fisher", pf}});
    }
  }
  const std::vector<double> holm = holm_adjust(p);
  for (size_t i = 0; i < comparisons.size(); ++i) comparisons[i]["p_holm"] = holm[i];
  board["comparisons"] = comparisons;
}

}  // namespace attn
