#include "core/training/session/graphed_step.h"

#include <torch/version.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "core/training/optimizer/adamw_state.h"

#ifdef ATTN_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <torch/version.h>

// at::_fused_adamw_ with a device learning rate: LibTorch 2.2 and later.
#if !defined(ATTN_NO_FUSED_ADAMW) && \
    (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 2))
#define ATTN_FUSED_ADAMW 1
#endif
// CUDAGraph::register_generator_state: LibTorch 2.4 and later (PyTorch PR #114068). A registered
// generator's Philox seed and offset are read from device tensors that each replay's prologue
// refreshes, so dropout masks drawn from the run's own generator advance with every replay.
#if !defined(ATTN_NO_GRAPH_DROPOUT) && \
    (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4))
#define ATTN_GRAPH_DROPOUT 1
#endif
// capture_begin's capture mode: LibTorch 2.1 and later. Thread-local capture lets the other runs
// of a pack (their own threads, streams and graphs) allocate and synchronise while one captures.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
#define ATTN_THREAD_LOCAL_CAPTURE 1
#endif
#endif

namespace attn {

#ifdef ATTN_WITH_CUDA
namespace {

using torch::Tensor;

// One optimiser group's tensors, in the fused kernel's list form.
struct Group {
  std::vector<Tensor> params, grads, exp_avgs, exp_avg_sqs;
  std::vector<Tensor> steps;  // per parameter, a float32 device scalar (the fused kernel's form)
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
};

class CudaGraphedStep final : public GraphedStep {
 public:
  CudaGraphedStep(torch::nn::Module& model, torch::optim::AdamW& optimizer, LossFn loss,
                  double grad_clip, torch::Generator* dropout_stream, const torch::Device& device,
                  std::string no_capture)
      : model_(model),
        optimizer_(optimizer),
        loss_fn_(std::move(loss)),
        clip_(grad_clip),
        dropout_stream_(dropout_stream),
        no_capture_(std::move(no_capture)),
        device_(device.has_index() ? device
                                   : torch::Device(torch::kCUDA, c10::cuda::current_device())),
        stream_(own_stream(device_)) {
    const auto f = torch::TensorOptions().dtype(torch::kFloat).device(device_);
    lr_ = torch::zeros({}, f);
    one_ = torch::ones({}, f);
    loss_ = torch::zeros({}, f);
    nonfinite_ = torch::zeros({}, f.dtype(torch::kLong));
  }

  ~CudaGraphedStep() override {
    graph_.reset();
    cudaStreamSynchronize(stream_.stream());
    cudaStreamDestroy(stream_.stream());
  }

  bool step(const Tensor& inputs, const Tensor& targets, double lr) override {
    if (!failure_.empty()) return false;
    if (!static_inputs_.defined()) {
      static_inputs_ = torch::empty(inputs.sizes(), inputs.options().device(device_));
      static_targets_ = torch::empty(targets.sizes(), targets.options().device(device_));
    } else if (static_inputs_.sizes() != inputs.sizes() ||
               static_targets_.sizes() != targets.sizes() ||
               static_inputs_.scalar_type() != inputs.scalar_type()) {
      failure_ = "the batch shape changed during the run";
      return false;
    }
    if (bound_ && !gradients_still_bound()) {
      failure_ = "the gradients were replaced outside the graph";
      return false;
    }
    // Pinned staging: the copies queue behind the previous step without waiting for it, and the
    // caching host allocator keeps a staging block until its copy has run.
    static_inputs_.copy_(inputs.pin_memory(), /*non_blocking=*/true);
    static_targets_.copy_(targets.pin_memory(), /*non_blocking=*/true);
    lr_.fill_(lr);
    if (graph_) {
      graph_->replay();
      advance_host_steps();
      return true;
    }
    // The warm-up and the capture run on a side stream (capture cannot use the legacy default
    // stream), ordered after and before the caller's stream.
    auto current = at::cuda::getCurrentCUDAStream(device_.index());
    at::cuda::CUDAEvent before, after;
    before.record(current);
    before.block(stream_);
    bool replay_now = false;
    try {
      c10::cuda::CUDAStreamGuard guard(stream_);
      if (warmups_ < kWarmupSteps || !no_capture_.empty()) {
        body();
        if (warmups_ < kWarmupSteps) ++warmups_;
        advance_host_steps();
      } else {
        capture();
        replay_now = true;
      }
    } catch (const std::exception& e) {
      failure_ = std::string(no_capture_.empty() && warmups_ >= kWarmupSteps ? "capture failed: "
                                                                             : "a step failed: ") +
                 first_line(e.what());
      graph_.reset();
      (void)cudaGetLastError();  // a failed capture leaves a non-sticky error behind
    }
    after.record(stream_);
    after.block(current);
    if (!failure_.empty()) return false;
    if (replay_now) {  // capturing recorded the step without running it
      graph_->replay();
      advance_host_steps();
    }
    return true;
  }

  Tensor loss() const override { return loss_; }
  Tensor nonfinite_steps() const override { return nonfinite_; }
  bool captured() const override { return graph_ != nullptr; }
  std::string path() const override {
    if (graph_) return "cuda-graph";
    if (no_capture_.empty()) return "cuda-graph (warming up)";
    return "eager on the device, no per-step host sync (" + no_capture_ + ")";
  }
  const std::string& failure() const override { return failure_; }

 private:
  static std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

  // A stream of this run's own, not one of the pool's 32 (round-robin): runs of a pack would
  // share a pooled stream from the 33rd on, and one run's eager work on a stream another run is
  // capturing on breaks that capture (seen on an H200: a pack of 64, "dependency created on
  // uncaptured work in another stream").
  static c10::cuda::CUDAStream own_stream(const torch::Device& device) {
    c10::cuda::CUDAGuard guard(device.index());
    cudaStream_t stream = nullptr;
    C10_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    return c10::cuda::getStreamFromExternal(stream, device.index());
  }

  void capture() {
    // One capture at a time in the process: a pack's runs capture on their own threads.
    static std::mutex capture_mutex;
    std::lock_guard<std::mutex> one_capture(capture_mutex);
    cudaDeviceSynchronize();
    auto graph = std::make_unique<at::cuda::CUDAGraph>();
#ifdef ATTN_GRAPH_DROPOUT
    if (dropout_stream_) graph->register_generator_state(*dropout_stream_);
#endif
#ifdef ATTN_THREAD_LOCAL_CAPTURE
    graph->capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
#else
    graph->capture_begin();
#endif
    try {
      body();
    } catch (...) {
      try {
        graph->capture_end();  // ends the stream's capture mode; throws for an invalid capture
      } catch (...) {
      }
      // Kept alive on purpose: a capture_end that throws leaves the caching allocator holding
      // the graph's pool filter, which reads the graph (`this`); destroying it crashed the
      // process at the next allocation (seen on an H200: exit 139 after a failed capture).
      (void)graph.release();
      throw;
    }
    graph->capture_end();
    graph_ = std::move(graph);
    // The warm-up's blocks, cached on this run's stream, are no use to the graph (its own pool)
    // nor to other streams: give them back, so that a pack's runs fit on the device together
    // (seen on an H200: 16 MQAR runs of batch 512 left 108 GiB reserved but unallocated).
    c10::cuda::CUDACachingAllocator::emptyCache();
  }

  // The step's device work on the current stream: nothing here reads a value back to the host.
  void body() {
    torch::AutoGradMode grad_on(true);
    if (bound_)
      at::_foreach_zero_(all_grads_);
    else
      for (auto& p : model_.parameters())
        if (p.grad().defined()) p.mutable_grad().zero_();
    auto losses = loss_fn_(static_inputs_, static_targets_);
    losses.second.backward();
    torch::NoGradGuard no_grad;
    loss_.copy_(losses.first.detach());
    if (!bound_) bind();
    // clip_grad_norm_'s coefficient, as the divisor of the gradients the fused kernel takes.
    const bool clip = clip_ > 0 && !all_grads_.empty();
    update(clip ? ((at::stack(at::_foreach_norm(all_grads_)).norm() + 1e-6) / clip_).clamp_min(1.0)
                : one_,
           clip);
    nonfinite_.add_(at::stack(at::_foreach_norm(all_params_)).sum().isfinite().logical_not());
  }

  // Every parameter with a gradient after the first backward, with its AdamW state (made here
  // when the optimiser has none yet, as its own step() would).
  void bind() {
    auto& states = optimizer_.state();
    for (auto& group : optimizer_.param_groups()) {
      const auto& o = static_cast<const torch::optim::AdamWOptions&>(group.options());
      TORCH_CHECK(!o.amsgrad(), "amsgrad is not supported by the graphed step");
      Group g;
      g.beta1 = std::get<0>(o.betas());
      g.beta2 = std::get<1>(o.betas());
      g.eps = o.eps();
      g.weight_decay = o.weight_decay();
      for (auto& p : group.params()) {
        if (!p.grad().defined()) continue;
        TORCH_CHECK(p.is_cuda() && p.scalar_type() == torch::kFloat && p.is_contiguous(),
                    "the graphed step needs contiguous float32 CUDA parameters");
        const auto key = adamw_state_key(states, p);
        if (states.find(key) == states.end()) {
          auto s = std::make_unique<torch::optim::AdamWParamState>();
          s->step(0);
          s->exp_avg(torch::zeros_like(p));
          s->exp_avg_sq(torch::zeros_like(p));
          states[key] = std::move(s);
        }
        auto& s = static_cast<torch::optim::AdamWParamState&>(*states.at(key));
        host_steps_.push_back(&s);
        g.params.push_back(p);
        g.grads.push_back(p.grad());
        g.exp_avgs.push_back(s.exp_avg());
        g.exp_avg_sqs.push_back(s.exp_avg_sq());
        g.steps.push_back(torch::full({}, static_cast<double>(s.step()),
                                      torch::TensorOptions().dtype(torch::kFloat).device(device_)));
        all_params_.push_back(p);
        all_grads_.push_back(p.grad());
      }
      if (!g.params.empty()) groups_.push_back(std::move(g));
    }
    bound_ = true;
  }

  bool gradients_still_bound() const {
    for (const auto& g : groups_)
      for (size_t i = 0; i < g.params.size(); ++i)
        if (!g.params[i].grad().defined() ||
            g.params[i].grad().unsafeGetTensorImpl() != g.grads[i].unsafeGetTensorImpl())
          return false;
    return true;
  }

  void advance_host_steps() {
    for (auto* s : host_steps_) s->step(s->step() + 1);
  }

  // AdamW (torch::optim::AdamW's arithmetic) with the gradients divided by `divisor` first
  // (a device scalar; one_ when not clipping).
  void update(const Tensor& divisor, bool clip) {
    for (auto& g : groups_) {
      at::_foreach_add_(g.steps, 1);
#ifdef ATTN_FUSED_ADAMW
      (void)clip;
      at::_fused_adamw_(g.params, g.grads, g.exp_avgs, g.exp_avg_sqs, {}, g.steps, lr_, g.beta1,
                        g.beta2, g.weight_decay, g.eps, /*amsgrad=*/false, /*maximize=*/false,
                        /*grad_scale=*/divisor, /*found_inf=*/{});
#else
      for (size_t i = 0; i < g.params.size(); ++i) {
        auto& p = g.params[i];
        auto grad = g.grads[i];
        if (clip) grad.div_(divisor);
        if (g.weight_decay != 0) p.mul_(1 - lr_ * g.weight_decay);
        g.exp_avgs[i].mul_(g.beta1).add_(grad, 1 - g.beta1);
        g.exp_avg_sqs[i].mul_(g.beta2).addcmul_(grad, grad, 1 - g.beta2);
        auto bias1 = 1 - at::pow(g.beta1, g.steps[i]);
        auto bias2 = 1 - at::pow(g.beta2, g.steps[i]);
        auto denom = (g.exp_avg_sqs[i].sqrt() / bias2.sqrt()).add_(g.eps);
        p.sub_(g.exp_avgs[i] / denom * (lr_ / bias1));
      }
#endif
    }
  }

  torch::nn::Module& model_;
  torch::optim::AdamW& optimizer_;
  LossFn loss_fn_;
  double clip_;
  torch::Generator* dropout_stream_;  // the session's; reseeded by it before every step
  std::string no_capture_;            // why every step runs eagerly ("" : captured after warm-up)
  torch::Device device_;
  c10::cuda::CUDAStream stream_;
  Tensor static_inputs_, static_targets_, lr_, one_, loss_, nonfinite_;
  bool bound_ = false;
  std::vector<Group> groups_;
  std::vector<Tensor> all_params_, all_grads_;
  std::vector<torch::optim::AdamWParamState*> host_steps_;
  int warmups_ = 0;
  std::unique_ptr<at::cuda::CUDAGraph> graph_;
  std::string failure_;
};

}  // namespace
#endif

bool GraphedStep::graphs_dropout() {
#if defined(ATTN_WITH_CUDA) && defined(ATTN_GRAPH_DROPOUT)
  return true;
#else
  return false;
#endif
}

std::unique_ptr<GraphedStep> GraphedStep::create(torch::nn::Module& model,
                                                 torch::optim::AdamW& optimizer, LossFn loss,
                                                 double grad_clip, double dropout,
                                                 torch::Generator* dropout_stream,
                                                 const torch::Device& device,
                                                 std::string* why_not) {
  auto refuse = [&](std::string why) {
    if (why_not) *why_not = std::move(why);
    return std::unique_ptr<GraphedStep>();
  };
  if (!device.is_cuda()) return refuse("not a GPU run");
  if (const char* env = std::getenv("ATTN_CUDA_GRAPH"); env && std::string(env) == "0")
    return refuse("ATTN_CUDA_GRAPH=0");
#ifdef ATTN_WITH_CUDA
  // The same step without the capture: its device-side loss, fused update and read-back every
  // kLossReadEvery steps still spare the host a sync per step.
  std::string no_capture;
  if (const char* env = std::getenv("ATTN_CUDA_GRAPH"); env && std::string(env) == "eager")
    no_capture = "ATTN_CUDA_GRAPH=eager";
  else if (dropout > 0 && !graphs_dropout())
    no_capture = "dropout " + std::to_string(dropout).substr(0, 4) + ": LibTorch " + TORCH_VERSION +
                 " cannot register the run's own generator with a graph (2.4 and later can), so "
                 "every replay would repeat the captured masks";
  if (dropout > 0 && !dropout_stream)
    return refuse("dropout " + std::to_string(dropout).substr(0, 4) +
                  ": the session gave no generator");
  return std::make_unique<CudaGraphedStep>(model, optimizer, std::move(loss), grad_clip,
                                           dropout > 0 ? dropout_stream : nullptr, device,
                                           std::move(no_capture));
#else
  (void)model, (void)optimizer, (void)loss, (void)grad_clip, (void)dropout, (void)dropout_stream;
  return refuse("this build has no CUDA");
#endif
}

}  // namespace attn
