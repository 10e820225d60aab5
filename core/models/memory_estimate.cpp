#include "core/models/memory_estimate.h"

#include <algorithm>
#include <optional>

#include "core/attention/registry.h"
#include "core/base/error.h"
#include "core/base/memory.h"
#include "core/config/task_shape.h"
#include "core/models/architectures/architecture.h"
#include "core/models/model_size.h"

namespace attn {

namespace {

// The layers' memory as each mechanism's descriptor states it (MechanismDescriptor::memory),
// over the layers as the model builds them (resolved_attention_layers).
std::vector<AttentionMemory> layer_memory(const ModelConfig& m, double B, double T) {
  const double H = m.heads, Dh = static_cast<double>(m.d_model) / m.heads;
  std::vector<AttentionMemory> out;
  for (const std::string& mech :
       resolved_attention_layers(m.attention, m.layers, m.attention_options, m.head == "lm")) {
    const nlohmann::json options = m.attention_options.contains(mech) ? m.attention_options.at(mech)
                                                                      : nlohmann::json::object();
    AttentionMemory a = attention_layer_memory(mech, options, B, H, T, Dh);
    a.fused_on_cpu = a.fused_on_cpu && m.position != "rope" && m.position != "alibi";
    out.push_back(a);
  }
  return out;
}

std::string join_keys(const std::vector<std::string>& keys) {
  std::string s;
  for (size_t i = 0; i < keys.size(); ++i)
    s += (i == 0 ? "" : i + 1 == keys.size() ? " or " : ", ") + keys[i];
  return s;
}

}  // namespace

namespace {

// The floats one pass adds at `B` sequences (see estimate_memory): `use` train keeps what
// backward needs, eval and analyze one layer at a time (analyze also every layer's weights).
// P: parameters; own: a model of its own; reference: the reference path even where the fused
// CPU kernel would serve (the head interventions' hooks take it).
double pass_floats(const ExperimentConfig& c, double B, double T, double V, double P,
                   const std::optional<ArchitectureMemory>& own, MemoryUse use,
                   bool reference = false) {
  const ModelConfig& m = c.model;
  const double D = m.d_model, F = static_cast<double>(m.mlp_ratio) * m.d_model;
  // Per sequence, in float elements: the score tensors autograd keeps (saved), the most live at
  // once in one layer's forward or backward (live), and the same without gradients (eval_live).
  const bool weights_kept = use == MemoryUse::analyze;  // recording takes the reference path
  double saved = 0, live = 0, eval_live = 0, max_extra = 0, fixed = 0;
  for (const AttentionMemory& t : own ? std::vector<AttentionMemory>() : layer_memory(m, B, T)) {
    const bool fused = t.fused_on_cpu && !weights_kept && !reference;
    saved += (fused ? 1 : 2) * t.scores;
    live = std::max(live, (fused ? 2 : 3) * t.scores);
    eval_live = std::max(eval_live, (fused ? 1.5 : 3) * t.scores);
    if (weights_kept) eval_live += t.scores;  // every layer's weights, kept to the end
    max_extra = std::max(max_extra, t.extra);
    fixed = std::max(fixed, t.fixed);
  }
  // Per token: what autograd keeps of a layer (LayerNorms, q k v, projections, MLP, residuals)
  // and what one layer has live without gradients; a model of its own: its whole model's.
  const double train_token = own ? own->train_token : 16 * D + 4 * F;
  const double eval_token = own ? own->eval_token : 8 * D + 2 * F;
  const double token_layers = own ? 1 : m.layers;
  // Weights, gradients, AdamW's two moments, the recovery copy and a step's spare.
  if (use == MemoryUse::train)
    return 6 * P + B * (token_layers * T * train_token + saved + live + max_extra + 4 * T * V) +
           fixed;
  // A loaded run holds weights and its AdamW moments; no gradients, one layer at a time.
  return 4 * P + B * (T * eval_token + eval_live + max_extra + 3 * T * V) + fixed;
}

// One views.rec record (core/training/recording/run_recorder.h) on top of the training state:
// head importance ablates one head at a time over train.batch_size eval sequences (through the
// interventions' hooks, so on the reference path), the record's
// maps keep every layer's weights of one probe, and with train.record_attribution attribution
// patching runs the probe and its twin as a batch of two with gradients, counted on the
// reference path (dot's capture takes its packed kernel, which keeps less). A model of its own has no heads: its views are of one probe. The parameters are the run's,
// already counted by the step.
double record_floats(const ExperimentConfig& c, double B, double T, double V,
                     const std::optional<ArchitectureMemory>& own) {
  if (own) return pass_floats(c, 1, T, V, 0, own, MemoryUse::eval);  // its views of one probe
  double f = std::max(pass_floats(c, B, T, V, 0, own, MemoryUse::eval, /*reference=*/true),
                      pass_floats(c, 1, T, V, 0, own, MemoryUse::analyze));
  if (c.train.record_attribution)
    f = std::max(f, pass_floats(c, 2, T, V, 0, own, MemoryUse::train, /*reference=*/true));
  return f;
}

}  // namespace

MemoryEstimate estimate_memory(const ExperimentConfig& c, const TaskShape& shape, MemoryUse use) {
  const ModelConfig& m = c.model;
  const bool classifier = m.head == "classifier";
  const double B = c.train.batch_size, T = static_cast<double>(shape.tokens) + (classifier ? 1 : 0);
  const double V = classifier ? (m.classes > 0 ? m.classes : 10) : static_cast<double>(shape.vocab);
  // A model of its own (no attention layers) states its memory itself
  // (core/models/architectures/architecture.h).
  const ArchitectureDescriptor& architecture = architecture_of(m);
  const std::optional<ArchitectureMemory> own =
      architecture.attention_layers
          ? std::nullopt
          : std::optional<ArchitectureMemory>(architecture.memory(m, T, V));
  double P = 0;  // parameters
  if (own) {
    P = own->parameters;
  } else {
    const auto clamp = [](int64_t v) { return static_cast<int>(std::min<int64_t>(v, 1 << 30)); };
    P = static_cast<double>(model_parameter_count(m, clamp(std::max<int64_t>(1, shape.vocab)),
                                                  clamp(shape.tokens), clamp(shape.patch_dim))
                                .total);
  }
  double floats = 0;
  if (use == MemoryUse::record) {
    floats = record_floats(c, B, T, V, own);
  } else {
    floats = pass_floats(c, B, T, V, P, own, use);
    // A recording run's step comes after records: glibc keeps a freed record's heap resident
    // and a step need not reuse it, so their peaks add (measured, neural at 4 x 512 tokens: a
    // first step peaked 22 MiB higher after an attribution record than without one).
    if (use == MemoryUse::train && c.train.record_every > 0) floats += record_floats(c, B, T, V, own);
  }
  // The eval set (and a training batch): int64 inputs and targets; images as float patches.
  double data = (c.train.eval_batches + 1) * B * T * 16;
  if (shape.patch_dim > 0) data += (c.train.eval_batches + 1) * B * T * shape.patch_dim * 4;
  const double mask = T * T;  // the causal mask, one byte per pair
  const double bytes = floats * 4 + data + mask + static_cast<double>(kRuntimeOverhead);

  MemoryEstimate e;
  e.bytes = bytes >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(bytes);
  const std::string key = task_length_key(c.task);
  const int64_t key_value = key == "task.context" ? c.task.context
                            : key == "task.patch" ? c.task.patch
                                                  : c.task.length;
  const std::string tokens = std::to_string(static_cast<long long>(T));
  e.sizes = "train.batch_size " + std::to_string(c.train.batch_size) + " x " +
            (key.empty() ? tokens + " tokens"
                         : key + " " + std::to_string(key_value) + " (" + tokens + " tokens)");
  if (own)
    e.sizes += "; " + own->sizes;
  else
    e.sizes += "; model.heads " + std::to_string(m.heads) + " x model.layers " +
               std::to_string(m.layers) + " of " + tokens + " x " + tokens + " scores";
  e.sizes += "; model.d_model " + std::to_string(m.d_model) + ", vocabulary " +
             std::to_string(static_cast<long long>(V)) + (shape.vocab_known ? "" : " at least");
  std::vector<std::string> keys = {"train.batch_size"};
  if (!key.empty() && key != "task.patch") keys.push_back(key);
  if (own) {
    keys.insert(keys.end(), own->shrink.begin(), own->shrink.end());
  } else {
    keys.insert(keys.end(), {"model.heads", "model.layers", "model.d_model"});
  }
  e.shrink = join_keys(keys);
  return e;
}

void require_memory_for(const ExperimentConfig& c, const TaskShape& shape, MemoryUse use,
                        const std::string& what) {
  const MemoryEstimate e = estimate_memory(c, shape, use);
  require_memory(
      e.bytes, what + " (" + e.sizes + ")",
      "lower " + e.shrink + ", or raise ATTNLAB_MEMORY_LIMIT / use a machine with more memory");
}

}  // namespace attn
