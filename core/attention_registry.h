// Names of the attention mechanisms the model core can build (the registry lives in
// core/src/attention.h). Torch-free so the config parser and the Run panel can list them.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attn {

const std::vector<std::string>& attention_mechanism_names();
// One-line description of a mechanism, for tooltips and --help. Empty if unknown.
std::string attention_mechanism_description(const std::string& name);
// The options a mechanism takes under model.attention_options.<name>, with defaults, in one
// line for tooltips; empty when it takes none.
std::string attention_mechanism_options_help(const std::string& name);
// Throws attn::Error naming model.attention_options.<name>.<key> when an option is invalid.
void validate_attention_options(const std::string& name, const nlohmann::json& options);

}  // namespace attn
