// What the head interventions share (torch; internal to core/training/interventions): the scope
// they run in, the patch metric and the clean/corrupted pair of runs. interventions.h,
// attribution.h, path_patching.h and logit_attribution.h hold the contracts.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/models/model.h"
#include "core/views/intervention_view.h"

namespace attn::detail {

// Eval mode, no gradients and no hooks outside the scope: every intervention runs in one.
class Scope {
 public:
  explicit Scope(Transformer& model)
      : model_(model), modules_(model->attention_modules()), training_(model->is_training()) {
    model_->eval();
  }
  ~Scope() {
    clear();
    if (training_) model_->train();
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  int layers() const { return static_cast<int>(modules_.size()); }
  int heads() const { return model_->heads(); }
  // The layer's hook, created on first use; layers never asked for keep their usual paths.
  HeadIntervention& at(int layer) {
    auto& iv = modules_.at(layer)->intervention;
    if (!iv) iv = std::make_shared<HeadIntervention>();
    return *iv;
  }
  void clear() {
    for (auto& m : modules_) m->intervention.reset();
  }
  torch::Tensor forward(const torch::Tensor& input) { return model_->forward(input); }
  torch::Device device() const { return model_->parameters().front().device(); }
  Transformer& model() { return model_; }

 private:
  Transformer& model_;
  std::vector<std::shared_ptr<AttentionModule>> modules_;
  bool training_;
  torch::NoGradGuard no_grad_;
};

// The model's parameters stop requiring gradients while it lives (restored after, exception or
// not), for a backward pass that asks only for activations' gradients. Not for a model another
// thread trains meanwhile: interventions run on the thread that trains, between its steps.
class FrozenParameters {
 public:
  explicit FrozenParameters(Transformer& model) {
    for (torch::Tensor& p : model->parameters())
      if (p.requires_grad()) frozen_.push_back(p.requires_grad_(false));
  }
  ~FrozenParameters() {
    for (torch::Tensor& p : frozen_) p.requires_grad_(true);
  }
  FrozenParameters(const FrozenParameters&) = delete;
  FrozenParameters& operator=(const FrozenParameters&) = delete;

 private:
  std::vector<torch::Tensor> frozen_;
};

// Throws attn::Error naming a head the scope's model does not have.
void check_heads(const Scope& scope, const std::vector<HeadRef>& heads);

// Last-position logits [B, V] (classifiers: their class logits).
inline torch::Tensor answer_logits(const torch::Tensor& logits) {
  return logits.dim() == 3 ? logits.select(1, logits.size(1) - 1) : logits;
}

// The patch metric (see PatchTable), per row, in double, summed over the read positions: the
// logit difference of each position's clean and corrupted answers (0 where they agree), or the
// clean answers' cross-entropy when they agree everywhere. The answers are the task's
// (Task::Twin::answers) when the caller has them, else the two runs' argmaxes.
struct Metric {
  bool logit_diff = true;
  std::vector<int64_t> positions;       // the input positions read (empty: the last)
  std::vector<int64_t> clean, corrupt;  // the answers, one per read position
  // Logits [B, L, V] -> [B, P, V] at the read positions; a classifier's [B, V] -> [B, 1, V].
  torch::Tensor read(const torch::Tensor& logits) const {
    if (logits.dim() == 2) return logits.unsqueeze(1);
    if (positions.empty()) return logits.slice(1, logits.size(1) - 1);
    bool every = static_cast<int64_t>(positions.size()) == logits.size(1);  // 0..L-1: as is
    for (size_t i = 0; every && i < positions.size(); ++i) every = positions[i] == int64_t(i);
    if (every) return logits;
    return logits.index_select(1, torch::tensor(positions, torch::kInt64).to(logits.device()));
  }
  // The per-position argmax of one run's logits, as answers.
  static std::vector<int64_t> answers(const torch::Tensor& read_logits) {
    const torch::Tensor a = read_logits[0].argmax(-1).to(torch::kCPU).contiguous();
    return {a.data_ptr<int64_t>(), a.data_ptr<int64_t>() + a.numel()};
  }
  // Full logits [B, L, V] (or a classifier's [B, V]) -> [B].
  torch::Tensor of(const torch::Tensor& logits) const {
    const torch::Tensor z = read(logits).to(torch::kFloat64);
    const auto index = [&](const std::vector<int64_t>& a) {
      return torch::tensor(a, torch::kInt64)
          .to(z.device())
          .view({1, -1, 1})
          .expand({z.size(0), -1, 1});
    };
    if (!logit_diff) return -torch::log_softmax(z, 2).gather(2, index(clean)).sum({1, 2});
    std::vector<int64_t> both;  // one gather: [B, P, 2], the clean answer then the other
    for (size_t i = 0; i < clean.size(); ++i) both.insert(both.end(), {clean[i], corrupt[i]});
    const torch::Tensor picked = z.gather(2, torch::tensor(both, torch::kInt64)
                                                 .to(z.device())
                                                 .view({1, -1, 2})
                                                 .expand({z.size(0), -1, 2}));
    return (picked.select(2, 0) - picked.select(2, 1)).sum(1);
  }
};

struct PatchRuns {
  Metric metric;
  std::vector<torch::Tensor> clean_heads;  // per layer [1, H, L, Dh]
  double clean = 0, corrupt = 0;
};

// The task's answers at the read positions, one per position on each probe (Task::Twin's
// answers and twin_answers); both empty: the metric takes the two runs' argmaxes instead.
struct Answers {
  std::vector<int64_t> clean, corrupt;
  bool empty() const { return clean.empty() && corrupt.empty(); }
};

// Runs both probes ([1, L] each, one length; attn::Error otherwise): the clean run's head outputs,
// the metric read at `read` (input positions; empty: the last; attn::Error past the probe),
// its answers (`answers`, else the two runs' argmaxes there), and its value on each. Leaves no
// hook.
PatchRuns clean_and_corrupt(Scope& scope, const torch::Tensor& clean, const torch::Tensor& corrupt,
                            const std::vector<int64_t>& read = {}, const Answers& answers = {});
// Throws attn::Error unless the probes are two [1, L] token batches of one length and `read`
// lies within them.
void check_probe_pair(const torch::Tensor& clean, const torch::Tensor& corrupt,
                      const std::vector<int64_t>& read);
// The metric, its answers and (`values`) its values from the two runs' logits (clean_heads left
// empty; without `values`, clean and corrupt stay 0 for the caller to fill). Throws attn::Error
// when `answers` are given but not one per read position on each probe, or name a token outside
// the logits' vocabulary.
PatchRuns runs_from_logits(const torch::Tensor& clean_logits, const torch::Tensor& corrupt_logits,
                           const std::vector<int64_t>& read, const Answers& answers = {},
                           bool values = true);

// The logits [B, P, V] of `inputs` [B, L] at the read positions only (`read`, input positions;
// empty: the last), with the scope's hooks; a classifier's [B, V]. A model of blocks computes
// them as model->forward does, but its last block's MLP, the final norm and the unembedding
// act on the read rows alone (they act row by row): a backward through them costs P rows, not
// L. `read` must lie within the inputs (check_probe_pair).
torch::Tensor read_logits(Scope& scope, const torch::Tensor& inputs,
                          const std::vector<int64_t>& read);

// Fills what every patch-like table shares (PatchTable, AttributionTable, PathPatchTable): the
// metric's name, answers and values, and the model's layers and heads.
template <class Table>
void fill_patch_header(Table& t, const PatchRuns& runs, const Scope& scope,
                       const std::function<std::string(int64_t)>& label) {
  t.metric = runs.metric.logit_diff ? "logit_diff" : "loss";
  auto labels = [&](const std::vector<int64_t>& answers) {
    std::string s;
    for (const int64_t a : answers) s += (s.empty() ? "" : " ") + label(a);
    return s;
  };
  t.clean_answer = labels(runs.metric.clean);
  t.corrupt_answer = labels(runs.metric.corrupt);
  t.clean_metric = runs.clean;
  t.corrupt_metric = runs.corrupt;
  t.read_positions = runs.metric.positions;
  t.warning = small_difference_warning(runs.clean, runs.corrupt);
  t.layers = scope.layers();
  t.heads = scope.heads();
}

}  // namespace attn::detail
