// What a mechanism says about itself without torch: its name, help, option validation and the
// closed-form parameter count of one module. Each mechanism defines one descriptor in its own
// folder (core/attention/<name>/<name>_options.cpp); core/attention/mechanisms.def lists them,
// and core/attention/registry.h answers by name. The torch module factory lives beside the
// module (core/attention/attention.h). Torch-free.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace attn {

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
};

#define ATTN_MECHANISM(id) const MechanismDescriptor& id##_mechanism();
#include "core/attention/mechanisms.def"
#undef ATTN_MECHANISM

// "model.attention_options.<mechanism>": the key path of a mechanism's options, for readers.
std::string options_path(const std::string& mechanism);

}  // namespace attn
