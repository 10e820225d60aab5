// attnlab errors: one exception type for every user-facing failure.
// The message names the culprit (config key, file, allowed range) and is shown verbatim.
#pragma once
#include <stdexcept>
#include <string>

namespace attn {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace attn
