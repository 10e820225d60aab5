#include "core/attention/rope/rope_options.h"

#include "core/attention/mechanism.h"
#include "core/config/json_reader.h"

namespace attn {

RopeOptions parse_rope_options(const nlohmann::json& options) {
  return read_json_object<RopeOptions>(
      options, options_path("rope"), [](JsonReader& r, RopeOptions& o) {
        r.number("base", o.base, 1.0, 1e12, /*lo_open=*/true);  // base 1 would not rotate at all
      });
}

const MechanismDescriptor& rope_mechanism() {
  static const MechanismDescriptor d{
      "rope",
      "dot-product attention with rotary position embeddings (RoPE): q and k rotated by their "
      "position, so scores depend on the relative offset; the relative-position baseline",
      "base (10000, > 1): theta_i = base^(-2i/Dh)",
      [](const nlohmann::json& o) { parse_rope_options(o); },
      // dot's projections; the rotation has no parameters
      [](int64_t D, int64_t, const nlohmann::json&) -> int64_t { return 4 * D * D + 4 * D; }};
  return d;
}

}  // namespace attn
