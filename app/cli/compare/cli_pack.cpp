// `attnlab pack-run` (hidden): one pack of a sweep, suite or reproduction trained in this process
// (app/cli/compare/cli_compare.h's ChildPack starts it; core/training/headless/pack.h trains).
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <mutex>

#include "app/cli/compare/cli_compare.h"
#include "app/cli/progress.h"
#include "core/base/atomic_file.h"
#include "core/base/file_io.h"
#include "core/runs/directory/run_lock.h"
#include "core/training/headless/pack.h"

namespace attn {
namespace fs = std::filesystem;
using nlohmann::json;

CLI::App* add_command(CLI::App& app, PackRunArgs& a) {
  auto* cmd = app.add_subcommand("pack-run", "Train one pack of a sweep (the sweep starts it)");
  cmd->group("");  // not in --help: only a sweep's ChildPack runs it
  cmd->add_option("--spec", a.spec, "The pack's runs (JSON, written by the sweep)")->required();
  cmd->add_option("--result", a.result, "Where each run's exit code is written")->required();
  return cmd;
}

namespace {

// The spec's runs (each {"config", "out", "resume", "tag", "checkpoint_every"}), their progress
// lines prefixed with their tag through `say`.
std::vector<PackRun> read_pack_spec(const json& spec,
                                    const std::function<void(const std::string&)>& say) {
  std::vector<PackRun> runs;
  const long parent = static_cast<long>(getppid());
  for (const json& r : spec.at("runs")) {
    PackRun run;
    // A config that cannot be read refuses its run alone: the others of the pack still train.
    const std::string config = r.at("config").get<std::string>();
    try {
      if (!config.empty()) run.config = load_config_file(config);
    } catch (const std::exception& e) {
      run.refused = e.what();
    }
    HeadlessOptions& h = run.options;
    h.out_dir = r.at("out").get<std::string>();
    h.resume_dir = r.at("resume").get<std::string>();
    h.checkpoint_every = r.at("checkpoint_every").get<int64_t>();
    // The sweep that started this process holds the cell's lock: only then is it not taken
    // again (anyone could run pack-run; a lock held by another process is not ours to skip).
    h.lock = !run_lock_held_by(h.out_dir, parent);
    const std::string tag = r.at("tag").get<std::string>();
    h.log = [say, tag](const std::string& line) { say(tag + ": " + line); };
    runs.push_back(std::move(run));
  }
  if (runs.empty()) throw Error("no runs");
  return runs;
}

}  // namespace

int run_command(const PackRunArgs& a) {
  // Ctrl-C, kill, and a stop forwarded by the sweep: every run checkpoints (a second one of a
  // kind ends the process at once).
  install_stop_signals();
  json spec;
  std::vector<PackRun> runs;
  std::mutex mu;
  bool quiet = false;
  ProgressPrinter progress(false);
  const auto say = [&](const std::string& line) {
    if (quiet && line.find(": step ") != std::string::npos) return;  // as the sweep's -q
    std::lock_guard<std::mutex> lock(mu);
    progress(line);
  };
  try {
    spec = read_json_file(a.spec);
    quiet = spec.value("quiet", false);
    runs = read_pack_spec(spec, say);
  } catch (const std::exception& e) {
    std::cerr << "attnlab pack-run: " << a.spec << ": " << e.what() << "\n";
    return kExitUsage;
  }
  const PackResult r = train_pack(runs);
  progress.finish();
  write_file_atomic(a.result, pack_result_json(r).dump(2) + "\n");
  for (const auto& run : r.runs)
    if (is_interruption(run.exit_code)) return run.exit_code;
  return kExitOk;
}

}  // namespace attn
