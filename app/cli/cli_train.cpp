#include <filesystem>
#include <iostream>

#include "cli/cli.h"
#include "core/config/config.h"
#include "core/base/error.h"
#include "core/training/headless.h"

namespace attn {

CLI::App* add_train_command(CLI::App& app, TrainArgs& a) {
  auto* cmd = app.add_subcommand("train", "Train a model headless and write a run directory");
  cmd->add_option("--config", a.config, "Experiment config (JSON), e.g. assets/configs/copy.json");
  cmd->add_option("--steps", a.steps, "Override train.steps (with --resume: extend the run)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--until", a.until,
                  "Stop and checkpoint at this step (the schedule still spans train.steps)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--seed", a.seed, "Override the global seed")->check(CLI::NonNegativeNumber);
  cmd->add_option("--out", a.out, "Run directory (default: runs/<config name>)");
  cmd->add_option("--resume", a.resume, "Continue the run saved in this run directory");
  cmd->add_option("--threads", a.threads, "Torch threads (default: all cores)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--checkpoint-every", a.checkpoint_every,
                  "Also checkpoint every N steps (a killed run resumes from the last one)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--quiet,-q", a.quiet, "Print only the final summary");
  return cmd;
}

int run_train_command(const TrainArgs& a) {
  try {
    if (a.config.empty() == a.resume.empty())
      throw Error("train: give exactly one of --config FILE or --resume DIR");
    ExperimentConfig config;
    if (!a.config.empty()) config = load_config_file(a.config);
    HeadlessOptions o;
    o.resume_dir = a.resume;
    o.out_dir = !a.out.empty()      ? a.out
                : !a.resume.empty() ? a.resume
                                    : "runs/" + config.name;
    if (a.steps > 0) o.steps = a.steps;
    if (a.until > 0) o.until = a.until;
    if (a.seed >= 0) o.seed = static_cast<uint64_t>(a.seed);
    o.threads = a.threads;
    o.checkpoint_every = a.checkpoint_every;
    if (!a.quiet) o.log = [](const std::string& line) { std::cout << line << std::endl; };
    const RunSummary s = train_headless(config, o);
    std::cout << (s.diverged ? "diverged" : "done") << ": " << s.task << " / " << s.mechanism
              << ", " << s.steps << " steps, eval loss " << s.eval_loss << ", eval accuracy "
              << s.eval_accuracy;
    if (s.baseline_loss > 0) std::cout << " (unigram baseline " << s.baseline_loss << ")";
    std::cout << ", " << s.steps_per_second << " steps/s\n"
              << "outputs: " << std::filesystem::absolute(o.out_dir).string()
              << "/{config.json,metrics.csv,summary.json,checkpoint/}\n";
    return s.diverged ? 3 : 0;
  } catch (const std::exception& e) {
    std::cerr << "attnlab: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace attn
