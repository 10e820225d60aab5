// `attnlab config --doc`: docs/guide/config.md on standard output (the config_doc test compares
// it with the committed page).
#include "app/cli/run/cli_config_doc.h"

#include <iostream>

#include "app/cli/cli.h"
#include "core/config/config_keys.h"

namespace attn {

CLI::App* add_command(CLI::App& app, ConfigArgs& a) {
  auto* cmd = app.add_subcommand(
      "config", "Describe the experiment config: every key's type, range, default and meaning");
  cmd->add_flag("--doc", a.doc,
                "Print the reference page as markdown (docs/guide/config.md: attnlab config "
                "--doc > docs/guide/config.md)")
      ->required();
  return with_footer(cmd, "");
}

int run_command(const ConfigArgs&) {
  std::cout << config_doc_markdown();
  return kExitOk;
}

}  // namespace attn
