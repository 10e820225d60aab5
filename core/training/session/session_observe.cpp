// TrainingSession, observing: the probe, the snapshot fields, views.rec records and the
// mechanisms' views over training (stepping: session.cpp).
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <type_traits>

#include "core/analysis/head_metrics.h"
#include "core/attention/fused_attention.h"
#include "core/attention/kernel_family/kernel_attention.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/base/version.h"
#include "core/models/architectures/architecture.h"
#include "core/random/run_random.h"
#include "core/runs/formats/safetensors.h"
#include "core/training/interventions/interventions.h"
#include "core/training/optimizer/adamw_state.h"
#include "core/training/optimizer/fused_adamw.h"
#include "core/training/session/graphed_step.h"
#include "core/training/session/session.h"
#include "core/training/session/training_errors.h"

namespace attn {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr size_t kKeptMechanismFrames = 64;  // frames kept over training (thinned beyond)

}  // namespace

ProbeResult probe_model(Transformer& model, const torch::Tensor& input) {
  return probe_model(model, input, nullptr);
}

ProbeResult probe_model(Transformer& model, const torch::Tensor& input, torch::Tensor* logits_out) {
  torch::NoGradGuard no_grad;
  const bool was_training = model->is_training();
  model->eval();
  auto modules = model->attention_modules();
  for (auto& m : modules) m->record_weights = true;
  const torch::Tensor logits = model->forward(input);
  ProbeResult result;
  result.layers = static_cast<int>(modules.size());
  for (size_t l = 0; l < modules.size(); ++l) {
    auto w = modules[l]->recorded_weights;
    modules[l]->record_weights = false;
    modules[l]->recorded_weights = torch::Tensor();
    if (!w.defined()) continue;  // a mechanism that cannot produce a map
    w = w[0].to(torch::kCPU, torch::kFloat32).contiguous();  // [H, L, L]
    for (int64_t h = 0; h < w.size(0); ++h) {
      AttentionMap map;
      map.layer = static_cast<int>(l);
      map.head = static_cast<int>(h);
      map.size = static_cast<int>(w.size(1));
      const float* p = w[h].data_ptr<float>();
      map.weights.assign(p, p + map.size * map.size);
      result.maps.push_back(std::move(map));
    }
  }
  if (model->is_classifier()) {
    auto probs = torch::softmax(logits[0].to(torch::kCPU, torch::kFloat32), 0).contiguous();
    result.probabilities.assign(probs.data_ptr<float>(), probs.data_ptr<float>() + probs.numel());
  }
  if (logits_out) *logits_out = logits;
  if (was_training) model->train();
  return result;
}

std::vector<int64_t> TrainingSession::parse_probe(const std::string& text) const {
  std::vector<int64_t> tokens = task_->parse_probe(text);
  if (static_cast<int64_t>(tokens.size()) > max_length_)
    throw Error("probe: " + std::to_string(tokens.size()) +
                " tokens, too long: this model takes at most " + std::to_string(max_length_) +
                " (its task's sequence length)");
  return tokens;
}

torch::Tensor TrainingSession::probe_input() const {
  return (own_probe() ? torch::tensor(probe_tokens_, torch::kInt64).unsqueeze(0)
                      : task_->probe_input())
      .to(device_);
}

std::vector<std::string> TrainingSession::probe_labels() const {
  if (!own_probe()) return task_->probe_labels();
  std::vector<std::string> labels;
  for (const int64_t t : probe_tokens_) labels.push_back(task_->token_label(t));
  return labels;
}

void TrainingSession::probe_attention(Snapshot& out) {
  const torch::Tensor input = probe_input();
  ProbeResult probe = probe_model(model_, input);
  out.layers = probe.layers;
  out.heads = config_.model.heads;
  if (monitor_) {  // its measurements on the same input, in eval mode like the maps
    torch::NoGradGuard no_grad;
    model_->eval();
    monitor_->probe(input, step_);
    model_->train();
    out.model_views = monitor_->views();
  }
  out.probe_tokens = probe_labels();
  out.probe_image = task_->probe_image();
  out.probe_probabilities = std::move(probe.probabilities);
  out.attention = std::make_shared<const std::vector<AttentionMap>>(std::move(probe.maps));
  out.attention_step = step_;
  record_mechanism_views();
  out.mechanism_views = mechanism_views_;
}

std::vector<int64_t> TrainingSession::induction_probe() const {
  const int vocab = task_->vocab_size();
  const int64_t half = max_length_ / 2;
  if (task_->patch_dim() > 0 || vocab < 2 || half < 2) return {};
  constexpr uint32_t kInductionProbeSeed = 0x1d0c7;
  std::mt19937 rng(kInductionProbeSeed);
  std::uniform_int_distribution<int> token(0, vocab - 1);
  std::vector<int64_t> tokens;
  for (int64_t i = 0; i < half; ++i) tokens.push_back(token(rng));
  for (int64_t i = 0; i < half; ++i) tokens.push_back(tokens[static_cast<size_t>(i)]);
  return tokens;
}

ViewRecord TrainingSession::view_record() {
  ProbeResult probe = probe_model(model_, probe_input());
  ViewRecord r;
  r.step = step_;
  r.layers = probe.layers;
  r.heads = config_.model.heads;
  r.maps = std::move(probe.maps);
  r.probe_tokens = probe_labels();
  r.mechanisms = mechanism_frame().layers;
  r.image = task_->probe_image();
  r.probabilities = std::move(probe.probabilities);
  if (const std::vector<int64_t> repeated = induction_probe(); !repeated.empty()) {
    const ProbeResult rp =
        probe_model(model_, torch::tensor(repeated, torch::kInt64).unsqueeze(0).to(device_));
    std::vector<std::string> ids;
    for (const int64_t t : repeated) ids.push_back(std::to_string(t));
    for (const AttentionMap& m : rp.maps)
      r.induction.push_back(static_cast<float>(map_induction(m.weights, m.size, ids)));
    if (r.induction.size() != r.maps.size()) r.induction.clear();  // maps of another shape
  }
  if (monitor_) r.model_views = monitor_->record_views(step_);
  // Every head's zero ablation on the first eval batches: when each head became necessary.
  if (architecture_has_heads(config_.model)) {
    // Each batch cut to a training batch's examples: an image task's eval batch holds 500
    // images, and layers x heads + 1 passes over it took ~9 s a record (linear-sim, 16 heads).
    std::vector<Batch> batches =
        first_batches(task_->eval_set(), config_.train.record_importance_batches);
    for (Batch& b : batches)
      if (b.inputs.size(0) > config_.train.batch_size) {
        b.inputs = b.inputs.narrow(0, 0, config_.train.batch_size);
        b.targets = b.targets.narrow(0, 0, config_.train.batch_size);
      }
    r.importance = head_importance(model_, batches, AblationMode::zero);
    r.importance.step = step_;
  }
  return r;
}

MechanismFrame TrainingSession::mechanism_frame() {
  MechanismFrame frame;
  frame.step = step_;
  const auto modules = model_->attention_modules();
  const auto& names = config_.model.attention;
  for (size_t l = 0; l < modules.size(); ++l) {
    std::optional<MechanismView> view = modules[l]->observe();
    if (!view) continue;
    view->layer = static_cast<int>(l);
    view->mechanism = names.size() == 1 ? names[0] : l < names.size() ? names[l] : "";
    frame.layers.push_back(std::move(*view));
  }
  return frame;
}

void TrainingSession::set_view_request(const std::string& mechanism,
                                       const nlohmann::json& request) {
  const auto modules = model_->attention_modules();
  const auto& names = config_.model.attention;
  for (size_t l = 0; l < modules.size(); ++l) {
    const std::string& name = names.size() == 1 ? names[0] : l < names.size() ? names[l] : "";
    if (name != mechanism) continue;
    try {
      modules[l]->set_view_request(request);
    } catch (const Error& e) {
      throw Error(mechanism + " view request: " + e.what());
    }
  }
  MechanismFrame frame = mechanism_frame();
  auto next = std::make_shared<std::vector<MechanismFrame>>(*mechanism_views_);
  if (!next->empty() && next->back().step == step_) next->pop_back();
  if (!frame.layers.empty()) append_thinned(*next, std::move(frame), kKeptMechanismFrames);
  mechanism_views_ = std::move(next);
}

void TrainingSession::record_mechanism_views() {
  // Weights change only with the step: a probe of a paused run, or an eval right after a probe,
  // would record the same frame again.
  if (!mechanism_views_->empty() && mechanism_views_->back().step == step_) return;
  MechanismFrame frame = mechanism_frame();
  if (frame.layers.empty()) return;
  auto next = std::make_shared<std::vector<MechanismFrame>>(*mechanism_views_);
  append_thinned(*next, std::move(frame), kKeptMechanismFrames);
  mechanism_views_ = std::move(next);
}

void TrainingSession::fill_snapshot(Snapshot& out) const {
  out.mechanism_views = mechanism_views_;
  out.step = step_;
  out.total_steps = config_.train.steps;
  out.learning_rate = lr_at(std::min(step_, config_.train.steps - 1));
  out.device = device_name();
  out.gpu_memory = device_.is_cuda() ? cuda_memory_allocated() : 0;
  out.task = config_.task.name;
  out.token_legend = task_->label_legend();
  out.mechanisms = layer_mechanisms(config_.model);
  if (monitor_) out.model_views = monitor_->views();
  out.parameters = model_->parameter_count();
  out.attention_parameters = model_->attention_parameter_count();
  out.train_loss = train_loss_.series();
  out.eval_loss = eval_loss_.series();
  out.eval_accuracy = eval_accuracy_.series();
  out.baseline_loss = task_->baseline_loss();
}

}  // namespace attn
