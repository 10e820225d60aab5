#include "core/attention/neural/neural_options.h"

#include <algorithm>

#include "core/attention/mechanism.h"
#include "core/attention/neural/neural_view.h"
#include "core/base/enum_names.h"
#include "core/base/error.h"
#include "core/json/json_reader.h"

namespace attn {

namespace {
constexpr EnumName<NeuralActivation> kActivationNames[] = {{NeuralActivation::relu, "relu"},
                                                           {NeuralActivation::gelu, "gelu"},
                                                           {NeuralActivation::tanh, "tanh"}};

void read_neural_fields(JsonReader& r, NeuralOptions& o) {
  if (const nlohmann::json* v = r.find("down"); v && v->is_string()) {
    if (v->get<std::string>() != "none")
      r.fail(r.path("down"), "must be a positive integer (d') or \"none\", got " + v->dump());
    o.down = 0;
  } else {
    r.integer("down", o.down, 1, 4096,
              "d' = 0 leaves the scorer no input, so every score is the constant "
              "w_a^T act(b_h) + b_a and attention is uniform (use \"none\" for no "
              "down-projection)");
  }
  r.integer("hidden", o.hidden, 1, 4096,
            "with no hidden units every score is the constant b_a and attention is uniform");
  if (const nlohmann::json* v = r.find("activation")) {
    const std::string s = v->is_string() ? v->get<std::string>() : v->dump();
    if (s == "linear" || s == "identity" || s == "none")
      r.fail(r.path("activation"),
             "\"" + s +
                 "\" is refused: a linear scorer w_a^T (U q' + V k' + b_h) + b_a splits into a "
                 "query term, constant along each softmax row, plus a key term, so the attention "
                 "would ignore the query (use relu, gelu or tanh)");
  }
  std::string activation = neural_activation_name(o.activation);
  r.string("activation", activation, {"relu", "gelu", "tanh"});
  o.activation = parse_neural_activation(activation);
  // Where neural attention runs is the descriptor's FirstLayerRule (kFirstLayer below); the
  // module never decides it.
  r.string("placement", o.placement, {"first-layer", "all-layers"});
  r.integer("chunk", o.chunk, 1, 1 << 20);
  r.string("scorer", o.scorer, {"split", "literal"});
  r.boolean("share_across_heads", o.share_across_heads);
  r.boolean("down_bias", o.down_bias);
  if (o.down_bias && o.down == 0)
    r.fail(r.path("down_bias"),
           "is true but model.attention_options.neural.down is \"none\": there is no "
           "down-projection to add a bias to (set down to d', e.g. 2, or down_bias to false)");
}

// Placement "first-layer" (the default, the paper's §3.2) puts neural attention in layer 0 only.
// One name for all layers expands to exactly that, so the resolved config (config.json, the Run
// panel) names what really runs; a per-layer list that puts "neural" deeper is refused instead
// of being run as dot-product attention behind the user's back. Data, not code: the Python
// package applies it from mechanisms.json (core/attention/mechanism.h, FirstLayerRule).
constexpr FirstLayerRule kFirstLayer{
    "placement", "first-layer", "dot",
    "model.attention[{layer}] is \"neural\" but model.attention_options.neural.placement is "
    "\"first-layer\" (the default, the paper's: neural attention in layer 0 only). Set the "
    "placement to \"all-layers\", or name \"dot\" for layers after the first."};

}  // namespace

NeuralActivation parse_neural_activation(const std::string& name) {
  NeuralActivation a;
  if (find_enum(kActivationNames, name, &a)) return a;
  throw Error("unknown neural attention activation \"" + name +
              "\" (allowed: " + enum_choices(kActivationNames) + ")");
}

const char* neural_activation_name(NeuralActivation a) {
  return enum_name(a, kActivationNames);
}

NeuralOptions parse_neural_options(const nlohmann::json& options) {
  return read_json_object<NeuralOptions>(options, options_path("neural"), read_neural_fields);
}

namespace {
// The neural module itself (layers after the first may run dot: kFirstLayer).
int64_t neural_parameter_count(int64_t D, int64_t n, const NeuralOptions& o) {
  const int64_t Dh = D / n, d = o.down > 0 ? o.down : Dh, h = o.hidden;
  const int64_t copies = o.share_across_heads ? 1 : n;  // of the down-projection and scorer
  const int64_t down =
      o.down > 0 ? copies * (2 * Dh * d + (o.down_bias ? 2 * d : 0)) : 0;  // Wq', Wk', bq', bk'
  return 4 * D * D + 4 * D + down + copies * (2 * h * d + 2 * h + 1);      // U, V, b_h, w_a, b_a
}

// Before the generic views, views.rec held each head's surface under "neural".
MechanismDescriptor with_legacy_view(MechanismDescriptor d) {
  d.legacy_view_key = "neural";
  d.legacy_view = &neural_legacy_view;
  return d;
}
}  // namespace

const MechanismDescriptor& neural_mechanism() {
  static const MechanismDescriptor d = with_legacy_view(
      {"neural",
       "Neural Attention: softmax(A / sqrt(Dh)) V with scores A_ij = w_a^T act(W_h [q'_i ; k'_j] "
       "+ b_h) + b_a from a one-hidden-layer MLP per head",
       "down (2 | none, d' of the q/k down-projection), hidden (64), activation (relu | gelu | "
       "tanh), placement (first-layer | all-layers), chunk (8, query rows per block on CPU), "
       "scorer (split | literal: the paper's [T, T, 2d'] form, for benchmarks), "
       "share_across_heads (false: one scorer per head), down_bias (false)",
       &validate_by_parsing<parse_neural_options>,
       &count_parsed<parse_neural_options, neural_parameter_count>,
       /*supports_rope=*/false, /*supports_alibi=*/true,
       "its score w_a^T act(U q' + V k' + b_h) is not a dot product: rotating q and k by position "
       "does not make it depend on i - j only",
       /*resolve=*/nullptr, kFirstLayer, /*input_length_option=*/nullptr,
       // Its scorer works on one [B, H, chunk, T, hidden] block at a time, recomputed in backward.
       [](const nlohmann::json& options, double, double H, double T, double Dh) {
         const NeuralOptions o = parse_neural_options(options);
         AttentionMemory m;
         m.scores = H * T * T;
         m.extra = H * std::min<double>(o.chunk, T) * T * o.hidden;
         // literal keeps C [T, T, 2d'] and the hidden layer before and after its activation.
         if (o.scorer == "literal")
           m.extra = H * T * T * (2.0 * (o.down > 0 ? o.down : Dh) + 2.0 * o.hidden);
         return m;
       }});
  return d;
}

}  // namespace attn
