// The torch-free half of the registry: descriptors by name (core/attention/registry.h).
#include "core/attention/registry.h"

#include <vector>

#include "core/attention/mechanism.h"
#include "core/base/error.h"
#include "core/json/json_reader.h"

namespace attn {
namespace {

// mechanisms.def's rows, then any a test build registered (register_test_mechanism).
std::vector<const MechanismDescriptor*>& registered() {
  static std::vector<const MechanismDescriptor*> table = {
#define ATTN_MECHANISM(id) &id##_mechanism(),
#include "core/attention/mechanisms.def"
#undef ATTN_MECHANISM
  };
  return table;
}

const std::vector<const MechanismDescriptor*>& descriptors() {
  return registered();
}

const MechanismDescriptor* lookup(const std::string& name) {
  for (const MechanismDescriptor* d : descriptors())
    if (name == d->name) return d;
  return nullptr;
}

const MechanismDescriptor& require(const std::string& name) {
  if (const MechanismDescriptor* d = lookup(name)) return *d;
  throw Error("unknown attention mechanism \"" + name +
              "\" (allowed: " + join_names(attention_mechanism_names()) + ")");
}

}  // namespace

std::string options_path(const std::string& mechanism) {
  return "model.attention_options." + mechanism;
}

const std::vector<std::string>& attention_mechanism_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const MechanismDescriptor* d : descriptors()) n.push_back(d->name);
    return n;
  }();
  return names;
}

std::string attention_mechanism_description(const std::string& name) {
  const MechanismDescriptor* d = lookup(name);
  return d ? d->description : "";
}

std::string attention_mechanism_options_help(const std::string& name) {
  const MechanismDescriptor* d = lookup(name);
  return d ? d->options_help : "";
}

bool attention_mechanism_supports_rope(const std::string& name) {
  const MechanismDescriptor* d = lookup(name);
  return d && d->supports_rope;
}

bool attention_mechanism_supports_alibi(const std::string& name) {
  const MechanismDescriptor* d = lookup(name);
  return d && d->supports_alibi;
}

std::string attention_mechanism_rope_refusal(const std::string& name) {
  const MechanismDescriptor* d = lookup(name);
  return d && d->rope_refusal ? d->rope_refusal : "";
}

void validate_attention_options(const std::string& name, const nlohmann::json& options) {
  const MechanismDescriptor& m = require(name);
  if (m.validate)
    m.validate(options);
  else
    JsonReader(options, options_path(name)).finish();
}

namespace {

// An option's value: the given one, or its default as the options' reader states it.
nlohmann::json option_value(const MechanismDescriptor& d, const nlohmann::json& options,
                            const char* key) {
  if (options.contains(key)) return options.at(key);
  for (const nlohmann::json& k : attention_mechanism_option_schema(d.name))
    if (k.at("key") == key && k.contains("default")) return k.at("default");
  return nullptr;
}

// FirstLayerRule (core/attention/mechanism.h); python/attnlab/mechanisms.py applies the same.
void apply_first_layer_rule(const MechanismDescriptor& d, const nlohmann::json& options,
                            MechanismLayout& layout) {
  const FirstLayerRule& rule = d.first_layer;
  if (!rule.option || option_value(d, options, rule.option) != rule.value) return;
  for (size_t i = 1; i < layout.layers.size(); ++i) {
    if (layout.layers[i] != d.name) continue;
    if (layout.one_name) {
      layout.layers[i] = rule.later;
      continue;
    }
    std::string message = rule.refusal;
    const size_t at = message.find("{layer}");
    if (at != std::string::npos) message.replace(at, 7, std::to_string(i));
    throw Error(message);
  }
}

// MechanismDescriptor::input_length_option against the model's input length.
void check_input_length(const MechanismDescriptor& d, const nlohmann::json& options,
                        const MechanismLayout& layout) {
  if (!d.input_length_option || layout.input_length <= 0) return;
  const nlohmann::json slots = option_value(d, options, d.input_length_option);
  if (!slots.is_number_integer() || slots.get<int64_t>() >= layout.input_length) return;
  const std::string tokens = std::to_string(layout.input_length);
  throw Error(options_path(d.name) + "." + d.input_length_option + " (" + slots.dump() +
              ") is shorter than the model's input: " +
              (layout.input_source.empty() ? "the input" : layout.input_source) + " gives " +
              tokens + " tokens; set " + d.input_length_option + " to at least " + tokens);
}

}  // namespace

void resolve_attention_layout(const nlohmann::json& all_options, std::vector<std::string>& layers,
                              bool one_name, bool causal, int64_t input_length,
                              const std::string& input_source) {
  const nlohmann::json none = nlohmann::json::object();
  MechanismLayout layout{layers, one_name, causal, input_length, input_source};
  // In registry order, each named mechanism once; the set is taken before any rule rewrites.
  std::vector<const MechanismDescriptor*> named;
  for (const MechanismDescriptor* d : descriptors())
    for (const std::string& layer : layers)
      if (layer == d->name) {
        named.push_back(d);
        break;
      }
  for (const MechanismDescriptor* d : named) {
    const nlohmann::json& options = all_options.contains(d->name) ? all_options.at(d->name) : none;
    apply_first_layer_rule(*d, options, layout);
    check_input_length(*d, options, layout);
    if (d->resolve) d->resolve(options, layout);
  }
}

std::vector<std::string> resolved_attention_layers(const std::vector<std::string>& attention,
                                                   int layers, const nlohmann::json& all_options,
                                                   bool causal) {
  const bool one_name = attention.size() == 1;
  if (!one_name && static_cast<int>(attention.size()) != layers)
    throw Error("model.attention lists " + std::to_string(attention.size()) +
                " mechanisms but model.layers is " + std::to_string(layers) +
                " (give one name for all layers, or one per layer)");
  std::vector<std::string> names =
      one_name ? std::vector<std::string>(layers, attention.at(0)) : attention;
  resolve_attention_layout(all_options, names, one_name, causal);
  return names;
}

nlohmann::json attention_mechanism_option_schema(const std::string& name) {
  const MechanismDescriptor& d = require(name);
  if (!d.validate) return nlohmann::json::array();
  OptionSchema schema;  // the reader records each key it asks for while it reads {}
  d.validate(nlohmann::json::object());
  return schema.keys();
}

nlohmann::json attention_mechanism_table() {
  nlohmann::json table = nlohmann::json::array();
  for (const MechanismDescriptor* d : descriptors()) {
    nlohmann::json rule = nullptr;
    if (d->first_layer.option)
      rule = {{"option", d->first_layer.option},
              {"value", d->first_layer.value},
              {"later", d->first_layer.later},
              {"refusal", d->first_layer.refusal}};
    table.push_back(
        {{"name", d->name},
         {"description", d->description},
         {"options_help", d->options_help},
         {"options", attention_mechanism_option_schema(d->name)},
         {"supports_rope", d->supports_rope},
         {"supports_alibi", d->supports_alibi},
         {"rope_refusal", d->rope_refusal ? d->rope_refusal : ""},
         {"first_layer", rule},
         {"input_length_option", d->input_length_option ? nlohmann::json(d->input_length_option)
                                                        : nlohmann::json(nullptr)}});
  }
  return table;
}

AttentionMemory attention_layer_memory(const std::string& name, const nlohmann::json& options,
                                       double B, double H, double T, double Dh) {
  const MechanismDescriptor& d = require(name);
  if (d.memory) return d.memory(options, B, H, T, Dh);
  AttentionMemory m;
  m.scores = H * T * T;  // every softmax-like mechanism holds [B, H, T, T] weights
  return m;
}

int64_t attention_parameter_count(const std::string& mechanism, int d_model, int heads,
                                  const nlohmann::json& options) {
  if (d_model <= 0 || heads <= 0 || d_model % heads != 0)
    throw Error("attention_parameter_count: d_model (" + std::to_string(d_model) +
                ") must be a positive multiple of heads (" + std::to_string(heads) + ")");
  validate_attention_options(mechanism, options);
  return require(mechanism).parameter_count(d_model, heads, options);
}

std::vector<LegacyViewReader> legacy_view_readers() {
  std::vector<LegacyViewReader> out;
  for (const MechanismDescriptor* d : descriptors())
    if (d->legacy_view)
      out.push_back({d->name, d->legacy_view_key ? d->legacy_view_key : "",
                     d->legacy_view_file ? d->legacy_view_file : "", d->legacy_view});
  return out;
}

void register_test_mechanism(const MechanismDescriptor& descriptor) {
  if (lookup(descriptor.name))
    throw Error(std::string("mechanism \"") + descriptor.name + "\" is registered already");
  registered().push_back(&descriptor);
}

}  // namespace attn
