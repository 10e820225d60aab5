// The graphed GPU training step (core/training/session/graphed_step.h): which sessions it refuses and
// why (any machine), and on a GPU (suite "gpu") that a graphed run follows the eager run of the
// same seed step by step, and that a divergence is still found and undone.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

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

}  // namespace

TEST_CASE("graphed step: refused, with the reason, where a graph cannot run") {
  torch::nn::Linear model(2, 2);
  torch::optim::AdamW optimizer(model->parameters());
  std::string why;
  CHECK(GraphedStep::create(*model, optimizer, unused_loss(), 1.0, 0.0, torch::Device("cpu"),
                            &why) == nullptr);
  CHECK(why == "not a GPU run");
  why.clear();
  CHECK(GraphedStep::create(*model, optimizer, unused_loss(), 1.0, 0.1,
                            torch::Device(torch::kCUDA, 0), &why) == nullptr);
  CHECK(why.find("dropout 0.10") == 0);
  ::setenv("ATTN_CUDA_GRAPH", "0", 1);
  CHECK(GraphedStep::create(*model, optimizer, unused_loss(), 1.0, 0.0,
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
    std::string eager_path, graph_path;
    ::setenv("ATTN_CUDA_GRAPH", "0", 1);
    const auto eager = train_losses(c, 80, &eager_path);
    ::unsetenv("ATTN_CUDA_GRAPH");
    const auto graphed = train_losses(c, 80, &graph_path);
    CHECK(eager_path == "eager: ATTN_CUDA_GRAPH=0");
    CHECK(graph_path == "cuda-graph");
    REQUIRE(eager.size() == 80);
    REQUIRE(graphed.size() == 80);
    // Same batches, same initial weights; the fused update and the clip divisor round differently
    // from torch's AdamW and clip_grad_norm_, so the trajectories agree to float rounding that
    // grows slowly with the steps.
    double worst = 0;
    for (size_t i = 0; i < eager.size(); ++i)
      worst = std::max(worst,
                       std::abs(double(eager[i]) - graphed[i]) / std::max(1e-3, double(eager[i])));
    MESSAGE("largest relative difference of the 80 train losses: " << worst);
    CHECK(worst < 1e-3);
    // The losses moved (a comparison of two frozen runs would prove nothing).
    const auto [lo, hi] = std::minmax_element(eager.begin(), eager.end());
    CHECK(*hi - *lo > 0.05);
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
