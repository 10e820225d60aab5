#include "core/runs/directory/run_list.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <unordered_set>

#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/runs/directory/run_lock.h"

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

namespace {

struct FileInfo {
  bool exists = false;
  uint64_t size = 0, inode = 0;
};

FileInfo file_info(const std::string& path) {
  FileInfo f;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return f;
  f.exists = true;
  f.size = static_cast<uint64_t>(st.st_size);
  f.inode = static_cast<uint64_t>(st.st_ino);
  return f;
}

int64_t mtime_ns(const fs::path& p) {
  std::error_code ec;
  const auto time = fs::last_write_time(p, ec);
  if (ec) return 0;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
}

// Bytes [offset, offset + count) of a regular file (opened non-blocking, like read_regular_file).
std::string read_range(const std::string& path, uint64_t offset, uint64_t count) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open " + path + ": " + std::strerror(errno));
  std::string out(count, '\0');
  size_t got = 0;
  while (got < count) {
    const ssize_t n = ::pread(fd, &out[got], count - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

}  // namespace

double seconds_since_file_time(int64_t ns) {
  if (ns == 0) return 0;
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          fs::file_time_type::clock::now().time_since_epoch())
                          .count();
  return std::max<double>(0, (now - ns) * 1e-9);
}

void FollowedRun::read_metrics_whole(const std::string& path) {
  const std::string text = read_regular_file(path);
  const size_t complete =
      text.empty() || text.back() == '\n' ? text.size() : text.rfind('\n') + 1;  // npos + 1 == 0
  parse_metrics_csv(text, path, run_);
  header_ = text.substr(0, text.find('\n'));
  metrics_offset_ = complete;
  ++whole_reads_;
}

// Parses the whole lines appended since the last read and appends their rows; false when the
// file must be parsed whole instead (a row whose step does not follow the last one).
bool FollowedRun::read_metrics_appended(const std::string& path, uint64_t size) {
  const std::string chunk = read_range(path, metrics_offset_, size - metrics_offset_);
  const size_t complete = chunk.rfind('\n') == std::string::npos ? 0 : chunk.rfind('\n') + 1;
  if (complete == 0) return true;  // only part of a line so far
  RunDirectory rows;
  parse_metrics_csv(header_ + "\n" + chunk.substr(0, complete),
                    path + " (rows after " + std::to_string(run_.rows) + ")", rows);
  const int64_t last = last_step();
  for (const Series* s :
       {&rows.train_loss, &rows.eval_loss, &rows.eval_accuracy, &rows.learning_rate})
    if (!s->steps.empty() && run_.rows > 0 && s->steps.front() <= last) return false;
  auto append = [](Series& to, const Series& from) {
    to.steps.insert(to.steps.end(), from.steps.begin(), from.steps.end());
    to.values.insert(to.values.end(), from.values.begin(), from.values.end());
  };
  append(run_.train_loss, rows.train_loss);
  append(run_.eval_loss, rows.eval_loss);
  append(run_.eval_accuracy, rows.eval_accuracy);
  append(run_.learning_rate, rows.learning_rate);
  run_.rows += rows.rows;
  metrics_offset_ += complete;
  ++appended_reads_;
  return true;
}

bool FollowedRun::refresh() {
  const std::string state_before = state_, error_before = error_;
  const fs::path d(dir_);
  std::error_code ec;
  const bool locked = !run_lock_holder(dir_).empty();
  if (read_ && !fs::is_directory(d, ec)) {
    // Deleted (or moved) after it was read: the last reading stays, marked.
    const bool news = !gone_;
    gone_ = true;
    error_ = dir_ + " is gone (deleted or moved); the data shown is the last read";
    state_ = "deleted";
    if (news) ++version_;
    return news;
  }
  int64_t newest = 0;
  const std::string meta =
      file_stamp(d / "config.json", &newest) + "|" + file_stamp(d / "summary.json", &newest);
  const std::string metrics = (d / "metrics.csv").string();
  const FileInfo mf = file_info(metrics);
  const int64_t metrics_ns = mf.exists ? mtime_ns(metrics) : 0;
  newest = std::max(newest, metrics_ns);
  const int64_t checkpoint_ns = mtime_ns(d / "checkpoint" / "state.json");
  newest = std::max(newest, checkpoint_ns);
  bool changed = false;
  try {
    if (!read_ || gone_ || meta != meta_stamp_) {
      RunDirectory fresh = read_run_directory(dir_);
      // read_run_directory parsed metrics.csv as it was then; read it again to know its length
      // (a row may have been appended in between), so later reads start where this one ended.
      std::swap(run_, fresh);
      try {
        read_metrics_whole(metrics);
      } catch (...) {
        std::swap(run_, fresh);
        throw;
      }
      meta_stamp_ = meta;
      changed = true;
    } else if (mf.exists && (mf.inode != metrics_inode_ || mf.size < metrics_offset_)) {
      RunDirectory keep = run_;
      try {
        read_metrics_whole(metrics);  // replaced or shrunk: parsed again whole
      } catch (...) {
        run_ = std::move(keep);
        throw;
      }
      changed = true;
    } else if (mf.exists && mf.size > metrics_offset_) {
      const int64_t rows = run_.rows;
      if (!read_metrics_appended(metrics, mf.size)) {
        RunDirectory keep = run_;
        try {
          read_metrics_whole(metrics);
        } catch (...) {
          run_ = std::move(keep);
          throw;
        }
      }
      changed = run_.rows != rows;
    }
    if (mf.exists) metrics_inode_ = mf.inode, metrics_mtime_ = metrics_ns;
    const bool has_checkpoint = checkpoint_ns != 0;
    if (checkpoint_ns != checkpoint_stamp_ || has_checkpoint != run_.has_checkpoint) {
      run_.has_checkpoint = has_checkpoint;
      checkpoint_stamp_ = checkpoint_ns;
      changed = true;
    }
    read_ = true;
    gone_ = false;
    error_.clear();
  } catch (const std::exception& e) {
    error_ = e.what();  // the last good reading stays
  }
  if (changed) {
    newest_change_ = newest;
    ++version_;
    if (first_rows_ < 0) first_rows_ = run_.rows;
    shared_ = std::make_shared<const RunDirectory>(run_);
  }
  update_state(locked);
  // A writer that stopped or a new error is news too, though no file changed.
  return changed || state_ != state_before || error_ != error_before;
}

void FollowedRun::update_state(bool locked) {
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
}

RunView FollowedRun::view() const {
  // In RunView's order: dir, readable, gone, run, state, error, version, then rows, first_rows,
  // last_step, checkpoint_stamp, newest_change_ns.
  return RunView{
      dir_,          read_,       gone_,       shared_,           state_,        error_, version_,
      metric_rows(), first_rows_, last_step(), checkpoint_stamp_, newest_change_};
}

int64_t FollowedRun::last_step() const {
  int64_t step = 0;
  for (const Series* s : {&run_.train_loss, &run_.eval_loss})
    if (!s->steps.empty()) step = std::max(step, s->steps.back());
  return step;
}

double FollowedRun::age_seconds() const {
  return seconds_since_file_time(newest_change_);
}

struct RunWatcher::Shared {
  double refresh_seconds = 0.5, rescan_seconds = 2.0;
  mutable std::mutex mu;
  std::condition_variable wake;
  bool stop = false, poked = false;
  std::vector<std::string> roots;  // requests, drained by the thread
  // follow (true) and unfollow (false) requests, in the order they were made: a folder dropped
  // and added again before the thread wakes ends up followed.
  std::vector<std::pair<std::string, bool>> follows;
  std::shared_ptr<const std::vector<RunView>> latest = std::make_shared<std::vector<RunView>>();
  uint64_t serial = 0;
};

RunWatcher::RunWatcher(double refresh_seconds, double rescan_seconds)
    : s_(std::make_unique<Shared>()) {
  s_->refresh_seconds = refresh_seconds;
  s_->rescan_seconds = rescan_seconds;
  thread_ = std::thread([this] { run(); });
}

RunWatcher::~RunWatcher() {
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->stop = true;
  }
  s_->wake.notify_all();
  thread_.join();
}

void RunWatcher::add_root(const std::string& dir) {
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->roots.push_back(dir);
    s_->poked = true;
  }
  s_->wake.notify_all();
}

void RunWatcher::follow(const std::string& dir) {
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->follows.emplace_back(dir, true);
    s_->poked = true;
  }
  s_->wake.notify_all();
}

void RunWatcher::unfollow(const std::string& dir) {
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->follows.emplace_back(dir, false);
    s_->poked = true;
  }
  s_->wake.notify_all();
}

void RunWatcher::poke() {
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->poked = true;
  }
  s_->wake.notify_all();
}

std::shared_ptr<const std::vector<RunView>> RunWatcher::latest() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->latest;
}

uint64_t RunWatcher::serial() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->serial;
}

void RunWatcher::run() {
  using Clock = std::chrono::steady_clock;
  std::vector<std::string> roots;
  std::vector<std::unique_ptr<FollowedRun>> runs;
  std::vector<std::string> dropped;
  std::unordered_set<std::string> listed;
  bool changed = true;  // something to publish: the first list, a run added, dropped or changed
  auto add = [&](const std::string& dir) {
    if (std::find(dropped.begin(), dropped.end(), dir) == dropped.end() &&
        listed.insert(dir).second) {
      runs.push_back(std::make_unique<FollowedRun>(dir));
      changed = true;
    }
  };
  Clock::time_point last_scan{};
  bool first = true;
  for (;;) {
    bool rescan = false;
    {
      std::unique_lock<std::mutex> lock(s_->mu);
      if (!first)
        s_->wake.wait_for(lock, std::chrono::duration<double>(s_->refresh_seconds),
                          [&] { return s_->stop || s_->poked; });
      first = false;
      if (s_->stop) return;
      rescan = s_->poked;
      s_->poked = false;
      for (std::string& r : s_->roots)
        if (std::find(roots.begin(), roots.end(), r) == roots.end()) roots.push_back(r);
      for (const auto& [d, follow] : s_->follows) {
        changed = true;
        dropped.erase(std::remove(dropped.begin(), dropped.end(), d), dropped.end());
        if (follow) {
          add(d);
          continue;
        }
        dropped.push_back(d);
        listed.erase(d);
        runs.erase(
            std::remove_if(runs.begin(), runs.end(), [&](const auto& r) { return r->dir() == d; }),
            runs.end());
      }
      s_->roots.clear(), s_->follows.clear();
    }
    const auto now = Clock::now();
    if (rescan || now - last_scan >= std::chrono::duration<double>(s_->rescan_seconds)) {
      last_scan = now;
      for (const std::string& root : roots) {
        try {
          for (const std::string& r : find_run_dirs(root)) add(r);
        } catch (const std::exception&) {  // the window never dies of a folder
        }
      }
    }
    for (const auto& r : runs) {
      try {
        changed = r->refresh() || changed;  // never throws but for memory
      } catch (const std::exception&) {
      }
    }
    if (!changed) continue;  // the published list is still true: no copies, no new serial
    changed = false;
    auto views = std::make_shared<std::vector<RunView>>();
    views->reserve(runs.size());
    for (const auto& r : runs) views->push_back(r->view());
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->latest = std::move(views);
    ++s_->serial;
  }
}

}  // namespace attn
