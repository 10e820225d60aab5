#include "core/training/interventions/interventions.h"

#include <cmath>
#include <limits>

#include "core/base/error.h"
#include "core/models/architectures/architecture.h"
#include "core/training/interventions/intervention_scope.h"
#include "core/training/session/session.h"  // probe_model

namespace attn {

using detail::answer_logits;
using detail::check_heads;
using detail::clean_and_corrupt;
using detail::PatchRuns;
using detail::Scope;

namespace {

using Kind = HeadIntervention::Kind;

EvalFigures run_eval(Scope& scope, const std::vector<Batch>& batches) {
  const torch::Device device = scope.device();
  double loss_sum = 0, correct = 0, count = 0;
  for (const Batch& batch : batches) {
    auto logits = scope.forward(batch.inputs.to(device));
    auto flat = logits.reshape({-1, logits.size(-1)});
    auto tg = batch.targets.to(device).reshape({-1});
    auto scored = tg.ne(-1);
    loss_sum += torch::nn::functional::cross_entropy(
                    flat, tg,
                    torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-1).reduction(
                        torch::kSum))
                    .item<double>();
    correct += flat.argmax(-1).eq(tg).logical_and(scored).sum().item<double>();
    count += scored.sum().item<double>();
  }
  return {loss_sum / std::max(1.0, count), correct / std::max(1.0, count)};
}

// A batch walked once without hooks, for the passes that change one layer (head_importance):
// the stream entering every block, and which rows the loss scores. Only the last block's
// attention reads other positions; its MLP, the final norm and the unembedding act row by row,
// so they run on the scored rows alone (recall scores one position of its sequence).
struct Walked {
  std::vector<torch::Tensor> resid;  // per block, the stream entering it [B, T, D]
  torch::Tensor rows;                // the scored rows of [B * T] (lm) or [B] (classifier)
  torch::Tensor targets;             // their targets [N]
};

// Logits [N, V] of the scored rows, from the stream entering block `from` with the scope's
// hooks: what model->forward computes there (the blocks in eval mode, final norm, unembedding).
torch::Tensor logits_from(Scope& scope, const Walked& w, int from) {
  Transformer& model = scope.model();
  std::vector<Block> blocks = model->blocks();  // holders: their modules are not const
  const int last = static_cast<int>(blocks.size()) - 1;
  torch::Tensor x = w.resid.at(from);
  for (int l = from; l < last; ++l) x = blocks[l]->forward(x);
  torch::Tensor h = x + blocks[last]->attention->forward(blocks[last]->attention_input(x));
  h = model->is_classifier() ? h.select(1, 0) : h.reshape({-1, h.size(2)});
  h = h.index_select(0, w.rows);
  return model->unembedding()->forward(
      model->final_norm()->forward(h + blocks[last]->mlp_write(h)));
}

Walked walk_batch(Scope& scope, const Batch& batch) {
  const torch::Device device = scope.device();
  Transformer& model = scope.model();
  Walked w;
  torch::Tensor x = model->embed(batch.inputs.to(device));
  std::vector<Block> blocks = model->blocks();
  for (size_t l = 0; l < blocks.size(); ++l) {
    w.resid.push_back(x);
    if (l + 1 < blocks.size()) x = blocks[l]->forward(x);
  }
  const torch::Tensor tg = batch.targets.to(device).reshape({-1});
  w.rows = tg.ne(-1).nonzero().squeeze(1);
  w.targets = tg.index_select(0, w.rows);
  return w;
}

// run_eval's figures on walked batches, each run from block `from` with the scope's hooks.
EvalFigures eval_from(Scope& scope, const std::vector<Walked>& walked, int from) {
  double loss_sum = 0, correct = 0, count = 0;
  for (const Walked& w : walked) {
    const torch::Tensor logits = logits_from(scope, w, from);
    loss_sum += torch::nn::functional::cross_entropy(
                    logits, w.targets,
                    torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                    .item<double>();
    correct += logits.argmax(-1).eq(w.targets).sum().item<double>();
    count += static_cast<double>(w.targets.size(0));
  }
  return {loss_sum / std::max(1.0, count), correct / std::max(1.0, count)};
}

// Every layer's per-head mean output over the batches' examples, [1, H, L, Dh] per layer.
std::vector<torch::Tensor> head_means(Scope& scope, const std::vector<Batch>& batches) {
  std::vector<torch::Tensor> sums(scope.layers());
  double examples = 0;
  bool pooled = false;
  const torch::Device device = scope.device();
  for (const Batch& batch : batches) {
    for (int l = 0; l < scope.layers(); ++l) scope.at(l).capture = true;
    scope.forward(batch.inputs.to(device));
    for (int l = 0; l < scope.layers(); ++l) {
      auto y = scope.at(l).captured.to(torch::kFloat64);
      scope.at(l).captured = torch::Tensor();
      auto s = y.sum(0, /*keepdim=*/true);
      if (sums[l].defined() && !pooled && sums[l].size(2) != s.size(2)) pooled = true;
      if (pooled) {  // lengths differ: pool positions as well (weighted by their count)
        if (sums[l].defined() && sums[l].size(2) != 1)
          sums[l] = sums[l].sum(2, true) / static_cast<double>(sums[l].size(2));
        s = s.sum(2, true) / static_cast<double>(s.size(2));
      }
      sums[l] = sums[l].defined() ? sums[l] + s : s;
    }
    examples += static_cast<double>(batch.inputs.size(0));
  }
  scope.clear();
  for (auto& s : sums) s = (s / std::max(1.0, examples)).to(torch::kFloat32);
  return sums;
}

// Sets the hooks that ablate `heads` in `mode` (means: head_means, for mean ablation).
void set_ablation(Scope& scope, const std::vector<HeadRef>& heads, AblationMode mode,
                  const std::vector<torch::Tensor>& means) {
  for (const HeadRef& h : heads) {
    HeadIntervention& iv = scope.at(h.layer);
    iv.kinds.resize(scope.heads(), Kind::keep);
    switch (mode) {
      case AblationMode::zero:
        iv.kinds[h.head] = Kind::zero;
        break;
      case AblationMode::uniform:
        iv.kinds[h.head] = Kind::uniform;
        break;
      case AblationMode::mean:
        iv.kinds[h.head] = Kind::replace;
        iv.replacement = means.at(h.layer);
        break;
    }
  }
}

}  // namespace

namespace detail {

void check_heads(const Scope& scope, const std::vector<HeadRef>& heads) {
  for (const HeadRef& h : heads)
    if (h.layer < 0 || h.layer >= scope.layers() || h.head < 0 || h.head >= scope.heads())
      throw Error("head " + std::to_string(h.layer) + "." + std::to_string(h.head) +
                  " does not exist (this model has layers 0.." +
                  std::to_string(scope.layers() - 1) + " and heads 0.." +
                  std::to_string(scope.heads() - 1) + ")");
}

void check_probe_pair(const torch::Tensor& clean, const torch::Tensor& corrupt,
                      const std::vector<int64_t>& read) {
  if (clean.dim() != 2 || corrupt.dim() != 2 || clean.size(0) != 1 || corrupt.size(0) != 1)
    throw Error("patching takes two token probes, each a batch of one");
  if (clean.size(1) != corrupt.size(1))
    throw Error("the clean probe has " + std::to_string(clean.size(1)) +
                " tokens and the corrupted probe " + std::to_string(corrupt.size(1)) +
                ": patching replaces a head's output position by position, so the two probes "
                "must have the same length");
  for (const int64_t p : read)
    if (p < 0 || p >= clean.size(1))
      throw Error("the patch metric reads position " + std::to_string(p) + ", outside the " +
                  std::to_string(clean.size(1)) + "-token probe");
}

PatchRuns runs_from_logits(const torch::Tensor& clean_logits, const torch::Tensor& corrupt_logits,
                           const std::vector<int64_t>& read, const Answers& answers, bool values) {
  PatchRuns r;
  r.metric.positions = read;
  if (answers.empty()) {
    r.metric.clean = Metric::answers(r.metric.read(clean_logits));
    r.metric.corrupt = Metric::answers(r.metric.read(corrupt_logits));
  } else {
    const size_t P = read.empty() ? 1 : read.size();
    const int64_t V = clean_logits.size(-1);
    if (answers.clean.size() != P || answers.corrupt.size() != P)
      throw Error("the patch metric reads " + std::to_string(P) +
                  " position(s) but the task gave " + std::to_string(answers.clean.size()) +
                  " clean and " + std::to_string(answers.corrupt.size()) + " corrupted answer(s)");
    for (const auto* list : {&answers.clean, &answers.corrupt})
      for (const int64_t a : *list)
        if (a < 0 || a >= V)
          throw Error("the task's answer " + std::to_string(a) + " is outside the model's " +
                      std::to_string(V) + " outputs");
    r.metric.clean = answers.clean;
    r.metric.corrupt = answers.corrupt;
  }
  r.metric.logit_diff = r.metric.clean != r.metric.corrupt;
  if (!values) return r;
  r.clean = r.metric.of(clean_logits).item<double>();
  r.corrupt = r.metric.of(corrupt_logits).item<double>();
  return r;
}

PatchRuns clean_and_corrupt(Scope& scope, const torch::Tensor& clean, const torch::Tensor& corrupt,
                            const std::vector<int64_t>& read, const Answers& answers) {
  check_probe_pair(clean, corrupt, read);
  const torch::Device device = scope.device();
  for (int l = 0; l < scope.layers(); ++l) scope.at(l).capture = true;
  const torch::Tensor clean_logits = scope.forward(clean.to(device));
  std::vector<torch::Tensor> clean_heads;
  for (int l = 0; l < scope.layers(); ++l) clean_heads.push_back(scope.at(l).captured);
  scope.clear();
  const torch::Tensor corrupt_logits = scope.forward(corrupt.to(device));
  PatchRuns r = runs_from_logits(clean_logits, corrupt_logits, read, answers);
  r.clean_heads = std::move(clean_heads);
  return r;
}

torch::Tensor read_logits(Scope& scope, const torch::Tensor& inputs,
                          const std::vector<int64_t>& read) {
  Transformer& model = scope.model();
  if (model->blocks().empty() || static_cast<int>(model->blocks().size()) != scope.layers()) {
    Metric m;
    m.positions = read;
    const torch::Tensor r = m.read(scope.forward(inputs));  // [B, P, V]
    return model->is_classifier() ? r.squeeze(1) : r;
  }
  Walked w;
  w.resid.push_back(model->embed(inputs));
  const int64_t B = inputs.size(0), L = inputs.size(1);
  std::vector<int64_t> rows;
  for (int64_t b = 0; b < B; ++b)
    if (model->is_classifier())
      rows.push_back(b);
    else if (read.empty())
      rows.push_back(b * L + L - 1);
    else
      for (const int64_t p : read) rows.push_back(b * L + p);
  w.rows = torch::tensor(rows, torch::kInt64).to(inputs.device());
  const torch::Tensor logits = logits_from(scope, w, 0);  // [rows, V]
  return model->is_classifier() ? logits : logits.view({B, -1, logits.size(-1)});
}

}  // namespace detail

void check_interventions_apply(const ExperimentConfig& config) {
  require_attention_heads(config.model);
}

std::vector<Batch> first_batches(const std::vector<Batch>& set, int batches) {
  if (batches <= 0 || batches >= static_cast<int>(set.size())) return set;
  return {set.begin(), set.begin() + batches};
}

EvalFigures evaluate_model(Transformer& model, const std::vector<Batch>& batches) {
  Scope scope(model);
  return run_eval(scope, batches);
}

AblationResult ablate_heads(Transformer& model, const std::vector<Batch>& batches,
                            const std::vector<HeadRef>& heads, AblationMode mode) {
  Scope scope(model);
  check_heads(scope, heads);
  AblationResult r;
  r.mode = mode;
  r.heads = heads;
  r.batches = static_cast<int>(batches.size());
  r.baseline = run_eval(scope, batches);
  const std::vector<torch::Tensor> means = mode == AblationMode::mean && !heads.empty()
                                               ? head_means(scope, batches)
                                               : std::vector<torch::Tensor>{};
  set_ablation(scope, heads, mode, means);
  r.ablated = run_eval(scope, batches);
  return r;
}

ImportanceTable head_importance(Transformer& model, const std::vector<Batch>& batches,
                                AblationMode mode, const std::function<void(int, int)>& progress) {
  Scope scope(model);
  ImportanceTable t;
  t.mode = mode;
  t.batches = static_cast<int>(batches.size());
  t.layers = scope.layers();
  t.heads = scope.heads();
  // A model of blocks is walked once: a head's ablation reruns its layer onwards only.
  const bool blocks = !model->blocks().empty() &&
                      static_cast<int>(model->blocks().size()) == t.layers && t.layers > 0;
  std::vector<Walked> walked;
  if (blocks)
    for (const Batch& b : batches) walked.push_back(walk_batch(scope, b));
  // Nothing ablated: the walk's stream entering the last block is the model's own (the same
  // ops), so the baseline runs that block only.
  t.baseline = blocks ? eval_from(scope, walked, t.layers - 1) : run_eval(scope, batches);
  const std::vector<torch::Tensor> means =
      mode == AblationMode::mean ? head_means(scope, batches) : std::vector<torch::Tensor>{};
  const int total = t.layers * t.heads;
  for (int l = 0; l < t.layers; ++l)
    for (int h = 0; h < t.heads; ++h) {
      set_ablation(scope, {{l, h}}, mode, means);
      const EvalFigures e = blocks ? eval_from(scope, walked, l) : run_eval(scope, batches);
      scope.clear();
      t.loss.push_back(static_cast<float>(e.loss));
      t.accuracy.push_back(static_cast<float>(e.accuracy));
      if (progress) progress(l * t.heads + h + 1, total);
    }
  return t;
}

std::pair<int64_t, double> ablated_prediction(Transformer& model, const torch::Tensor& probe,
                                              const std::vector<Batch>& batches,
                                              const std::vector<HeadRef>& heads, AblationMode mode,
                                              std::vector<AttentionMap>* maps) {
  Scope scope(model);
  check_heads(scope, heads);
  const std::vector<torch::Tensor> means = mode == AblationMode::mean && !heads.empty()
                                               ? head_means(scope, batches)
                                               : std::vector<torch::Tensor>{};
  set_ablation(scope, heads, mode, means);
  torch::Tensor logits;
  if (maps)  // the probe's own pass, its maps recorded under the hooks just set
    *maps = probe_model(model, probe.to(scope.device()), &logits).maps;
  else
    logits = scope.forward(probe.to(scope.device()));
  const torch::Tensor p = torch::softmax(answer_logits(logits).to(torch::kFloat64), 1)[0];
  const int64_t top = p.argmax().item<int64_t>();
  return {top, p[top].item<double>()};
}

PatchTable patch_heads(Transformer& model, const torch::Tensor& clean, const torch::Tensor& corrupt,
                       const std::function<std::string(int64_t)>& label,
                       const std::vector<int64_t>& read, const std::vector<int64_t>& answers,
                       const std::vector<int64_t>& twin_answers) {
  Scope scope(model);
  const PatchRuns runs =
      clean_and_corrupt(scope, clean, corrupt, read, detail::Answers{answers, twin_answers});
  PatchTable t;
  detail::fill_patch_header(t, runs, scope, label);
  const int64_t P = runs.clean_heads.front().size(2);  // positions the heads see (CLS included)
  t.positions = static_cast<int>(P);
  const int64_t offset = P - clean.size(1);  // 1 for a classifier's CLS
  if (offset > 0) t.tokens.push_back("CLS"), t.corrupt_tokens.push_back("CLS");
  auto clean_cpu = clean.to(torch::kCPU), corrupt_cpu = corrupt.to(torch::kCPU);
  for (int64_t i = 0; i < clean.size(1); ++i) {
    const int64_t a = clean_cpu[0][i].item<int64_t>(), b = corrupt_cpu[0][i].item<int64_t>();
    t.tokens.push_back(label(a));
    t.corrupt_tokens.push_back(label(b));
    if (a != b) t.differing.push_back(static_cast<int>(i + offset));
  }
  const double span = runs.clean - runs.corrupt;
  auto restored = [&](const torch::Tensor& m) {  // [B] metric -> restored share
    if (span == 0)  // the probes do not differ in the metric: nothing to restore
      return torch::full(m.sizes(), std::nan(""), torch::kFloat32);
    return ((m - runs.corrupt) / span).to(torch::kFloat32).to(torch::kCPU);
  };
  const torch::Device device = scope.device();
  // One batch per head: row p patches position p only; then the head at every position.
  const torch::Tensor rows = corrupt.to(device).expand({P - offset, corrupt.size(1)}).contiguous();
  const torch::Tensor one_position =
      torch::eye(P, torch::dtype(torch::kBool).device(device)).slice(0, offset);
  t.restored_at.assign(static_cast<size_t>(t.layers) * t.heads * P,
                       std::numeric_limits<float>::quiet_NaN());
  for (int l = 0; l < t.layers; ++l)
    for (int h = 0; h < t.heads; ++h) {
      HeadIntervention& iv = scope.at(l);
      iv.kinds.assign(t.heads, Kind::keep);
      iv.kinds[h] = Kind::replace;
      iv.replacement = runs.clean_heads[l];
      const torch::Tensor whole = runs.metric.of(scope.forward(corrupt.to(device)));
      t.restored.push_back(restored(whole).item<float>());
      iv.positions = one_position;
      const torch::Tensor each = restored(runs.metric.of(scope.forward(rows)));
      const float* e = each.data_ptr<float>();
      float* out = &t.restored_at[(static_cast<size_t>(l) * t.heads + h) * P];
      for (int64_t p = 0; p + offset < P; ++p) out[p + offset] = e[p];
      scope.clear();
    }
  return t;
}

double patched_metric(Transformer& model, const torch::Tensor& clean, const torch::Tensor& corrupt,
                      const std::vector<HeadRef>& heads, const std::vector<int64_t>& read,
                      const std::vector<int64_t>& answers,
                      const std::vector<int64_t>& twin_answers) {
  Scope scope(model);
  check_heads(scope, heads);
  const PatchRuns runs =
      clean_and_corrupt(scope, clean, corrupt, read, detail::Answers{answers, twin_answers});
  for (const HeadRef& h : heads) {
    HeadIntervention& iv = scope.at(h.layer);
    iv.kinds.resize(scope.heads(), Kind::keep);
    iv.kinds[h.head] = Kind::replace;
    iv.replacement = runs.clean_heads[h.layer];
  }
  return runs.metric.of(scope.forward(corrupt.to(scope.device()))).item<double>();
}

}  // namespace attn
