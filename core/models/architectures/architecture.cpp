#include "core/models/architectures/architecture.h"

#include "core/base/error.h"

namespace attn {

const ArchitectureDescriptor& transformer_architecture() {
  static const ArchitectureDescriptor d = [] {
    ArchitectureDescriptor a;
    a.name = "transformer";
    a.summary = "attention layers";
    return a;
  }();
  return d;
}

const std::vector<const ArchitectureDescriptor*>& architecture_descriptors() {
  static const std::vector<const ArchitectureDescriptor*> all = {
#define ATTN_ARCHITECTURE(id) &id##_architecture(),
#include "core/models/architectures/architectures.def"
#undef ATTN_ARCHITECTURE
  };
  return all;
}

const ArchitectureDescriptor& architecture_of(const ModelConfig& m) {
  for (const ArchitectureDescriptor* a : architecture_descriptors())
    if (a->name == m.architecture) return *a;
  return transformer_architecture();
}

bool architecture_has_position_table(const ModelConfig& m) {
  return m.position == "learned" || architecture_of(m).position_table;
}

std::vector<std::string> layer_mechanisms(const ModelConfig& m) {
  const ArchitectureDescriptor& a = architecture_of(m);
  if (!a.attention_layers) return {a.name};
  const auto& names = m.attention;
  return names.size() == 1 ? std::vector<std::string>(m.layers, names[0]) : names;
}

void require_attention_heads(const ModelConfig& m) {
  const ArchitectureDescriptor& a = architecture_of(m);
  if (!a.attention_layers) throw Error(a.no_heads_reason);
}

std::string architecture_summaries() {
  std::string s;
  for (const ArchitectureDescriptor* a : architecture_descriptors())
    s += (s.empty() ? "" : "; ") + a->name + ": " + a->summary;
  return s;
}

}  // namespace attn
