// `attnlab data` (app/cli/run/cli_data.cpp): a config's task data as attnlab builds it, written
// as JSON for other implementations to compare against (tests/python/test_task_data.py checks
// the Python package's generators against it, token for token).
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace attn {

struct DataArgs {
  std::string config;            // a config file (hand-written or a run's config.json)
  std::vector<std::string> set;  // --set key=value on it (core/config/config_set.h)
  int batches = 0;               // the first N eval batches; 0: all of them
  std::string out;               // the JSON file to write; empty: standard output
};
CLI::App* add_command(CLI::App& app, DataArgs& args);
// Writes {"task", "vocab", "sequence_length", "patch_dim", "eval_batches", "eval": [{"inputs",
// "targets"}...], "probe"} (image tasks: "probe" is the probe's patches), and "set" (the --set
// specs, when given). Refuses (exit 2, nothing written) a bad config or --set, a task whose data
// is missing, and an --out that exists.
int run_command(const DataArgs& args);

}  // namespace attn
