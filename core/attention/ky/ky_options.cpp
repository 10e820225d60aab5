#include "core/attention/ky/ky_options.h"

#include "core/attention/ky/ky_view.h"
#include "core/attention/mechanism.h"
#include "core/base/error.h"
#include "core/json/json_reader.h"

namespace attn {

KyOptions parse_ky_options(const nlohmann::json& options) {
  return read_json_object<KyOptions>(options, options_path("ky"), [](JsonReader& r, KyOptions& o) {
    r.integer("window", o.window, 2, 4096);  // t_j = (j-1)/(W-1) needs W >= 2
    r.string("placement", o.placement, {"causal", "centered"});
    r.string("edges", o.edges, {"masked", "zero-pad"});
    r.integer("hidden", o.hidden, 1, 4096);
    r.string("connection", o.connection, {"learned", "none", "table"});
    r.string("init", o.init, {"uniform", "xavier"});
  });
}

void check_ky_causality(const KyOptions& o, bool causal) {
  if (causal && o.placement == "centered")
    throw Error(
        "model.attention_options.ky.placement \"centered\" is refused for a causal language "
        "model: a centred window lets position i attend to keys up to i+W/2, including the very "
        "token it must predict (the leak behind the perplexity 13.77 against 717.88 that an early "
        "version of the authors' code reported; the paper's Table 1 has 562.31 against 716.14). "
        "Use \"causal\" (keys i-W+1..i).");
}

namespace {
int64_t ky_parameter_count(int64_t D, int64_t n, const KyOptions& o) {
  const int64_t h = o.hidden;
  // w1, b1, w3 [n, h], w2 [n, h, h], b2 [n, h], b3 [n] per connection network.
  const int64_t connection = o.connection == "learned" ? n * (h * h + 4 * h + 1)
                             : o.connection == "table" ? n * o.window
                                                       : 0;
  return 4 * D * D + 4 * D + connection;
}
}  // namespace

const MechanismDescriptor& ky_mechanism() {
  static const MechanismDescriptor d = [] {
    MechanismDescriptor d{
        "ky",
        "Neural KY-Attention (Condor): window-W attention plus a learned per-head bias g_h(t) over "
        "window slots",
        "window (16, >= 2), placement (causal | centered), edges (masked | zero-pad), hidden (32), "
        "connection (learned | none | table: a free H x W slot bias), init (uniform | xavier, "
        "g_h's initialisation)",
        &validate_by_parsing<parse_ky_options>,
        &count_parsed<parse_ky_options, ky_parameter_count>,
        /*supports_rope=*/true,
        /*supports_alibi=*/true,
        /*rope_refusal=*/"",
        [](const nlohmann::json& options, MechanismLayout& layout) {
          check_ky_causality(parse_ky_options(options), layout.causal);
        }};
    // Before the generic views, views.rec held ky's curves under "ky" and runs connections.json.
    d.legacy_view_key = "ky";
    d.legacy_view_file = "connections.json";
    d.legacy_view = &ky_legacy_view;
    // Blocks of W queries against 2 W keys, then a [T, W] band: ~3 W columns, T rounded up.
    d.memory = [](const nlohmann::json& options, double, double H, double T, double) {
      const double W = parse_ky_options(options).window;
      AttentionMemory m;
      m.scores = H * (T + W) * 3 * W;
      return m;
    };
    return d;
  }();
  return d;
}

}  // namespace attn
