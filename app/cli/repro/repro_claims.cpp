#include "app/cli/repro/repro_claims.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>

#include "app/cli/cli.h"
#include "app/cli/repro/repro_corrections.h"
#include "core/analysis/statistics.h"
#include "core/analysis/verdict.h"
#include "core/base/error.h"
#include "core/json/json_path.h"
#include "core/json/json_reader.h"

namespace attn {
using nlohmann::json;

namespace {

const std::vector<std::string> kKinds = {"better", "within", "ratio_at_most", "ratio_at_least",
                                         "at_most"};
const std::vector<std::string> kRunMetrics = {"eval_loss", "eval_accuracy", "final_spectral_radius",
                                              "steps_to_loss"};
const std::vector<std::string> kCountMetrics = {"parameters", "attention_parameters",
                                                "parameters_at_paper_size",
                                                "attention_parameters_at_paper_size"};
const std::vector<std::string> kBenchMetrics = {"steps_per_second", "memory_increment_mib"};

bool one_of(const std::string& v, const std::vector<std::string>& allowed) {
  return std::find(allowed.begin(), allowed.end(), v) != allowed.end();
}

bool larger_is_better(const std::string& metric) {
  return metric == "eval_accuracy" || metric == "steps_per_second";
}

int precision_of(const std::string& metric) {
  if (one_of(metric, kCountMetrics) || metric == "steps_to_loss") return 0;
  if (one_of(metric, kBenchMetrics)) return 2;
  return 4;
}

std::string string_key(const json& c, const char* key, size_t index, bool required = true) {
  const std::string where = "repro.json claims[" + std::to_string(index) + "]." + key;
  if (!c.contains(key)) {
    if (required) throw Error(where + " is missing");
    return "";
  }
  if (!c.at(key).is_string()) throw Error(where + " must be a string, got " + c.at(key).dump());
  return c.at(key).get<std::string>();
}

double number_key(const json& c, const char* key, size_t index) {
  const std::string where = "repro.json claims[" + std::to_string(index) + "]." + key;
  if (!c.contains(key) || !c.at(key).is_number())
    throw Error(where + " must be a number for kind \"" + c.value("kind", "") + "\"");
  return c.at(key).get<double>();
}

// An arm's values keyed by seed (runs) or by round (benchmark).
using Keyed = KeyedValues;

Keyed run_values(const ReproRuns& runs, const std::string& arm, const std::string& metric,
                 int* diverged) {
  Keyed out;
  for (const RunDirectory* r : runs.of(arm)) {
    if (!r->finished) continue;
    const json& s = r->summary;
    if (s.value("diverged", false)) {
      ++*diverged;
      continue;
    }
    double v = NAN;
    if (metric == "final_spectral_radius") {
      if (s.contains("conn")) v = s["conn"].value("spectral_radius", NAN);
    } else if (s.contains(metric) && s[metric].is_number()) {
      v = s[metric].get<double>();
    }
    if (std::isfinite(v)) out[static_cast<long long>(r->config.seed)] = v;
  }
  return out;
}

std::vector<double> values_of(const Keyed& k) {
  std::vector<double> out;
  for (const auto& [key, v] : k) out.push_back(v);
  return out;
}

Keyed bench_keyed(const ArmBench& a, const std::string& metric, const std::string& path) {
  Keyed out;
  const auto v = bench_values(a, metric, path);
  for (size_t i = 0; i < v.size(); ++i) out[static_cast<long long>(i)] = v[i];
  return out;
}

// "paper_at": {arm: {config key: value}}, the arms among the claim's own.
void validate_paper_at(const json& at, const std::vector<std::string>& named,
                       const std::string& where) {
  if (!at.is_object())
    throw Error(where + ".paper_at must be an object {arm: {config key: the paper's value}}");
  for (const auto& [arm, keys] : at.items()) {
    if (!one_of(arm, named))
      throw Error(where + ".paper_at names \"" + arm + "\", not one of the claim's arms (" +
                  join_names(named) + ")");
    if (!keys.is_object() || keys.empty())
      throw Error(where + ".paper_at." + arm + " must be a non-empty object {config key: value}");
    for (const auto& [key, value] : keys.items())
      if (!value.is_primitive() || value.is_null())
        throw Error(where + ".paper_at." + arm + "." + key + " must be a number, string or bool");
  }
}

// A value as the verdict line writes it: integers with thousands separators (1,024).
std::string setting_text(const json& v) {
  if (v.is_number_integer() || (v.is_number() && v.get<double>() == std::floor(v.get<double>()) &&
                                std::fabs(v.get<double>()) < 1e15)) {
    std::string digits = std::to_string(std::llround(v.get<double>()));
    for (int i = static_cast<int>(digits.size()) - 3; i > (digits[0] == '-' ? 1 : 0); i -= 3)
      digits.insert(static_cast<size_t>(i), ",");
    return digits;
  }
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string setting_label(const std::string& key) {
  static const std::map<std::string, std::string> labels = {{"task.context", "context"},
                                                            {"model.d_model", "D"},
                                                            {"model.layers", "L"},
                                                            {"model.conn.slots", "N"}};
  const auto it = labels.find(key);
  return it != labels.end() ? it->second : key;
}

// "context 64 vs 1,024; D 64 vs 512": where the claim's arms differ from its "paper_at".
std::string away_from_paper(const json& c, const ReproRuns& runs) {
  if (!c.contains("paper_at")) return "";
  std::vector<std::string> parts;
  for (const auto& [arm, keys] : c["paper_at"].items()) {
    const auto it = runs.configs.find(arm);
    if (it == runs.configs.end()) continue;
    for (const auto& [key, paper] : keys.items()) {
      const json ours = get_dotted(it->second, key);
      if (ours == paper) continue;
      const std::string part = setting_label(key) + " " +
                               (ours.is_null() ? "(absent)" : setting_text(ours)) + " vs " +
                               setting_text(paper);
      if (!one_of(part, parts)) parts.push_back(part);
    }
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

}  // namespace

namespace {

// A claim on a scaling sweep (repro_scaling.h): the sweep exists, the arms are its arms, the kind
// fits the metric and "at" names one of its values.
void validate_sweep_claim(const json& c, const json& scaling, const std::string& where) {
  const std::string metric = c.at("metric"), kind = c.at("kind");
  const std::string name =
      c.contains("sweep") && c["sweep"].is_string() ? c["sweep"].get<std::string>() : "";
  const json* sweep = nullptr;
  if (scaling.is_array())
    for (const auto& e : scaling)
      if (e.value("name", "") == name) sweep = &e;
  if (!sweep)
    throw Error(where + ".sweep must name one of repro.json's \"scaling\" sweeps, got " +
                (c.contains("sweep") ? c["sweep"].dump() : std::string("nothing")));
  std::vector<std::string> names;
  for (const auto& a : (*sweep)["arms"]) names.push_back(a["name"]);
  for (const char* key : {"arm", "than"})
    if (c.contains(key) && !one_of(c[key].get<std::string>(), names))
      throw Error(where + "." + key + " \"" + c[key].get<std::string>() +
                  "\" is not an arm of sweep " + name + " (" + join_names(names) + ")");
  const bool slope = metric.find("slope") != std::string::npos;
  if (slope != (kind == "at_most"))
    throw Error(where + ": a slope claim has kind at_most, a per-point claim a ratio kind (" +
                metric + ", " + kind + ")");
  if (slope) return;
  const json& values = (*sweep)["values"];
  for (const char* key : {"at", "than_at"})
    if ((c.contains(key) || std::string(key) == "at") &&
        std::find(values.begin(), values.end(), c.value(key, json())) == values.end())
      throw Error(where + "." + key + " must be one of sweep " + name + "'s values " +
                  values.dump());
}

}  // namespace

void validate_claims(const json& claims, const std::vector<std::string>& arms,
                     const std::vector<std::string>& bench_arms, const json& scaling) {
  if (claims.is_null()) return;
  if (!claims.is_array()) throw Error("repro.json claims must be an array");
  std::vector<std::string> metrics = kRunMetrics;
  metrics.insert(metrics.end(), kCountMetrics.begin(), kCountMetrics.end());
  metrics.insert(metrics.end(), kBenchMetrics.begin(), kBenchMetrics.end());
  metrics.insert(metrics.end(), sweep_metrics().begin(), sweep_metrics().end());
  for (size_t i = 0; i < claims.size(); ++i) {
    const json& c = claims[i];
    const std::string where = "repro.json claims[" + std::to_string(i) + "]";
    if (!c.is_object()) throw Error(where + " must be an object");
    for (const char* key : {"claim", "paper", "setting", "kind", "metric", "arm"})
      string_key(c, key, i);
    const std::string kind = c.at("kind"), metric = c.at("metric");
    if (!one_of(kind, kKinds))
      throw Error(where + ".kind \"" + kind + "\": allowed: " + join_names(kKinds));
    if (!one_of(metric, metrics))
      throw Error(where + ".metric \"" + metric + "\": allowed: " + join_names(metrics) +
                  (metric == "peak_rss_mib" ? " (memory claims come from the benchmark: "
                                              "memory_increment_mib)"
                                            : ""));
    std::vector<std::string> named = {c.at("arm")};
    if (kind != "at_most") named.push_back(string_key(c, "than", i));
    if (one_of(metric, sweep_metrics())) {
      validate_sweep_claim(c, scaling, where);
      if (kind == "at_most") number_key(c, "value", i);
      continue;
    }
    for (const auto& a : named) {
      if (!one_of(a, arms))
        throw Error(where + " names the arm \"" + a +
                    "\", which repro.json does not have (arms: " + join_names(arms) + ")");
      if (one_of(metric, kBenchMetrics) && !one_of(a, bench_arms))
        throw Error(where + ": metric " + metric +
                    " comes from the benchmark, which does not "
                    "measure arm \"" +
                    a + "\" (add it to repro.json's benchmark.arms)");
    }
    if (c.contains("path") && string_key(c, "path", i) != "libtorch" && c["path"] != "as_trained")
      throw Error(where + ".path must be \"libtorch\" or \"as_trained\"");
    if (c.contains("paper_at")) validate_paper_at(c["paper_at"], named, where);
    if (kind == "within") number_key(c, "tolerance", i);
    if (c.contains("loss_threshold") &&
        !(c["loss_threshold"] == "common" ||
          (c["loss_threshold"].is_number() && c["loss_threshold"].get<double>() > 0)))
      throw Error(where + ".loss_threshold must be \"common\" or a loss > 0, got " +
                  c["loss_threshold"].dump());
    if (metric == "steps_to_loss" && kind == "at_most")
      throw Error(where + ": steps_to_loss compares two arms (kind better, within or a ratio)");
    if (kind.rfind("ratio", 0) == 0 || kind == "at_most") number_key(c, "value", i);
    if (kind.rfind("ratio", 0) == 0 && kind != "at_most" && c.at("value").get<double>() <= 0)
      throw Error(where + ".value must be positive for a ratio");
  }
}

namespace {

// Both sides of a claim: the values keyed by seed (or benchmark round), the runs left out as
// diverged, and for a benchmark ratio the other path's point ratio.
struct ClaimSides {
  Keyed a, b;
  int diverged = 0;
  std::string path_note;
  std::string note;  // appended to the figures (steps_to_loss: the threshold, censored runs)
};

// steps_to_loss: each run's first evaluated step whose eval loss is at most the threshold: the
// claim's "loss_threshold", or ("common", the default) the larger of the two arms' mean final eval
// losses, the loss both arms reach on average, fixed by a rule before any curve is read. A run that
// never reaches it counts as its last evaluated step plus one evaluation interval (censored: the
// figures say how many), which can only shorten the slower arm's lead.
void steps_to_loss_sides(const json& c, const ReproRuns& runs, ClaimResult& r, ClaimSides& s) {
  double threshold = NAN;
  const json given = c.value("loss_threshold", json("common"));
  if (given.is_number()) {
    threshold = given.get<double>();
  } else {
    int ignored = 0;
    const Keyed la = run_values(runs, r.arm, "eval_loss", &ignored);
    const Keyed lb = run_values(runs, r.than, "eval_loss", &ignored);
    if (la.empty() || lb.empty()) return;  // "a run did not finish"
    threshold = std::max(mean_interval(values_of(la)).mean, mean_interval(values_of(lb)).mean);
  }
  int censored = 0;
  auto steps = [&](const std::string& arm) {
    Keyed out;
    for (const RunDirectory* run : runs.of(arm)) {
      if (!run->finished) continue;
      if (run->summary.value("diverged", false)) {
        ++s.diverged;
        continue;
      }
      const Series& e = run->eval_loss;
      if (e.empty()) continue;
      double at = NAN;
      for (size_t i = 0; i < e.values.size() && !std::isfinite(at); ++i)
        if (e.values[i] <= threshold) at = static_cast<double>(e.steps[i]);
      if (!std::isfinite(at)) {
        at = static_cast<double>(e.steps.back() + run->config.train.eval_every);
        ++censored;
      }
      out[static_cast<long long>(run->config.seed)] = at;
    }
    return out;
  };
  s.a = steps(r.arm);
  s.b = steps(r.than);
  s.note =
      "; threshold eval loss " + fixed_number(threshold, 4) +
      (given.is_number() ? "" : " (the higher arm mean)") +
      (censored ? ", " + std::to_string(censored) + " run(s) never reached it (censored)" : "");
}

// The benchmark's side of a claim on speed or memory; false when the benchmark has not run.
bool bench_sides(const json& c, const ReproBench* bench, ClaimResult& r, ClaimSides& s) {
  const ArmBench* x = bench ? bench->find(r.arm) : nullptr;
  const ArmBench* y = bench && !r.than.empty() ? bench->find(r.than) : nullptr;
  if (!x || (!r.than.empty() && !y)) return false;
  const std::string path = c.contains("path")                 ? c["path"].get<std::string>()
                           : x->fused() && (!y || y->fused()) ? "as_trained"
                                                              : "libtorch";
  s.a = bench_keyed(*x, r.metric, path);
  if (y) s.b = bench_keyed(*y, r.metric, path);
  r.source = "benchmark, " + std::string(path == "libtorch" ? "LibTorch ops on both sides"
                                                            : "as trained (fused kernels)");
  // The other path's point ratio, so a reader sees what the fused kernel changes.
  if (y && r.kind.rfind("ratio", 0) == 0) {
    const std::string other = path == "libtorch" ? "as_trained" : "libtorch";
    const Verdict o =
        judge_ratio(bench_keyed(*x, r.metric, other), bench_keyed(*y, r.metric, other), 1.0, true);
    if (o.n > 0 && (x->fused() || y->fused()))
      s.path_note = "; " + std::string(other == "libtorch" ? "LibTorch ops" : "as trained") + ": " +
                    fixed_number(o.estimate, 3);
  }
  return true;
}

// The values of both sides: from the benchmark, the parameter count at the paper's size, or the
// runs. False (with r.ours saying why) when a side has none yet.
bool claim_sides(const json& c, const ReproRuns& runs, const ReproBench* bench,
                 const ScalingResults* scaling, ClaimResult& r, ClaimSides& s) {
  if (one_of(r.metric, sweep_metrics())) {
    const ScalingSweep* w = scaling ? scaling->find(c.value("sweep", "")) : nullptr;
    if (!w) {
      r.ours = "the scaling benchmark has not run";
      return false;
    }
    const json at = c.value("at", json()), than_at = c.value("than_at", at);
    s.a = sweep_values(*w, r.arm, r.metric, at);
    if (!r.than.empty()) s.b = sweep_values(*w, r.than, r.metric, than_at);
    r.source = "scaling sweep " + w->name + " (" + w->key +
               (r.metric.find("slope") != std::string::npos
                    ? " " + w->values.dump() + ", log-log slope per round"
                    : " " + at.dump() + (than_at != at ? " vs " + than_at.dump() : "")) +
               ")";
  } else if (one_of(r.metric, kBenchMetrics)) {
    if (!bench_sides(c, bench, r, s)) {
      r.ours = "the benchmark has not run";
      return false;
    }
  } else if (r.metric.find("_at_paper_size") != std::string::npos) {
    auto count = [&](const std::string& arm) {
      Keyed k;
      const auto it = runs.paper_size.find(arm);
      if (it != runs.paper_size.end())
        k[0] = static_cast<double>(r.metric == "parameters_at_paper_size" ? it->second.total
                                                                          : it->second.attention);
      return k;
    };
    s.a = count(r.arm);
    if (!r.than.empty()) s.b = count(r.than);
    r.source = "parameter count at the paper's dimensions, by formula";
  } else if (r.metric == "steps_to_loss") {
    steps_to_loss_sides(c, runs, r, s);
  } else {
    s.a = run_values(runs, r.arm, r.metric, &s.diverged);
    if (!r.than.empty()) s.b = run_values(runs, r.than, r.metric, &s.diverged);
    if (one_of(r.metric, kCountMetrics)) r.source = "parameter count";
  }
  if (s.a.empty() || (!r.than.empty() && s.b.empty())) {
    r.ours = "a run did not finish";
    return false;
  }
  return true;
}

// Counted metrics are exact: the ratio or difference decides.
void judge_counted(const json& c, const ClaimSides& s, ClaimResult& r) {
  const bool ratio = r.kind.rfind("ratio", 0) == 0;
  const double value = c.value("value", NAN);
  const double x = s.a.begin()->second, y = s.b.empty() ? NAN : s.b.begin()->second;
  Verdict& v = r.judged;
  v.n = 1;
  if (r.kind == "at_most") {
    v.estimate = x;
    r.verdict = x <= value ? "held" : "did not hold";
  } else if (ratio) {
    v.estimate = x / y;
    r.verdict = (r.kind == "ratio_at_most" ? v.estimate <= value : v.estimate >= value)
                    ? "held"
                    : "did not hold";
  } else {
    v.estimate = x - y;
    const double tol = c.value("tolerance", 0.0);
    r.verdict = r.kind == "within" ? (std::fabs(v.estimate) <= tol ? "held" : "did not hold")
                : (larger_is_better(r.metric) ? v.estimate > 0 : v.estimate < 0) ? "held"
                                                                                 : "did not hold";
  }
  v.lo = v.hi = v.estimate;
  r.ours = r.arm + " " + fixed_number(x, 0) +
           (r.than.empty() ? "" : " vs " + r.than + " " + fixed_number(y, 0)) +
           (ratio ? "; ratio " + fixed_number(v.estimate, 3) : "");
}

}  // namespace

Verdict judge_claim_values(const json& c, const KeyedValues& a, const KeyedValues& b) {
  const std::string kind = c.at("kind"), metric = c.at("metric");
  const double value = c.value("value", NAN);
  if (kind == "at_most") return judge_at_most(a, value);
  if (kind.rfind("ratio", 0) == 0) return judge_ratio(a, b, value, kind == "ratio_at_most");
  if (kind == "better") return judge_better(a, b, larger_is_better(metric));
  return judge_within(a, b, c.at("tolerance").get<double>());
}

namespace {

// Measured metrics: the interval over seeds (or benchmark rounds) decides
// (core/analysis/verdict.h).
void judge_measured(const json& c, const ClaimSides& s, ClaimResult& r) {
  const int p = precision_of(r.metric);
  const bool ratio = r.kind.rfind("ratio", 0) == 0;
  const double value = c.value("value", NAN);
  const Verdict v = judge_claim_values(c, s.a, s.b);
  r.verdict = v.verdict;
  r.judged = v;
  const bool from_bench = !r.source.empty();
  if (!from_bench)
    r.source = r.kind == "at_most" ? "runs"
               : v.paired          ? "runs, paired by seed"
                                   : "runs, unpaired (Welch)";
  else if (v.paired)
    r.source += ", paired by round";
  const std::string div =
      (s.diverged ? " (" + std::to_string(s.diverged) + " diverged run(s) left out)"
                  : std::string()) +
      s.note;
  const MeanInterval xa = mean_interval(values_of(s.a));
  if (r.kind == "at_most") {
    r.ours = r.arm + " " + r.metric + " " + fixed_number(xa.mean, p) + " ± " +
             fixed_number(xa.sd, p) + " (" + std::to_string(xa.n) +
             (r.source.rfind("scaling", 0) == 0 ? " rounds" : " seeds") + "; bound " +
             fixed_number(value, 3) + ")" + div;
    return;
  }
  const MeanInterval yb = mean_interval(values_of(s.b));
  const std::string sides = r.arm + " " + fixed_number(xa.mean, p) + " ± " +
                            fixed_number(xa.sd, p) + " vs " + r.than + " " +
                            fixed_number(yb.mean, p) + " ± " + fixed_number(yb.sd, p);
  if (ratio)
    r.ours = sides + "; ratio " + fixed_number(v.estimate, 3) + s.path_note + " (" +
             (r.kind == "ratio_at_most" ? "at most " : "at least ") + fixed_number(value, 3) + ")" +
             div;
  else if (r.kind == "better")
    r.ours = sides + "; difference " + fixed_number(v.estimate, p) + div;
  else
    r.ours = sides + "; difference " + fixed_number(v.estimate, p) + " (tolerance ±" +
             fixed_number(c.at("tolerance").get<double>(), p) + ")" + div;
}

ClaimResult evaluate_claim(const json& c, const ReproRuns& runs, const ReproBench* bench,
                           const ScalingResults* scaling) {
  ClaimResult r;
  r.claim = c.at("claim");
  r.paper = c.at("paper");
  r.setting = c.at("setting");
  r.kind = c.at("kind");
  r.metric = c.at("metric");
  r.arm = c.at("arm");
  r.than = r.kind == "at_most" ? "" : c.at("than").get<std::string>();
  r.verdict = "not checked";
  r.away = away_from_paper(c, runs);
  ClaimSides s;
  if (!claim_sides(c, runs, bench, scaling, r, s)) return r;
  r.a_values = s.a;
  r.b_values = s.b;
  if (one_of(r.metric, kCountMetrics))
    judge_counted(c, s, r);
  else
    judge_measured(c, s, r);
  return r;
}

}  // namespace

std::vector<ClaimResult> evaluate_claims(const json& claims, const ReproRuns& runs,
                                         const ReproBench* bench, const json& rules,
                                         const ScalingResults* scaling) {
  std::vector<ClaimResult> out;
  if (!claims.is_array()) return out;
  for (const json& c : claims) out.push_back(evaluate_claim(c, runs, bench, scaling));
  correct_claims(out, claims, runs, rules);
  return out;
}

namespace {

// Benchmark and sweep claims pair by round, not by seed.
bool by_rounds(const ClaimResult& r) {
  return r.source.rfind("benchmark", 0) == 0 || r.source.rfind("scaling", 0) == 0;
}

std::string p_text(double p) {
  if (!std::isfinite(p)) return "-";
  std::ostringstream o;
  o << std::setprecision(2) << p;
  return o.str();
}

// "[lo, hi], n pairs" and, with more than one look, the interval at 1 - 0.05 / looks.
std::string interval_text(const ClaimResult& r) {
  if (r.source.rfind("parameter count", 0) == 0) return "exact (a count)";
  const Verdict& v = r.judged;
  if (!std::isfinite(v.lo)) return "-";
  const int q = r.kind.rfind("ratio", 0) == 0 ? 3 : precision_of(r.metric);
  std::string text = "[" + fixed_number(v.lo, q) + ", " + fixed_number(v.hi, q) + "], " +
                     std::to_string(v.n) +
                     (by_rounds(r) ? " rounds"
                      : v.paired   ? " pairs"
                                   : " seeds");
  if (r.looks.size() > 1 && std::isfinite(r.lo_looks))
    text += "; over " + std::to_string(r.looks.size()) + " looks [" + fixed_number(r.lo_looks, q) +
            ", " + fixed_number(r.hi_looks, q) + "]";
  return text;
}

std::string verdict_text(const ClaimResult& r) {
  std::string verdict = "**" + r.verdict + "**";
  if (!r.testable)
    return verdict + " (" + r.why + ")" +
           (r.away.empty() ? "" : "; not tested at the paper's setting (" + r.away + ")");
  const std::string unit = by_rounds(r) ? " rounds" : " seeds";
  const int to_resolve = r.judged.seeds_to_resolve;
  if (r.verdict == "not resolved" && to_resolve > 100)
    verdict += " (more than 100" + unit + " would be needed at this spread: the difference is " +
               "near nothing)";
  else if (r.verdict == "not resolved" && to_resolve > 0)
    verdict += " (about " + std::to_string(to_resolve) + unit +
               " would resolve one 95% interval at this spread)";
  if (r.uncorrected != r.verdict) verdict += "; uncorrected: " + r.uncorrected;
  if (!r.away.empty()) verdict += "; not tested at the paper's setting (" + r.away + ")";
  return verdict;
}

}  // namespace

std::string claims_markdown(const std::vector<ClaimResult>& results) {
  if (results.empty()) return "";
  std::ostringstream md;
  md << "| claim | the paper | ours | 95% interval | p: raw, sign-flip, looks, Holm | looks "
        "(seeds: p) | same setting? | verdict |\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : results) {
    std::string looks;
    for (const auto& l : r.looks)
      looks += (looks.empty() ? "" : "; ") + std::to_string(l.seeds) + ": " + p_text(l.p);
    md << "| " << r.claim << " | " << r.paper << " | " << r.ours << " (" << r.source << ") | "
       << interval_text(r) << " | " << p_text(r.judged.p_decisive) << ", "
       << p_text(r.judged.p_permutation) << ", " << p_text(r.p_looks) << ", " << p_text(r.p_holm)
       << " | " << (looks.empty() ? "-" : looks) << " | " << r.setting << " | " << verdict_text(r)
       << " |\n";
  }
  return md.str();
}

json claims_json(const std::vector<ClaimResult>& results) {
  auto number = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  auto interval = [&](double lo, double hi) {
    return std::isfinite(lo) && std::isfinite(hi) ? json::array({lo, hi}) : json(nullptr);
  };
  json out = json::array();
  for (const auto& r : results) {
    const Verdict& v = r.judged;
    json arms = json::array({r.arm});
    if (!r.than.empty()) arms.push_back(r.than);
    json looks = json::array();
    for (const auto& l : r.looks)
      looks.push_back({{"seeds", l.seeds}, {"p", number(l.p)}, {"at", l.at}});
    out.push_back({{"claim", r.claim},
                   {"paper", r.paper},
                   {"setting", r.setting},
                   {"kind", r.kind},
                   {"metric", r.metric},
                   {"arms", arms},
                   {"paired", v.paired},
                   {"seeds", v.n},
                   {"difference", number(v.estimate)},
                   {"ci95", interval(v.lo, v.hi)},
                   {"p_value", number(v.p_value)},
                   {"boundary", number(v.boundary)},
                   {"p_raw", number(v.p_decisive)},
                   {"p_permutation", number(v.p_permutation)},
                   {"p_looks", number(r.p_looks)},
                   {"p_holm", number(r.p_holm)},
                   {"ci_looks", interval(r.lo_looks, r.hi_looks)},
                   {"looks", looks},
                   {"testable", r.testable},
                   {"why", r.testable ? json(nullptr) : json(r.why)},
                   {"verdict", r.verdict},
                   {"verdict_uncorrected", r.uncorrected},
                   {"away", r.away.empty() ? json(nullptr) : json(r.away)},
                   {"source", r.source},
                   {"seeds_to_resolve", v.seeds_to_resolve},
                   {"ours", r.ours}});
    // A metric the arms' seed records do not carry: its per-seed values, for a reader to check.
    if (r.metric == "steps_to_loss") {
      auto by_seed = [](const KeyedValues& k) {
        json o = json::object();
        for (const auto& [seed, v] : k) o[std::to_string(seed)] = v;
        return o;
      };
      out.back()["values"] = {{r.arm, by_seed(r.a_values)}, {r.than, by_seed(r.b_values)}};
    }
  }
  return out;
}

}  // namespace attn
