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
  // names it, after its options passed validate: may rewrite layout.layers (neural's
  // placement) or throw attn::Error naming the config key (ky's centred window in a causal
  // model). Null when the mechanism has none. The parser knows no mechanism by name.
  void (*resolve)(const nlohmann::json& options, MechanismLayout& layout) = nullptr;
  // Views the mechanism recorded before mechanisms observed themselves (AttentionModule::
  // observe): the key of its per-layer entries in old views.rec records, the run directory's
  // old side file of them ({"frames": [{"step", "layers": [entries]}]}), and the reading of one
  // entry as the generic view (throws attn::Error). Null when it recorded none.
  const char* legacy_view_key = nullptr;
  const char* legacy_view_file = nullptr;
  MechanismView (*legacy_view)(const nlohmann::json& entry) = nullptr;
};

#define ATTN_MECHANISM(id) const MechanismDescriptor& id##_mechanism();
#include "core/attention/mechanisms.def"
#undef ATTN_MECHANISM

// "model.attention_options.<mechanism>": the key path of a mechanism's options, for readers.
std::string options_path(const std::string& mechanism);

}  // namespace attn
