#include "core/training/headless/tuned_arms.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/interrupt.h"
#include "core/runs/directory/run_dir.h"
#include "core/training/interventions/length_eval.h"
#include "core/training/recording/saved_run.h"

namespace attn {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

double base_lr(const json& config) {
  const json lr = get_dotted(config, "train.lr");
  return lr.is_number() ? lr.get<double>() : TrainConfig{}.lr;
}

uint64_t base_seed(const json& config) {
  return config.contains("seed") && config["seed"].is_number_unsigned()
             ? config["seed"].get<uint64_t>()
             : ExperimentConfig{}.seed;
}

std::string grid_dir(const TunedArm& arm) {
  return arm.dir + "/grid";
}
std::string extension_dir(const TunedArm& arm, int k) {
  return arm.dir + "/grid-ext" + std::to_string(k);
}

// The best finished, undiverged trial on `criterion`: highest validation accuracy, ties (1e-9) to
// the lower loss; or lowest loss, ties to the higher accuracy. -1 when none.
int best_trial(const std::vector<LrTrial>& trials, LrCriterion criterion) {
  int chosen = -1;
  for (int i = 0; i < static_cast<int>(trials.size()); ++i) {
    const LrTrial& t = trials[i];
    if (!t.finished || t.diverged) continue;
    if (chosen < 0) {
      chosen = i;
      continue;
    }
    const LrTrial& best = trials[chosen];
    const bool better =
        criterion == LrCriterion::loss
            ? t.validation_loss < best.validation_loss - 1e-9 ||
                  (std::fabs(t.validation_loss - best.validation_loss) <= 1e-9 &&
                   t.validation_accuracy > best.validation_accuracy)
            : t.validation_accuracy > best.validation_accuracy + 1e-9 ||
                  (std::fabs(t.validation_accuracy - best.validation_accuracy) <= 1e-9 &&
                   t.validation_loss < best.validation_loss);
    if (better) chosen = i;
  }
  return chosen;
}
std::string seeds_dir(const TunedArm& arm) {
  return arm.dir + "/seeds";
}

// The run's validation figures, from its validation.json when that was computed for this very
// run (its config hash and final step), else evaluated now and written there: a finished run
// never changes, and evaluating a corpus's held-out blocks costs seconds per run.
EvalFigures cached_validation(const RunDirectory& run) {
  const fs::path file = fs::path(run.dir) / "validation.json";
  const json step = run.summary.value("steps", json());
  std::error_code ec;
  if (fs::exists(file, ec)) {
    try {
      const json j = read_json_file(file.string());
      if (j.value("config_hash", "") == run.config_hash && j.value("step", json()) == step &&
          j.at("loss").is_number() && j.at("accuracy").is_number())
        return {j["loss"].get<double>(), j["accuracy"].get<double>()};
    } catch (const std::exception&) {
      // unreadable: evaluate again and rewrite it
    }
  }
  SavedSession saved(run);
  const EvalFigures v = evaluate_validation(saved.session());
  if (std::isfinite(v.loss))
    write_file_atomic(file.string(), json{{"config_hash", run.config_hash},
                                          {"step", step},
                                          {"loss", v.loss},
                                          {"accuracy", v.accuracy}}
                                             .dump(2) +
                                         "\n");
  return v;
}

}  // namespace

std::string lr_text(double lr) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", lr);
  return buf;
}

int read_lr_extend(const json& manifest, const json* quick, const std::string& file, int fallback) {
  int extend = fallback;
  for (const json* block : {&manifest, quick})
    if (block && block->is_object() && block->contains("lr_extend")) {
      const json& e = (*block)["lr_extend"];
      if (!e.is_number_integer() || e.get<int>() < 0 || e.get<int>() > 10)
        throw Error(file + ": " + (block == &manifest ? "" : "quick.") +
                    "lr_extend must be an integer from 0 to 10, got " + e.dump());
      extend = e.get<int>();
    }
  return extend;
}

SweepPlan tuned_grid_plan(const TunedArm& a) {
  std::vector<SweepArm> arms;
  const double lr = base_lr(a.config);
  for (double g : a.lr_grid) {
    SweepArm arm;
    arm.name = "lr=" + lr_text(lr * g);
    arm.config = a.config;
    set_dotted(arm.config, "train.lr", std::stod(lr_text(lr * g)));
    arms.push_back(std::move(arm));
  }
  return plan_sweep(arms, {}, 1);
}

SweepPlan tuned_seeds_plan(const TunedArm& a, double lr) {
  SweepPlan out;
  if (a.seeds < 2) return out;
  SweepArm arm;
  arm.name = "lr=" + lr_text(lr);
  arm.config = a.config;
  set_dotted(arm.config, "train.lr", lr);
  arm.config["seed"] = base_seed(a.config) + 1;
  return plan_sweep({arm}, {}, a.seeds - 1);
}

SweepPlan tuned_extension_plan(const TunedArm& a, double lr) {
  SweepArm arm;
  arm.name = "lr=" + lr_text(lr);
  arm.config = a.config;
  set_dotted(arm.config, "train.lr", lr);
  return plan_sweep({arm}, {}, 1);
}

LrChoice extend_lr_choice(std::vector<LrTrial> grid, const std::vector<double>& lr_grid, int extend,
                          bool validate,
                          const std::function<LrTrial(double lr, int extension)>& extension,
                          LrCriterion criterion) {
  LrChoice choice;
  choice.trials = std::move(grid);
  choice.chosen = best_trial(choice.trials, criterion);
  // The grid's step: the ratio of its two outermost multipliers on each side.
  std::vector<double> g = lr_grid;
  std::sort(g.begin(), g.end());
  const double up = g.size() > 1 ? g[g.size() - 1] / g[g.size() - 2] : 2.0;
  const double down = g.size() > 1 ? g[1] / g[0] : 2.0;
  // +1 highest rate tried, -1 lowest, 0 inside. Diverged trials count: a rate above the choice
  // that diverged bounds it as well as a worse one does (leaderboard_stats' lr_interior agrees).
  auto edge_of = [&]() -> int {
    if (choice.chosen < 0 || choice.trials.size() < 2) return 0;
    double lo = INFINITY, hi = -INFINITY;
    for (const auto& t : choice.trials) lo = std::min(lo, t.lr), hi = std::max(hi, t.lr);
    const double c = choice.trials[choice.chosen].lr;
    return c >= hi ? 1 : c <= lo ? -1 : 0;
  };
  for (int k = 1; validate && k <= extend; ++k) {
    for (const auto& t : choice.trials)
      if (!t.finished) return choice;  // the choice waits for every trial
    const int edge = edge_of();
    if (edge == 0 || up <= 1 || down <= 1) break;
    const double edge_lr = choice.trials[choice.chosen].lr;
    const double next = std::stod(lr_text(edge > 0 ? edge_lr * up : edge_lr / down));
    LrTrial trial = extension(next, k);
    if (!trial.finished) {
      choice.next_rate = next;
      choice.next_extension = k;
      break;
    }
    choice.trials.push_back(trial);
    choice.chosen = best_trial(choice.trials, criterion);
  }
  choice.at_edge = edge_of() != 0;
  return choice;
}

LrChoice choose_tuned_rate(const TunedArm& arm, const std::string& out_dir) {
  const SweepPlan grid = tuned_grid_plan(arm);
  const bool validate = grid.cells.size() > 1;
  // A trial of one cell of a phase directory.
  auto trial_of = [&](const SweepCell& cell, const std::string& dir) {
    LrTrial trial;
    trial.lr = cell.config.train.lr;
    trial.run = dir + "/" + cell.dir;
    if (cell_state(out_dir + "/" + dir, cell) == CellState::Done) {
      const RunDirectory run = read_run_directory((fs::path(out_dir) / trial.run).string());
      trial.finished = true;
      trial.diverged = run.summary.value("diverged", false);
      if (!trial.diverged && validate) {
        const EvalFigures v = cached_validation(run);
        trial.validated = true;
        trial.validation_loss = v.loss;
        trial.validation_accuracy = v.accuracy;
        if (!std::isfinite(v.loss)) trial.diverged = true;
      }
    }
    return trial;
  };
  std::vector<LrTrial> trials;
  for (const auto& cell : grid.cells) trials.push_back(trial_of(cell, grid_dir(arm)));
  return extend_lr_choice(
      std::move(trials), arm.lr_grid, arm.extend, validate,
      [&](double lr, int k) {
        const SweepPlan ext = tuned_extension_plan(arm, lr);
        return trial_of(ext.cells.front(), extension_dir(arm, k));
      },
      arm.criterion);
}

const char* criterion_name(LrCriterion c) {
  return c == LrCriterion::loss ? "loss" : "accuracy";
}

TunedRuns tuned_runs(const TunedArm& arm, const std::string& out_dir) {
  TunedRuns r;
  r.choice = choose_tuned_rate(arm, out_dir);
  r.grid_done = r.choice.next_rate == 0;
  for (const auto& t : r.choice.trials) r.grid_done &= t.finished;
  if (r.choice.chosen < 0) return r;
  const double lr = r.choice.trials[r.choice.chosen].lr;
  r.runs.push_back(r.choice.trials[r.choice.chosen].run);
  r.all_done = r.grid_done;
  for (const auto& c : tuned_seeds_plan(arm, lr).cells) {
    if (cell_state(out_dir + "/" + seeds_dir(arm), c) == CellState::Done)
      r.runs.push_back(seeds_dir(arm) + "/" + c.dir);
    else {
      r.all_done = false;
      r.unfinished.push_back(seeds_dir(arm) + "/" + c.dir);
    }
  }
  return r;
}

json lr_trials_json(const LrChoice& choice) {
  json trials = json::array();
  for (const auto& t : choice.trials) {
    json j = {{"lr", t.lr}, {"run", t.run}, {"finished", t.finished}, {"diverged", t.diverged}};
    if (t.validated && !t.diverged) {
      j["validation_loss"] = t.validation_loss;
      j["validation_accuracy"] = t.validation_accuracy;
    }
    trials.push_back(j);
  }
  return trials;
}

namespace {

// A run of run_tuned_arms's queue.
struct TunedJob {
  size_t arm;
  bool grid;        // a grid run (or an extension of it): the choice follows it
  std::string dir;  // its phase directory, relative to the out dir
  SweepPlan plan;   // shared by an arm's cells of one phase (copied: plans are small)
  int cell;
};

// The sweep options every run of run_tuned_arms trains under (its pack file in o.out_dir).
SweepRunOptions batch_options(const TunedRunOptions& o) {
  SweepRunOptions so;
  so.out_dir = o.out_dir;  // the pack file's place; a run's own sweep directory is set per run
  std::tie(so.shard_index, so.shard_count) = std::tie(o.shard_index, o.shard_count);
  std::tie(so.threads, so.checkpoint_every) = std::tie(o.threads, o.checkpoint_every);
  so.runner = o.runner;
  std::tie(so.pack, so.pack_launcher) = std::tie(o.pack, o.pack_launcher);
  return so;
}

// Trains `batch`: one run through run_sweep, or (with `book`) a pack of runs through
// run_sweep_packed. `log_line(dir, line)` says a line of the run whose phase is `dir`.
SweepOutcome train_batch(
    const TunedRunOptions& o, const std::vector<TunedJob>& batch, PackBook* book,
    const std::function<void(const std::string&, const std::string&)>& log_line) {
  SweepRunOptions so = batch_options(o);
  auto log_of = [&](const std::string& dir) {
    return [&log_line, dir](const std::string& line) { log_line(dir, line); };
  };
  if (!book) {
    so.out_dir = o.out_dir + "/" + batch[0].dir;
    so.index = batch[0].cell;
    so.log = log_of(batch[0].dir);
    return run_sweep(batch[0].plan, so);
  }
  std::vector<PackedSweepCell> cells;
  for (const TunedJob& job : batch)
    cells.push_back({&job.plan, o.out_dir + "/" + job.dir, job.cell, log_of(job.dir)});
  return run_sweep_packed(cells, so, *book);
}

}  // namespace

TunedOutcome run_tuned_arms(const std::vector<TunedArm>& arms, const TunedRunOptions& o) {
  if (o.shard_count < 1 || o.shard_index < 0 || o.shard_index >= o.shard_count)
    throw Error("--shard: index must be in [0, count)");
  using Job = TunedJob;
  std::vector<size_t> mine;
  for (size_t i = 0; i < arms.size(); ++i)
    if (static_cast<int>(i) % o.shard_count == o.shard_index) mine.push_back(i);

  std::mutex mu;  // everything below, and the log
  std::condition_variable wake;
  std::deque<Job> queue;
  std::vector<int> grid_left(arms.size(), 0);
  int running = 0;
  bool stop = false;
  std::exception_ptr failure;
  TunedOutcome outcome;
  outcome.arms = static_cast<int>(mine.size());
  auto log = [&](const std::string& line) {  // called with mu held
    if (o.log) o.log(line);
  };

  // Every phase's sweep.json is written here, by one thread, before any of its cells runs
  // (run_sweep writes it when absent; two threads of one process would share its temporary).
  auto enqueue = [&](size_t a, bool grid, const std::string& dir, const SweepPlan& plan) {
    open_sweep_dir(plan, o.out_dir + "/" + dir);
    for (int c = 0; c < static_cast<int>(plan.cells.size()); ++c)
      queue.push_back({a, grid, dir, plan, c});
  };
  for (size_t a : mine) {
    const SweepPlan grid = tuned_grid_plan(arms[a]);
    grid_left[a] = static_cast<int>(grid.cells.size());
    enqueue(a, true, grid_dir(arms[a]), grid);
  }

  // After an arm's last grid run: choose its rate and queue its seeds (called with mu held).
  auto grid_finished = [&](size_t a) {
    const TunedArm& arm = arms[a];
    const LrChoice choice = choose_tuned_rate(arm, o.out_dir);
    if (choice.next_rate > 0) {  // the best rate is the grid's edge: try one beyond it
      log(arm.dir + ": the best rate so far, " + lr_text(choice.trials[choice.chosen].lr) +
          ", is the edge of the rates tried: trying " + lr_text(choice.next_rate));
      grid_left[a] = 1;
      enqueue(a, true, extension_dir(arm, choice.next_extension),
              tuned_extension_plan(arm, choice.next_rate));
      return;
    }
    if (choice.chosen < 0) {
      log(arm.dir + ": every learning rate of the grid diverged; no further seeds");
      return;
    }
    const double lr = choice.trials[choice.chosen].lr;
    if (choice.trials.size() > 1)
      log(arm.dir + ": learning rate " + lr_text(lr) + " chosen on the validation set's " +
          criterion_name(arm.criterion));
    const SweepPlan seeds = tuned_seeds_plan(arm, lr);
    if (!seeds.cells.empty()) enqueue(a, false, seeds_dir(arm), seeds);
  };

  std::optional<PackBook> book;  // the packs' record, with packs
  if (o.pack > 1 || (o.pack == 1 && o.pack_launcher)) book.emplace(batch_options(o));
  const auto log_line = [&](const std::string& dir, const std::string& line) {
    std::lock_guard<std::mutex> guard(mu);
    log(dir + ": " + line);
  };

  auto worker = [&] {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      wake.wait(lock, [&] { return stop || !queue.empty() || running == 0; });
      if (stop || queue.empty()) return;  // stopped, or nothing queued and nothing running
      // A pack takes what is queued, up to its size; without packs, one run.
      std::vector<Job> batch;
      while (!queue.empty() && static_cast<int>(batch.size()) < std::max(1, o.pack)) {
        batch.push_back(std::move(queue.front()));
        queue.pop_front();
      }
      ++running;
      lock.unlock();
      SweepOutcome r;
      std::exception_ptr error;
      try {
        r = train_batch(o, batch, book ? &*book : nullptr, log_line);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      outcome.ran += r.ran;
      outcome.resumed += r.resumed;
      outcome.skipped += r.skipped;
      outcome.diverged += r.diverged;
      for (const Job& job : batch)
        if (!error && job.grid && --grid_left[job.arm] == 0) {
          try {
            grid_finished(job.arm);
          } catch (...) {
            error = std::current_exception();
          }
        }
      if (error && !failure) failure = error;
      if (error) stop = true;
      --running;
      wake.notify_all();
    }
  };
  // In-process training (no runner) sets torch's global thread count: one run at a time, unless
  // in packs (one torch thread per run).
  const int jobs = o.runner || book ? std::max(1, o.jobs) : 1;
  std::vector<std::thread> workers;
  for (int j = 0; j < jobs; ++j) workers.emplace_back(worker);
  for (auto& w : workers) w.join();
  if (failure) std::rethrow_exception(failure);
  return outcome;
}

}  // namespace attn
