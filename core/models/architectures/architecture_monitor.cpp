// The architectures' monitors, found by their rows (core/models/architectures/architecture_monitor.h).
#include "core/models/architectures/architecture_monitor.h"

namespace attn {

std::unique_ptr<ArchitectureMonitor> transformer_monitor(TransformerImpl&, int64_t) {
  return nullptr;  // its layers observe themselves (AttentionModule::observe)
}

std::unique_ptr<ArchitectureMonitor> make_architecture_monitor(TransformerImpl& model,
                                                               const ModelConfig& m, int64_t step) {
#define ATTN_ARCHITECTURE(id) \
  if (m.architecture == #id) return id##_monitor(model, step);
#include "core/models/architectures/architectures.def"
#undef ATTN_ARCHITECTURE
  return nullptr;
}

}  // namespace attn
