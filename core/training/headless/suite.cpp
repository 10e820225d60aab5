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
#include "core/json/json_member.h"
#include "core/runs/run_dir.h"
#include "core/training/interventions/length_eval.h"
#include "core/training/recording/saved_run.h"

namespace attn {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string lr_text(double lr) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", lr);
  return buf;
}

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

double base_lr(const json& config) {
  const json lr = get_dotted(config, "train.lr");
  return lr.is_number() ? lr.get<double>() : TrainConfig{}.lr;
}

uint64_t base_seed(const json& config) {
  return config.contains("seed") && config["seed"].is_number_unsigned()
             ? config["seed"].get<uint64_t>()
             : ExperimentConfig{}.seed;
}

json interval_json(const MeanInterval& m) {
  if (m.n < 2) return nullptr;
  return json::array({m.lo, m.hi});
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
  plan.threshold = m.value("threshold", 0.9);
  const json quick_overrides = quick && m.contains("quick") ? json_member(m["quick"], "set", json::object())
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
    if (want_tasks.empty()) want_tasks = names_of(json_member(m["quick"], "tasks", json()), "quick.tasks");
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
      p.dir = sanitize_run_name(plan.tasks[t].name) + "/" +
              sanitize_run_name(plan.mechanisms[k].name);
      p.config = plan.tasks[t].config;
      apply_overrides(p.config, plan.mechanisms[k].set);
      apply_overrides(p.config, json_member(plan.tasks[t].per_mechanism, plan.mechanisms[k].name, json::object()));
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
  return plan;
}

SweepPlan suite_grid_plan(const SuitePlan& plan, const SuitePair& pair) {
  std::vector<SweepArm> arms;
  const double lr = base_lr(pair.config);
  for (double g : plan.lr_grid) {
    SweepArm arm;
    arm.name = "lr=" + lr_text(lr * g);
    arm.config = pair.config;
    set_dotted(arm.config, "train.lr", std::stod(lr_text(lr * g)));
    arms.push_back(std::move(arm));
  }
  return plan_sweep(arms, {}, 1);
}

SweepPlan suite_seeds_plan(const SuitePlan& plan, const SuitePair& pair, double lr) {
  SweepPlan out;
  if (plan.seeds < 2) return out;
  SweepArm arm;
  arm.name = "lr=" + lr_text(lr);
  arm.config = pair.config;
  set_dotted(arm.config, "train.lr", lr);
  arm.config["seed"] = base_seed(pair.config) + 1;
  return plan_sweep({arm}, {}, plan.seeds - 1);
}

LrChoice choose_learning_rate(const SuitePlan& plan, const SuitePair& pair,
                              const std::string& out_dir) {
  LrChoice choice;
  const SweepPlan grid = suite_grid_plan(plan, pair);
  for (const auto& cell : grid.cells) {
    LrTrial trial;
    trial.lr = cell.config.train.lr;
    trial.run = pair.dir + "/grid/" + cell.dir;
    const std::string dir = (fs::path(out_dir) / trial.run).string();
    if (cell_state(out_dir + "/" + pair.dir + "/grid", cell) == CellState::Done) {
      const RunDirectory run = read_run_directory(dir);
      trial.finished = true;
      trial.diverged = run.summary.value("diverged", false);
      if (!trial.diverged) {
        SavedSession saved(run);
        const EvalFigures v = evaluate_validation(saved.session());
        trial.validation_loss = v.loss;
        trial.validation_accuracy = v.accuracy;
        if (!std::isfinite(v.loss)) trial.diverged = true;
      }
    }
    choice.trials.push_back(trial);
  }
  for (int i = 0; i < static_cast<int>(choice.trials.size()); ++i) {
    const LrTrial& t = choice.trials[i];
    if (!t.finished || t.diverged) continue;
    if (choice.chosen < 0) {
      choice.chosen = i;
      continue;
    }
    const LrTrial& best = choice.trials[choice.chosen];
    if (t.validation_accuracy > best.validation_accuracy + 1e-9 ||
        (std::fabs(t.validation_accuracy - best.validation_accuracy) <= 1e-9 &&
         t.validation_loss < best.validation_loss))
      choice.chosen = i;
  }
  return choice;
}

SuiteOutcome run_suite(const SuitePlan& plan, const SuiteRunOptions& o) {
  if (o.shard_count < 1 || o.shard_index < 0 || o.shard_index >= o.shard_count)
    throw Error("--shard: index must be in [0, count)");
  fs::create_directories(o.out_dir);
  json manifest = {{"title", plan.title},     {"quick", plan.quick},
                   {"seeds", plan.seeds},     {"lr_grid", plan.lr_grid},
                   {"threshold", plan.threshold}, {"pairs", json::array()}};
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

  std::vector<const SuitePair*> mine;
  for (const auto& p : plan.pairs)
    if (p.index % o.shard_count == o.shard_index) mine.push_back(&p);
  std::mutex log_mutex, outcome_mutex;
  auto log = [&](const std::string& line) {
    if (!o.log) return;
    std::lock_guard<std::mutex> lock(log_mutex);
    o.log(line);
  };
  SuiteOutcome outcome;
  outcome.pairs = static_cast<int>(mine.size());
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::exception_ptr failure;
  auto run_pair = [&](const SuitePair& pair) {
    const std::string pair_dir = (fs::path(o.out_dir) / pair.dir).string();
    auto sweep = [&](const SweepPlan& sp, const std::string& sub) {
      if (sp.cells.empty()) return;
      SweepRunOptions so;
      so.out_dir = pair_dir + "/" + sub;
      so.threads = o.threads;
      so.jobs = 1;
      so.checkpoint_every = o.checkpoint_every;
      so.runner = o.runner;
      so.log = [&](const std::string& line) { log(pair.dir + ": " + line); };
      const SweepOutcome r = run_sweep(sp, so);
      std::lock_guard<std::mutex> lock(outcome_mutex);
      outcome.ran += r.ran;
      outcome.resumed += r.resumed;
      outcome.skipped += r.skipped;
      outcome.diverged += r.diverged;
    };
    sweep(suite_grid_plan(plan, pair), "grid");
    const LrChoice choice = choose_learning_rate(plan, pair, o.out_dir);
    if (choice.chosen < 0) {
      log(pair.dir + ": every learning rate of the grid diverged; no further seeds");
      return;
    }
    const double lr = choice.trials[choice.chosen].lr;
    log(pair.dir + ": learning rate " + lr_text(lr) + " chosen on the validation set");
    sweep(suite_seeds_plan(plan, pair, lr), "seeds");
  };
  auto worker = [&] {
    for (;;) {
      if (stop) return;
      const size_t i = next++;
      if (i >= mine.size()) return;
      try {
        run_pair(*mine[i]);
      } catch (...) {
        std::lock_guard<std::mutex> lock(outcome_mutex);
        if (!failure) failure = std::current_exception();
        stop = true;
        return;
      }
    }
  };
  // In-process training (no runner) sets torch's global thread count: one pair at a time.
  const int jobs =
      o.runner ? std::max(1, std::min<int>(o.jobs, static_cast<int>(mine.size()))) : 1;
  std::vector<std::thread> workers;
  for (int j = 0; j < jobs; ++j) workers.emplace_back(worker);
  for (auto& w : workers) w.join();
  if (failure) std::rethrow_exception(failure);
  return outcome;
}

json suite_leaderboard(const SuitePlan& plan, const std::string& out_dir) {
  json board = {{"title", plan.title},         {"quick", plan.quick},
                {"seeds", plan.seeds},         {"threshold", plan.threshold},
                {"lr_grid", plan.lr_grid},     {"tasks", json::array()},
                {"mechanisms", json::array()}, {"cells", json::array()}};
  for (const auto& t : plan.tasks) {
    const ExperimentConfig c = parse_config(t.config, t.name);
    json row = {{"name", t.name}, {"task", c.task.name}, {"source", t.source},
                {"extrapolate", t.extrapolate}};
    try {
      row["key"] = length_key(c.task);
      row["trained_length"] = task_length(c.task);
    } catch (const Error&) {
      row["key"] = nullptr;
    }
    board["tasks"].push_back(row);
  }
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
    const LrChoice choice = choose_learning_rate(plan, pair, out_dir);
    json trials = json::array();
    bool grid_done = true;
    for (const auto& t : choice.trials) {
      grid_done &= t.finished;
      json j = {{"lr", t.lr}, {"run", t.run}, {"finished", t.finished}, {"diverged", t.diverged}};
      if (t.finished && !t.diverged) {
        j["validation_loss"] = t.validation_loss;
        j["validation_accuracy"] = t.validation_accuracy;
      }
      trials.push_back(j);
    }
    cell["lr_grid"] = trials;
    cell["lr_chosen"] = nullptr;
    if (choice.chosen < 0) {
      if (grid_done) cell["status"] = "diverged";
      board["cells"].push_back(cell);
      continue;
    }
    const LrTrial& chosen = choice.trials[choice.chosen];
    cell["lr_chosen"] = chosen.lr;
    std::vector<std::string> runs = {chosen.run};
    const SweepPlan seeds = suite_seeds_plan(plan, pair, chosen.lr);
    bool all_done = true;
    for (const auto& c : seeds.cells) {
      if (cell_state(out_dir + "/" + pair.dir + "/seeds", c) == CellState::Done)
        runs.push_back(pair.dir + "/seeds/" + c.dir);
      else
        all_done = false;
    }
    std::vector<double> accuracy, loss, reached_at;
    std::vector<std::vector<double>> at_length(task.extrapolate.size());
    std::vector<std::string> refused(task.extrapolate.size());
    int diverged = 0;
    json run_list = json::array();
    for (const auto& rel : runs) {
      const RunDirectory run = read_run_directory((fs::path(out_dir) / rel).string());
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
