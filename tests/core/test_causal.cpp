// The causal analyses of issue 48 (core/training/interventions/attribution.h, path_patching.h,
// logit_attribution.h), each against an independent reference: attribution patching against
// central differences of the patched metric in double, path patching from every upstream
// component against activation patching of the receiver, direct logit attribution against the
// logit, the logit lens against the model's output.
#include <doctest/doctest.h>

#include <cmath>

#include "core/base/error.h"
#include "core/training/interventions/attribution.h"
#include "core/training/interventions/interventions.h"
#include "core/training/interventions/logit_attribution.h"
#include "core/training/interventions/path_patching.h"
#include "core/training/interventions/run_interventions.h"
#include "core/training/session/session.h"
#include "helpers.h"

using namespace attn;

namespace {

const std::vector<std::string> kMechanisms = {"dot", "ky", "neural", "gaussian", "pseudo"};

ExperimentConfig causal_config(const std::string& mechanism, const std::string& task = "recall") {
  ExperimentConfig c = test::tiny_config(task);
  c.model.attention = {mechanism, "dot"};
  if (mechanism == "ky") c.model.attention_options["ky"] = {{"window", 3}, {"edges", "masked"}};
  return c;
}

std::unique_ptr<TrainingSession> trained(const ExperimentConfig& c, int steps = 20) {
  auto s = std::make_unique<TrainingSession>(c);
  for (int i = 0; i < steps; ++i) s->train_step();
  return s;
}

torch::Tensor tokens(const std::vector<int64_t>& v) {
  return torch::tensor(v, torch::kInt64).unsqueeze(0);
}

std::string label(int64_t t) {
  return std::to_string(t);
}

// Layer `layer`'s per-head outputs [1, H, L, Dh] on `input`.
torch::Tensor heads_of(Transformer& model, int layer, const torch::Tensor& input) {
  torch::NoGradGuard no_grad;
  auto m = model->attention_modules().at(layer);
  m->intervention = std::make_shared<HeadIntervention>();
  m->intervention->capture = true;
  model->forward(input);
  torch::Tensor z = m->intervention->captured;
  m->intervention.reset();
  return z;
}

// The answer logits at the last position of `input`, with head `head` of `layer` replaced by
// `z` (where `positions` allows; undefined: everywhere).
torch::Tensor logits_with(Transformer& model, const torch::Tensor& input, int layer, int head,
                          const torch::Tensor& z, const torch::Tensor& positions = {}) {
  torch::NoGradGuard no_grad;
  auto m = model->attention_modules().at(layer);
  m->intervention = std::make_shared<HeadIntervention>();
  m->intervention->kinds.assign(model->heads(), HeadIntervention::Kind::keep);
  m->intervention->kinds[head] = HeadIntervention::Kind::replace;
  m->intervention->replacement = z;
  m->intervention->positions = positions;
  torch::Tensor y = model->forward(input);
  m->intervention.reset();
  return y.select(1, y.size(1) - 1)[0];
}

}  // namespace

TEST_CASE("attribution patching equals the first-order change of patching, every mechanism") {
  for (const std::string& mech : kMechanisms) {
    CAPTURE(mech);
    auto s = trained(causal_config(mech));
    const PatchProbes probes = patch_probes(*s, "", "", "clean", "corrupt");
    Transformer& model = s->model();
    model->eval();
    model->to(torch::kFloat64);
    const torch::Tensor clean = tokens(probes.clean), corrupt = tokens(probes.corrupt);
    std::vector<torch::Tensor> grads_before;
    for (const auto& p : model->parameters())
      grads_before.push_back(p.grad().defined() ? p.grad().clone() : torch::Tensor());
    const AttributionTable t = attribute_heads(model, clean, corrupt, label);
    const int64_t a = std::stoll(t.clean_answer), b = std::stoll(t.corrupt_answer);
    auto metric = [&](const torch::Tensor& logits) {
      return t.metric == "logit_diff" ? (logits[a] - logits[b]).item<double>()
                                      : -torch::log_softmax(logits, 0)[a].item<double>();
    };
    const int64_t L = clean.size(1);
    const double eps = 1e-5;
    for (int layer = 0; layer < 2; ++layer) {
      const torch::Tensor zc = heads_of(model, layer, clean), zk = heads_of(model, layer, corrupt);
      for (int head = 0; head < 2; ++head) {
        CAPTURE(layer);
        CAPTURE(head);
        // d/de metric(corrupted run, z = z_corrupt + e (z_clean - z_corrupt)) at e = 0.
        auto at = [&](double e, const torch::Tensor& where) {
          return metric(logits_with(model, corrupt, layer, head, zk + e * (zc - zk), where));
        };
        const double fd = (at(eps, {}) - at(-eps, {})) / (2 * eps);
        const double got = t.attribution[layer * 2 + head];
        CHECK(got == doctest::Approx(fd).epsilon(1e-5).scale(1e-6 + std::abs(fd)));
        // The two-point estimate: the mean of that change and the same on the clean run.
        auto at_clean = [&](double e) {
          return metric(logits_with(model, clean, layer, head, zc + e * (zc - zk), {}));
        };
        const double fd_clean = (at_clean(eps) - at_clean(-eps)) / (2 * eps);
        const double two = (fd + fd_clean) / 2;
        CHECK(t.two_point[layer * 2 + head] ==
              doctest::Approx(two).epsilon(1e-5).scale(1e-6 + std::abs(two)));
        // One position alone (the one the probes differ at, and the last).
        for (const int64_t p : {int64_t{0}, L - 1}) {
          const torch::Tensor where = torch::arange(L).eq(p);
          const double fd_p = (at(eps, where) - at(-eps, where)) / (2 * eps);
          CHECK(t.attribution_at[(layer * 2 + head) * L + p] ==
                doctest::Approx(fd_p).epsilon(1e-5).scale(1e-6 + std::abs(fd_p)));
        }
        double sum = 0;
        for (int64_t p = 0; p < L; ++p) sum += t.attribution_at[(layer * 2 + head) * L + p];
        CHECK(sum == doctest::Approx(got).epsilon(1e-9).scale(1e-9 + std::abs(got)));
      }
    }
    CHECK(std::abs(t.attribution[0]) + std::abs(t.attribution[3]) > 1e-6);  // not all zero
    // The weights' gradients as they were, no hook left on the layers.
    size_t i = 0;
    for (const auto& p : model->parameters()) {
      const torch::Tensor& before = grads_before[i++];
      CHECK(p.grad().defined() == before.defined());
      if (before.defined()) CHECK(torch::equal(p.grad(), before));
      CHECK(p.requires_grad());  // frozen for the backward, trainable again after
    }
    for (const auto& m : model->attention_modules()) CHECK(!m->intervention);
  }
}

TEST_CASE("path patching from every upstream component equals patching the receiver") {
  for (const std::string& mech : {"dot", "neural"}) {
    CAPTURE(mech);
    auto s = trained(causal_config(mech));
    const PatchProbes probes = patch_probes(*s, "", "", "clean", "corrupt");
    Transformer& model = s->model();
    const torch::Tensor clean = tokens(probes.clean), corrupt = tokens(probes.corrupt);
    for (const HeadRef receiver : {HeadRef{1, 0}, HeadRef{1, 1}}) {
      std::vector<StreamSource> all = {{-1, 0}, {0, StreamSource::kMlp}, {0, 0}, {0, 1}};
      const double path = path_patched_metric(model, clean, corrupt, all, receiver);
      const double patched = patched_metric(model, clean, corrupt, {receiver});
      CHECK(path == doctest::Approx(patched).epsilon(1e-4));
      // No sender: the corrupted run. Senders in the receiver's layer or later send nothing.
      const double corrupt_metric = patched_metric(model, clean, corrupt, {});
      CHECK(path_patched_metric(model, clean, corrupt, {}, receiver) ==
            doctest::Approx(corrupt_metric).epsilon(1e-5));
      CHECK(path_patched_metric(model, clean, corrupt, {{1, 0}, {1, StreamSource::kMlp}},
                                receiver) == doctest::Approx(corrupt_metric).epsilon(1e-5));
    }
    // The table's cell is the single sender's path, as a share of the difference.
    const PathPatchTable t = path_patch(model, clean, corrupt, {}, label);
    REQUIRE(t.receivers.size() == 2);
    const double one = path_patched_metric(model, clean, corrupt, {{0, 1}}, {1, 0});
    if (t.clean_metric != t.corrupt_metric)
      CHECK(t.effect[(0 * 2 + 1) * 2 + 0] ==
            doctest::Approx((one - t.corrupt_metric) / (t.clean_metric - t.corrupt_metric))
                .epsilon(1e-5));
    CHECK(std::isnan(t.effect[(1 * 2 + 0) * 2 + 1]));  // layer 1 sends nothing to layer 1
  }
}

TEST_CASE("direct logit attribution sums to the logit; the logit lens ends at the output") {
  for (const std::string& mech : kMechanisms) {
    for (const std::string task : {"recall", "copy"}) {
      CAPTURE(mech);
      CAPTURE(task);
      auto s = trained(causal_config(mech, task));
      const std::vector<int64_t> probe = probe_tokens(*s, "", "--clean");
      const LogitAttribution d = session_logit_attribution(*s, probe);
      torch::Tensor out;
      {
        torch::NoGradGuard no_grad;
        s->model()->eval();
        out = s->model()->forward(tokens(probe)).select(1, probe.size() - 1)[0].to(torch::kFloat64);
      }
      const int64_t answer = out.argmax().item<int64_t>();
      CHECK(d.answer == s->task().token_label(answer));
      CHECK(d.answer_logit == doctest::Approx(out[answer].item<double>()).epsilon(1e-5));
      CHECK(d.components.size() == 1 + 2 * (2 + 2));  // embed; per layer 2 heads, bias, MLP
      double sum = 0;
      for (const auto& c : d.components) sum += c.second;
      CHECK(sum == doctest::Approx(d.total).epsilon(1e-12));
      CHECK(d.total + d.held_out == doctest::Approx(d.answer_logit).epsilon(1e-4));
      const LogitLens lens = session_logit_lens(*s, probe);
      REQUIRE(lens.layers.size() == 2);
      const double logprob = torch::log_softmax(out, 0)[answer].item<double>();
      CHECK(lens.model_answer_logprob == doctest::Approx(logprob).epsilon(1e-5));
      CHECK(lens.layers.back().answer_logprob == doctest::Approx(logprob).epsilon(1e-4));
      CHECK(lens.layers.back().answer_rank == 0);
      CHECK(lens.layers.back().top == lens.answer);
    }
  }
}

TEST_CASE("attribution and path patching refuse probes of two lengths") {
  auto s = trained(causal_config("dot"), 2);
  CHECK_THROWS_AS(attribute_heads(s->model(), tokens({1, 2, 3}), tokens({1, 2}), label), Error);
  CHECK_THROWS_AS(path_patch(s->model(), tokens({1, 2, 3}), tokens({1, 2}), {}, label), Error);
  for (const auto& m : s->model()->attention_modules()) CHECK(!m->intervention);
}
