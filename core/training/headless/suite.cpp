#include "core/training/headless/suite.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "core/analysis/statistics.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/json/json_member.h"
#include "core/runs/directory/run_dir.h"
#include "core/training/interventions/length_eval.h"
#include "core/training/recording/saved_run.h"

namespace attn {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

void apply_overrides(json& config, const json& overrides) {
  if (overrides.is_object())
    for (const auto& [key, value] : overrides.items()) set_dotted(config, key, value);
}

std::vector<std::string> names_of(const json& list, const std::string& where) {
  std::vector<std::string> out;
  if (list.is_null()) return out;
  if (!list.is_array()) throw Error(where + " must be a list of names");
  for (const auto& n : list) out.push_back(n.get<std::string>());
  return out;
}

// Keeps the entries whose name is in `wanted` (all when empty); unknown names are errors.
template <class T>
std::vector<T> select(const std::vector<T>& all, const std::vector<std::string>& wanted,
                      const std::string& what) {
  if (wanted.empty()) return all;
  std::vector<T> out;
  for (const auto& w : wanted) {
    auto it = std::find_if(all.begin(), all.end(), [&](const T& t) { return t.name == w; });
    if (it == all.end()) {
      std::string known;
      for (const auto& t : all) known += (known.empty() ? "" : ", ") + t.name;
      throw Error(what + " \"" + w + "\" is not in the suite (it has: " + known + ")");
    }
    out.push_back(*it);
  }
  return out;
}

json interval_json(const MeanInterval& m) {
  if (m.n < 2) return nullptr;
  return json::array({m.lo, m.hi});
}

// The manifest's reference and gate: "reference" must name a mechanism of the manifest (the
// plan's own may be filtered); "gate_on_reference" a bool, quick's winning in the quick slice.
void set_reference(SuitePlan& plan, const json& m, bool quick) {
  std::vector<std::string> all;
  for (const auto& x : m.at("mechanisms")) all.push_back(x.at("name").get<std::string>());
  const bool has_rope = std::find(all.begin(), all.end(), "dot-rope") != all.end();
  const json ref = json_member(m, "reference", json(has_rope ? "dot-rope" : all.front()));
  if (!ref.is_string() || std::find(all.begin(), all.end(), ref.get<std::string>()) == all.end())
    throw Error(plan.manifest + ": reference " + ref.dump() +
                " must name a mechanism of the suite");
  plan.reference = ref.get<std::string>();
  for (size_t k = 0; k < plan.mechanisms.size(); ++k)
    if (plan.mechanisms[k].name == plan.reference) plan.reference_index = static_cast<int>(k);
  json gate = json_member(m, "gate_on_reference", json(false));
  if (quick && m.contains("quick")) gate = json_member(m["quick"], "gate_on_reference", gate);
  if (!gate.is_boolean())
    throw Error(plan.manifest + ": gate_on_reference must be true or false, got " + gate.dump());
  plan.gate = gate.get<bool>();
}

const SuitePair* reference_pair(const SuitePlan& plan, int task) {
  for (const auto& p : plan.pairs)
    if (p.task == task && p.mechanism == plan.reference_index) return &p;
  return nullptr;
}

}  // namespace

SuitePlan load_suite(const std::string& manifest_path, bool quick, const SuiteFilter& filter) {
  const json m = read_config_json(manifest_path);
  const fs::path dir = fs::path(manifest_path).parent_path();
  SuitePlan plan;
  plan.manifest = manifest_path;
  plan.quick = quick;
  plan.title = m.value("title", "attention mechanisms on the standard synthetic tasks");
  plan.seeds = filter.seeds > 0 ? filter.seeds : m.value("seeds", 3);
  if (quick && m.contains("quick") && m["quick"].contains("seeds") && filter.seeds == 0)
    plan.seeds = m["quick"]["seeds"].get<int>();
  if (plan.seeds < 1 || plan.seeds > 100)
    throw Error(manifest_path + ": seeds must be between 1 and 100, got " +
                std::to_string(plan.seeds));
  if (m.contains("lr_grid")) plan.lr_grid = m["lr_grid"].get<std::vector<double>>();
  if (plan.lr_grid.empty())
    throw Error(manifest_path + ": lr_grid must list at least one multiplier of train.lr");
  for (double g : plan.lr_grid)
    if (!(g > 0 && g < 1000))
      throw Error(manifest_path + ": lr_grid multiplier " + lr_text(g) + " must be in (0, 1000)");
  plan.lr_extend =
      read_lr_extend(m, quick && m.contains("quick") ? &m["quick"] : nullptr, manifest_path, 0);
  plan.threshold = m.value("threshold", 0.9);
  const json quick_overrides = quick && m.contains("quick")
                                   ? json_member(m["quick"], "set", json::object())
                                   : json::object();

  std::vector<SuiteTask> tasks;
  for (const auto& t : m.at("tasks")) {
    SuiteTask task;
    task.name = t.at("name").get<std::string>();
    task.source = t.value("source", "");
    const std::string file = (dir / t.at("config").get<std::string>()).string();
    task.config = read_config_json(file);
    task.per_mechanism = json_member(t, "per_mechanism", json::object());
    if (t.contains("extrapolate")) task.extrapolate = t["extrapolate"].get<std::vector<int>>();
    if (quick) {
      apply_overrides(task.config, quick_overrides);
      apply_overrides(task.config, json_member(t, "quick", json::object()));
      if (t.contains("quick_extrapolate"))
        task.extrapolate = t["quick_extrapolate"].get<std::vector<int>>();
    }
    tasks.push_back(std::move(task));
  }
  std::vector<SuiteMechanism> mechanisms;
  std::vector<json> mechanism_quick;
  for (const auto& x : m.at("mechanisms")) {
    SuiteMechanism mech;
    mech.name = x.at("name").get<std::string>();
    mech.position = x.value("position", "learned");
    mech.set = json_member(x, "set", json::object());
    if (quick) apply_overrides(mech.set, json_member(x, "quick", json::object()));
    mechanisms.push_back(std::move(mech));
  }
  for (const auto& t : tasks)
    for (const auto& [name, overrides] : t.per_mechanism.items())
      if (std::none_of(mechanisms.begin(), mechanisms.end(),
                       [&](const SuiteMechanism& k) { return k.name == name; }))
        throw Error(manifest_path + ": task \"" + t.name + "\": per_mechanism names \"" + name +
                    "\", which is not a mechanism of the suite");
  std::vector<std::string> want_tasks = filter.tasks, want_mechanisms = filter.mechanisms;
  if (quick && m.contains("quick")) {
    if (want_tasks.empty())
      want_tasks = names_of(json_member(m["quick"], "tasks", json()), "quick.tasks");
    if (want_mechanisms.empty())
      want_mechanisms = names_of(json_member(m["quick"], "mechanisms", json()), "quick.mechanisms");
  }
  plan.tasks = select(tasks, want_tasks, "task");
  plan.mechanisms = select(mechanisms, want_mechanisms, "mechanism");
  for (int t = 0; t < static_cast<int>(plan.tasks.size()); ++t)
    for (int k = 0; k < static_cast<int>(plan.mechanisms.size()); ++k) {
      SuitePair p;
      p.index = static_cast<int>(plan.pairs.size());
      p.task = t;
      p.mechanism = k;
      p.dir =
          sanitize_run_name(plan.tasks[t].name) + "/" + sanitize_run_name(plan.mechanisms[k].name);
      p.config = plan.tasks[t].config;
      apply_overrides(p.config, plan.mechanisms[k].set);
      apply_overrides(p.config, json_member(plan.tasks[t].per_mechanism, plan.mechanisms[k].name,
                                            json::object()));
      p.config["name"] = sanitize_run_name(plan.tasks[t].name + "_" + plan.mechanisms[k].name);
      const std::string where = manifest_path + ": task \"" + plan.tasks[t].name +
                                "\" with mechanism \"" + plan.mechanisms[k].name + "\"";
      const ExperimentConfig parsed = parse_config(p.config, where);
      for (int length : plan.tasks[t].extrapolate)
        if (length < 1)
          throw Error(where + ": extrapolate length " + std::to_string(length) + " must be >= 1");
      if (!plan.tasks[t].extrapolate.empty()) (void)length_key(parsed.task);  // names the task
      plan.pairs.push_back(std::move(p));
    }
  if (plan.pairs.empty()) throw Error(manifest_path + ": no task and mechanism to run");
  set_reference(plan, m, quick);
  return plan;
}

TunedArm suite_arm(const SuitePlan& plan, const SuitePair& pair) {
  // name and dir, config, lr_grid, seeds, extend: the pair's run directory names the arm.
  return TunedArm{pair.dir, pair.dir, pair.config, plan.lr_grid, plan.seeds, plan.lr_extend};
}

SweepPlan suite_grid_plan(const SuitePlan& plan, const SuitePair& pair) {
  return tuned_grid_plan(suite_arm(plan, pair));
}

SweepPlan suite_seeds_plan(const SuitePlan& plan, const SuitePair& pair, double lr) {
  return tuned_seeds_plan(suite_arm(plan, pair), lr);
}

LrChoice choose_learning_rate(const SuitePlan& plan, const SuitePair& pair,
                              const std::string& out_dir) {
  return choose_tuned_rate(suite_arm(plan, pair), out_dir);
}

SuiteOutcome run_suite(const SuitePlan& plan, const SuiteRunOptions& o) {
  if (o.shard_count < 1 || o.shard_index < 0 || o.shard_index >= o.shard_count)
    throw Error("--shard: index must be in [0, count)");
  fs::create_directories(o.out_dir);
  json manifest = {{"title", plan.title},         {"quick", plan.quick},
                   {"seeds", plan.seeds},         {"lr_grid", plan.lr_grid},
                   {"lr_extend", plan.lr_extend}, {"threshold", plan.threshold},
                   {"pairs", json::array()}};
  for (const auto& p : plan.pairs)
    manifest["pairs"].push_back({{"index", p.index},
                                 {"task", plan.tasks[p.task].name},
                                 {"mechanism", plan.mechanisms[p.mechanism].name},
                                 {"dir", p.dir},
                                 {"config", p.config}});
  const fs::path manifest_file = fs::path(o.out_dir) / "suite.json";
  std::error_code ec;
  if (fs::exists(manifest_file, ec)) {
    const json old = read_config_json(manifest_file.string());
    // Pairs of another slice (a --tasks filter) may share the directory; the same pair must
    // mean the same config.
    for (const auto& p : json_member(old, "pairs", json::array()))
      for (const auto& q : manifest["pairs"])
        if (p.value("dir", "") == q["dir"] && json_member(p, "config", json()) != q["config"])
          throw Error(manifest_file.string() + " trained " + q["dir"].get<std::string>() +
                      " with another config; use another --out (attnlab never overwrites runs "
                      "it did not plan)");
    for (const auto& p : json_member(old, "pairs", json::array())) {
      bool present = false;
      for (const auto& q : manifest["pairs"]) present |= p.value("dir", "") == q["dir"];
      if (!present) manifest["pairs"].push_back(p);
    }
  }
  write_file_atomic(manifest_file.string(), manifest.dump(2) + "\n");

  std::vector<TunedArm> arms, gated;
  for (const auto& p : plan.pairs)
    (plan.gate && p.mechanism != plan.reference_index ? gated : arms).push_back(suite_arm(plan, p));
  if (!plan.gate || plan.reference_index < 0 || o.shard_count > 1) {
    arms.insert(arms.end(), gated.begin(), gated.end());
    return run_tuned_arms(arms, o);
  }
  // The references first; then the others on the tasks their reference learned.
  SuiteOutcome out = run_tuned_arms(arms, o);
  std::vector<TunedArm> rest;
  for (int t = 0; t < static_cast<int>(plan.tasks.size()); ++t) {
    const ReferenceResult r = reference_result(plan, t, o.out_dir);
    int left = 0;
    for (size_t i = 0; i < plan.pairs.size(); ++i)
      if (plan.pairs[i].task == t && plan.pairs[i].mechanism != plan.reference_index) {
        if (r.learned) rest.push_back(suite_arm(plan, plan.pairs[i]));
        left += !r.learned;
      }
    if (left > 0 && o.log)
      o.log(plan.tasks[t].name + ": not learned at this budget (" + plan.reference + " solved " +
            std::to_string(r.solved) + "/" + std::to_string(r.n) + "): its other " +
            std::to_string(left) + (left == 1 ? " mechanism is" : " mechanisms are") +
            " not trained");
  }
  const SuiteOutcome more = run_tuned_arms(rest, o);
  out.arms += more.arms;
  out.ran += more.ran;
  out.resumed += more.resumed;
  out.skipped += more.skipped;
  out.diverged += more.diverged;
  return out;
}

ReferenceResult reference_result(const SuitePlan& plan, int task, const std::string& out_dir) {
  ReferenceResult r;
  const SuitePair* pair = reference_pair(plan, task);
  if (!pair) return r;
  const TunedRuns tuned = tuned_runs(suite_arm(plan, *pair), out_dir);
  r.finished = tuned.all_done || (tuned.grid_done && tuned.choice.chosen < 0);
  for (const auto& rel : tuned.runs) {
    const RunDirectory run = read_run_directory((fs::path(out_dir) / rel).string());
    if (run.summary.value("diverged", false)) continue;
    ++r.n;
    const json acc = json_member(run.summary, "eval_accuracy", json());
    r.solved += acc.is_number() && acc.get<double>() >= plan.threshold;
  }
  r.learned = r.finished && r.n > 0 && r.solved >= kLearnedShare * r.n - 1e-9;
  return r;
}

namespace {

// What is wrong with the summary.json of a run the leaderboard counts on: "" when it is absent
// (the run is unfinished) or a JSON object, else the reader's message. A damaged summary makes a
// finished seed look unfinished: it must be named, never dropped in silence.
std::string damaged_summary(const fs::path& run) {
  const std::string path = (run / "summary.json").string();
  try {
    if (!regular_file_or_absent(path)) return "";
    if (!read_json_file(path).is_object()) return path + " is not a JSON object";
    return "";
  } catch (const std::exception& e) {
    return std::string(e.what()).find(path) == std::string::npos ? path + ": " + e.what()
                                                                 : e.what();
  }
}

// A finished run's eval_accuracy must be an accuracy: a number in [0, 1] (an edited 7.5 showed
// as "425.0 ± 4129.5"). "" when it is (or absent), else the problem naming the file.
std::string bad_accuracy(const fs::path& run, const json& summary) {
  if (!summary.contains("eval_accuracy") || summary["eval_accuracy"].is_null()) return "";
  const json& v = summary["eval_accuracy"];
  if (v.is_number() && v.get<double>() >= 0 && v.get<double>() <= 1) return "";
  return (run / "summary.json").string() + ": eval_accuracy " + v.dump() +
         " is not an accuracy (a number from 0 to 1)";
}

// A task's leaderboard row: its name, task, source, extrapolation lengths and length key.
json task_row(const SuiteTask& t) {
  const ExperimentConfig c = parse_config(t.config, t.name);
  json row = {{"name", t.name},
              {"task", c.task.name},
              {"source", t.source},
              {"extrapolate", t.extrapolate}};
  try {
    row["key"] = length_key(c.task);
    row["trained_length"] = task_length(c.task);
  } catch (const Error&) {
    row["key"] = nullptr;
  }
  return row;
}

// A pair the gate left untrained (nothing of it finished, its task's reference finished without
// learning): fills `cell` as "not_trained" with why, and returns true.
bool gated_off(const SuitePlan& plan, const SuitePair& pair, const LrChoice& choice,
               const std::string& out_dir, json& cell) {
  if (!plan.gate || pair.mechanism == plan.reference_index || plan.reference_index < 0 ||
      std::any_of(choice.trials.begin(), choice.trials.end(),
                  [](const LrTrial& t) { return t.finished; }))
    return false;
  const ReferenceResult r = reference_result(plan, pair.task, out_dir);
  if (!r.finished || r.learned) return false;
  cell.update({{"status", "not_trained"},
               {"lr_grid", json::array()},
               {"lr_chosen", nullptr},
               {"runs", json::array()},
               {"values", json::array()},
               {"mean", nullptr},
               {"eval_loss", nullptr},
               {"threshold_reached", 0},
               {"steps_to_threshold", nullptr},
               {"length_eval", json::array()}});
  cell["why"] = "not learned at this budget: " + plan.reference + " solved " +
                std::to_string(r.solved) + "/" + std::to_string(r.n);
  return true;
}

}  // namespace

json suite_leaderboard(const SuitePlan& plan, const std::string& out_dir) {
  json board = {{"title", plan.title},         {"quick", plan.quick},
                {"seeds", plan.seeds},         {"threshold", plan.threshold},
                {"lr_grid", plan.lr_grid},     {"lr_extend", plan.lr_extend},
                {"tasks", json::array()},      {"mechanisms", json::array()},
                {"cells", json::array()},      {"damaged", json::array()},
                {"reference", plan.reference}, {"gate_on_reference", plan.gate}};
  auto damaged = [&](const std::string& problem) { board["damaged"].push_back(problem); };
  for (const auto& t : plan.tasks) board["tasks"].push_back(task_row(t));
  for (const auto& k : plan.mechanisms)
    board["mechanisms"].push_back({{"name", k.name}, {"position", k.position}});

  for (const auto& pair : plan.pairs) {
    const SuiteTask& task = plan.tasks[pair.task];
    json cell = {{"task", task.name},
                 {"mechanism", plan.mechanisms[pair.mechanism].name},
                 {"position", plan.mechanisms[pair.mechanism].position},
                 {"metric", "eval_accuracy"},
                 {"seeds", 0},
                 {"status", "pending"}};
    const TunedRuns tuned = tuned_runs(suite_arm(plan, pair), out_dir);
    const LrChoice& choice = tuned.choice;
    if (gated_off(plan, pair, choice, out_dir, cell)) {
      board["cells"].push_back(cell);
      continue;
    }
    for (const auto& t : choice.trials)
      if (!t.finished)
        if (std::string p = damaged_summary(fs::path(out_dir) / t.run); !p.empty()) damaged(p);
    for (const auto& rel : tuned.unfinished)
      if (std::string p = damaged_summary(fs::path(out_dir) / rel); !p.empty()) damaged(p);
    cell["lr_grid"] = lr_trials_json(choice);
    cell["lr_chosen"] = nullptr;
    if (choice.chosen < 0) {
      if (tuned.grid_done) cell["status"] = "diverged";
      board["cells"].push_back(cell);
      continue;
    }
    cell["lr_chosen"] = choice.trials[choice.chosen].lr;
    cell["lr_at_edge"] = choice.at_edge;  // the lowest or highest rate tried
    const std::vector<std::string>& runs = tuned.runs;
    const bool all_done = tuned.all_done;
    std::vector<double> accuracy, loss, reached_at;
    std::vector<std::vector<double>> at_length(task.extrapolate.size());
    std::vector<std::string> refused(task.extrapolate.size());
    int diverged = 0;
    json run_list = json::array();
    for (const auto& rel : runs) {
      const RunDirectory run = read_run_directory((fs::path(out_dir) / rel).string());
      if (std::string p = bad_accuracy(run.dir, run.summary); !p.empty()) {
        damaged(p);
        continue;
      }
      run_list.push_back(rel);
      if (run.summary.value("diverged", false)) {
        ++diverged;
        continue;
      }
      accuracy.push_back(run.summary.value("eval_accuracy", std::nan("")));
      loss.push_back(run.summary.value("eval_loss", std::nan("")));
      for (size_t i = 0; i < run.eval_accuracy.values.size(); ++i)
        if (run.eval_accuracy.values[i] >= plan.threshold) {
          reached_at.push_back(static_cast<double>(run.eval_accuracy.steps[i]));
          break;
        }
      if (!task.extrapolate.empty()) {
        SavedSession saved(run);
        for (size_t k = 0; k < task.extrapolate.size(); ++k) {
          if (!refused[k].empty()) continue;
          try {
            at_length[k].push_back(
                evaluate_at_length(saved.session(), task.extrapolate[k]).figures.accuracy);
          } catch (const Error& e) {
            refused[k] = e.what();
          }
        }
      }
    }
    const MeanInterval acc = mean_interval(accuracy);
    cell["runs"] = run_list;
    cell["seeds"] = acc.n;
    cell["diverged_seeds"] = diverged;
    cell["values"] = accuracy;
    cell["mean"] = acc.n ? json(acc.mean) : json(nullptr);
    cell["sd"] = acc.n ? json(acc.sd) : json(nullptr);
    cell["ci95"] = interval_json(acc);
    const MeanInterval l = mean_interval(loss);
    cell["eval_loss"] = l.n ? json(l.mean) : json(nullptr);
    cell["threshold_reached"] = static_cast<int>(reached_at.size());
    cell["steps_to_threshold"] =
        reached_at.empty() ? json(nullptr) : json(mean_interval(reached_at).mean);
    json lengths = json::array();
    for (size_t k = 0; k < task.extrapolate.size(); ++k) {
      if (!refused[k].empty()) {
        lengths.push_back({{"length", task.extrapolate[k]}, {"refused", refused[k]}});
        continue;
      }
      const MeanInterval m = mean_interval(at_length[k]);
      lengths.push_back({{"length", task.extrapolate[k]},
                         {"values", at_length[k]},
                         {"mean", m.n ? json(m.mean) : json(nullptr)},
                         {"ci95", interval_json(m)}});
    }
    cell["length_eval"] = lengths;
    cell["status"] = all_done ? "done" : "pending";
    board["cells"].push_back(cell);
  }
  return board;
}

}  // namespace attn
