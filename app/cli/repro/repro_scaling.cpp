#include "app/cli/repro/repro_scaling.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/cli/cli.h"
#include "app/cli/repro/repro_bench.h"
#include "core/analysis/scaling_fit.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/interrupt.h"
#include "core/json/json_path.h"

namespace attn {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::vector<std::string> kSweepMetrics = {"sweep_seconds_per_step", "sweep_memory_mib",
                                                "sweep_time_slope", "sweep_memory_slope"};

int entry_int(const json& e, const char* key, int fallback, int lo, int hi,
              const std::string& where) {
  if (!e.contains(key)) return fallback;
  const json& v = e[key];
  if (!v.is_number_integer() || v.get<int>() < lo || v.get<int>() > hi)
    throw Error(where + "." + key + " must be an integer from " + std::to_string(lo) + " to " +
                std::to_string(hi) + ", got " + v.dump());
  return v.get<int>();
}

std::string loadavg() {
  std::ifstream f("/proc/loadavg");
  std::string line;
  std::getline(f, line);
  return line;
}

void apply_sets(json& config, const json& sets) {
  if (sets.is_object())
    for (const auto& [k, v] : sets.items()) set_dotted(config, k, v);
}

// The config of one (arm, value) point: the repro arm's, the sweep's and the arm's sets, the key.
json point_config(const ReproPlan& plan, const json& entry, const json& arm, const json& value) {
  const auto it = std::find_if(plan.arms.begin(), plan.arms.end(),
                               [&](const TunedArm& a) { return a.name == arm.at("arm"); });
  json config = it->config;
  apply_sets(config, entry.value("set", json::object()));
  apply_sets(config, arm.value("set", json::object()));
  set_dotted(config, entry.at("key").get<std::string>(), value);
  return config;
}

ScalingSweep run_sweep(const ReproPlan& plan, const json& entry, const std::string& exe,
                       const fs::path& dir, const std::function<void(const std::string&)>& log) {
  ScalingSweep s;
  s.name = entry.at("name");
  s.key = entry.at("key");
  s.values = entry.at("values");
  s.spec = entry;
  s.rounds = entry.value("rounds", 3);
  s.warmup = entry.value("warmup", 2);
  s.steps = entry.value("steps", 3);
  s.memory = memory_pass_json(s.warmup, s.steps);
  s.measured_by = measured_by_json();
  const json& arms = entry.at("arms");
  std::vector<std::pair<size_t, size_t>> points;  // (arm, value)
  for (size_t a = 0; a < arms.size(); ++a) {
    s.arms.push_back({arms[a].at("name").get<std::string>(), {}});
    for (size_t v = 0; v < s.values.size(); ++v) {
      points.emplace_back(a, v);
      const fs::path file =
          dir / (s.name + "-" + std::to_string(a) + "-" + std::to_string(v) + ".json");
      write_file_atomic(file.string(),
                        point_config(plan, entry, arms[a], s.values[v]).dump(2) + "\n");
    }
  }
  s.load_before = loadavg();
  for (int r = 0; r < s.rounds; ++r) {
    for (auto& arm : s.arms) arm.rounds.emplace_back(s.values.size());
    for (size_t k = 0; k < points.size(); ++k) {
      if (const int sig = stop_signal()) throw Interrupted{sig};
      const auto [a, v] = points[r % 2 == 0 ? k : points.size() - 1 - k];  // forward, backward
      const fs::path file =
          dir / (s.name + "-" + std::to_string(a) + "-" + std::to_string(v) + ".json");
      const BenchRound b = bench_timed_then_measured(exe, file.string(), s.warmup, s.steps,
                                                     arms[a].value("unfused", false));
      s.arms[a].rounds.back()[v] = {b.mean_seconds, b.best_seconds, b.increment_mib, b.floor_mib,
                                    b.heap_increment_mib};
      if (log)
        log("scaling " + s.name + " round " + std::to_string(r + 1) + "/" +
            std::to_string(s.rounds) + ": " + s.arms[a].name + " at " + s.key + " " +
            s.values[v].dump() + ": " + fixed_number(b.mean_seconds, 4) + " s/step, " +
            fixed_number(b.increment_mib, 1) + " MiB");
    }
  }
  s.load_after = loadavg();
  return s;
}

int value_index(const ScalingSweep& s, const json& at) {
  for (size_t i = 0; i < s.values.size(); ++i)
    if (s.values[i] == at || (s.values[i].is_number() && at.is_number() &&
                              s.values[i].get<double>() == at.get<double>()))
      return static_cast<int>(i);
  return -1;
}

}  // namespace

const std::vector<std::string>& sweep_metrics() {
  return kSweepMetrics;
}

const ScalingArm* ScalingSweep::find(const std::string& arm) const {
  for (const auto& a : arms)
    if (a.name == arm) return &a;
  return nullptr;
}

const ScalingSweep* ScalingResults::find(const std::string& name) const {
  for (const auto& s : sweeps)
    if (s.name == name) return &s;
  return nullptr;
}

json resolve_scaling_spec(const json& manifest, bool quick) {
  if (!manifest.contains("scaling")) return json();
  json spec = manifest["scaling"];
  if (!spec.is_array()) return spec;  // validate_scaling_spec names it
  for (auto& e : spec)
    if (quick && e.is_object() && e.contains("quick") && e["quick"].is_object())
      for (const auto& [k, v] : e["quick"].items()) e[k] = v;
  return spec;
}

void validate_scaling_spec(const json& spec, const std::vector<std::string>& arms,
                           const std::string& where) {
  if (spec.is_null()) return;
  if (!spec.is_array()) throw Error(where + ".scaling must be a list of sweeps");
  std::vector<std::string> names;
  for (size_t i = 0; i < spec.size(); ++i) {
    const json& e = spec[i];
    const std::string w = where + ".scaling[" + std::to_string(i) + "]";
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string() || !e.contains("key") ||
        !e["key"].is_string())
      throw Error(w + " must be an object with a string \"name\" and \"key\"");
    if (std::find(names.begin(), names.end(), e["name"]) != names.end())
      throw Error(w + ".name " + e["name"].dump() + " is used twice");
    names.push_back(e["name"]);
    if (!e.contains("values") || !e["values"].is_array() || e["values"].empty())
      throw Error(w + ".values must be a non-empty list");
    if (!e.contains("arms") || !e["arms"].is_array() || e["arms"].empty())
      throw Error(w + ".arms must be a non-empty list of {\"name\", \"arm\"}");
    for (const auto& a : e["arms"])
      if (!a.is_object() || !a.contains("name") || !a["name"].is_string() || !a.contains("arm") ||
          std::find(arms.begin(), arms.end(), a["arm"]) == arms.end())
        throw Error(w + ".arms: " + a.dump() + " needs a \"name\" and an \"arm\" of repro.json");
    entry_int(e, "rounds", 3, 1, 100, w);
    entry_int(e, "warmup", 2, 0, 1000, w);
    entry_int(e, "steps", 3, 1, 1000, w);
  }
}

ScalingResults run_scaling(const ReproPlan& plan, const json& spec, const std::string& work_dir,
                           const std::function<void(const std::string&)>& log) {
  std::error_code ec;
  const std::string exe = fs::read_symlink("/proc/self/exe", ec).string();
  if (ec) throw Error("the scaling benchmark needs this executable's path: " + ec.message());
  fs::create_directories(work_dir);
  ScalingResults out;
  for (const auto& entry : spec) out.sweeps.push_back(run_sweep(plan, entry, exe, work_dir, log));
  return out;
}

json scaling_json(const ScalingResults& s) {
  json sweeps = json::array();
  for (const auto& w : s.sweeps) {
    json arms = json::array();
    for (const auto& a : w.arms) {
      json rounds = json::array();
      for (const auto& r : a.rounds) {
        json points = json::array();
        for (const auto& p : r) {
          json point = {{"mean_seconds", p.mean_seconds},
                        {"best_seconds", p.best_seconds},
                        {"increment_mib", p.increment_mib},
                        {"floor_mib", p.floor_mib}};
          if (std::isfinite(p.heap_increment_mib))
            point["heap_increment_mib"] = p.heap_increment_mib;
          points.push_back(point);
        }
        rounds.push_back(points);
      }
      arms.push_back({{"name", a.name}, {"rounds", rounds}});
    }
    json sweep = {{"name", w.name},
                  {"key", w.key},
                  {"values", w.values},
                  {"spec", w.spec},
                  {"rounds", w.rounds},
                  {"warmup", w.warmup},
                  {"steps", w.steps},
                  {"loadavg_before", w.load_before},
                  {"loadavg_after", w.load_after},
                  {"arms", arms}};
    if (!w.memory.is_null()) sweep["memory"] = w.memory;  // absent in files that predate it
    if (!w.measured_by.is_null()) sweep["measured_by"] = w.measured_by;
    sweeps.push_back(sweep);
  }
  return {{"how",
           "attnlab bench-step: a fresh process per point and round, one torch thread, CPU; rounds "
           "alternate the order of the points; loadavg recorded before and after"},
          {"sweeps", sweeps}};
}

ScalingResults scaling_from_json(const json& j) {
  ScalingResults out;
  for (const auto& w : j.at("sweeps")) {
    ScalingSweep s;
    s.name = w.at("name");
    s.key = w.at("key");
    s.values = w.at("values");
    s.spec = w.value("spec", json::object());
    s.rounds = w.at("rounds");
    s.warmup = w.at("warmup");
    s.steps = w.at("steps");
    s.load_before = w.value("loadavg_before", "");
    s.load_after = w.value("loadavg_after", "");
    s.memory = w.value("memory", json());
    s.measured_by = w.value("measured_by", json());
    for (const auto& a : w.at("arms")) {
      ScalingArm arm{a.at("name"), {}};
      for (const auto& r : a.at("rounds")) {
        arm.rounds.emplace_back();
        for (const auto& p : r)
          arm.rounds.back().push_back({p.at("mean_seconds"), p.at("best_seconds"),
                                       p.at("increment_mib"), p.at("floor_mib"),
                                       p.value("heap_increment_mib", std::nan(""))});
      }
      s.arms.push_back(std::move(arm));
    }
    out.sweeps.push_back(std::move(s));
  }
  return out;
}

KeyedValues sweep_values(const ScalingSweep& sweep, const std::string& arm,
                         const std::string& metric, const json& at) {
  KeyedValues out;
  const ScalingArm* a = sweep.find(arm);
  if (!a) return out;
  const bool memory = metric == "sweep_memory_mib" || metric == "sweep_memory_slope";
  auto figure = [&](const ScalingPoint& p) { return memory ? p.increment_mib : p.mean_seconds; };
  if (metric == "sweep_time_slope" || metric == "sweep_memory_slope") {
    std::vector<double> x;
    for (const auto& v : sweep.values) {
      if (!v.is_number())
        throw Error("sweep " + sweep.name + ": a slope needs numeric values, got " + v.dump());
      x.push_back(v.get<double>());
    }
    std::vector<std::vector<double>> y(a->rounds.size());
    for (size_t r = 0; r < a->rounds.size(); ++r)
      for (const auto& p : a->rounds[r]) y[r].push_back(figure(p));
    return round_slopes(x, y);
  }
  const int i = value_index(sweep, at);
  if (i < 0) return out;
  for (size_t r = 0; r < a->rounds.size(); ++r)
    out[static_cast<long long>(r)] = figure(a->rounds[r][static_cast<size_t>(i)]);
  return out;
}

std::string scaling_markdown(const ScalingResults& s) {
  std::ostringstream md;
  for (const auto& w : s.sweeps) {
    md << "### " << w.name << ": " << w.key << " over " << w.values.dump() << "\n\n"
       << "| arm | " << w.key << " | s/step (best round, mean) | memory increment MiB (min, "
       << "mean) |\n|---|---|---|---|\n";
    for (const auto& a : w.arms)
      for (size_t v = 0; v < w.values.size(); ++v) {
        std::vector<double> t, m;
        for (const auto& r : a.rounds)
          t.push_back(r[v].mean_seconds), m.push_back(r[v].increment_mib);
        if (t.empty()) continue;
        auto mean = [](const std::vector<double>& x) {
          double sum = 0;
          for (double e : x) sum += e;
          return sum / x.size();
        };
        md << "| " << a.name << " | " << w.values[v].dump() << " | "
           << fixed_number(*std::min_element(t.begin(), t.end()), 4) << ", "
           << fixed_number(mean(t), 4) << " | "
           << fixed_number(*std::min_element(m.begin(), m.end()), 1) << ", "
           << fixed_number(mean(m), 1) << " |\n";
      }
    md << "\n"
       << w.rounds << " rounds of `attnlab bench-step` per point (" << w.warmup
       << " warm-up steps, " << w.steps << " timed), the points' order reversed every other "
       << "round (load average " << w.load_before << " before, " << w.load_after << " after); "
       << "memory increments were " << memory_method_text(w.memory, "point")
       << ". Sweep settings: `" << w.spec.value("set", json::object()).dump() << "`."
       << (w.measured_by.is_null() ? "" : " " + measured_by_text(w.measured_by)) << "\n\n";
  }
  return md.str();
}

}  // namespace attn
