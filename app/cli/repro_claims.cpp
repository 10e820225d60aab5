#include "cli/repro_claims.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <map>
#include <sstream>

#include "core/base/error.h"
#include "core/json/json_reader.h"

namespace attn {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::vector<std::string> kKinds = {"better", "within", "ratio_at_most", "ratio_at_least",
                                         "at_most"};
const std::vector<std::string> kMetrics = {
    "eval_loss",        "eval_accuracy", "parameters",           "attention_parameters",
    "steps_per_second", "peak_rss_mib",  "final_spectral_radius"};

std::string num(double v, int precision) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(precision) << v;
  return s.str();
}

// Whether larger is better for `better` claims.
bool larger_is_better(const std::string& metric) {
  return metric == "eval_accuracy" || metric == "steps_per_second";
}

int precision_of(const std::string& metric) {
  if (metric == "parameters" || metric == "attention_parameters") return 0;
  if (metric == "peak_rss_mib" || metric == "steps_per_second") return 2;
  return 4;
}

// The final rho(I+C) of every finished conn run, by group (the cell directory's parent name).
std::map<std::string, Stat> final_spectral_radius(const std::vector<RunDirectory>& runs) {
  std::map<std::string, std::vector<double>> values;
  for (const auto& r : runs)
    if (r.finished && r.summary.contains("conn"))
      values[fs::path(r.dir).parent_path().filename().string()].push_back(
          r.summary["conn"].value("spectral_radius", 0.0));
  std::map<std::string, Stat> out;
  for (const auto& [group, v] : values) out[group] = mean_sd(v);
  return out;
}

const GroupSummary* find(const std::vector<GroupSummary>& g, const std::string& name) {
  for (const auto& s : g)
    if (s.group == name) return &s;
  return nullptr;
}

Stat metric_of(const GroupSummary& g, const std::string& metric,
               const std::map<std::string, Stat>& rho) {
  if (metric == "eval_loss") return g.eval_loss;
  if (metric == "eval_accuracy") return g.eval_accuracy;
  if (metric == "parameters") return g.parameters;
  if (metric == "attention_parameters") return g.attention_parameters;
  if (metric == "steps_per_second") return g.steps_per_second;
  if (metric == "peak_rss_mib") return g.peak_rss_mib;
  auto it = rho.find(g.group);
  return it == rho.end() ? Stat{} : it->second;
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

}  // namespace

void validate_claims(const json& claims, const std::vector<std::string>& groups) {
  if (claims.is_null()) return;
  if (!claims.is_array()) throw Error("repro.json claims must be an array");
  auto one_of = [](const std::string& v, const std::vector<std::string>& allowed) {
    return std::find(allowed.begin(), allowed.end(), v) != allowed.end();
  };
  for (size_t i = 0; i < claims.size(); ++i) {
    const json& c = claims[i];
    const std::string where = "repro.json claims[" + std::to_string(i) + "]";
    if (!c.is_object()) throw Error(where + " must be an object");
    for (const char* key : {"claim", "paper", "setting", "kind", "metric", "arm"})
      string_key(c, key, i);
    const std::string kind = c.at("kind"), metric = c.at("metric");
    if (!one_of(kind, kKinds))
      throw Error(where + ".kind \"" + kind + "\": allowed: " + join_names(kKinds));
    if (!one_of(metric, kMetrics))
      throw Error(where + ".metric \"" + metric + "\": allowed: " + join_names(kMetrics));
    std::vector<std::string> arms = {c.at("arm")};
    if (kind != "at_most") arms.push_back(string_key(c, "than", i));
    for (const auto& a : arms)
      if (!one_of(a, groups))
        throw Error(where + " names the arm \"" + a +
                    "\", which repro.json does not have (arms: " + join_names(groups) + ")");
    if (kind == "within") number_key(c, "tolerance", i);
    if (kind.rfind("ratio", 0) == 0 || kind == "at_most") number_key(c, "value", i);
  }
}

std::vector<ClaimResult> evaluate_claims(const json& claims,
                                         const std::vector<GroupSummary>& groups,
                                         const std::vector<RunDirectory>& runs) {
  std::vector<ClaimResult> out;
  if (!claims.is_array()) return out;
  const auto rho = final_spectral_radius(runs);
  for (const json& c : claims) {
    ClaimResult r{c.at("claim"), c.at("paper"), "", c.at("setting"), "not checked"};
    const std::string kind = c.at("kind"), metric = c.at("metric");
    const int p = precision_of(metric);
    const GroupSummary* a = find(groups, c.at("arm"));
    const GroupSummary* b = kind == "at_most" ? nullptr : find(groups, c.at("than"));
    const Stat x = a ? metric_of(*a, metric, rho) : Stat{};
    const Stat y = b ? metric_of(*b, metric, rho) : Stat{};
    if (x.n == 0 || (kind != "at_most" && y.n == 0)) {
      r.ours = "a run did not finish";
      out.push_back(r);
      continue;
    }
    const std::string name_a = c.at("arm").get<std::string>();
    if (kind == "at_most") {
      const double value = c.at("value");
      r.ours = name_a + " " + metric + " " + format_stat(x, p) + " (bound " + num(value, 3) + ")";
      r.verdict = x.mean <= value ? "held" : "did not hold";
      out.push_back(r);
      continue;
    }
    const std::string name_b = c.at("than").get<std::string>();
    const std::string pair = name_a + " " + format_stat(x, p) + " vs " + name_b + " " +
                             format_stat(y, p) + " (" + metric + ", " +
                             std::to_string(std::min(x.n, y.n)) + " seeds)";
    if (kind == "better") {
      const double diff = x.mean - y.mean, spread = std::sqrt(x.sd * x.sd + y.sd * y.sd);
      const bool better = larger_is_better(metric) ? diff > 0 : diff < 0;
      r.ours = pair + "; difference " + num(diff, p) +
               (x.n >= 2 && y.n >= 2 ? ", spread " + num(spread, p) : "");
      if (x.n >= 2 && y.n >= 2 && std::abs(diff) <= spread)
        r.verdict = "not resolved";
      else
        r.verdict = better ? "held" : "did not hold";
    } else if (kind == "within") {
      const double tolerance = c.at("tolerance"), diff = x.mean - y.mean;
      r.ours = pair + "; difference " + num(diff, p) + " (tolerance " + num(tolerance, p) + ")";
      r.verdict = std::abs(diff) <= tolerance ? "held" : "did not hold";
    } else {
      const double value = c.at("value"), ratio = y.mean != 0 ? x.mean / y.mean : INFINITY;
      r.ours = pair + "; ratio " + num(ratio, 3) + " (" +
               (kind == "ratio_at_most" ? "at most " : "at least ") + num(value, 3) + ")";
      const bool ok = kind == "ratio_at_most" ? ratio <= value : ratio >= value;
      r.verdict = ok ? "held" : "did not hold";
    }
    out.push_back(r);
  }
  return out;
}

std::string claims_markdown(const std::vector<ClaimResult>& results) {
  if (results.empty()) return "";
  std::ostringstream md;
  md << "| claim | the paper | ours | same setting? | verdict |\n|---|---|---|---|---|\n";
  for (const auto& r : results)
    md << "| " << r.claim << " | " << r.paper << " | " << r.ours << " | " << r.setting << " | **"
       << r.verdict << "** |\n";
  return md.str();
}

json claims_json(const std::vector<ClaimResult>& results) {
  json out = json::array();
  for (const auto& r : results)
    out.push_back({{"claim", r.claim},
                   {"paper", r.paper},
                   {"ours", r.ours},
                   {"setting", r.setting},
                   {"verdict", r.verdict}});
  return out;
}

}  // namespace attn
