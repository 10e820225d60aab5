// What a mechanism says about itself without torch: its name, help, option validation and the
// closed-form parameter count of one module, and its rules on the whole config. Each mechanism
// defines one descriptor in its own folder (core/attention/<name>/<name>_options.cpp);
// core/attention/mechanisms.def lists them, core/attention/registry.h answers by name, and the
// config parser (core/config) asks only the registry. The torch module factory lives beside the
// module (make_attention, core/attention/attention.h). Torch-free.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/views/mechanism_view.h"

namespace attn {

// The part of a resolved model config a mechanism's whole-config rules see. core/config sits
// above core/attention, so this is a view the config parser fills, not its type.
struct MechanismLayout {
  std::vector<std::string>& layers;  // model.attention, one name per layer (a rule may rewrite)
  bool one_name = false;             // the user wrote one name for every layer
  bool causal = true;                // a causal language model (model.head "lm")
  // The longest input the model gets, in tokens (the task's, + the CLS token of a classifier),
  // and where it comes from ("task \"copy\""); 0 when unknown (a model built from a config that
  // names no task): rules on the length are then left to the module.
  int64_t input_length = 0;
  std::string input_source;
};

// A layout rule held as data rather than code, so that the Python package applies the same rule
// from the generated table (python/attnlab/mechanisms.json) with the same generic steps as
// resolve_attention_layout (core/attention/registry.h): the mechanism runs in layer 0 only while
// its option `option` is `value` (a placement such as "first-layer"). One name for
// every layer then resolves to the mechanism in layer 0 and `later` after it; a per-layer list
// that names it deeper is refused with `refusal`, "{layer}" replaced by the layer's index.
struct FirstLayerRule {
  const char* option = nullptr;  // null: the mechanism has no such rule
  const char* value = nullptr;
  const char* later = nullptr;
  const char* refusal = nullptr;
};

// What one layer of the mechanism holds at its peak, for the memory estimate (core/models/
// memory_estimate.h), in floats per sequence of T tokens.
struct AttentionMemory {
  double scores = 0;  // the [H, T, cols] tensor one softmax works on
  double extra = 0;   // its own per-sequence tensors (features, blocks)
  double fixed = 0;   // per batch, not per sequence (chunk buffers)
  // Served by the fused CPU kernel (core/kernels/cpu_kernels.h) unless positions act inside
  // attention (rope, alibi): it keeps only the weights where the reference path keeps two.
  bool fused_on_cpu = false;
};

struct MechanismDescriptor {
  const char* name;          // as configs spell it: "dot", "semi-fusion", ...
  const char* description;   // one line, for tooltips and --help
  const char* options_help;  // "key (default), ..." or "" when it takes no options
  // Throws attn::Error naming model.attention_options.<name>.<key> when an option is bad. Null
  // for a mechanism that takes no options: validate_attention_options (core/attention/
  // registry.h) then refuses every key.
  void (*validate)(const nlohmann::json& options);
  // Parameters of one attention module with these options (d_model a multiple of heads). Called
  // only with options that passed validate (attention_parameter_count validates first).
  int64_t (*parameter_count)(int64_t d_model, int64_t heads, const nlohmann::json& options);
  // Which relative positions (model.position) the mechanism applies. "learned" and "none" work
  // for every mechanism; the config parser refuses the others where these are false.
  bool supports_rope = false;   // its scores are q.k of rotatable q and k
  bool supports_alibi = false;  // its scores are softmax logits a bias can be added to
  // Why rope does not apply, for the refusal message ("" when it does).
  const char* rope_refusal = "";
  // The mechanism's rules on the whole model, run once by the config parser when any layer
  // names it, after its options passed validate: may rewrite layout.layers or throw
  // attn::Error naming the config key (ky's centred window in a causal model). Null when the
  // mechanism has none. The parser knows no mechanism by name.
  void (*resolve)(const nlohmann::json& options, MechanismLayout& layout) = nullptr;
  // Rules as data (see FirstLayerRule), applied by resolve_attention_layout before `resolve`.
  FirstLayerRule first_layer{};
  // The integer option that bounds the model's input length (linear-sim's max_len, one weight
  // slot per position): resolve_attention_layout refuses a longer MechanismLayout::input_length,
  // naming the key. Null when the mechanism takes any length.
  const char* input_length_option = nullptr;
  // Its memory per layer, for B sequences of T tokens, H heads of width Dh (options passed
  // validate). Null: the [H, T, T] softmax weights only.
  AttentionMemory (*memory)(const nlohmann::json& options, double B, double H, double T,
                            double Dh) = nullptr;
  // Views the mechanism recorded before mechanisms observed themselves (AttentionModule::
  // observe): the key of its per-layer entries in old views.rec records, the run directory's
  // old side file of them ({"frames": [{"step", "layers": [entries]}]}), and the reading of one
  // entry as the generic view (throws attn::Error). Null when it recorded none.
  const char* legacy_view_key = nullptr;
  const char* legacy_view_file = nullptr;
  MechanismView (*legacy_view)(const nlohmann::json& entry) = nullptr;
};

// A descriptor's validate and parameter_count for options that parse into a struct: Parse
// (options -> Options, throwing attn::Error naming the key) is the validation, and Count
// (d_model, heads, const Options&) counts from the parsed options, so neither parses twice by hand.
template <auto Parse>
void validate_by_parsing(const nlohmann::json& options) {
  Parse(options);
}
template <auto Parse, auto Count>
int64_t count_parsed(int64_t d_model, int64_t heads, const nlohmann::json& options) {
  return Count(d_model, heads, Parse(options));
}

#define ATTN_MECHANISM(id) const MechanismDescriptor& id##_mechanism();
#include "core/attention/mechanisms.def"
#undef ATTN_MECHANISM

// "model.attention_options.<mechanism>": the key path of a mechanism's options, for readers.
std::string options_path(const std::string& mechanism);

}  // namespace attn
