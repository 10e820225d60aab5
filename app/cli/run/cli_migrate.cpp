// `attnlab migrate`: a run's checkpoint from attnlab's old format (TorchScript archives) to the
// data-only one, reading the archives as data (core/runs/formats/legacy_archive.h), never their code.
#include <filesystem>
#include <iostream>

#include "app/cli/cli.h"
#include "core/base/error.h"
#include "core/training/session/migrate.h"

namespace attn {
namespace {

constexpr const char* kMigrateFooter =
    R"(Checkpoints written by earlier attnlab versions hold model.pt and optimizer.pt: TorchScript
archives, and opening one with LibTorch can run code that the file carries. attnlab never opens
them that way: every command refuses such a run and names this one. migrate converts the
checkpoint to model.safetensors, optimizer.safetensors and state.json (data only; resuming stays
bit-identical). It reads the archives' tensors and numbers as data, with a reader that knows
nothing else and never looks at the code they carry, each checked against the run's model; an
archive holding anything more (a class with its own state, a call to any other function) is
refused and nothing changes. The new checkpoint replaces the old one in one step once it is
complete; the old files go with it.)";

}  // namespace

CLI::App* add_command(CLI::App& app, MigrateArgs& a) {
  auto* cmd = app.add_subcommand(
      "migrate", "Convert a run's checkpoint from the old format (TorchScript) to safetensors");
  cmd->add_option("--run", a.run, "Run directory (attnlab train --out)")->required();
  // Earlier versions opened the archives with LibTorch and asked for --trust; it is accepted
  // (hidden) so that scripts keep working, and changes nothing.
  cmd->add_flag("--trust", a.trust, "")->group("");
  // Tests only (an empty group hides it from --help): makes an honest old-format run.
  cmd->add_flag("--to-old-format-for-tests", a.to_old_format, "")->group("");
  return with_footer(cmd, kMigrateFooter);
}

int run_command(const MigrateArgs& a) {
  try {
    if (a.to_old_format) {
      std::cout << "attnlab migrate: wrote " << a.run << "/checkpoint in the old format (step "
                << downgrade_run_for_tests(a.run) << "; tests only)\n";
      return kExitOk;
    }
    const CheckpointFormat f = checkpoint_format_of(a.run);
    if (f.version != 1) {
      std::cout << "attnlab migrate: " << f.checkpoint << " is already in the current format "
                << "(format_version " << f.version << "); nothing to do\n";
      return kExitOk;
    }
    const int64_t step = migrate_run(a.run);
    std::cout << "attnlab migrate: converted " << f.checkpoint << " (step " << step
              << ") from model.pt and optimizer.pt (TorchScript) to model.safetensors, "
                 "optimizer.safetensors and state.json (format_version 2), read as data; the old "
                 "files are removed\n";
    return kExitOk;
  } catch (const Error& e) {
    std::cerr << "attnlab migrate: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "attnlab migrate: " << e.what() << "\n";
    return kExitRunFailed;
  }
}

}  // namespace attn
