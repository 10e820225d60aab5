// `attnlab data`: a config's eval set and probe, exactly as training builds them, as JSON.
#include "app/cli/run/cli_data.h"

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli/cli.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/version.h"
#include "core/config/config.h"
#include "core/config/config_set.h"
#include "core/data/task_dump.h"

namespace attn {
namespace {

constexpr const char* kDataFooter =
    R"(Builds the config's task as `attnlab train` does (its seed, train.eval_batches and
train.batch_size) and writes its eval set and probe as JSON: {"attnlab", "config", "task", "seed",
"vocab", "sequence_length", "patch_dim", "eval_batches" (the set's size), "eval": [{"inputs",
"targets"}, ...] (the first --batches; token ids, -1 = not scored; image tasks: patch features
and class labels), "probe"}. For comparing another implementation's data with attnlab's: the
Python package's generators are tested against it token for token. --set key=value overrides a
config key as train's does. --out never replaces a file.)";

}  // namespace

CLI::App* add_command(CLI::App& app, DataArgs& a) {
  auto* cmd = app.add_subcommand(
      "data", "Write a config's eval set and probe as attnlab builds them (JSON), for comparing");
  cmd->add_option("--config", a.config, "Experiment config (JSON), e.g. assets/configs/copy.json")
      ->required();
  cmd->add_option("--set", a.set, kConfigSetHelp);
  cmd->add_option("--batches", a.batches, "Only the first N eval batches (default: all)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--out", a.out, "Write the JSON to this new file (default: standard output)");
  return with_footer(cmd, kDataFooter);
}

int run_command(const DataArgs& a) {
  return run_reporting_errors("data", [&] {
    std::error_code ec;
    if (!a.out.empty() &&
        std::filesystem::symlink_status(a.out, ec).type() != std::filesystem::file_type::not_found)
      throw Error("--out " + a.out + ": exists; attnlab data writes a new file only");
    const ExperimentConfig config = load_config_with_sets(a.config, a.set);
    nlohmann::json j = {{"attnlab", version_string()}, {"config", a.config}};
    if (!a.set.empty()) j["set"] = a.set;
    j.update(task_data_json(config, a.batches));
    const std::string text = j.dump() + "\n";
    if (a.out.empty())
      std::cout << text;
    else
      write_file_atomic(a.out, text);
    return kExitOk;
  });
}

}  // namespace attn
