// GraphedStep (torch; internal to core): a GPU session's training step (forward, backward,
// gradient clipping, AdamW) captured once in a CUDA graph and replayed at every step after.
//
// Why: the shipped models are small, so a step on a GPU is a few hundred kernels of a few
// microseconds each and costs what the host takes to launch them; a replayed graph launches
// them all in one call. Published figures put graph replay at 1.3-2.2x over eager for such
// launch-bound steps (issue 37).
//
// Contract:
//  - create() returns nullptr and says why when this object cannot step the session: a CPU
//    device, a build without CUDA, or ATTN_CUDA_GRAPH=0 in the environment (torch's own eager
//    step, the A/B reference). The session then steps eagerly.
//  - Where the step cannot be captured (dropout on a LibTorch older than 2.4: graphs_dropout()
//    false; or ATTN_CUDA_GRAPH=eager), the object still steps, eagerly at every step, with the
//    same device-side loss, fused update and no per-step host sync; path() says so and why.
//  - Dropout: its masks come from the session's own generator (`dropout_stream`), which the
//    session reseeds from (seed, step) before every step. On LibTorch >= 2.4 the capture
//    registers it with the graph (CUDAGraph::register_generator_state): the captured kernels read
//    its Philox seed and offset from device tensors that each replay's prologue sets from the
//    generator's state, so a replay draws the masks the eager step of that seed draws, and a
//    resumed run redraws them (nothing to checkpoint).
//  - Runs of a pack step on their own threads, each with its own stream and graph: captures take
//    a process-wide lock and capture thread-locally (LibTorch >= 2.1), so one run's capture does
//    not fail another run's allocations.
//  - step() copies the batch into the graph's static inputs (pinned, non-blocking), writes the
//    learning rate into a device scalar, and runs the step: eagerly on a side stream for the
//    first kWarmupSteps (cuBLAS handles, autograd's buffers, the optimiser's moments), captured
//    on the next and replayed from then on. Nothing in it waits for the GPU: the loss stays on
//    the device (loss()), and a weight that stops being finite raises nonfinite_steps().
//  - The update is AdamW with attnlab's clipping (total-norm, clip_grad_norm_'s coefficient), on
//    the optimiser's own exp_avg / exp_avg_sq tensors, so save(), load() and GoodState see the
//    usual state; the host step counters (AdamWParamState::step) advance with every step. On
//    LibTorch >= 2.2 it is the fused multi-tensor kernel (at::_fused_adamw_, learning rate and
//    the clip divisor as device tensors); on older LibTorch the same arithmetic per tensor.
//  - A batch of another shape, a capture that fails (an operation that waits for the host, say)
//    or a step that throws returns false: nothing was changed, and the caller steps eagerly.
//    failure() says why; after a failed capture the object stays failed.
//  - Anything that replaces the model's or the optimiser's tensors (load, restoring a good
//    state) invalidates the graph: the session drops this object and makes a new one.
// Not thread-safe (the session's thread owns it).
#pragma once
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attn {

class GraphedStep {
 public:
  // The step's objective on a batch already on the device: {the loss to record, the loss to
  // minimise} (they differ by a regulariser, e.g. conn's lambda ||C||_F^2).
  using LossFn = std::function<std::pair<torch::Tensor, torch::Tensor>(const torch::Tensor&,
                                                                       const torch::Tensor&)>;
  static constexpr int kWarmupSteps = 3;

  // nullptr, with *why_not set, when this session's step cannot be graphed (see the contract).
  // dropout_stream: the session's dropout generator (it must outlive the step); unused when
  // dropout is 0.
  static std::unique_ptr<GraphedStep> create(torch::nn::Module& model,
                                             torch::optim::AdamW& optimizer, LossFn loss,
                                             double grad_clip, double dropout,
                                             torch::Generator* dropout_stream,
                                             const torch::Device& device, std::string* why_not);
  // Whether this build captures steps with dropout (CUDA and LibTorch >= 2.4).
  static bool graphs_dropout();
  virtual ~GraphedStep() = default;

  // One training step at this learning rate on a CPU batch. false: nothing happened (see
  // failure()); the caller takes the eager path for this step.
  virtual bool step(const torch::Tensor& inputs, const torch::Tensor& targets, double lr) = 0;
  // The recorded loss of the last step (a device scalar, float32; overwritten by the next step).
  virtual torch::Tensor loss() const = 0;
  // How many steps so far left a weight non-finite (a device int64 scalar).
  virtual torch::Tensor nonfinite_steps() const = 0;
  // Whether the step is captured and replaying (false during the warm-up).
  virtual bool captured() const = 0;
  // How it steps, for TrainingSession::step_path(): "cuda-graph", "cuda-graph (warming up)" or
  // "eager on the device, no per-step host sync (<why no graph>)".
  virtual std::string path() const = 0;
  virtual const std::string& failure() const = 0;
};

}  // namespace attn
