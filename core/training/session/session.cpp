// TrainingSession, stepping: construction, the learning-rate schedule, train_step with its
// divergence recovery and CUDA-graph path, evaluation. Observing is session_observe.cpp,
// checkpoints session_persist.cpp.
#include "core/training/session/session.h"

#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <type_traits>

#include "core/analysis/head_metrics.h"
#include "core/attention/fused_attention.h"
#include "core/attention/kernel_family/kernel_attention.h"
#include "core/attention/neural/neural_surface.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/base/version.h"
#include "core/random/run_random.h"
#include "core/runs/formats/safetensors.h"
#include "core/training/interventions/interventions.h"
#include "core/training/optimizer/adamw_state.h"
#include "core/training/optimizer/fused_adamw.h"
#include "core/training/session/graphed_step.h"
#include "core/training/session/training_errors.h"

namespace attn {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr uint64_t kInitSalt = 0x1417, kDataSalt = 0xDA7A, kDropoutSalt = 0xD209;

}  // namespace

bool weight_decayed(const std::string& name, const torch::Tensor& parameter) {
  if (parameter.dim() < 2) return false;
  const std::string leaf = name.substr(name.rfind('.') + 1);
  const auto ends_with = [&](const std::string& tail) {
    return leaf.size() >= tail.size() &&
           leaf.compare(leaf.size() - tail.size(), tail.size(), tail) == 0;
  };
  // Per-head biases are matrices too (ky's b1, b2: H x hidden; neural's hidden_bias: C x h).
  return !(ends_with("bias") || leaf == "b1" || leaf == "b2" || leaf == "b3" || leaf == "cls");
}

torch::Device resolve_device(const std::string& name) {
  const bool cuda = torch::cuda::is_available();
  if (name == "cuda" && !cuda)
    throw Error(
        "device: \"cuda\" was requested, but this LibTorch has no CUDA support or no GPU "
        "is visible (use \"auto\" or \"cpu\")");
  if (name == "cuda" || (name == "auto" && cuda)) return torch::Device(torch::kCUDA, 0);
  return torch::Device(torch::kCPU);
}

TrainingSession::TrainingSession(const ExperimentConfig& config)
    : config_(config),
      device_(resolve_device(config.device)),
      dropout_stream_(make_private_generator(device_, 0)),
      peak_lr_(config.train.lr) {
  task_ = make_task(config.task, config.seed, config.train.eval_batches, config.train.batch_size);
  const int max_length =
      std::max<int>(task_->sequence_length(), static_cast<int>(task_->probe().size()));
  max_length_ = max_length;
  {
    auto rng = init_rng_lock();  // another run's thread may be initialising too
    torch::manual_seed(mix_seed(config.seed, kInitSalt));
    model_ = Transformer(config.model, task_->vocab_size(), max_length, task_->patch_dim());
  }
  model_->to(device_);

  std::vector<torch::Tensor> decay, no_decay;
  for (const auto& p : model_->named_parameters())
    (weight_decayed(p.key(), p.value()) ? decay : no_decay).push_back(p.value());
  const auto& t = config.train;
  auto options = [&](double wd) {
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(t.lr).betas({t.beta1, t.beta2}).weight_decay(wd));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, options(t.weight_decay));
  groups.emplace_back(no_decay, options(0.0));
  optimizer_ =
      std::make_unique<torch::optim::AdamW>(std::move(groups), torch::optim::AdamWOptions(t.lr));
  mechanism_views_ = std::make_shared<const std::vector<MechanismFrame>>();
  record_mechanism_views();
  monitor_ = make_architecture_monitor(*model_, config.model, 0);
}

std::string TrainingSession::device_name() const {
  if (!device_.is_cuda()) return device_.str();
  const std::string gpu = cuda_device_name();
  return gpu.empty() ? device_.str() : device_.str() + " (" + gpu + ")";
}

double TrainingSession::lr_at(int64_t step) const {
  const auto& t = config_.train;
  if (step < t.warmup) return peak_lr_ * static_cast<double>(step + 1) / t.warmup;
  const double span = std::max<int64_t>(1, t.steps - t.warmup);
  const double progress = std::min(1.0, (step - t.warmup) / span);
  const double floor = peak_lr_ * t.min_lr_ratio;
  return floor + (peak_lr_ - floor) * 0.5 * (1.0 + std::cos(M_PI * progress));
}

torch::Tensor TrainingSession::masked_loss(const torch::Tensor& logits,
                                           const torch::Tensor& targets) const {
  return torch::nn::functional::cross_entropy(
      logits.reshape({-1, logits.size(-1)}), targets.reshape({-1}),
      torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-1));
}

namespace {
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}
}  // namespace

void TrainingSession::capture_good_state() {
  if (!recovery_) return;
  good_.capture(*model_, *optimizer_);
  good_step_ = step_;
  good_books_ = {last_train_loss_, interval_, last_eval_, train_loss_, eval_loss_, eval_accuracy_};
}

std::string TrainingSession::recover(const std::string& what) {
  const double lr = lr_at(step_);
  drop_graph();  // restoring replaces tensors the graph reads
  std::string msg = what + " at step " + std::to_string(step_) + " (lr " + num(lr) + "); ";
  if (recovery_ && !good_.empty() && good_step_ <= step_) {
    good_.restore(*model_, *optimizer_);
    optimizer_->zero_grad();
    step_ = good_step_;
    last_train_loss_ = good_books_.last_train_loss;
    interval_ = good_books_.interval;
    last_eval_ = good_books_.last_eval;
    train_loss_ = good_books_.train_loss;
    eval_loss_ = good_books_.eval_loss;
    eval_accuracy_ = good_books_.eval_accuracy;
    ++restores_;
    msg += "restored the weights of step " + std::to_string(step_) +
           ", the last good ones (before the update that blew up)";
  } else {
    optimizer_->zero_grad();
    msg += "weights were not updated";
  }
  return msg + ". Lower the learning rate and resume, or reset.";
}

bool TrainingSession::graphed_train_step() {
  if (!device_.is_cuda() || !graph_refusal_.empty()) return false;
  if (!graphed_) {
    graphed_ = GraphedStep::create(
        *model_, *optimizer_,
        [this](const torch::Tensor& inputs, const torch::Tensor& targets) {
          auto logits = model_->forward(inputs);
          classes_ = logits.size(-1);
          auto loss = masked_loss(logits, targets);
          auto objective = loss;
          if (auto r = model_->regularization(); r.defined()) objective = loss + r;
          return std::make_pair(loss, objective);
        },
        config_.train.grad_clip, config_.model.dropout, &dropout_stream_, device_, &graph_refusal_);
    if (!graphed_) return false;
    pending_losses_ = torch::zeros({kLossReadEvery}, torch::TensorOptions().device(device_));
    nonfinite_seen_ = 0;
    capture_good_state();  // the state a divergence found at the first read-back returns to
  }
  model_->train();
  // The masks of this step, as the eager step draws them (train_step): the graph reads the
  // generator's seed and offset at each replay.
  dropout_stream_.set_current_seed(mix_seed(mix_seed(config_.seed, kDropoutSalt), step_));
  DropoutStreamScope dropout_scope(&dropout_stream_);
  Batch batch = task_->step_batch(config_.train.batch_size,
                                  mix_seed(mix_seed(config_.seed, kDataSalt), step_), step_);
  if (!graphed_->step(batch.inputs, batch.targets, lr_at(step_))) {
    graph_refusal_ = graphed_->failure();
    graphed_.reset();
    return false;
  }
  pending_losses_.select(0, pending_).copy_(graphed_->loss());
  ++pending_;
  ++step_;
  if (monitor_)  // conn: control and tracking on the device, read back every 32 steps
    monitor_->after_step(step_, step_ == config_.train.steps);
  if (pending_ == kLossReadEvery || step_ % config_.train.eval_every == 0 ||
      step_ >= config_.train.steps)
    settle();
  return true;
}

void TrainingSession::settle() {
  if (pending_ == 0) return;
  const auto losses = pending_losses_.narrow(0, 0, pending_).to(torch::kCPU);  // waits for the GPU
  const int64_t nonfinite = graphed_ ? graphed_->nonfinite_steps().item<int64_t>() : 0;
  const int64_t first = step_ - pending_;
  const int64_t count = pending_;
  pending_ = 0;
  const auto values = losses.accessor<float, 1>();
  const double uniform = std::log(static_cast<double>(std::max<int64_t>(2, classes_)));
  for (int64_t i = 0; i < count; ++i) {
    const double value = values[i];
    if (!std::isfinite(value) || value > kBlowUpFactor * std::max(1.0, uniform)) {
      step_ = first + i;  // the step whose loss it was, for the message
      throw DivergedError(recover("loss became " + num(value) +
                                  (std::isfinite(value) ? ", over " + num(kBlowUpFactor) +
                                                              " x ln(" + std::to_string(classes_) +
                                                              " classes): the run is blowing up"
                                                        : std::string())));
    }
    last_train_loss_ = value;
    interval_.sum += value;
    ++interval_.steps;
    train_loss_.add(first + i + 1, static_cast<float>(value));
  }
  if (nonfinite > nonfinite_seen_) {
    nonfinite_seen_ = nonfinite;
    throw DivergedError(recover("weights became non-finite after an update"));
  }
  capture_good_state();  // every step up to here checked
}

std::string TrainingSession::step_path() const {
  if (!device_.is_cuda()) return "eager (CPU)";
  if (!graph_refusal_.empty()) return "eager: " + graph_refusal_;
  if (graphed_) return graphed_->path();
  return "cuda-graph (warming up)";
}

void TrainingSession::settle_quietly() {
  try {
    settle();
  } catch (const DivergedError& e) {
    deferred_divergence_ = e.what();
  }
}

double TrainingSession::train_step() {
  if (!deferred_divergence_.empty()) throw DivergedError(std::exchange(deferred_divergence_, ""));
  if (graphed_train_step()) return last_train_loss_;
  settle();  // a step of the graph before this one
  model_->train();
  // The run's one dropout generator, reseeded: a reseeded generator's stream depends only on the
  // seed, and making one per step leaked on LibTorch 1.13 (see make_private_generator).
  dropout_stream_.set_current_seed(mix_seed(mix_seed(config_.seed, kDropoutSalt), step_));
  DropoutStreamScope dropout_scope(&dropout_stream_);
  Batch batch = task_->step_batch(config_.train.batch_size,
                                  mix_seed(mix_seed(config_.seed, kDataSalt), step_), step_);
  auto inputs = batch.inputs.to(device_), targets = batch.targets.to(device_);
  auto logits = model_->forward(inputs);
  auto loss = masked_loss(logits, targets);
  const double value = loss.item<double>();
  if (auto r = model_->regularization(); r.defined()) loss = loss + r;
  if (!std::isfinite(value)) throw DivergedError(recover("loss became " + num(value)));
  // A cross-entropy far above a uniform guess's ln(classes) means the last update threw the
  // weights out (lr 1e6 gives ~1e7 here one step before the overflow to NaN): caught now, the
  // weights before that update are still a sane model to resume from.
  const double uniform = std::log(static_cast<double>(std::max<int64_t>(2, logits.size(-1))));
  if (value > kBlowUpFactor * std::max(1.0, uniform))
    throw DivergedError(recover("loss became " + num(value) + ", over " + num(kBlowUpFactor) +
                                " x ln(" + std::to_string(logits.size(-1)) +
                                " classes): the run is blowing up"));
  // ATTN_UNFUSED_OPTIMIZER=1 takes torch's path everywhere: bench_targets' A/B of the two.
  static const bool unfused = std::getenv("ATTN_UNFUSED_OPTIMIZER") != nullptr;
  const bool fused = !unfused && fused_adamw_applies(*optimizer_);
  const auto parameters = model_->parameters();
  if (fused)
    zero_gradients(parameters);
  else
    optimizer_->zero_grad();
  loss.backward();
  double grad_scale = 1.0;
  if (config_.train.grad_clip > 0) {
    const double norm =
        fused ? gradient_norm(parameters)
              : torch::nn::utils::clip_grad_norm_(parameters, config_.train.grad_clip);
    if (!std::isfinite(norm)) throw DivergedError(recover("gradient norm became " + num(norm)));
    if (fused) grad_scale = clip_coefficient(norm, config_.train.grad_clip);
  }
  // The state before this update: what a blow-up found at the next step returns to.
  capture_good_state();
  const double lr = lr_at(step_);
  for (auto& group : optimizer_->param_groups())
    static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
  bool finite = true;
  if (fused) {
    finite = fused_adamw_step(*optimizer_, grad_scale);  // checks every updated weight
  } else {
    optimizer_->step();
    if (recovery_) {
      // One reduction per tensor: any NaN/Inf weight makes the sum non-finite.
      torch::NoGradGuard no_grad;
      auto total = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat64).device(device_));
      for (const auto& p : parameters) total += p.sum().to(torch::kFloat64);
      finite = std::isfinite(total.item<double>());
    }
  }
  // Undone at once: back to the state captured above, at this same step.
  if (recovery_ && !finite)
    throw DivergedError(recover("weights became non-finite after the update"));
  ++step_;
  if (monitor_)  // conn: control, tracking
    monitor_->after_step(step_, step_ == config_.train.steps);
  last_train_loss_ = value;
  interval_.sum += value;
  ++interval_.steps;
  train_loss_.add(step_, static_cast<float>(value));
  return value;
}

EvalResult TrainingSession::evaluate() {
  settle_quietly();
  // The one eval loop (core/training/interventions/interventions.h), so interventions' baselines
  // are this.
  const EvalFigures e = evaluate_model(model_, task_->eval_set());
  last_eval_ = {e.loss, e.accuracy};
  eval_loss_.add(step_, static_cast<float>(last_eval_.loss));
  eval_accuracy_.add(step_, static_cast<float>(last_eval_.accuracy));
  record_mechanism_views();
  return last_eval_;
}

void TrainingSession::drop_graph() {
  graphed_.reset();
  pending_ = 0;
}

void TrainingSession::release_memory() {
  drop_graph();
  optimizer_->zero_grad();
  for (auto& p : model_->parameters()) p.mutable_grad() = torch::Tensor();
  good_.clear();
  release_cuda_cache();
}

}  // namespace attn
