#include "core/training/interventions/logit_attribution.h"

#include "core/base/error.h"
#include "core/training/interventions/stream.h"

namespace attn {

namespace {

void check_probe(detail::Scope& scope, const torch::Tensor& probe) {
  if (scope.layers() == 0 || scope.model()->blocks().empty())
    throw Error("this model has no blocks whose writes could be read (a Connection Transformer?)");
  if (probe.dim() != 2 || probe.size(0) != 1 || probe.is_floating_point())
    throw Error("the logit analyses take one token probe, [1, L]");
}

// The probe walked through the model: its stream, the answer position, the model's output there
// and its top token (the answer).
struct Read {
  detail::Stream stream;
  int64_t position = 0, answer = 0;
  torch::Tensor out;
};

Read read_probe(detail::Scope& scope, const torch::Tensor& probe) {
  check_probe(scope, probe);
  Read read;
  read.stream = detail::walk(scope, probe);
  const torch::Tensor& logits = read.stream.logits;
  const int64_t T = read.stream.embed.size(1);
  read.position = detail::answer_position(scope, T);
  read.out = logits.dim() == 3 ? logits[0][T - 1] : logits[0];
  read.answer = read.out.argmax().item<int64_t>();
  return read;
}

}  // namespace

LogitAttribution direct_logit_attribution(Transformer& model, const torch::Tensor& probe,
                                          const std::function<std::string(int64_t)>& label) {
  detail::Scope scope(model);
  const Read read = read_probe(scope, probe);
  const detail::Stream& s = read.stream;
  const int64_t r = read.position, answer = read.answer;
  const torch::Tensor& out = read.out;
  torch::nn::LayerNorm norm = model->final_norm();
  torch::nn::Linear unembed = model->unembedding();
  // The final norm with its scale frozen at the clean run's: a write c adds
  // w . (gamma * (c - mean c) / sigma) to the logit, w the answer's unembedding row.
  const torch::Tensor final = s.resid.back()[0][r].to(torch::kFloat64);
  const double eps = norm->options.eps();
  const torch::Tensor sigma = torch::sqrt(final.var(0, /*unbiased=*/false) + eps);
  const torch::Tensor w = unembed->weight[answer].to(torch::kFloat64);
  const torch::Tensor gamma = norm->options.elementwise_affine() ? norm->weight.to(torch::kFloat64)
                                                                 : torch::ones_like(final);
  const torch::Tensor reader = w * gamma / sigma;
  auto direct = [&](const torch::Tensor& write) {  // [1, T, D] -> its share of the logit
    const torch::Tensor c = write[0][r].to(torch::kFloat64);
    return (reader * (c - c.mean())).sum().item<double>();
  };
  LogitAttribution d;
  d.answer = label(answer);
  d.answer_logit = out[answer].item<double>();
  double held = 0;
  if (norm->options.elementwise_affine())
    held += (w * norm->bias.to(torch::kFloat64)).sum().item<double>();
  if (unembed->bias.defined()) held += unembed->bias[answer].item<double>();
  d.held_out = held;
  d.components.emplace_back("embed", direct(s.embed));
  for (int l = 0; l < scope.layers(); ++l) {
    const std::string L = "L" + std::to_string(l);
    // The layer's write with every head silent (its bias), once: a head's write is its own
    // write above it (detail::head_write, without recomputing the bias's for every head).
    const torch::Tensor bias = detail::write_of(scope, l, s.resid[l], torch::zeros_like(s.z[l]));
    for (int h = 0; h < scope.heads(); ++h) {
      torch::Tensor only = torch::zeros_like(s.z[l]);
      only.select(1, h).copy_(s.z[l].select(1, h));
      d.components.emplace_back(L + ".H" + std::to_string(h),
                                direct(detail::write_of(scope, l, s.resid[l], only) - bias));
    }
    d.components.emplace_back(L + ".attn_bias", direct(bias));
    d.components.emplace_back(L + ".mlp", direct(s.mlp[l]));
  }
  for (const auto& c : d.components) d.total += c.second;
  return d;
}

LogitLens logit_lens(Transformer& model, const torch::Tensor& probe,
                     const std::function<std::string(int64_t)>& label) {
  detail::Scope scope(model);
  const Read read = read_probe(scope, probe);
  const int64_t answer = read.answer;
  LogitLens lens;
  lens.answer = label(answer);
  lens.model_answer_logprob =
      torch::log_softmax(read.out.to(torch::kFloat64), 0)[answer].item<double>();
  for (int l = 0; l < scope.layers(); ++l) {
    const torch::Tensor x = read.stream.resid[l + 1][0][read.position];
    const torch::Tensor logits =
        model->unembedding()->forward(model->final_norm()->forward(x)).to(torch::kFloat64);
    LogitLensRow row;
    row.layer = l;
    row.answer_rank = logits.gt(logits[answer]).sum().item<int64_t>();
    row.answer_logprob = torch::log_softmax(logits, 0)[answer].item<double>();
    row.top = label(logits.argmax().item<int64_t>());
    lens.layers.push_back(row);
  }
  return lens;
}

}  // namespace attn
