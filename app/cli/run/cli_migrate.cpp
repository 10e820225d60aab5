// `attnlab migrate`: a run's checkpoint from attnlab's old format (TorchScript archives) to the
// data-only one, on the user's explicit word (--trust) that the run may run code.
#include <filesystem>
#include <iostream>

#include "app/cli/cli.h"
#include "core/base/error.h"
#include "core/training/session/migrate.h"

namespace attn {
namespace {

constexpr const char* kMigrateFooter =
    R"(Checkpoints written by earlier attnlab versions hold model.pt and optimizer.pt: TorchScript
archives, and opening one can run code that the file carries. attnlab no longer opens them: every command
refuses such a run and names this one. migrate converts the checkpoint to model.safetensors,
optimizer.safetensors and state.json (data only; resuming stays bit-identical). Converting
has to open the archives once, so it runs only with --trust: give it for runs you trained
yourself or got from someone you trust, never for a run of unknown origin. Without --trust it
says what it would do and changes nothing. The new checkpoint replaces the old one in one step
once it is complete; the old files go with it.)";

}  // namespace

CLI::App* add_migrate_command(CLI::App& app, MigrateArgs& a) {
  auto* cmd = app.add_subcommand(
      "migrate", "Convert a run's checkpoint from the old format (TorchScript) to safetensors");
  cmd->add_option("--run", a.run, "Run directory (attnlab train --out)")->required();
  cmd->add_flag("--trust", a.trust,
                "Open the old checkpoint (this can run code from its files): only for runs you "
                "trust");
  // Tests only (an empty group hides it from --help): makes an honest old-format run.
  cmd->add_flag("--to-old-format-for-tests", a.to_old_format, "")->group("");
  return with_footer(cmd, kMigrateFooter);
}

int run_migrate_command(const MigrateArgs& a) {
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
    if (!a.trust) {
      std::cerr << "attnlab migrate: " << f.checkpoint
                << " is in attnlab's old format: model.pt and optimizer.pt are TorchScript "
                   "archives, and converting them means opening them, which can run code that "
                   "the files carry. Convert only a run you trained yourself or trust where it "
                   "came from: attnlab migrate --run "
                << a.run << " --trust. Nothing was changed.\n";
      return kExitUsage;
    }
    const int64_t step = migrate_run(a.run);
    std::cout << "attnlab migrate: converted " << f.checkpoint << " (step " << step
              << ") from model.pt and optimizer.pt (TorchScript) to model.safetensors, "
                 "optimizer.safetensors and state.json (format_version 2); the old files are "
                 "removed\n";
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
