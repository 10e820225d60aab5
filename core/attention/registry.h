// The attention mechanisms by name, torch-free, so the config parser, the CLI and the Run panel
// can list and check them. One row per mechanism in core/attention/mechanisms.def; each
// mechanism's descriptor (core/attention/mechanism.h) lives in its own folder. The modules are
// built by make_attention() (core/attention/attention.h, torch).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/views/mechanism_view.h"

namespace attn {

struct MechanismDescriptor;  // core/attention/mechanism.h

// In registry order.
const std::vector<std::string>& attention_mechanism_names();
// One-line description of a mechanism, for tooltips and --help. Empty if unknown.
std::string attention_mechanism_description(const std::string& name);
// The options a mechanism takes under model.attention_options.<name>, with defaults, in one
// line for tooltips; empty when it takes none.
std::string attention_mechanism_options_help(const std::string& name);
// Throws attn::Error naming model.attention_options.<name>.<key> when an option is invalid,
// or naming the mechanism when it is unknown.
void validate_attention_options(const std::string& name, const nlohmann::json& options);
// Whether the mechanism applies model.position "rope" / "alibi" (false for unknown names), and
// why it cannot apply rope ("" when it can).
bool attention_mechanism_supports_rope(const std::string& name);
bool attention_mechanism_supports_alibi(const std::string& name);
std::string attention_mechanism_rope_refusal(const std::string& name);
// Runs the whole-config rules (MechanismDescriptor::resolve) of every mechanism that layers
// name, once each, with its options from all_options (model.attention_options; {} when
// absent). May rewrite layers; throws attn::Error naming the config key.
void resolve_attention_layout(const nlohmann::json& all_options, std::vector<std::string>& layers,
                              bool one_name, bool causal);
// Closed-form parameter count of one attention module of the named mechanism with the given
// width, heads and options (dot: 4D^2 + 4D). Throws attn::Error for an unknown mechanism, bad
// options, or d_model not a positive multiple of heads.
int64_t attention_parameter_count(const std::string& mechanism, int d_model, int heads,
                                  const nlohmann::json& options);
// The views mechanisms recorded before they observed themselves (MechanismDescriptor::
// legacy_view_key, legacy_view_file, legacy_view): the readers of old views.rec records and old
// side files convert them through these, naming no mechanism. Registry order.
struct LegacyViewReader {
  std::string mechanism, record_key, side_file;
  MechanismView (*read)(const nlohmann::json& entry);
};
std::vector<LegacyViewReader> legacy_view_readers();

// A test build's mechanism beyond mechanisms.def's rows (tests/core/toy_mechanism/): its
// descriptor joins the registry, for this process, as a row would. Call before anything reads
// the registry (the names are listed once); throws attn::Error when the name is taken. Product
// mechanisms are rows, never this; make_attention finds the module through
// register_test_attention (core/attention/attention.h).
void register_test_mechanism(const MechanismDescriptor& descriptor);

}  // namespace attn
