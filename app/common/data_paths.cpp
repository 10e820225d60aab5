#include "app/common/data_paths.h"

#include <filesystem>

#include "attnlab_build_info.h"

#if defined(__APPLE__)
#include <mach-o/dyld.h>
#endif

namespace attn {
namespace fs = std::filesystem;

std::string executable_path() {
  std::error_code ec;
#if defined(__linux__)
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
#elif defined(__APPLE__)
  char buf[4096];
  uint32_t size = sizeof buf;
  if (_NSGetExecutablePath(buf, &size) != 0) return {};
  const fs::path p = fs::canonical(buf, ec);
  return ec ? std::string() : p.string();
#else
  return {};
#endif
}

std::vector<std::string> data_path_candidates(const std::string& relative) {
  std::vector<std::string> out;
  const std::string exe = executable_path();
  if (!exe.empty())
    out.push_back((fs::path(exe).parent_path() / ATTN_DATA_FROM_BINDIR / relative)
                      .lexically_normal()
                      .string());
  out.push_back((fs::path(ATTN_INSTALL_DATA_DIR) / relative).string());
  out.push_back((fs::path(ATTN_SOURCE_DIR) / "assets" / relative).string());
  return out;
}

std::string find_data_path(const std::string& relative) {
  std::error_code ec;
  for (const auto& p : data_path_candidates(relative))
    if (fs::exists(p, ec)) return p;
  return {};
}

}  // namespace attn
