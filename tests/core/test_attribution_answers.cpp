// Issue 48 (the causal filmstrip): recorded attribution reads the logit difference of the TASK's
// answers (Task::Twin::answers), not of the model's argmaxes, so an untrained model whose clean
// and corrupted argmaxes agree is measured as a trained one is (no fallback to the loss); and
// the filmstrip of its frames titles every frame alike ("step N"), the shared metric in the
// strip's title.
#include <doctest/doctest.h>

#include <cmath>

#include "app/figures/catalog/figures.h"
#include "app/figures/runs/causal_figures.h"
#include "core/data/tasks.h"
#include "core/runs/records/view_records.h"
#include "core/training/interventions/run_interventions.h"
#include "core/training/recording/run_recorder.h"
#include "core/training/session/session.h"
#include "helpers.h"

using namespace attn;

namespace {

ExperimentConfig answers_config(const std::string& task) {
  ExperimentConfig c = test::tiny_config(task);
  if (task == "mqar") {
    c.task.context = 32;
    c.task.length = 4;
    c.task.vocab = 64;
  }
  return c;
}

// The value the pairs k1 v1 .. kn vn bind to the key at position q (recall and MQAR alike),
// read from the tokens here, not from the task.
int64_t bound_value(const std::vector<int64_t>& x, int n, int64_t q) {
  for (int i = 0; i < n; ++i)
    if (x[2 * i] == x[q]) return x[2 * i + 1];
  FAIL("the key at position " << q << " is bound by no pair");
  return -1;
}

torch::Tensor logits_of(TrainingSession& s, const std::vector<int64_t>& tokens) {
  torch::NoGradGuard no_grad;
  Transformer& model = s.model();
  const bool training = model->is_training();
  model->eval();
  const torch::Tensor z = model->forward(torch::tensor(tokens, torch::kInt64).unsqueeze(0));
  if (training) model->train();
  return z.to(torch::kFloat64)[0];  // [L, V]
}

}  // namespace

TEST_CASE("recorded attribution at an untrained step reads the task's answers' logit difference") {
  for (const std::string task : {"recall", "mqar"}) {
    CAPTURE(task);
    const ExperimentConfig c = answers_config(task);
    TrainingSession s(c);  // step 0: the initial model
    const std::vector<int64_t> clean =
        s.probe_tokens().empty() ? s.task().probe() : s.probe_tokens();
    const Task::Twin twin = s.task().twin(clean);
    REQUIRE(!twin.read.empty());
    const torch::Tensor zc = logits_of(s, clean), zt = logits_of(s, twin.tokens);
    double clean_ref = 0, corrupt_ref = 0;
    bool argmax_agree = true;
    for (const int64_t q : twin.read) {
      const int64_t a = bound_value(clean, c.task.length, q);
      const int64_t b = bound_value(twin.tokens, c.task.length, q);
      REQUIRE(a != b);
      clean_ref += zc[q][a].item<double>() - zc[q][b].item<double>();
      corrupt_ref += zt[q][a].item<double>() - zt[q][b].item<double>();
      argmax_agree &= zc[q].argmax().item<int64_t>() == zt[q].argmax().item<int64_t>();
    }
    // The case the argmax metric got wrong: the untrained model predicts the same on both.
    REQUIRE(argmax_agree);

    ViewRecord r;
    add_causal_record(s, r);
    CHECK(r.attribution.metric == "logit_diff");
    CHECK(r.attribution.clean == doctest::Approx(clean_ref).epsilon(1e-5));
    CHECK(r.attribution.corrupt == doctest::Approx(corrupt_ref).epsilon(1e-5));

    // `analyze --attribution` (session_attribution with the default twin) and its "patched"
    // column (session_patch) read the same answers.
    const PatchProbes probes = patch_probes(s, "", "", "clean", "corrupt");
    const AttributionTable a = session_attribution(s, probes);
    const PatchTable p = session_patch(s, probes);
    CHECK(a.metric == "logit_diff");
    CHECK(p.metric == "logit_diff");
    CHECK(p.clean_metric == doctest::Approx(clean_ref).epsilon(1e-5));
    CHECK(p.corrupt_metric == doctest::Approx(corrupt_ref).epsilon(1e-5));
    CHECK(a.clean_answer == p.clean_answer);
    CHECK(a.clean_answer == s.task().token_label(bound_value(clean, c.task.length, twin.read[0])));
    // `analyze --path-patch` too (it took the argmaxes, which agree here: the loss metric).
    const PathPatchTable pp = session_path_patch(s, probes, {});
    CHECK(pp.metric == "logit_diff");
    CHECK(pp.clean_answer == a.clean_answer);
    CHECK(pp.corrupt_answer == a.corrupt_answer);
    CHECK(pp.clean_metric == doctest::Approx(clean_ref).epsilon(1e-5));
    CHECK(pp.corrupt_metric == doctest::Approx(corrupt_ref).epsilon(1e-5));
  }
}

TEST_CASE(
    "the attribution filmstrip titles every frame 'step N', the metric in the strip's title") {
  std::vector<fig::Figure> frames;
  for (const int64_t step : {0, 200, 400}) {
    RecordedAttribution a;
    a.metric = "logit_diff";
    a.clean = 1.0 + step, a.corrupt = -1.0;
    a.layers = 2, a.heads = 2;
    a.values = {0.5f, -0.25f, float(step) / 100, 1.0f};
    frames.push_back(figures::recorded_attribution_figure(a, step));
  }
  const fig::Figure film = figures::filmstrip_figure(frames);
  REQUIRE(film.panels.size() == 3);
  for (size_t i = 0; i < film.panels.size(); ++i) {
    const std::string at = "step " + std::to_string(frames[i].step);
    CHECK(film.panels[i].title == at);
    CHECK(film.panels[i].short_title == at);  // whichever the layout draws, the same form
  }
  CHECK(film.title == "attribution (logit_diff) at steps 0, 200, 400");
}
