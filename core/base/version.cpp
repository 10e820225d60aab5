#include "core/base/version.h"

#include <string>

// ATTN_VERSION and ATTN_TORCH_VERSION come from CMake: project(VERSION) and the LibTorch that
// find_package(Torch) found (core/CMakeLists.txt), so this file needs no torch header.
namespace attn {
const char* version_string() {
  static const std::string s = std::string("attnlab ") + ATTN_VERSION + " (LibTorch " +
                               ATTN_TORCH_VERSION + ")";
  return s.c_str();
}
const char* commit_string() {
#ifdef ATTN_COMMIT
  return ATTN_COMMIT;
#else
  return "unknown";
#endif
}
}  // namespace attn
