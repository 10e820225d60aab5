// Interventions on heads (core/training/interventions/interventions.h), each against an independent
// reference: zero ablation against the output projection's head slice set to zero, uniform ablation
// against the mechanism's own weights edited so its scores are constant, mean ablation against an
// explicit mean, patching against its two ends, and training left bit-identical.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "core/base/error.h"
#include "core/training/interventions/interventions.h"
#include "core/training/interventions/run_interventions.h"
#include "core/training/session/session.h"
#include "helpers.h"

using namespace attn;

namespace {

ExperimentConfig mechanism_config(const std::string& layer0, const std::string& layer1 = "dot") {
  ExperimentConfig c = test::tiny_config();
  c.model.d_model = 16;
  c.model.heads = 2;
  c.model.attention = {layer0, layer1};
  if (layer0 == "ky") c.model.attention_options["ky"] = {{"window", 3}, {"edges", "masked"}};
  return c;
}

// A session trained a few steps, so heads differ from their initialisation.
std::unique_ptr<TrainingSession> trained(const ExperimentConfig& c, int steps = 20) {
  auto s = std::make_unique<TrainingSession>(c);
  for (int i = 0; i < steps; ++i) s->train_step();
  return s;
}

torch::Tensor param(TrainingSession& s, const std::string& name) {
  for (auto& p : s.model()->named_parameters())
    if (p.key() == name) return p.value();
  FAIL("no parameter " << name);
  return {};
}

std::vector<Batch> eval_of(TrainingSession& s) {
  return s.task().eval_set();
}

}  // namespace

TEST_CASE("zero ablation equals the head's slice of the output projection set to zero") {
  for (const std::string mech :
       {"dot", "ky", "neural", "pseudo", "semi-fusion", "gaussian", "linear-sim"}) {
    CAPTURE(mech);
    auto s = trained(mechanism_config(mech));
    const int Dh = 16 / 2;
    for (const HeadRef h : {HeadRef{0, 1}, HeadRef{1, 0}}) {
      const AblationResult r = ablate_heads(s->model(), eval_of(*s), {h}, AblationMode::zero);
      const EvalFigures before = evaluate_model(s->model(), eval_of(*s));
      CHECK(r.baseline.loss == before.loss);  // no hook where none was asked for
      torch::Tensor w = param(*s, "block" + std::to_string(h.layer) + ".attention.out.weight");
      const torch::Tensor saved = w.detach().clone();
      {
        torch::NoGradGuard no_grad;
        w.narrow(1, h.head * Dh, Dh).zero_();
      }
      const EvalFigures reference = evaluate_model(s->model(), eval_of(*s));
      {
        torch::NoGradGuard no_grad;
        w.copy_(saved);
      }
      CHECK(r.ablated.loss == doctest::Approx(reference.loss).epsilon(1e-5));
      CHECK(r.ablated.accuracy == doctest::Approx(reference.accuracy).epsilon(1e-9));
      CHECK(std::abs(r.ablated.loss - r.baseline.loss) > 1e-6);  // the head did something
    }
  }
}

TEST_CASE("uniform ablation equals the mechanism with constant scores for that head") {
  // Each edit makes head h's scores constant over the keys it may see, so its softmax is
  // uniform there: dot and ky, q = 0 (and ky's slot bias g_h = 0); neural, w_a = 0; pseudo,
  // its head kernel = 0.
  struct Case {
    std::string mechanism;
    std::function<void(TrainingSession&, int)> edit;
  };
  const int Dh = 8;
  auto zero_query = [&](TrainingSession& s, int h) {
    param(s, "block0.attention.qkv.weight").narrow(0, h * Dh, Dh).zero_();
    param(s, "block0.attention.qkv.bias").narrow(0, h * Dh, Dh).zero_();
  };
  const std::vector<Case> cases = {
      {"dot", zero_query},
      {"ky",
       [&](TrainingSession& s, int h) {
         zero_query(s, h);
         param(s, "block0.attention.connection.w3")[h].zero_();
         param(s, "block0.attention.connection.b3")[h].zero_();
       }},
      {"neural",
       [&](TrainingSession& s, int h) { param(s, "block0.attention.score_weight")[h].zero_(); }},
      {"pseudo",
       [&](TrainingSession& s, int h) { param(s, "block0.attention.head_kernel")[h].zero_(); }}};
  for (const Case& c : cases) {
    CAPTURE(c.mechanism);
    auto s = trained(mechanism_config(c.mechanism));
    if (c.mechanism == "pseudo") {  // its maps start near uniform: sharpen them so it shows
      torch::NoGradGuard no_grad;
      param(*s, "block0.attention.head_kernel").mul_(30);
    }
    for (int h = 0; h < 2; ++h) {
      const AblationResult r =
          ablate_heads(s->model(), eval_of(*s), {{0, h}}, AblationMode::uniform);
      std::vector<torch::Tensor> saved;
      for (auto& p : s->model()->parameters()) saved.push_back(p.detach().clone());
      {
        torch::NoGradGuard no_grad;
        c.edit(*s, h);
      }
      const EvalFigures reference = evaluate_model(s->model(), eval_of(*s));
      {
        torch::NoGradGuard no_grad;
        size_t i = 0;
        for (auto& p : s->model()->parameters()) p.copy_(saved[i++]);
      }
      CHECK(r.ablated.loss == doctest::Approx(reference.loss).epsilon(1e-5));
      CHECK(std::abs(r.ablated.loss - r.baseline.loss) > 1e-6);
    }
  }
}

TEST_CASE("mean ablation replaces the head by its explicit mean over the eval examples") {
  auto s = trained(mechanism_config("dot"));
  auto batches = eval_of(*s);
  // The explicit mean: layer 1's outputs captured batch by batch, averaged over every example.
  auto modules = s->model()->attention_modules();
  std::vector<torch::Tensor> outputs;
  {
    torch::NoGradGuard no_grad;
    s->model()->eval();
    modules[1]->intervention = std::make_shared<HeadIntervention>();
    modules[1]->intervention->capture = true;
    for (const Batch& b : batches) {
      s->model()->forward(b.inputs);
      outputs.push_back(modules[1]->intervention->captured.to(torch::kFloat64));
    }
    modules[1]->intervention.reset();
    s->model()->train();
  }
  const torch::Tensor mean = torch::cat(outputs, 0).mean(0, true).to(torch::kFloat32);
  // The reference: head 1 of layer 1 replaced by that tensor through the plain replace hook.
  EvalFigures reference;
  {
    auto iv = std::make_shared<HeadIntervention>();
    iv->kinds = {HeadIntervention::Kind::keep, HeadIntervention::Kind::replace};
    iv->replacement = mean;
    modules[1]->intervention = iv;
    reference = evaluate_model(s->model(), batches);
    modules[1]->intervention.reset();
  }
  const AblationResult r = ablate_heads(s->model(), batches, {{1, 1}}, AblationMode::mean);
  CHECK(r.ablated.loss == doctest::Approx(reference.loss).epsilon(1e-6));
  CHECK(r.ablated.loss != r.baseline.loss);

  // Every example the same: the mean is the head's own output, and nothing changes.
  Batch same = batches.front();
  same.inputs = same.inputs.narrow(0, 0, 1).expand_as(same.inputs).contiguous();
  same.targets = same.targets.narrow(0, 0, 1).expand_as(same.targets).contiguous();
  const AblationResult unchanged =
      ablate_heads(s->model(), {same}, {{0, 0}, {1, 1}}, AblationMode::mean);
  CHECK(unchanged.ablated.loss == doctest::Approx(unchanged.baseline.loss).epsilon(1e-5));
}

TEST_CASE("ablation's maps: a later layer's equal the model with the head's output slice zeroed") {
  // Issue 48 item 8: the Attention panel kept showing the unablated maps of later layers. The
  // reference zeroes head 1's columns of layer 0's output projection, an independent edit.
  for (const std::string mech : {"dot", "ky"}) {
    CAPTURE(mech);
    auto s = trained(mechanism_config(mech, mech));
    InterventionRequest request;
    request.ablate = {{0, 1}};
    const InterventionView v = session_interventions(*s, request, 1);
    REQUIRE(v.error == "");
    const torch::Tensor probe = torch::tensor(s->task().probe(), torch::kInt64).unsqueeze(0);
    const ProbeResult plain = probe_model(s->model(), probe);
    torch::Tensor w = param(*s, "block0.attention.out.weight");
    const torch::Tensor saved = w.detach().clone();
    {
      torch::NoGradGuard no_grad;
      w.narrow(1, 8, 8).zero_();
    }
    const ProbeResult reference = probe_model(s->model(), probe);
    {
      torch::NoGradGuard no_grad;
      w.copy_(saved);
    }
    REQUIRE(v.ablated_maps.size() == plain.maps.size());
    REQUIRE(reference.maps.size() == plain.maps.size());
    for (size_t i = 0; i < plain.maps.size(); ++i) {
      const AttentionMap& a = v.ablated_maps[i];
      CAPTURE(a.layer);
      CAPTURE(a.head);
      REQUIRE(a.weights.size() == reference.maps[i].weights.size());
      float to_plain = 0, to_reference = 0;
      for (size_t k = 0; k < a.weights.size(); ++k) {
        to_plain = std::max(to_plain, std::abs(a.weights[k] - plain.maps[i].weights[k]));
        to_reference =
            std::max(to_reference, std::abs(a.weights[k] - reference.maps[i].weights[k]));
      }
      CHECK(to_reference < 1e-5f);
      if (a.layer == 0)
        CHECK(to_plain == 0);  // the ablated layer's own maps: before the hook acts
      else
        CHECK(to_plain > 1e-4f);  // layer 1 reads the changed stream
    }
  }
  // Nothing ablated: no maps of its own (the snapshot's are the unablated model's).
  CHECK(session_interventions(*trained(mechanism_config("dot"), 2), InterventionRequest{}, 1)
            .ablated_maps.empty());
}

TEST_CASE("importance: each row equals ablating that head alone, on the same batches") {
  auto s = trained(mechanism_config("ky"));
  for (const AblationMode mode : {AblationMode::zero, AblationMode::mean, AblationMode::uniform}) {
    CAPTURE(ablation_mode_name(mode));
    const ImportanceTable t = session_importance(*s, mode, 1);
    REQUIRE(t.layers == 2);
    REQUIRE(t.heads == 2);
    CHECK(t.batches == 1);
    for (int l = 0; l < 2; ++l)
      for (int h = 0; h < 2; ++h) {
        const AblationResult r = ablate_session(*s, {{l, h}}, mode, 1);
        // head_importance reruns from the head's layer on (the scored rows only at the end):
        // the same figures as a whole forward pass but for float rounding.
        CHECK(r.baseline.loss == doctest::Approx(t.baseline.loss).epsilon(1e-6));
        CHECK(r.baseline.accuracy == t.baseline.accuracy);
        CHECK(r.ablated.loss == doctest::Approx(t.loss[l * 2 + h]).epsilon(1e-6));
        CHECK(static_cast<float>(r.ablated.accuracy) == t.accuracy[l * 2 + h]);
      }
  }
}

TEST_CASE("patching: every head of every layer gives the clean metric, none the corrupted") {
  for (const std::string task : {"recall", "copy"}) {
    CAPTURE(task);
    ExperimentConfig c = mechanism_config("dot");
    c.task.name = task;
    auto s = trained(c, 30);
    const PatchProbes probes = patch_probes(*s, "", "", "clean", "corrupt");
    REQUIRE(probes.clean.size() == probes.corrupt.size());
    REQUIRE(probes.clean.back() == probes.corrupt.back());  // the metric's position is shared
    auto t = [](const std::vector<int64_t>& v) {
      return torch::tensor(v, torch::kInt64).unsqueeze(0);
    };
    const PatchTable table = session_patch(*s, probes);
    // The metric the table reads: the twin's positions and the task's answers there.
    auto patched = [&](const std::vector<HeadRef>& heads) {
      return patched_metric(s->model(), t(probes.clean), t(probes.corrupt), heads, probes.read,
                            probes.answers, probes.twin_answers);
    };
    const double none = patched({});
    const double all = patched({{0, 0}, {0, 1}, {1, 0}, {1, 1}});
    CHECK(none == doctest::Approx(table.corrupt_metric).epsilon(1e-9));
    CHECK(all == doctest::Approx(table.clean_metric).epsilon(1e-4));
    // A head's row is that head patched alone; its by-position cells cover every position.
    const double one = patched({{1, 0}});
    if (table.clean_metric != table.corrupt_metric)
      CHECK(table.restored[2] == doctest::Approx((one - table.corrupt_metric) /
                                                 (table.clean_metric - table.corrupt_metric))
                                     .epsilon(1e-4));
    CHECK(table.positions == static_cast<int>(probes.clean.size()));
    CHECK(table.differing.size() == 1);
  }
}

TEST_CASE("corrupted twins change the one token the answer depends on") {
  ExperimentConfig c = test::tiny_config("recall");
  c.task.length = 3;
  c.task.vocab = 8;
  TrainingSession s(c);
  // k v k v k v ? q: the last query is key 5, bound to value v2 (token 8 + 2).
  const std::vector<int64_t> clean = {3, 8 + 1, 5, 8 + 2, 7, 8 + 0, 16, 5};
  const auto twin = s.task().corrupted_twin(clean);
  std::vector<int64_t> expected = clean;
  expected[3] = 8 + 3;
  CHECK(twin == expected);
  ExperimentConfig cc = test::tiny_config("copy");  // length 4: x0..x3 | y0 y1 y2 -> y3 = x3
  TrainingSession copy(cc);
  const std::vector<int64_t> probe = {1, 2, 3, 4, 8, 1, 2, 3};
  auto copied = probe;
  copied[3] = 5;
  CHECK(copy.task().corrupted_twin(probe) == copied);
}

TEST_CASE("interventions taken during training leave it bit-identical") {
  ExperimentConfig c = mechanism_config("dot");
  c.model.dropout = 0.1;  // the dropout stream must not move either
  TrainingSession plain(c), probed(c);
  for (int i = 0; i < 12; ++i) {
    CHECK(plain.train_step() == probed.train_step());
    if (i % 4 == 1) {
      session_importance(probed, AblationMode::mean, 1);
      ablate_session(probed, {{0, 1}}, AblationMode::uniform, 0);
      session_patch(probed, patch_probes(probed, "", "", "clean", "corrupt"));
      InterventionRequest request;
      request.ablate = {{1, 0}};
      request.importance = true;
      request.patch = true;
      request.clean = "1 2 3 4 8 1 2 3";
      const InterventionView v = session_interventions(probed, request, 1);
      CHECK(v.error == "");
      CHECK(!v.importance.empty());
      CHECK(!v.patch.empty());
      CHECK(probed.model()->is_training());
    }
  }
  CHECK(test::same(test::params_of(plain), test::params_of(probed)));
  CHECK(plain.evaluate().loss == probed.evaluate().loss);
}

TEST_CASE("interventions refuse bad input with a message naming the culprit") {
  auto s = trained(mechanism_config("dot"), 2);
  auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(message([] { parse_head_list("2.0", 2, 2, "--ablate"); }).find("layer 2") !=
        std::string::npos);
  CHECK(message([] { parse_head_list("0.5", 2, 2, "--ablate"); }).find("head 5") !=
        std::string::npos);
  CHECK(message([] { parse_head_list("0-1", 2, 2, "--ablate"); }).find("LAYER.HEAD") !=
        std::string::npos);
  CHECK(parse_head_list("0.1,1.0,0.1", 2, 2, "--ablate").size() == 2);
  CHECK(message([] { parse_ablation_mode("half", "--mode"); }).find("zero, mean, uniform") !=
        std::string::npos);
  CHECK(message([&] {
          ablate_session(*s, {{0, 7}}, AblationMode::zero, 0);
        }).find("heads 0..1") != std::string::npos);
  const std::string lengths =
      message([&] { patch_probes(*s, "1 2 3", "1 2", "--clean", "--corrupt"); });
  CHECK(lengths.find("--corrupt has 2 tokens") != std::string::npos);
  CHECK(message([&] {
          patch_probes(*s, "1 2 3", "1 2 3", "--clean", "--corrupt");
        }).find("equals") != std::string::npos);
  CHECK(message([&] { patch_probes(*s, "1 2 99", "", "--clean", "--corrupt"); }).find("--clean") !=
        std::string::npos);
  ExperimentConfig conn = test::tiny_config("recall");
  conn.model.architecture = "conn";
  CHECK(message([&] { check_interventions_apply(conn); }).find("conn") != std::string::npos);
}
