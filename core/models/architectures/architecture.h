// What a model architecture (model.architecture) answers for the code around the model, so that
// training, interventions, the memory estimate and the Run panel ask a capability instead of
// comparing the architecture's name. Torch-free. The model builder (core/models/model.h) is the
// one place that chooses an architecture's modules by name.
//
// An architecture is its own files plus one row ATTN_ARCHITECTURE(<name>) in
// core/models/architectures/architectures.def; the row names the function its files define,
//   const ArchitectureDescriptor& <name>_architecture();
// "transformer" (attention layers, every mechanism of core/attention/) is the default one.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/views/mechanism_view.h"

namespace attn {

// One control of an architecture's own config section, for the Run panel: exactly one of
// integer, real and text is set (text: a choice among `choices`).
struct ArchitectureField {
  const char* label;
  const char* tooltip;  // "" for none
  int* (*integer)(ModelConfig&) = nullptr;
  double* (*real)(ModelConfig&) = nullptr;
  std::string* (*text)(ModelConfig&) = nullptr;
  std::vector<std::string> choices = {};
  const char* format = "%g";  // real only
};
inline ArchitectureField integer_field(const char* label, const char* tooltip,
                                       int* (*get)(ModelConfig&)) {
  return {label, tooltip, get};
}
inline ArchitectureField real_field(const char* label, const char* tooltip,
                                    double* (*get)(ModelConfig&), const char* format = "%g") {
  return {label, tooltip, nullptr, get, nullptr, {}, format};
}
inline ArchitectureField choice_field(const char* label, const char* tooltip,
                                      std::string* (*get)(ModelConfig&),
                                      std::vector<std::string> choices) {
  return {label, tooltip, nullptr, nullptr, get, std::move(choices)};
}

// What a model of its own (no attention layers) adds to the memory estimate
// (core/models/memory_estimate.h) in place of the layers' formulas.
struct ArchitectureMemory {
  double parameters = 0;   // its parameter count
  double train_token = 0;  // floats autograd keeps per token, the whole model
  double eval_token = 0;   // floats live per token without gradients
  std::string sizes;       // what sets it: "model.<section>.<key> 32 x model.d_model 64 per token"
  std::vector<std::string> shrink;  // the config keys to lower, most effective first
};

struct ArchitectureDescriptor {
  std::string name;     // model.architecture's value
  std::string summary;  // in a phrase, for logs and tooltips: "attention layers"
  // Layers of attention mechanisms with heads (model.layers, model.heads, model.attention):
  // interventions, per-layer mechanisms and the layers' memory formulas apply. False: a whole
  // model of its own, which the fields below describe.
  bool attention_layers = true;
  // Why interventions refuse it (a whole message), when it has no attention heads.
  std::string no_heads_reason;
  // Its positions are a learned table whatever model.position says: no input longer than the
  // training length.
  bool position_table = false;
  // Its memory at batch-independent sizes: T tokens per sequence, V outputs per token.
  // Required when attention_layers is false.
  ArchitectureMemory (*memory)(const ModelConfig& m, double T, double V) = nullptr;
  // Its exact parameter count by formula for a token model (vocabulary, input length), so a
  // claim can be counted at a paper's size without building it; equals the built model's count.
  // nullptr: counted only by building it.
  int64_t (*parameter_count)(const ModelConfig& m, int vocab, int max_length) = nullptr;
  // Its own config section's controls (the Run panel draws them instead of the layers').
  std::vector<ArchitectureField> fields;

  // What it shows of itself. Its monitor (core/models/architectures/architecture_monitor.h, made by
  // <name>_monitor) publishes views of the whole model, Snapshot::model_views; a views.rec record
  // holds at most `model_views` of them, each checked against the run's config by check_view
  // (throws attn::Error saying what the config refuses; required when model_views > 0).
  int model_views = 0;
  void (*check_view)(const MechanismView& view, const ModelConfig& m) = nullptr;
  // Records written before its views were generic held them under `legacy_record_key`:
  // legacy_record_view reads that field of a record at `step` into a view (sizes checked
  // before anything is allocated; throws attn::Error naming the field). "" / nullptr: none.
  std::string legacy_record_key;
  MechanismView (*legacy_record_view)(const nlohmann::json& field, int64_t step) = nullptr;
  // A saved run's views completed from its run directory's side files (histories a checkpoint
  // does not hold); nullptr: nothing to complete.
  void (*restore_views)(std::vector<MechanismView>& views, const std::string& run_dir,
                        int64_t step) = nullptr;
};

// Every architecture, in architectures.def's order.
const std::vector<const ArchitectureDescriptor*>& architecture_descriptors();

// m.architecture's descriptor. A name no row has answers as the transformer (parse_config has
// refused it before any model is built; a config built in code gets the default model).
const ArchitectureDescriptor& architecture_of(const ModelConfig& m);

// The capabilities, as questions about a config.
inline bool architecture_has_heads(const ModelConfig& m) {
  return architecture_of(m).attention_layers;
}
// Whether inputs longer than training are refused: a learned position table, the model's own
// (position_table) or model.position "learned".
bool architecture_has_position_table(const ModelConfig& m);
// The mechanism of every layer (model.attention, one name for all layers when it holds one);
// an architecture without attention layers is one "layer" of its own name.
std::vector<std::string> layer_mechanisms(const ModelConfig& m);
// Throws attn::Error with the architecture's reason when it has no attention heads.
void require_attention_heads(const ModelConfig& m);

// The architectures' phrases for a tooltip: "transformer: attention layers; <name>: <summary>".
std::string architecture_summaries();

// The row functions of architectures.def.
#define ATTN_ARCHITECTURE(id) const ArchitectureDescriptor& id##_architecture();
#include "core/models/architectures/architectures.def"
#undef ATTN_ARCHITECTURE

}  // namespace attn
