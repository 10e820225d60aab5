#include "core/base/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/base/error.h"

namespace attn {
namespace fs = std::filesystem;

namespace {

std::string errno_text() {
  return std::strerror(errno);
}

// fsync of a directory makes a rename inside it durable; best effort (some file systems
// refuse it, and the rename itself is still atomic).
void sync_directory(const fs::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// rename() over a device node, a FIFO, a symlink or a directory would silently swap the
// directory entry (a device node would become a plain file): refuse anything but a regular file.
void require_replaceable(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return;  // absent, or a file
  const char* what = S_ISDIR(st.st_mode)    ? "a directory"
                     : S_ISLNK(st.st_mode)  ? "a symbolic link"
                     : S_ISFIFO(st.st_mode) ? "a FIFO (named pipe)"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "a device";
  throw Error("cannot write " + path + ": it is " + what +
              "; attnlab replaces only regular files (choose another output path)");
}

}  // namespace

int write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return ENOSPC;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return 0;
}

std::string temporary_path(const std::string& path) {
  return path + ".tmp." + std::to_string(::getpid());
}

void sync_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw Error("cannot open " + path + " to flush it: " + errno_text());
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw Error("cannot flush " + path + " to disk: " + errno_text());
}

namespace {

// Writes text to temporary_path(path) and flushes it to disk; returns that name. On failure
// the temporary is removed and attn::Error names `path`.
std::string write_temporary(const std::string& path, const std::string& text) {
  const std::string tmp = temporary_path(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("cannot write " + path + ": " + errno_text());
  if (const int err = write_all(fd, text.data(), text.size())) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw Error("cannot write " + path + ": " + std::strerror(err));
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw Error("cannot write " + path + ": " + why);
  }
  return tmp;
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& text) {
  require_replaceable(path);
  const std::string tmp = write_temporary(path, text);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw Error("cannot write " + path + ": " + why);
  }
  sync_directory(fs::path(path).parent_path());
}

void write_files_atomic(const std::vector<std::pair<std::string, std::string>>& files) {
  struct Staged {
    std::string tmp, path;
    bool existed = false, renamed = false;
  };
  std::vector<Staged> staged;
  // On failure: temporaries go, and so do files this call created (files it replaced cannot be
  // restored, which is why every file is written before the first rename).
  auto discard = [&] {
    std::error_code ignore;
    for (const Staged& s : staged) {
      if (!s.renamed)
        fs::remove(s.tmp, ignore);
      else if (!s.existed)
        fs::remove(s.path, ignore);
    }
  };
  try {
    for (const auto& [path, text] : files) {
      std::error_code ec;
      require_replaceable(path);
      Staged s;
      s.path = path;
      s.existed = fs::exists(path, ec);
      s.tmp = write_temporary(path, text);
      staged.push_back(std::move(s));
    }
    for (auto it = staged.rbegin(); it != staged.rend(); ++it) {  // the first file last
      if (std::rename(it->tmp.c_str(), it->path.c_str()) != 0)
        throw Error("cannot rename " + it->tmp + " to " + it->path + ": " + errno_text());
      it->renamed = true;
    }
  } catch (const Error&) {
    discard();
    throw;
  }
  for (const Staged& s : staged) sync_directory(fs::path(s.path).parent_path());
}

void replace_directory(const std::string& staged, const std::string& target) {
  std::error_code ec;
  const fs::path parent = fs::path(target).parent_path();
  if (!fs::exists(target, ec)) {
    fs::rename(staged, target, ec);
    if (ec) throw Error("cannot move " + staged + " to " + target + ": " + ec.message());
    sync_directory(parent);
    return;
  }
#ifdef RENAME_EXCHANGE
  if (::renameat2(AT_FDCWD, staged.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
    sync_directory(parent);
    fs::remove_all(staged, ec);  // now holds the old contents
    return;
  }
#endif
  // No atomic exchange here: old aside, new in place, old removed. A kill between the two
  // renames leaves only "<target>.old-<pid>", which recover_directory() puts back.
  const std::string old = target + ".old-" + std::to_string(::getpid());
  fs::remove_all(old, ec);
  fs::rename(target, old, ec);
  if (ec) throw Error("cannot replace " + target + ": " + ec.message());
  fs::rename(staged, target, ec);
  if (ec) {
    std::error_code ignored;
    fs::rename(old, target, ignored);
    throw Error("cannot replace " + target + ": " + ec.message());
  }
  sync_directory(parent);
  fs::remove_all(old, ec);
}

bool recover_directory(const std::string& target) {
  std::error_code ec;
  if (fs::exists(target, ec)) return false;
  const fs::path t(target);
  const fs::path parent = t.parent_path().empty() ? fs::path(".") : t.parent_path();
  const std::string prefix = t.filename().string() + ".old-";
  fs::path newest;
  fs::file_time_type newest_time{};
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0 || !it->is_directory(ec)) continue;
    const auto time = fs::last_write_time(it->path(), ec);
    if (newest.empty() || time > newest_time) newest = it->path(), newest_time = time;
  }
  if (newest.empty()) return false;
  fs::rename(newest, t, ec);
  return !ec;
}

void remove_stale_siblings(const std::string& target) {
  std::error_code ec;
  const fs::path t(target);
  const fs::path parent = t.parent_path().empty() ? fs::path(".") : t.parent_path();
  const std::string name = t.filename().string();
  const bool target_exists = fs::exists(t, ec);
  std::vector<fs::path> stale;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string entry = it->path().filename().string();
    for (const char* tag : {".tmp.", ".tmp-", ".old-"}) {
      const std::string prefix = name + tag;
      if (entry.rfind(prefix, 0) != 0) continue;
      const std::string digits = entry.substr(prefix.size());
      if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) continue;
      const long pid = std::strtol(digits.c_str(), nullptr, 10);
      const bool alive = ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
      if (std::string(tag) == ".old-" ? target_exists : (!alive || pid == ::getpid()))
        stale.push_back(it->path());
    }
  }
  for (const auto& p : stale) fs::remove_all(p, ec);
}

}  // namespace attn
