// ScopedTempDir: a test case's own directory, for the suites that write files.
#pragma once
#include <unistd.h>  // getpid

#include <filesystem>
#include <random>
#include <string>

namespace attn::test {

// A fresh directory under the system's temp directory (unique by name, pid and a random number),
// removed with everything in it when the object goes.
struct ScopedTempDir {
  std::filesystem::path path;
  explicit ScopedTempDir(const std::string& name = "tmp")
      : path(std::filesystem::temp_directory_path() /
             ("attnlab-" + name + "-" + std::to_string(::getpid()) + "-" +
              std::to_string(std::random_device{}()))) {
    std::filesystem::create_directories(path);
  }
  ~ScopedTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;
};

}  // namespace attn::test
