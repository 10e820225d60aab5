// dot's descriptor (core/attention/mechanism.h): no options, 4D^2 + 4D parameters (the fused
// qkv projection and the output projection, with biases).
#include "core/attention/mechanism.h"

namespace attn {

const MechanismDescriptor& dot_mechanism() {
  static const MechanismDescriptor d{
      "dot",
      "scaled dot-product attention, softmax(QK^T / sqrt(Dh)) V",
      "",
      nullptr,
      [](int64_t D, int64_t, const nlohmann::json&) -> int64_t { return 4 * D * D + 4 * D; },
      /*supports_rope=*/true,
      /*supports_alibi=*/true};
  return d;
}

}  // namespace attn
