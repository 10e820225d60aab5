#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

#include "app/cli/cli.h"
#include "app/cli/compare/cli_compare.h"
#include "app/cli/progress.h"
#include "core/base/error.h"
#include "core/base/interrupt.h"
#include "core/config/config.h"
#include "core/config/config_set.h"
#include "core/runs/directory/run_files.h"
#include "core/runs/directory/run_lock.h"
#include "core/training/headless/headless.h"
#include "core/training/session/training_errors.h"

namespace attn {
namespace {

constexpr const char* kTrainFooter =
    R"(Progress goes to stderr (a bar on a terminal), results to stdout: one "done:" or
"diverged:" line and the outputs, or with --json summary.json plus "run_dir" as one JSON
document. --steps shorter than the config's train.warmup scales the warmup down in the config's
ratio (a notice says so); set train.warmup in the config to choose another.
Exits 3 when the loss diverged (the run directory is still written), 2 when the config, the
options or the --resume directory are refused, 1 when training fails (a full disk: the run
stops at the first failed write, says whether its checkpoint was saved), 130/143/129 on
SIGINT/SIGTERM/SIGHUP after saving the checkpoint and a summary marked "interrupted".
One process writes a run directory at a time (a lock): a second is refused naming the first,
or waits with --wait. --out onto attnlab's run is refused unless --force, which removes that
run's own files and nothing else (never a subfolder, never your files); a folder with files of
a run's names that attnlab did not write is refused, --force or not. --resume DIR continues DIR
(or, with --out B, continues into B with DIR's metrics); with --resume, --steps N is the run's
new total length.)";

// --steps N on a config whose warmup is N or longer: the user asked for a shorter run, so the
// warmup keeps its share of the schedule rather than refusing the config.
void fit_warmup_to_steps(ExperimentConfig& config, int64_t steps) {
  const int64_t warmup = config.train.warmup;
  if (warmup < steps) return;
  const int64_t scaled = warmup * steps / std::max<int64_t>(1, config.train.steps);
  config.train.warmup = std::min(scaled, steps - 1);
  std::cerr << "attnlab train: --steps " << steps << " is not longer than train.warmup (" << warmup
            << "); train.warmup scaled to " << config.train.warmup << " (the config's ratio "
            << warmup << "/" << config.train.steps
            << "; set train.warmup in the config to choose another)\n";
}

// Without --out, running the same command again makes a new run beside the old one (a given
// --out onto a run is refused instead: the user named that directory).
std::string fresh_run_dir(const std::string& base) {
  auto taken = [](const std::string& dir) {
    return !run_files_present(dir).empty() || is_run_directory(dir);  // the cheap test first
  };
  if (!taken(base)) return base;
  for (int i = 2;; ++i) {
    const std::string dir = base + "-" + std::to_string(i);
    if (!taken(dir)) return dir;
  }
}

void print_result(const RunSummary& s, const std::string& out_dir) {
  auto measured = [](const std::optional<double>& v) {
    std::ostringstream o;
    if (v)
      o << *v;
    else
      o << "none (no evaluation)";
    return o.str();
  };
  std::cout << (s.diverged ? "diverged" : "done") << ": " << s.task << " / " << s.mechanism << ", "
            << s.steps << " steps, eval loss " << measured(s.eval_loss) << ", eval accuracy "
            << measured(s.eval_accuracy);
  if (s.baseline_loss > 0) std::cout << " (unigram baseline " << s.baseline_loss << ")";
  std::cout << ", " << s.steps_per_second << " steps/s\n"
            << "outputs: " << out_dir << "/{config.json,metrics.csv,summary.json,checkpoint/}\n";
}

}  // namespace

CLI::App* add_command(CLI::App& app, TrainArgs& a) {
  auto* cmd = app.add_subcommand("train", "Train a model headless and write a run directory");
  cmd->add_option("--config", a.config, "Experiment config (JSON), e.g. assets/configs/copy.json");
  cmd->add_option("--set", a.set, kConfigSetHelp);
  auto step_option = [cmd](const char* name, long long& value, const char* help) {
    cmd->add_option(name, value, help)->check(CLI::PositiveNumber);
  };
  step_option("--steps", a.steps, "Override train.steps (with --resume: extend the run)");
  step_option("--until", a.until,
              "Stop and checkpoint at this step (the schedule still spans train.steps)");
  cmd->add_option("--seed", a.seed, "Override the global seed")->check(CLI::NonNegativeNumber);
  cmd->add_option("--out", a.out,
                  "Run directory (default: runs/<config name>, or runs/<name>-2, -3, ... when "
                  "that holds a run)");
  cmd->add_option("--resume", a.resume, "Continue the run saved in this run directory");
  add_run_pacing_options(
      cmd, a.threads, a.checkpoint_every,
      {"Torch threads (default: chosen by measurement, 1 to the usable cores)",
       "Also checkpoint every N steps (a killed run resumes from the last one)"});
  cmd->add_option("--max-threads", a.max_threads,
                  "Top of the measured choice (default: the usable cores; sweep -j N passes "
                  "cores/N)")
      ->check(CLI::Range(1, 4096));
  cmd->add_flag("--quiet,-q", a.quiet, "No progress on stderr, only the result");
  cmd->add_flag("--json", a.json, "Print summary.json (plus run_dir) as one JSON document");
  cmd->add_flag("--force", a.force,
                "--out holds attnlab's run: replace it (only that run's files are removed)");
  cmd->add_flag("--wait", a.wait,
                "Another process is writing --out: wait for it instead of refusing");
  return with_footer(cmd, kTrainFooter);
}

int run_command(const TrainArgs& a) {
  // train_headless throws attn::Error for bad input (the config, the options, the --resume
  // directory), and checks some of it only after its opening line; once a step was logged, any
  // error is a failed run.
  bool stepped = false;
  std::string run_dir;
  ExperimentConfig config;  // also names the size keys in an out-of-memory message
  try {
    if (a.config.empty() == a.resume.empty())
      throw Error("train: give exactly one of --config FILE or --resume DIR");
    if (!a.set.empty() && !a.resume.empty())
      throw Error("train: --set applies to --config; a resumed run keeps its own config.json");
    if (!a.config.empty()) config = load_config_with_sets(a.config, a.set);
    HeadlessOptions o;
    o.resume_dir = a.resume;
    o.out_dir = !a.out.empty()      ? a.out
                : !a.resume.empty() ? a.resume
                                    : fresh_run_dir("runs/" + config.name);
    run_dir = o.out_dir;
    if (a.steps > 0) o.steps = a.steps;
    if (a.steps > 0 && a.resume.empty()) fit_warmup_to_steps(config, a.steps);
    if (a.until > 0) o.until = a.until;
    if (a.seed >= 0) o.seed = static_cast<uint64_t>(a.seed);
    o.threads = a.threads;
    o.max_threads = a.max_threads;
    o.checkpoint_every = a.checkpoint_every;
    o.force = a.force;
    o.wait = a.wait;
    // A sweep that started this process holds the cell's lock for it: the variable names the
    // cell, and the lock must really be held by the parent (anyone can set a variable; two
    // resumes that both skipped the lock once wrote the same run).
    if (const char* held = std::getenv(kRunLockHeldEnv))
      o.lock = std::filesystem::absolute(o.out_dir).string() != held ||
               !run_lock_held_by(o.out_dir, static_cast<long>(getppid()));
    // Ctrl-C, kill and a closed terminal checkpoint the run and say so (a second Ctrl-C ends
    // it at once).
    install_stop_signals();
    ProgressPrinter progress(a.quiet);
    o.log = [&](const std::string& line) {
      stepped = stepped || line.rfind("step ", 0) == 0;
      progress(line);
    };
    const RunSummary s = train_headless(config, o);
    progress.finish();
    const std::string out_dir = std::filesystem::absolute(o.out_dir).string();
    if (a.json) {
      nlohmann::json summary = read_json_file(out_dir + "/summary.json");
      summary["run_dir"] = out_dir;
      std::cout << summary.dump(2) << "\n";
    } else {
      print_result(s, out_dir);
    }
    return s.diverged ? kExitDiverged : kExitOk;
  } catch (const Interrupted& i) {
    std::cerr << "attnlab train: interrupted; the checkpoint and summary.json (\"interrupted\": "
                 "true) are saved, continue with: attnlab train --resume "
              << std::filesystem::absolute(run_dir).string() << "\n";
    return 128 + i.signal;
  } catch (const Error& e) {
    std::cerr << "attnlab train: " << e.what() << "\n";
    return stepped ? kExitRunFailed : kExitUsage;
  } catch (const std::exception& e) {  // torch, out of memory, the file system
    // One or two lines naming the config keys that set the size, never LibTorch's frames.
    if (!a.resume.empty()) {  // the resumed run's config was read inside train_headless
      try {
        config = load_config_file((std::filesystem::path(a.resume) / "config.json").string());
      } catch (const std::exception&) {  // the defaults' names still say which keys matter
      }
    }
    std::cerr << "attnlab train: " << training_failure_message(e, config) << "\n";
    return kExitRunFailed;
  }
}

}  // namespace attn
