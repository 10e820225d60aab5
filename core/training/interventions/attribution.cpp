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
  std::vector<torch::Tensor> z;
  std::vector<torch::Tensor> grads;
  AttributionTable t;
  detail::PatchRuns runs;
  {
    torch::AutoGradMode grad(true);
    for (int l = 0; l < scope.layers(); ++l) {
      scope.at(l).capture = true;
      scope.at(l).keep_graph = true;
    }
    const torch::Tensor logits = scope.forward(torch::cat({clean, corrupt}).to(scope.device()));
    for (int l = 0; l < scope.layers(); ++l) z.push_back(scope.at(l).captured);
    scope.clear();
    runs = detail::runs_from_logits(logits.slice(0, 0, 1).detach(), logits.slice(0, 1, 2).detach(),
                                    read, detail::Answers{answers, twin_answers});
    for (const torch::Tensor& zl : z) runs.clean_heads.push_back(zl.slice(0, 0, 1).detach());
    const torch::Tensor m = runs.metric.of(logits.slice(0, 1, 2)).sum();
    grads = torch::autograd::grad({m}, z, /*grad_outputs=*/{}, /*retain_graph=*/false,
                                  /*create_graph=*/false, /*allow_unused=*/true);
  }
  detail::fill_patch_header(t, runs, scope, label);
  const int64_t P = runs.clean_heads.front().size(2);
  t.positions = static_cast<int>(P);
  if (P > clean.size(1)) t.tokens.push_back("CLS");
  // Read through one pointer: indexing the tensor token by token cost about a forward pass's
  // worth of small ops on a 16-token probe (bench_recording).
  const torch::Tensor clean_cpu = clean.to(torch::kCPU, torch::kInt64).contiguous();
  const int64_t* tokens = clean_cpu.data_ptr<int64_t>();
  for (int64_t i = 0; i < clean.size(1); ++i) t.tokens.push_back(label(tokens[i]));
  for (int l = 0; l < t.layers; ++l) {
    // [1, H, P, Dh] -> [H, P]: the per-position terms, in double.
    const torch::Tensor delta =
        (runs.clean_heads[l] - z[l].slice(0, 1, 2).detach()).to(torch::kFloat64);
    const torch::Tensor g =
        grads[l].defined() ? grads[l].slice(0, 1, 2).to(torch::kFloat64) : torch::zeros_like(delta);
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
