#include "core/base/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/base/error.h"

namespace attn {
namespace {

// What a non-regular file is, for the message.
const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

std::string not_regular(const std::string& path, mode_t mode) {
  return path + " is " + kind_of(mode) + "; attnlab reads only regular files";
}

}  // namespace

bool regular_file_or_absent(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return false;
    throw Error("cannot read " + path + ": " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) throw Error(not_regular(path, st.st_mode));
  return true;
}

std::string read_regular_file(const std::string& path, uint64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open " + path + ": " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw Error("cannot read " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw Error(not_regular(path, st.st_mode));
  if (static_cast<uint64_t>(st.st_size) > max_bytes)
    throw Error(path + " is " + std::to_string(st.st_size >> 20) + " MiB; attnlab reads at most " +
                std::to_string(max_bytes >> 20) + " MiB from one file");
  std::string out;
  out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) throw Error("cannot read " + path + ": " + std::strerror(errno));
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > max_bytes)  // grew while being read
      throw Error(path + " grew past " + std::to_string(max_bytes >> 20) +
                  " MiB while being read; attnlab reads at most that from one file");
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

}  // namespace attn
