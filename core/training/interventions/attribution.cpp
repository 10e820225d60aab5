#include "core/training/interventions/attribution.h"

#include "core/base/error.h"
#include "core/training/interventions/intervention_scope.h"

namespace attn {

AttributionTable attribute_heads(Transformer& model, const torch::Tensor& clean,
                                 const torch::Tensor& corrupt,
                                 const std::function<std::string(int64_t)>& label,
                                 const std::vector<int64_t>& read) {
  detail::Scope scope(model);
  if (scope.layers() == 0) throw Error("attribution patching needs a model with attention heads");
  const detail::PatchRuns runs = detail::clean_and_corrupt(scope, clean, corrupt, read);
  AttributionTable t;
  detail::fill_patch_header(t, runs, scope, label);
  // The corrupted run again, its head outputs kept in the graph: one backward gives d metric /
  // d z for every layer. Parameters are not asked for, so their .grad stays as it was.
  std::vector<torch::Tensor> z;
  std::vector<torch::Tensor> grads;
  {
    torch::AutoGradMode grad(true);
    for (int l = 0; l < t.layers; ++l) {
      scope.at(l).capture = true;
      scope.at(l).keep_graph = true;
    }
    const torch::Tensor m = runs.metric.of(scope.forward(corrupt.to(scope.device()))).sum();
    for (int l = 0; l < t.layers; ++l) z.push_back(scope.at(l).captured);
    scope.clear();
    grads = torch::autograd::grad({m}, z, /*grad_outputs=*/{}, /*retain_graph=*/false,
                                  /*create_graph=*/false, /*allow_unused=*/true);
  }
  const int64_t P = runs.clean_heads.front().size(2);
  t.positions = static_cast<int>(P);
  if (P > clean.size(1)) t.tokens.push_back("CLS");
  const torch::Tensor clean_cpu = clean.to(torch::kCPU);
  for (int64_t i = 0; i < clean.size(1); ++i)
    t.tokens.push_back(label(clean_cpu[0][i].item<int64_t>()));
  for (int l = 0; l < t.layers; ++l) {
    // [1, H, P, Dh] -> [H, P]: the per-position terms, in double.
    const torch::Tensor delta = (runs.clean_heads[l] - z[l].detach()).to(torch::kFloat64);
    const torch::Tensor g =
        grads[l].defined() ? grads[l].to(torch::kFloat64) : torch::zeros_like(delta);
    const torch::Tensor at = (delta * g).sum(-1)[0].to(torch::kCPU).contiguous();
    const torch::Tensor per_head = at.sum(-1).contiguous();
    const double* a = at.data_ptr<double>();
    const double* h = per_head.data_ptr<double>();
    t.attribution.insert(t.attribution.end(), h, h + t.heads);
    t.attribution_at.insert(t.attribution_at.end(), a, a + t.heads * P);
  }
  return t;
}

}  // namespace attn
