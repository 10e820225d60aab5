// `attnlab config --doc` (app/cli/run/cli_config_doc.cpp): the configuration's keys as markdown,
// docs/guide/config.md, from the table the parser reads them with (core/config/config_keys.h).
#pragma once
#include <CLI/CLI.hpp>

namespace attn {

struct ConfigArgs {
  bool doc = false;
};
CLI::App* add_command(CLI::App& app, ConfigArgs& args);
// Prints the page on standard output; writes no file. Returns the exit code.
int run_command(const ConfigArgs& args);

}  // namespace attn
