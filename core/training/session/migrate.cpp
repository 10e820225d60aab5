#include "core/training/session/migrate.h"

#include <filesystem>

#include "core/base/error.h"
#include "core/runs/directory/run_files.h"
#include "core/runs/directory/run_lock.h"
#include "core/training/session/session.h"

namespace attn {
namespace fs = std::filesystem;

CheckpointFormat checkpoint_format_of(const std::string& run) {
  std::error_code ec;
  CheckpointFormat f;
  if (fs::exists(fs::path(run) / "checkpoint" / "state.json", ec))
    f.checkpoint = (fs::path(run) / "checkpoint").string();
  else if (fs::exists(fs::path(run) / "state.json", ec))
    f.checkpoint = run;
  else
    throw Error(run + " holds no attnlab checkpoint (no " + run + "/checkpoint/state.json)");
  f.version = TrainingSession::checkpoint_format_version(f.checkpoint);
  return f;
}

int64_t migrate_run(const std::string& run) {
  const CheckpointFormat f = checkpoint_format_of(run);
  const fs::path run_dir = fs::path(f.checkpoint).parent_path();
  RunDirLock lock(run_dir.string(), "attnlab migrate", false);
  // The save replaces checkpoint/ whole: what the user put there would go with it.
  const auto foreign = foreign_checkpoint_entries(run_dir.string());
  if (!foreign.empty())
    throw Error(f.checkpoint + " holds " + join_file_names(foreign) +
                ", which attnlab did not write; converting replaces that folder whole, so move "
                "them elsewhere first");
  return TrainingSession::migrate_old_format(f.checkpoint);
}

int64_t downgrade_run_for_tests(const std::string& run) {
  const CheckpointFormat f = checkpoint_format_of(run);
  RunDirLock lock(fs::path(f.checkpoint).parent_path().string(), "attnlab migrate (tests)", false);
  return TrainingSession::downgrade_for_tests(f.checkpoint);
}

}  // namespace attn
