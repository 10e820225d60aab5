// `attnlab sweep --lr-grid`: each group of a sweep at its own learning rate
// (app/cli/compare/cli_compare.h, core/training/headless/tuned_arms.h).
#include <iostream>

#include "app/cli/cli.h"
#include "app/cli/compare/cli_compare.h"
#include "core/base/error.h"
#include "core/base/interrupt.h"
#include "core/training/headless/tuned_arms.h"
#include "core/training/interventions/length_eval.h"

namespace attn {
using nlohmann::json;

int run_tuned_sweep(const SweepArgs& a, const SweepPlan& plan) {
  std::vector<TunedArm> arms;
  try {
    if (a.index >= 0)
      throw Error(
          "--lr-grid runs each group's grid, then its seeds at the chosen rate: split it "
          "with --shard i/n (whole groups), not --index");
    for (double g : a.lr_grid)
      if (!(g > 0 && g < 1000))
        throw Error("--lr-grid " + lr_text(g) + ": each multiplier must be in (0, 1000)");
    for (const auto& group : plan.groups) {
      const SweepCell* first = nullptr;
      for (const auto& c : plan.cells)
        if (c.group == group) {
          first = &c;
          break;
        }
      if (const std::string why = validation_refusal(first->config.task); !why.empty())
        throw Error("--lr-grid needs a validation set: " + why);
      TunedArm arm;
      arm.name = group;
      arm.dir = sanitize_run_name(group);
      arm.config = to_json(first->config);  // its seed is the first seed of the group
      arm.lr_grid = a.lr_grid;
      arm.seeds = plan.seeds;
      arm.extend = a.lr_extend;
      arms.push_back(std::move(arm));
    }
  } catch (const std::exception& e) {
    std::cerr << "attnlab sweep: " << e.what() << "\n";
    return kExitUsage;
  }
  if (a.list) {
    for (const auto& arm : arms) {
      const TunedRuns t = tuned_runs(arm, a.out);
      std::cout << arm.dir << "  "
                << (t.all_done    ? "done"
                    : t.grid_done ? "grid done"
                                  : "pending")
                << "\n";
    }
    return kExitOk;
  }
  install_stop_signals();
  CellConsole console(a.quiet, a.jobs);
  auto o = console.run_options<TunedRunOptions>(a.out, a.threads, a.checkpoint_every);
  try {
    console.use_packs(o, resolve_pack(a.slurm.pack, a.threads, kMaxPack));
  } catch (const std::exception& e) {
    std::cerr << "attnlab sweep: " << e.what() << "\n";
    return kExitUsage;
  }
  TunedOutcome outcome;
  if (const auto stopped =
          run_sweep_cells(console, a.shard, o, "runs", [&] { outcome = run_tuned_arms(arms, o); }))
    return *stopped;
  try {
    std::vector<RunDirectory> runs;
    std::vector<std::string> group_of;
    json chosen = json::object();
    for (const auto& arm : arms) {
      const TunedRuns t = tuned_runs(arm, a.out);
      chosen[arm.name] = {
          {"lr_grid", lr_trials_json(t.choice)},
          {"lr_chosen",
           t.choice.chosen >= 0 ? json(t.choice.trials[t.choice.chosen].lr) : json(nullptr)}};
      for (const auto& rel : t.runs) {
        runs.push_back(read_run_directory(a.out + "/" + rel));
        group_of.push_back(arm.name);
      }
    }
    const auto groups = aggregate_runs(runs, group_of);
    if (a.json) {
      json out = outcome_json(outcome, groups);
      out["learning_rates"] = chosen;
      std::cout << out.dump(2) << "\n";
    } else {
      std::cout << outcome_line(outcome) << "\n";
      for (const auto& [name, c] : chosen.items())
        std::cout << name << ": learning rate "
                  << (c["lr_chosen"].is_null() ? std::string("none (every rate diverged)")
                                               : lr_text(c["lr_chosen"].get<double>()))
                  << " chosen on the validation set\n";
      std::cout << group_table_markdown(groups);
    }
  } catch (const std::exception& e) {
    std::cerr << "attnlab sweep: " << e.what() << "\n";
    return kExitRunFailed;
  }
  return outcome.diverged ? kExitDiverged : kExitOk;
}

}  // namespace attn
