// Headless subcommands of the attnlab executable.
#pragma once
#include <CLI/CLI.hpp>

namespace attn {

struct TrainArgs {
  std::string config;
  long long steps = -1;
  long long seed = -1;
  long long until = -1;
  std::string out;
  std::string resume;
  int threads = 0;
  bool quiet = false;
};

// Registers `train` on the app; the returned args are filled when it is parsed.
CLI::App* add_train_command(CLI::App& app, TrainArgs& args);
// Runs `attnlab train`; returns the exit code (prints errors, never throws).
int run_train_command(const TrainArgs& args);

}  // namespace attn
