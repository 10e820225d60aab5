#include "app/cli/repro/repro_corrections.h"

#include <algorithm>
#include <cmath>

#include "app/cli/cli.h"
#include "core/analysis/statistics.h"
#include "core/base/error.h"

namespace attn {
using nlohmann::json;

namespace {

constexpr double kAlpha = 0.05;

bool is_arm(const std::vector<std::string>& arms, const std::string& name) {
  return std::find(arms.begin(), arms.end(), name) != arms.end();
}

void validate_looks(const json& looks, const std::vector<std::string>& arms) {
  if (!looks.is_array()) throw Error("repro.json looks must be a list");
  for (size_t i = 0; i < looks.size(); ++i) {
    const std::string where = "repro.json looks[" + std::to_string(i) + "]";
    const json& l = looks[i];
    if (!l.is_object()) throw Error(where + " must be an object");
    const json seeds = l.value("seeds", json::object());
    for (const auto& [arm, n] : seeds.items())
      if (!is_arm(arms, arm) || !n.is_number_integer() || n.get<int>() < 1)
        throw Error(where + ".seeds." + arm + ": needs an arm of repro.json and a count >= 1");
    if (l.contains("rounds") && (!l["rounds"].is_number_integer() || l["rounds"].get<int>() < 1))
      throw Error(where + ".rounds must be an integer >= 1");
  }
}

void validate_learned(const json& learned, const std::vector<std::string>& arms) {
  if (!learned.is_array()) throw Error("repro.json learned must be a list");
  for (size_t i = 0; i < learned.size(); ++i) {
    const std::string where = "repro.json learned[" + std::to_string(i) + "]";
    const json& f = learned[i];
    if (!f.is_object() || !f.contains("arms") || !f["arms"].is_array())
      throw Error(where + " must be an object with \"arms\" (a list of arm names)");
    for (const auto& a : f["arms"])
      if (!a.is_string() || !is_arm(arms, a.get<std::string>()))
        throw Error(where + ".arms: " + a.dump() + " is not an arm of repro.json");
    const std::string metric = f.value("metric", "");
    if (metric != "eval_accuracy" && metric != "eval_loss")
      throw Error(where + ".metric must be \"eval_accuracy\" or \"eval_loss\"");
    if (f.contains("above") == f.contains("below") ||
        !f.value(f.contains("above") ? "above" : "below", json()).is_number())
      throw Error(where + " needs one number: \"above\" (accuracy) or \"below\" (loss)");
  }
}

// The first n values in key order (the first seeds, the first rounds).
KeyedValues first(const KeyedValues& v, size_t n) {
  KeyedValues out;
  for (const auto& [k, x] : v) {
    if (out.size() >= n) break;
    out[k] = x;
  }
  return out;
}

// The claim's looks: each recorded earlier look's counts, then this report's; repeats dropped.
void fill_looks(ClaimResult& r, const json& spec, const json& looks) {
  const bool bench = r.source.rfind("benchmark", 0) == 0;
  const size_t na = r.a_values.size(), nb = r.b_values.size();
  std::vector<ClaimResult::Look> out;
  // A look that judged the same values as a later one (paired seeds beyond the other arm's
  // count add nothing) is that one: the same n and p.
  auto add = [&](size_t a, size_t b, const std::string& at) {
    const Verdict v = judge_claim_values(spec, first(r.a_values, std::min(a, na)),
                                         first(r.b_values, std::min(b, nb)));
    for (size_t i = 0; i < out.size(); ++i)
      if (out[i].seeds == v.n &&
          (out[i].p == v.p_decisive || (std::isnan(out[i].p) && std::isnan(v.p_decisive)))) {
        out.erase(out.begin() + i);
        break;
      }
    out.push_back({v.n, v.p_decisive, at});
  };
  for (const json& l : looks) {
    const json seeds = l.value("seeds", json::object());
    const std::string at = l.value("at", "");
    if (bench) {
      const size_t rounds = l.value("rounds", static_cast<int>(std::max(na, nb)));
      add(rounds, rounds, at);
    } else {
      add(seeds.value(r.arm, static_cast<int>(na)),
          r.than.empty() ? 0 : seeds.value(r.than, static_cast<int>(nb)), at);
    }
  }
  add(na, nb, "this report");
  r.looks = out;
}

// Why `arm` did not learn by the floors ("" when it learned or has no floor).
std::string not_learned(const std::string& arm, const ReproRuns& runs, const json& learned) {
  for (const json& f : learned) {
    const auto& arms = f["arms"];
    if (std::find(arms.begin(), arms.end(), arm) == arms.end()) continue;
    const std::string metric = f["metric"];
    std::vector<double> v;
    for (const RunDirectory* run : runs.of(arm))
      if (run->finished && !run->summary.value("diverged", false) &&
          run->summary.contains(metric) && run->summary[metric].is_number())
        v.push_back(run->summary[metric].get<double>());
    if (v.empty()) continue;
    const MeanInterval m = mean_interval(v);
    const bool above = f.contains("above");
    const double floor = f[above ? "above" : "below"].get<double>();
    if (above ? m.mean > floor : m.mean < floor) continue;
    return arm + " did not learn: " + metric + " " + fixed_number(m.mean, 4) + " (mean of " +
           std::to_string(m.n) + " seeds) is not " + (above ? "above" : "below") + " its floor " +
           fixed_number(floor, 3) + " (" + f.value("why", std::string("repro.json learned")) + ")";
  }
  return "";
}

void fill_testable(ClaimResult& r, const ReproRuns& runs, const json& learned) {
  if (r.metric != "eval_accuracy" && r.metric != "eval_loss" && r.metric != "steps_to_loss") return;
  for (const std::string& arm : {r.arm, r.than}) {
    if (arm.empty()) continue;
    if (std::string why = not_learned(arm, runs, learned); !why.empty()) {
      r.testable = false;
      r.why = why;
      r.verdict = "not testable: " + arm + " did not learn";
      return;
    }
  }
}

}  // namespace

void validate_claim_rules(const json& manifest, const std::vector<std::string>& arms) {
  if (manifest.contains("looks")) validate_looks(manifest["looks"], arms);
  if (manifest.contains("learned")) validate_learned(manifest["learned"], arms);
}

void correct_claims(std::vector<ClaimResult>& claims, const json& claim_specs,
                    const ReproRuns& runs, const json& rules) {
  const json looks = rules.value("looks", json::array());
  const json learned = rules.value("learned", json::array());
  std::vector<double> family(claims.size(), NAN);
  for (size_t i = 0; i < claims.size(); ++i) {
    ClaimResult& r = claims[i];
    r.uncorrected = r.verdict;
    if (r.verdict == "not checked") continue;
    if (r.source.rfind("parameter count", 0) == 0) {  // counted: exact, one look, no p
      r.looks.push_back({r.judged.n, NAN, "this report"});
      continue;
    }
    fill_looks(r, claim_specs[i], looks);
    const double k = static_cast<double>(r.looks.size());
    const double p_raw = r.judged.p_decisive;
    r.p_looks = std::isfinite(p_raw) ? std::min(1.0, k * p_raw) : NAN;
    interval_at_level(r.judged, 1 - kAlpha / k, r.kind.rfind("ratio", 0) == 0, &r.lo_looks,
                      &r.hi_looks);
    fill_testable(r, runs, learned);
    if (r.testable) family[i] = r.p_looks;
  }
  const std::vector<double> holm = holm_adjust(family);
  for (size_t i = 0; i < claims.size(); ++i) {
    ClaimResult& r = claims[i];
    if (!std::isfinite(holm[i])) continue;
    r.p_holm = holm[i];
    r.verdict = r.p_holm < kAlpha ? r.judged.direction : "not resolved";
  }
}

}  // namespace attn
