#include "core/runs/directory/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/base/error.h"
#include "core/base/file_io.h"

namespace attn {
namespace fs = std::filesystem;

namespace {

std::string lock_path(const std::string& dir) {
  return (fs::path(dir) / kRunLockName).string();
}

// "pid 123: attnlab train" from the lock file's two lines.
std::string describe_holder(const std::string& path) {
  std::string text;
  try {
    text = read_regular_file(path, 4096);
  } catch (const Error&) {
    return "another process";
  }
  const auto nl = text.find('\n');
  std::string pid = text.substr(0, nl), what;
  if (nl != std::string::npos) what = text.substr(nl + 1);
  while (!what.empty() && (what.back() == '\n' || what.back() == '\r')) what.pop_back();
  if (pid.empty()) return "another process";
  return pid + (what.empty() ? "" : ": " + what);
}

}  // namespace

RunDirLock::RunDirLock(const std::string& dir, const std::string& what, bool wait) : dir_(dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error("cannot create run directory " + dir + ": " + ec.message());
  if (!fs::is_directory(dir, ec)) throw Error(dir + " is not a directory");
  const std::string path = lock_path(dir);
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) throw Error("cannot lock run directory " + dir + ": " + std::strerror(errno));
  // run_lock_holder() probes with a shared lock held for microseconds (a window following this
  // directory does so twice a second): a few short retries tell that probe from a writer.
  int busy_retries = 20;
  while (::flock(fd_, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK && busy_retries-- > 0) {
      ::usleep(10000);
      continue;
    }
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK)
      throw Error("run directory " + dir + " is being written by " + describe_holder(path) +
                  "; wait for it (--wait), or choose another --out");
    throw Error("cannot lock run directory " + dir + ": " + std::strerror(err));
  }
  const std::string text = "pid " + std::to_string(::getpid()) + "\n" + what + "\n";
  if (::ftruncate(fd_, 0) == 0) {
    ssize_t ignored = ::pwrite(fd_, text.data(), text.size(), 0);
    (void)ignored;  // the holder's note is a courtesy; the lock is what counts
  }
}

RunDirLock::~RunDirLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

std::string run_lock_holder(const std::string& dir) {
  const std::string path = lock_path(dir);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return "";
  const bool free = ::flock(fd, LOCK_SH | LOCK_NB) == 0;
  ::close(fd);
  return free ? "" : describe_holder(path);
}

bool run_lock_held_by(const std::string& dir, long pid) {
  const std::string holder = run_lock_holder(dir);
  const std::string mine = "pid " + std::to_string(pid);
  return holder.compare(0, mine.size(), mine) == 0 &&
         (holder.size() == mine.size() || holder[mine.size()] == ':');
}

}  // namespace attn
