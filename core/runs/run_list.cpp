#include "core/runs/run_list.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "core/runs/run_lock.h"

namespace attn {
namespace fs = std::filesystem;

namespace {

bool is_run_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "config.json", ec) && fs::exists(dir / "metrics.csv", ec);
}

void collect(const fs::path& dir, int depth, std::vector<std::string>& out) {
  if (is_run_dir(dir)) {
    out.push_back(dir.string());
    return;
  }
  if (depth <= 0) return;
  std::error_code ec;
  std::vector<fs::path> children;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_directory(type_ec) && !it->is_symlink(type_ec)) children.push_back(it->path());
  }
  std::sort(children.begin(), children.end());
  for (const fs::path& child : children) collect(child, depth - 1, out);
}

// "<size>:<mtime>" of a file, "-" when absent: what refresh() compares.
std::string file_stamp(const fs::path& p, int64_t* mtime_ns) {
  std::error_code ec;
  const auto size = fs::file_size(p, ec);
  if (ec) return "-";
  const auto time = fs::last_write_time(p, ec);
  if (ec) return "-";
  const int64_t ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
  if (mtime_ns) *mtime_ns = std::max(*mtime_ns, ns);
  return std::to_string(size) + ":" + std::to_string(ns);
}

}  // namespace

std::vector<std::string> find_run_dirs(const std::string& root, int depth) {
  std::vector<std::string> out;
  if (!root.empty()) collect(fs::path(root), depth, out);
  return out;
}

bool FollowedRun::refresh() {
  const fs::path d(dir_);
  int64_t newest = 0, checkpoint_ns = 0;
  std::string stamp = file_stamp(d / "config.json", &newest) + "|" +
                      file_stamp(d / "metrics.csv", &newest) + "|" +
                      file_stamp(d / "summary.json", &newest) + "|";
  file_stamp(d / "checkpoint" / "state.json", &checkpoint_ns);
  stamp += std::to_string(checkpoint_ns);
  newest = std::max(newest, checkpoint_ns);
  const bool locked = !run_lock_holder(dir_).empty();
  bool changed = false;
  if (stamp != stamp_ || !read_) {
    try {
      RunDirectory fresh = read_run_directory(dir_);
      run_ = std::move(fresh);
      read_ = true;
      error_.clear();
      stamp_ = stamp;
      checkpoint_stamp_ = checkpoint_ns;
      newest_change_ = newest;
      ++version_;
      if (first_rows_ < 0) first_rows_ = run_.rows;
      changed = true;
    } catch (const std::exception& e) {
      error_ = e.what();  // the last good reading stays
    }
  }
  if (!read_) {
    state_ = "unreadable";
  } else if (run_.finished) {
    const bool interrupted = run_.summary.value("interrupted", false);
    if (run_.summary.value("diverged", false) && !interrupted)
      state_ = "diverged";
    else if (interrupted)
      state_ = locked ? "paused" : "stopped";
    else
      state_ = "finished";
  } else {
    state_ = locked ? "live" : "incomplete";
  }
  return changed;
}

int64_t FollowedRun::last_step() const {
  int64_t step = 0;
  for (const Series* s : {&run_.train_loss, &run_.eval_loss})
    if (!s->steps.empty()) step = std::max(step, s->steps.back());
  return step;
}

double FollowedRun::age_seconds() const {
  if (newest_change_ == 0) return 0;
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          fs::file_time_type::clock::now().time_since_epoch())
                          .count();
  return std::max<double>(0, (now - newest_change_) * 1e-9);
}

}  // namespace attn
