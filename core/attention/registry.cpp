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

void resolve_attention_layout(const nlohmann::json& all_options, std::vector<std::string>& layers,
                              bool one_name, bool causal) {
  const nlohmann::json none = nlohmann::json::object();
  MechanismLayout layout{layers, one_name, causal};
  // In registry order, each named mechanism once; the set is taken before any rule rewrites.
  std::vector<const MechanismDescriptor*> named;
  for (const MechanismDescriptor* d : descriptors())
    for (const std::string& layer : layers)
      if (layer == d->name) {
        named.push_back(d);
        break;
      }
  for (const MechanismDescriptor* d : named)
    if (d->resolve)
      d->resolve(all_options.contains(d->name) ? all_options.at(d->name) : none, layout);
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
