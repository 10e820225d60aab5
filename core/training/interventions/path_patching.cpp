#include "core/training/interventions/path_patching.h"

#include <cmath>
#include <limits>

#include "core/base/error.h"
#include "core/training/interventions/stream.h"

namespace attn {

namespace {

struct PathRuns {
  detail::PatchRuns runs;
  detail::Stream clean, corrupt;
};

PathRuns path_runs(detail::Scope& scope, const torch::Tensor& clean, const torch::Tensor& corrupt,
                   const std::vector<int64_t>& read, const detail::Answers& answers) {
  if (scope.layers() == 0 || scope.model()->blocks().empty())
    throw Error("path patching needs a model with attention heads in blocks");
  PathRuns p;
  p.runs = detail::clean_and_corrupt(scope, clean, corrupt, read, answers);
  p.clean = detail::walk(scope, clean);
  p.corrupt = detail::walk(scope, corrupt);
  return p;
}

// The clean-minus-corrupted write of `s` to the residual stream, [1, T, D].
torch::Tensor source_delta(detail::Scope& scope, const PathRuns& p, StreamSource s) {
  if (s.layer < 0) return p.clean.embed - p.corrupt.embed;
  if (s.head == StreamSource::kMlp) return p.clean.mlp.at(s.layer) - p.corrupt.mlp.at(s.layer);
  // A head's write is linear in its output: W_O (z_clean - z_corrupt).
  return detail::head_write(scope, s.layer, s.head, p.corrupt.resid.at(s.layer),
                            p.clean.z.at(s.layer) - p.corrupt.z.at(s.layer));
}

// The metric of the corrupted run with `receiver`'s output recomputed from the corrupted stream
// entering its block plus `delta`.
double receiver_metric(detail::Scope& scope, const PathRuns& p, HeadRef receiver,
                       const torch::Tensor& delta, const torch::Tensor& corrupt) {
  const torch::Tensor z =
      detail::heads_on(scope, receiver.layer, p.corrupt.resid.at(receiver.layer) + delta);
  HeadIntervention& iv = scope.at(receiver.layer);
  iv.kinds.assign(scope.heads(), HeadIntervention::Kind::keep);
  iv.kinds[receiver.head] = HeadIntervention::Kind::replace;
  iv.replacement = z;
  const double m = p.runs.metric.of(scope.forward(corrupt.to(scope.device()))).item<double>();
  scope.clear();
  return m;
}

}  // namespace

double path_patched_metric(Transformer& model, const torch::Tensor& clean,
                           const torch::Tensor& corrupt, const std::vector<StreamSource>& senders,
                           HeadRef receiver, const std::vector<int64_t>& read,
                           const std::vector<int64_t>& answers,
                           const std::vector<int64_t>& twin_answers) {
  detail::Scope scope(model);
  detail::check_heads(scope, {receiver});
  const PathRuns p = path_runs(scope, clean, corrupt, read, {answers, twin_answers});
  torch::Tensor delta = torch::zeros_like(p.corrupt.embed);
  for (const StreamSource& s : senders) {
    if (s.layer >= scope.layers() || s.head >= scope.heads())
      throw Error("path patching: no source " + std::to_string(s.layer) + "." +
                  std::to_string(s.head) + " in this model");
    if (s.layer < receiver.layer) delta = delta + source_delta(scope, p, s);
  }
  return receiver_metric(scope, p, receiver, delta, corrupt);
}

PathPatchTable path_patch(Transformer& model, const torch::Tensor& clean,
                          const torch::Tensor& corrupt, const std::vector<HeadRef>& receivers,
                          const std::function<std::string(int64_t)>& label,
                          const std::vector<int64_t>& read, const std::vector<int64_t>& answers,
                          const std::vector<int64_t>& twin_answers) {
  detail::Scope scope(model);
  detail::check_heads(scope, receivers);
  const PathRuns p = path_runs(scope, clean, corrupt, read, {answers, twin_answers});
  PathPatchTable t;
  detail::fill_patch_header(t, p.runs, scope, label);
  t.receivers = receivers;
  if (t.receivers.empty())
    for (int l = 1; l < t.layers; ++l)
      for (int h = 0; h < t.heads; ++h) t.receivers.push_back({l, h});
  const double span = p.runs.clean - p.runs.corrupt;
  const size_t R = t.receivers.size();
  t.effect.assign(static_cast<size_t>(t.layers) * t.heads * R,
                  std::numeric_limits<double>::quiet_NaN());
  for (int l = 0; l < t.layers; ++l)
    for (int h = 0; h < t.heads; ++h) {
      torch::Tensor delta;  // computed once per sender, for its first receiver
      for (size_t r = 0; r < R; ++r) {
        if (t.receivers[r].layer <= l) continue;
        if (!delta.defined()) delta = source_delta(scope, p, {l, h});
        const double m = receiver_metric(scope, p, t.receivers[r], delta, corrupt);
        t.effect[(static_cast<size_t>(l) * t.heads + h) * R + r] =
            span == 0 ? std::nan("") : (m - p.runs.corrupt) / span;
      }
    }
  return t;
}

}  // namespace attn
