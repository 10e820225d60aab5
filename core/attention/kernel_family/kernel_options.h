// The kernel attention family's options (model.attention_options.gaussian / .linear-sim; pseudo
// and semi-fusion take none), torch-free. The mechanisms: core/attention/kernel_family/
// kernel_attention.h.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace attn {

// Every member's initialisation (option "init"). default: U and P follow the model's GPT-2
// init (N(0, 0.02), zero biases), the per-head A, Wv, W U(+-1/sqrt(Dh)). xavier: U, P and the
// per-head matrices Glorot-uniform, biases zero: what the ViT code the seed builds on (MAE's)
// does for its Linear layers; the seed itself states no init.
enum class KernelInit { standard, xavier };

struct KernelCommonOptions {
  KernelInit init = KernelInit::standard;
};
KernelCommonOptions parse_kernel_common_options(const nlohmann::json& options,
                                                const std::string& mechanism);

struct GaussianOptions {
  double sigma = 1.0;  // kernel width, finite and > 0
  KernelInit init = KernelInit::standard;
};
GaussianOptions parse_gaussian_options(const nlohmann::json& options);

struct LinearSimOptions {
  int max_len = 256;  // slots of the simulated map: the longest sequence the module accepts
  KernelInit init = KernelInit::standard;
};
LinearSimOptions parse_linear_sim_options(const nlohmann::json& options);

}  // namespace attn
