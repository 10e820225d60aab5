#include "core/runs/directory/run_files.h"

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/base/version.h"
#include "core/config/config.h"  // read_json_file
#include "core/runs/formats/tensorboard_events.h"

namespace attn {
namespace fs = std::filesystem;

namespace {

// A JSON document read from path, or null when absent, unreadable or not JSON (the callers only
// ask whether it looks like attnlab's).
nlohmann::json try_read_json(const fs::path& path) {
  try {
    if (!regular_file_or_absent(path.string())) return nullptr;
    return read_json_file(path.string());
  } catch (const std::exception&) {
    return nullptr;
  }
}

bool is_temporary_of(const std::string& entry, const char* name) {
  for (const char* tag : {".tmp.", ".tmp-", ".old-"}) {
    const std::string prefix = std::string(name) + tag;
    if (entry.rfind(prefix, 0) == 0 && entry.size() > prefix.size() &&
        entry.find_first_not_of("0123456789", prefix.size()) == std::string::npos)
      return true;
  }
  return false;
}

void remove_file(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_symlink(path, ec) && fs::is_directory(path, ec))
    throw Error("cannot remove " + path.string() + ": it is a directory, not a file attnlab wrote");
  fs::remove(path, ec);
  if (ec) throw Error("cannot remove " + path.string() + ": " + ec.message());
}

// The step-<N> folders (real ones, no links) in dir/checkpoints.
std::vector<fs::path> kept_checkpoint_folders(const fs::path& dir) {
  std::vector<fs::path> found;
  const fs::path kept = dir / kKeptCheckpointsDir;
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(kept, ec))) return found;
  for (fs::directory_iterator it(kept, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("step-", 0) == 0 && name.size() > 5 &&
        name.find_first_not_of("0123456789", 5) == std::string::npos &&
        fs::is_directory(it->symlink_status(ec)))
      found.push_back(it->path());
  }
  return found;
}

// Entries of checkpoint folder `ckpt` that are not attnlab's, each as prefix + its name.
void add_foreign_entries(const fs::path& ckpt, const std::string& prefix,
                         std::vector<std::string>& foreign) {
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(ckpt, ec))) return;
  for (fs::directory_iterator it(ckpt, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string entry = it->path().filename().string();
    bool ours = false;
    for (const char* name : kCheckpointFiles)
      ours = ours || entry == name || (is_temporary_of(entry, name) && !it->is_directory(ec));
    if (!ours || fs::is_symlink(it->symlink_status(ec)) || it->is_directory(ec))
      foreign.push_back(prefix + entry);
  }
}

// checkpoint folder `ckpt`'s own files (state.json first), then the folder once empty.
void clear_checkpoint_folder(const fs::path& ckpt) {
  std::error_code ec;
  remove_stale_siblings(ckpt.string());  // <ckpt>.tmp-<pid>, .old-<pid> of killed saves
  if (fs::is_symlink(ckpt, ec)) {
    remove_file(ckpt);  // a link in place of the folder: the link goes, never its target
    return;
  }
  if (!fs::is_directory(ckpt, ec)) return;
  remove_file(ckpt / "state.json");
  for (const char* name : kCheckpointFiles) {
    remove_file(ckpt / name);
    remove_stale_siblings((ckpt / name).string());
  }
  if (fs::is_empty(ckpt, ec)) fs::remove(ckpt, ec);
}

}  // namespace

std::string kept_checkpoint_dir(const std::string& dir, int64_t step) {
  return (fs::path(dir) / kKeptCheckpointsDir / ("step-" + std::to_string(step))).string();
}

bool is_run_directory(const std::string& dir) {
  const fs::path d(dir);
  std::error_code ec;
  if (fs::is_regular_file(d / kRunMarkerName, ec)) return true;
  // Runs written before the marker existed.
  const auto state = try_read_json(d / "checkpoint" / "state.json");
  if (state.is_object() && state.value("format", "") == "attnlab-checkpoint") return true;
  const auto summary = try_read_json(d / "summary.json");
  return summary.is_object() && summary.contains("attnlab") && summary.contains("config_hash");
}

std::vector<std::string> run_files_present(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const char* name : kRunFiles)
    if (fs::exists(fs::symlink_status(fs::path(dir) / name, ec))) found.push_back(name);
  if (fs::exists(fs::symlink_status(fs::path(dir) / "checkpoint", ec)))
    found.push_back("checkpoint/");
  return found;
}

std::vector<std::string> foreign_checkpoint_entries(const std::string& dir) {
  std::vector<std::string> foreign;
  add_foreign_entries(fs::path(dir) / "checkpoint", "checkpoint/", foreign);
  return foreign;
}

std::vector<std::string> foreign_kept_checkpoint_entries(const std::string& dir) {
  std::vector<std::string> foreign;
  for (const fs::path& kept : kept_checkpoint_folders(dir))
    add_foreign_entries(
        kept, std::string(kKeptCheckpointsDir) + "/" + kept.filename().string() + "/", foreign);
  return foreign;
}

std::string run_identity(const std::string& dir) {
  const auto marker = try_read_json(fs::path(dir) / kRunMarkerName);
  if (!marker.is_object() || !marker.contains("run_id") || !marker["run_id"].is_string()) return "";
  const std::string id = marker["run_id"].get<std::string>();
  const bool hex = id.size() == 32 && id.find_first_not_of("0123456789abcdef") == std::string::npos;
  return hex ? id : "";
}

std::string mark_run_directory(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error("cannot create run directory " + dir + ": " + ec.message());
  std::string id = run_identity(dir);
  if (id.empty()) {  // a new run (or one from before identities): 128 random bits
    std::random_device rd;
    char hex[33];
    for (int i = 0; i < 4; ++i) std::snprintf(hex + 8 * i, 9, "%08x", static_cast<unsigned>(rd()));
    id = hex;
  }
  const nlohmann::json marker = {
      {"format", "attnlab-run"}, {"attnlab", version_string()}, {"run_id", id}};
  write_file_atomic((fs::path(dir) / kRunMarkerName).string(), marker.dump() + "\n");
  return id;
}

void clear_run_files(const std::string& dir) {
  const fs::path d(dir);
  std::error_code ec;
  // The two files that make a run count (finished; resumable) go first, each in one step: a
  // kill half way leaves a directory that is neither, never a half-deleted one that looks whole.
  remove_file(d / "summary.json");
  if (fs::is_directory(fs::symlink_status(d / "checkpoint", ec)))
    remove_file(d / "checkpoint" / "state.json");
  for (const char* name : kRunFiles) remove_file(d / name);
  for (const char* name : kRunFiles) remove_stale_siblings((d / name).string());
  remove_attnlab_event_files(dir);  // the replaced run's TensorBoard curves, never others
  clear_checkpoint_folder(d / "checkpoint");
  const fs::path kept = d / kKeptCheckpointsDir;
  for (const fs::path& folder : kept_checkpoint_folders(d)) clear_checkpoint_folder(folder);
  if (fs::is_directory(fs::symlink_status(kept, ec)) && fs::is_empty(kept, ec))
    fs::remove(kept, ec);
}

std::string join_file_names(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

}  // namespace attn
