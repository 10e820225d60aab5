#include "core/training/interventions/attribution.h"

#include "core/base/error.h"
#include "core/training/interventions/intervention_scope.h"

namespace attn {

AttributionTable attribute_heads(Transformer& model, const torch::Tensor& clean,
                                 const torch::Tensor& corrupt,
                                 const std::function<std::string(int64_t)>& label,
                                 const std::vector<int64_t>& read,
                                 const std::vector<int64_t>& answers,
                                 const std::vector<int64_t>& twin_answers) {
  detail::Scope scope(model);
  if (scope.layers() == 0) throw Error("attribution patching needs a model with attention heads");
  detail::check_probe_pair(clean, corrupt, read);
  // Clean and corrupted as one batch of two, the head outputs kept in the graph: one forward
  // and one backward (d metric / d z of the corrupted row) for every head, about 3 forward
  // passes of the probe (bench_recording). Parameters are not asked for: their .grad stays.
  // The metric of both rows is read once, in the graph, and the layers are finished together:
  // on a 16-token probe each small op costs about as much as a forward pass's share of one.
  std::vector<torch::Tensor> z;
  std::vector<torch::Tensor> grads;
  AttributionTable t;
  detail::PatchRuns runs;
  {
    torch::AutoGradMode grad(true);
    // Only the head outputs need gradients: with the parameters frozen and the first layer's
    // outputs a leaf, the forward records nothing before them and no weight's backward; the
    // last block past its attention runs on the read rows alone.
    const detail::FrozenParameters frozen(scope.model());
    for (int l = 0; l < scope.layers(); ++l) {
      scope.at(l).capture = true;
      scope.at(l).keep_graph = true;
    }
    scope.at(0).leaf = true;
    const torch::Tensor logits = detail::read_logits(
        scope, torch::cat({clean, corrupt}).to(scope.device()), read);  // [2, P, V] or [2, V]
    for (int l = 0; l < scope.layers(); ++l) z.push_back(scope.at(l).captured);
    scope.clear();
    std::vector<int64_t> local;  // the read positions within `logits`
    for (size_t i = 0; i < read.size(); ++i) local.push_back(static_cast<int64_t>(i));
    runs = detail::runs_from_logits(logits.slice(0, 0, 1).detach(), logits.slice(0, 1, 2).detach(),
                                    local, detail::Answers{answers, twin_answers},
                                    /*values=*/false);
    const torch::Tensor m = runs.metric.of(logits);  // [2]: clean, corrupted
    runs.metric.positions = read;                    // the header names the probe's positions
    const torch::Tensor values = m.detach().to(torch::kCPU).contiguous();
    runs.clean = values.data_ptr<double>()[0];
    runs.corrupt = values.data_ptr<double>()[1];
    // Both rows: they do not mix, so row 0 holds the clean run's gradient (two_point).
    grads = torch::autograd::grad({m.sum()}, z, /*grad_outputs=*/{},
                                  /*retain_graph=*/false, /*create_graph=*/false,
                                  /*allow_unused=*/true);
  }
  detail::fill_patch_header(t, runs, scope, label);
  const int64_t P = z.front().size(2);
  t.positions = static_cast<int>(P);
  if (P > clean.size(1)) t.tokens.push_back("CLS");
  // Read through one pointer: indexing the tensor token by token cost about a forward pass's
  // worth of small ops on a 16-token probe (bench_recording).
  const torch::Tensor clean_cpu = clean.to(torch::kCPU, torch::kInt64).contiguous();
  const int64_t* tokens = clean_cpu.data_ptr<int64_t>();
  for (int64_t i = 0; i < clean.size(1); ++i) t.tokens.push_back(label(tokens[i]));
  // Every layer at once: [layers, 2, H, P, Dh] outputs and gradients (row 0 clean, 1
  // corrupted), in double on the CPU, then plain loops: the per-position terms (clean -
  // corrupted) . corrupted gradient, [layers, H, P], and the two-point sums (a dozen small
  // tensor ops fewer).
  for (size_t l = 0; l < z.size(); ++l)
    if (!grads[l].defined()) grads[l] = torch::zeros_like(z[l]);
  const torch::Tensor zs = torch::stack(z).detach().to(torch::kCPU, torch::kFloat64).contiguous();
  const torch::Tensor gs = torch::stack(grads).to(torch::kCPU, torch::kFloat64).contiguous();
  const int64_t LH = static_cast<int64_t>(t.layers) * t.heads, Dh = zs.size(-1),
                row = t.heads * P * Dh;
  const double* zp = zs.data_ptr<double>();
  const double* gp = gs.data_ptr<double>();
  t.attribution.assign(LH, 0.0);
  t.attribution_at.assign(LH * P, 0.0);
  t.two_point.assign(LH, 0.0);
  for (int64_t lh = 0; lh < LH; ++lh) {
    const int64_t base = (lh / t.heads) * 2 * row + (lh % t.heads) * P * Dh;  // clean row
    for (int64_t p = 0; p < P; ++p) {
      double at = 0, mid = 0;
      for (int64_t d = 0; d < Dh; ++d) {
        const int64_t c = base + p * Dh + d, k = c + row;  // clean, corrupted
        const double delta = zp[c] - zp[k];
        at += delta * gp[k];
        mid += delta * (gp[c] + gp[k]) / 2;
      }
      t.attribution_at[lh * P + p] = at;
      t.attribution[lh] += at;
      t.two_point[lh] += mid;
    }
  }
  return t;
}

}  // namespace attn
