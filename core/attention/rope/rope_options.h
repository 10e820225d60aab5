// Rotary-position attention's options (model.attention_options.rope), torch-free. The
// mechanism: core/attention/rope/rope_attention.h.
#pragma once
#include <nlohmann/json.hpp>

namespace attn {

struct RopeOptions {
  // theta_i = base^(-2i / Dh): the slowest pair turns once every 2 pi base^(1 - 2/Dh) tokens.
  double base = 10000.0;
};
RopeOptions parse_rope_options(const nlohmann::json& options);

}  // namespace attn
