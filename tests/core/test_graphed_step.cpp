// The graphed GPU training step (core/training/session/graphed_step.h): which sessions it refuses
// and why (any machine), and on a GPU (suite "gpu") that a graphed run follows the eager run of the
// same seed step by step, and that a divergence is still found and undone.
#include <doctest/doctest.h>
#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "core/attention/fused_attention.h"
#include "core/training/session/graphed_step.h"
#include "core/training/session/session.h"
#include "helpers.h"

using namespace attn;

namespace {

const bool kNoGpu = !fused_kernels_available();

GraphedStep::LossFn unused_loss() {
  return [](const torch::Tensor& a, const torch::Tensor&) { return std::make_pair(a, a); };
}

// The recorded train losses of `steps` steps of a fresh session of this config.
std::vector<float> train_losses(const ExperimentConfig& c, int steps, std::string* path) {
  TrainingSession session(c);
  for (int i = 0; i < steps; ++i) session.train_step();
  session.settle();
  *path = session.step_path();
  Snapshot snapshot;
  session.fill_snapshot(snapshot);
  return snapshot.train_loss.values;
}

// train_losses with ATTN_CUDA_GRAPH set to `mode` ("" : unset).
std::vector<float> losses_with(const char* mode, const ExperimentConfig& c, std::string* path) {
  if (*mode) ::setenv("ATTN_CUDA_GRAPH", mode, 1);
  auto losses = train_losses(c, static_cast<int>(c.train.steps), path);
  ::unsetenv("ATTN_CUDA_GRAPH");
  return losses;
}

// The largest |a - b| / max(1e-3, |a|) over two equally long loss curves.
double worst_relative(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::abs(double(a[i]) - b[i]) / std::max(1e-3, std::abs(double(a[i]))));
  return worst;
}

}  // namespace

TEST_CASE("graphed step: refused, with the reason, where a graph cannot run") {
  torch::nn::Linear model(2, 2);
  torch::optim::AdamW optimizer(model->parameters());
  std::string why;
  CHECK(GraphedStep::create(*model, optimizer, unused_loss(), 1.0, 0.0, nullptr,
                            torch::Device("cpu"), &why) == nullptr);
  CHECK(why == "not a GPU run");
  why.clear();
  // Dropout without the session's generator: never graphed (a CPU build refuses first).
  CHECK(GraphedStep::create(*model, optimizer, unused_loss(), 1.0, 0.1, nullptr,
                            torch::Device(torch::kCUDA, 0), &why) == nullptr);
#ifdef ATTN_WITH_CUDA
  CHECK(why.find("dropout 0.10: ") == 0);
  CHECK(GraphedStep::graphs_dropout() ==
        (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)));
#else
  CHECK(why == "this build has no CUDA");
  CHECK_FALSE(GraphedStep::graphs_dropout());
#endif
  ::setenv("ATTN_CUDA_GRAPH", "0", 1);
  CHECK(GraphedStep::create(*model, optimizer, unused_loss(), 1.0, 0.0, nullptr,
                            torch::Device(torch::kCUDA, 0), &why) == nullptr);
  CHECK(why == "ATTN_CUDA_GRAPH=0");
  ::unsetenv("ATTN_CUDA_GRAPH");
  // A CPU session says how it steps.
  ExperimentConfig c = test::tiny_config();
  c.device = "cpu";
  TrainingSession cpu(c);
  CHECK(cpu.step_path() == "eager (CPU)");
}

TEST_SUITE("gpu") {
  TEST_CASE("graphed step: the same training as the eager step, step by step" *
            doctest::skip(kNoGpu)) {
    ExperimentConfig c = test::tiny_config();
    c.device = "cuda";
    c.train.steps = 80;  // past the warm-up, the capture and two loss read-backs
    std::string eager_path, graph_path, uncaptured_path;
    const auto eager = losses_with("0", c, &eager_path);
    const auto graphed = losses_with("", c, &graph_path);
    CHECK(eager_path == "eager: ATTN_CUDA_GRAPH=0");
    CHECK(graph_path == "cuda-graph");
    REQUIRE(eager.size() == 80);
    // Same batches, same initial weights; the fused update and the clip divisor round differently
    // from torch's AdamW and clip_grad_norm_, so the trajectories agree to float rounding that
    // grows slowly with the steps.
    const double worst = worst_relative(eager, graphed);
    MESSAGE("largest relative difference of the 80 train losses: " << worst);
    CHECK(worst < 1e-3);
    // The losses moved (a comparison of two frozen runs would prove nothing).
    const auto [lo, hi] = std::minmax_element(eager.begin(), eager.end());
    CHECK(*hi - *lo > 0.05);
    // The step without its capture (what a LibTorch without graph-safe dropout runs): the
    // graph's arithmetic, eagerly, with no host sync per step.
    const auto uncaptured = losses_with("eager", c, &uncaptured_path);
    CHECK(uncaptured_path.find("eager on the device, no per-step host sync") == 0);
    const double worst_uncaptured = worst_relative(graphed, uncaptured);
    MESSAGE("uncaptured against graphed, largest relative difference: " << worst_uncaptured);
    CHECK(worst_uncaptured < 1e-4);
  }

  // Dropout inside the graph: the replayed step draws the masks the eager step of the same seed
  // draws (the generator is reseeded per step and registered with the graph), so the two runs
  // agree as closely as without dropout. Masks that repeated or came from another stream would
  // put the losses apart by the dropout noise itself (several percent at p = 0.3).
  TEST_CASE("graphed step: dropout in the graph draws the eager step's masks" *
            doctest::skip(kNoGpu || !GraphedStep::graphs_dropout())) {
    ExperimentConfig c = test::tiny_config();
    c.device = "cuda";
    c.model.dropout = 0.3;
    c.train.steps = 80;
    std::string eager_path, graph_path, plain_path;
    const auto eager = losses_with("0", c, &eager_path);
    const auto graphed = losses_with("", c, &graph_path);
    CHECK(graph_path == "cuda-graph");
    REQUIRE(eager.size() == 80);
    const double worst = worst_relative(eager, graphed);
    MESSAGE("dropout 0.3: largest relative difference of the 80 train losses: " << worst);
    CHECK(worst < 1e-3);
    // The masks matter: the same run without dropout is far from both.
    c.model.dropout = 0;
    const double apart = worst_relative(losses_with("", c, &plain_path), graphed);
    MESSAGE("against no dropout: " << apart);
    CHECK(apart > 1e-2);
  }

  // A pack: runs on their own threads capture and replay their own graphs at the same time
  // (thread-local capture under one lock) and train as they do alone.
  TEST_CASE("graphed step: runs on two threads train as they do alone" * doctest::skip(kNoGpu)) {
    ExperimentConfig a = test::tiny_config(), b = test::tiny_config();
    a.device = b.device = "cuda";
    a.train.steps = b.train.steps = 80;
    b.seed = a.seed + 1;
    b.model.dropout = GraphedStep::graphs_dropout() ? 0.2 : 0.0;
    std::string path_a, path_b, solo_path;
    const auto solo_a = train_losses(a, 80, &solo_path);
    const auto solo_b = train_losses(b, 80, &solo_path);
    std::vector<float> packed_a, packed_b;
    std::thread ta([&] { packed_a = train_losses(a, 80, &path_a); });
    std::thread tb([&] { packed_b = train_losses(b, 80, &path_b); });
    ta.join();
    tb.join();
    CHECK(path_a == "cuda-graph");
    CHECK(path_b == "cuda-graph");
    REQUIRE(packed_a.size() == 80);
    REQUIRE(packed_b.size() == 80);
    const double worst =
        std::max(worst_relative(solo_a, packed_a), worst_relative(solo_b, packed_b));
    MESSAGE("two threads against alone, largest relative difference: " << worst);
    CHECK(worst < 1e-4);
  }

  TEST_CASE("graphed step: a divergence is found at the read-back and undone" *
            doctest::skip(kNoGpu)) {
    ExperimentConfig c = test::diverging_config();
    c.device = "cuda";
    c.train.steps = 200;
    TrainingSession session(c);
    bool diverged = false;
    for (int i = 0; i < 200 && !diverged; ++i) {
      try {
        session.train_step();
      } catch (const DivergedError& e) {
        diverged = true;
        MESSAGE(std::string(e.what()));
      }
    }
    REQUIRE(diverged);
    // The restored state is finite.
    for (const auto& p : session.model()->parameters())
      CHECK(torch::isfinite(p).all().item<bool>());
  }

}  // TEST_SUITE("gpu")
