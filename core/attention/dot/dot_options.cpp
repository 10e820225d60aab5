// dot's descriptor (core/attention/mechanism.h): no options, 4D^2 + 4D parameters (the fused
// qkv projection and the output projection, with biases).
#include "core/attention/mechanism.h"

namespace attn {

const MechanismDescriptor& dot_mechanism() {
  static const MechanismDescriptor d = [] {
    MechanismDescriptor m{
        "dot",
        "scaled dot-product attention, softmax(QK^T / sqrt(Dh)) V",
        "",
        nullptr,
        [](int64_t D, int64_t, const nlohmann::json&) -> int64_t { return 4 * D * D + 4 * D; },
        /*supports_rope=*/true,
        /*supports_alibi=*/true};
    m.memory = [](const nlohmann::json&, double, double H, double T, double) {
      AttentionMemory a;
      a.scores = H * T * T;
      a.fused_on_cpu = true;  // core/kernels/cpu_kernels.h
      return a;
    };
    return m;
  }();
  return d;
}

}  // namespace attn
