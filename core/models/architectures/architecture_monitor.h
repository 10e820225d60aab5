// What an architecture without attention layers measures of itself while it trains (private to
// core: includes torch). The session holds one generic monitor and never asks which
// architecture it serves: after every optimiser step, at every probe, for the snapshot, the
// views.rec record and the run directory's side files.
//
// An architecture's row (core/models/architectures/architectures.def) names the function its files define,
//   std::unique_ptr<ArchitectureMonitor> <id>_monitor(TransformerImpl& model, int64_t step);
// which answers nullptr when it measures nothing (the transformer: its layers observe
// themselves, AttentionModule::observe).
// Contract: trainer thread only; views() is immutable once returned (shared with the UI).
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/views/mechanism_view.h"

namespace attn {

class TransformerImpl;

// A file the monitor writes into a run directory: JSON (text empty) or text.
struct ArchitectureFile {
  std::string name;
  nlohmann::json json;
  std::string text;
};

class ArchitectureMonitor {
 public:
  virtual ~ArchitectureMonitor() = default;
  // After optimiser step `step` (the step count after it); last: the run's final step.
  virtual void after_step(int64_t step, bool last) = 0;
  // At a probe (the model in eval mode): what it measures on the probe input.
  virtual void probe(const torch::Tensor& input, int64_t step) = 0;
  // The views of the whole model for Snapshot::model_views.
  virtual std::shared_ptr<const std::vector<MechanismView>> views() = 0;
  // What a views.rec record at `step` holds of them (measured now).
  virtual std::vector<MechanismView> record_views(int64_t step) = 0;
  // Its entry in summary.json (under the architecture's name); null: none.
  virtual nlohmann::json summary() = 0;
  // Its side files in a run directory.
  virtual std::vector<ArchitectureFile> files() = 0;
};

// The monitor of the model's architecture (m.architecture's row), created at `step` (0 for a
// new model, a checkpoint's step after a load); nullptr when the architecture has none.
std::unique_ptr<ArchitectureMonitor> make_architecture_monitor(TransformerImpl& model,
                                                               const ModelConfig& m, int64_t step);

// The row functions of architectures.def (torch side).
#define ATTN_ARCHITECTURE(id) \
  std::unique_ptr<ArchitectureMonitor> id##_monitor(TransformerImpl& model, int64_t step);
#include "core/models/architectures/architectures.def"
#undef ATTN_ARCHITECTURE

}  // namespace attn
