#include "core/version.h"

#include <torch/version.h>

namespace attn {
const char* version_string() {
  static const std::string s = std::string("attnlab 0.1.0 (LibTorch ") + TORCH_VERSION + ")";
  return s.c_str();
}
}  // namespace attn
