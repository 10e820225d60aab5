// The attention mechanisms by name, torch-free, so the config parser, the CLI and the Run panel
// can list and check them. One row per mechanism in core/attention/mechanisms.def; each
// mechanism's descriptor (core/attention/mechanism.h) lives in its own folder. The modules are
// built by make_attention() (core/attention/attention.h, torch).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/attention/mechanism.h"
#include "core/views/mechanism_view.h"

namespace attn {

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
// Runs the whole-config rules of every mechanism that layers name, once each, in registry
// order, with its options from all_options (model.attention_options; {} when absent): its
// FirstLayerRule, its input_length_option against input_length (skipped when 0) and its
// resolve (core/attention/mechanism.h). May rewrite layers; throws attn::Error naming the config
// key. input_source says where input_length comes from, for the message ("task \"copy\"").
void resolve_attention_layout(const nlohmann::json& all_options, std::vector<std::string>& layers,
                              bool one_name, bool causal, int64_t input_length = 0,
                              const std::string& input_source = "");
// model.attention as the model runs it: one name per layer (one name given for all is
// repeated) after resolve_attention_layout. What the model builder, model_parameter_count and
// the memory estimate read, so that no one re-decides a mechanism's rule. Idempotent on a parsed
// config. Throws attn::Error when attention is neither one name nor one per layer, or a rule
// refuses.
std::vector<std::string> resolved_attention_layers(const std::vector<std::string>& attention,
                                                   int layers, const nlohmann::json& all_options,
                                                   bool causal);
// The options a mechanism reads, in reading order, each {"key", "type", "default", "min",
// "max", "allowed", ...} as the options' reader states them (core/json/json_reader.h,
// OptionSchema). [] for a mechanism that takes none; throws for an unknown name.
nlohmann::json attention_mechanism_option_schema(const std::string& name);
// Every mechanism as data, in registry order, for the Python package (python/attnlab/
// mechanisms.json, written by attnlab_mechanisms_json): name, description, options_help,
// options (the schema above), supports_rope, supports_alibi, rope_refusal, first_layer
// (FirstLayerRule, or null) and input_length_option (or null).
nlohmann::json attention_mechanism_table();
// One layer's memory (MechanismDescriptor::memory; [H, T, T] weights without the hook).
// Throws attn::Error for an unknown mechanism.
AttentionMemory attention_layer_memory(const std::string& name, const nlohmann::json& options,
                                       double B, double H, double T, double Dh);
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
