// The kernel attention family's options (model.attention_options.gaussian / .linear-sim; pseudo
// and semi-fusion take none), torch-free. The mechanisms: core/attention/kernel/
// kernel_attention.h.
#pragma once
#include <nlohmann/json.hpp>

namespace attn {

struct GaussianOptions {
  double sigma = 1.0;  // kernel width, finite and > 0
};
GaussianOptions parse_gaussian_options(const nlohmann::json& options);

struct LinearSimOptions {
  int max_len = 256;  // slots of the simulated map: the longest sequence the module accepts
};
LinearSimOptions parse_linear_sim_options(const nlohmann::json& options);

}  // namespace attn
