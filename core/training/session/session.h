// TrainingSession (torch; internal to core): one run's model, optimiser, task and histories,
// stepped synchronously. The Trainer thread and the headless CLI both drive a session; nothing here
// is thread-safe. Reproducibility: the model is initialised from the run seed, and step s draws its
// batch and its dropout masks from mix_seed(seed, s). So the random state at any step is a function
// of (seed, step): a checkpoint that stores the step restores the RNG state exactly, and a resumed
// CPU run is bit-identical to an uninterrupted one.
#pragma once
#include <torch/torch.h>

#include <filesystem>
#include <memory>
#include <string>
#include <utility>

#include "core/config/config.h"
#include "core/data/tasks.h"
#include "core/models/architectures/architecture_monitor.h"
#include "core/models/model.h"
#include "core/runs/records/view_records.h"
#include "core/training/optimizer/recovery.h"
#include "core/training/session/graphed_step.h"
#include "core/views/history.h"
#include "core/views/snapshot.h"

namespace attn {

// Thrown by train_step() when the run diverged: the loss or gradient norm is NaN/Inf, the
// weights became NaN/Inf after an update, or the loss is over kBlowUpFactor x ln(classes).
// With recovery on (the default) the session is first put back to the state before the last
// update (weights, AdamW moments, step, histories: the last good state), so lowering the
// learning rate and stepping again resumes from a sane model; the message says which step.
struct DivergedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct EvalResult {
  double loss = 0;
  double accuracy = 0;
};

class TrainingSession {
 public:
  explicit TrainingSession(const ExperimentConfig& config);

  // A cross-entropy this many times ln(classes) (a uniform guess) counts as a blow-up.
  static constexpr double kBlowUpFactor = 100;

  // One optimiser step. Returns the training loss. Throws DivergedError, after restoring the
  // last good state (see DivergedError).
  // On a GPU the step is a replayed CUDA graph where it can be
  // (core/training/session/graphed_step.h; step_path() says which and why), and then nothing waits
  // for the GPU: the losses stay on the device and are read back every kLossReadEvery steps, at
  // every eval_every step and at the last step, or when settle() asks. Until then the loss books
  // (last_train_loss, the loss interval, the train-loss history) lag behind step(), and the
  // returned loss is the last one read back. A divergence is found at the read-back and restores
  // the state of the previous read-back (checked good), not of the step before the bad one.
  double train_step();
  // Reads back a graphed run's pending losses and checks them (a no-op otherwise): afterwards
  // the loss books are up to date with step(). Throws DivergedError as train_step() does.
  void settle();
  static constexpr int64_t kLossReadEvery = 32;
  // How steps run: "cuda-graph", "cuda-graph (warming up)", "eager (CPU)" or "eager: <why>".
  std::string step_path() const;
  // Recovery keeps a copy of the state before every update (one pass over 3x the parameters
  // per step). Off: a divergence leaves the weights as they were when it was found.
  void set_recovery(bool on) {
    recovery_ = on;
    if (!on) good_.clear();
  }
  // After an out-of-memory failure: drops gradients and the recovery copy, and hands cached
  // GPU blocks back, so the rest of the process (the window) has memory to keep running.
  void release_memory();
  // How many times train_step restored the last good state.
  int64_t restores() const { return restores_; }
  EvalResult evaluate();
  // Attention maps of every layer and head on the probe input (into the snapshot fields).
  void probe_attention(Snapshot& out);
  // What views.rec records at this step (core/runs/records/view_records.h): the probe's maps and
  // tokens, every layer's mechanism view, the probe image and class probabilities (image tasks),
  // the architecture monitor's record views, and every head's zero-ablation importance (models with
  // heads), without probe_attention's side effects (no history, no probe measurements of the
  // monitor); eval mode, no gradients, no random draws, so recording never changes training.
  ViewRecord view_record();
  // The induction probe of token tasks (empty for image tasks and models shorter than 4): n =
  // max_probe_length() / 2 tokens drawn uniformly from the vocabulary by a fixed generator (seed
  // kInductionProbeSeed, never the run's streams), then the same n tokens again, so every token
  // of the second half has occurred exactly n positions before.
  std::vector<int64_t> induction_probe() const;
  // Image tasks: make test image `index` the probe (throws attn::Error naming the range).
  void set_probe_index(int64_t index) { task_->set_probe_index(index); }
  // The user's probe (Task::parse_probe) checked against the model: at most max_probe_length()
  // tokens. Throws attn::Error naming the length and the limit.
  std::vector<int64_t> parse_probe(const std::string& text) const;
  int64_t max_probe_length() const { return max_length_; }
  // Probe these tokens from now on instead of the task's own probe (empty: the task's).
  void set_probe_tokens(std::vector<int64_t> tokens) { probe_tokens_ = std::move(tokens); }
  const std::vector<int64_t>& probe_tokens() const { return probe_tokens_; }
  // Fills the plain fields of a snapshot (histories, counts, lr, mechanism views), not the
  // attention maps.
  void fill_snapshot(Snapshot& out) const;
  // Every layer's view of its mechanism now (AttentionModule::observe; layers without one left
  // out), and those views over training (Snapshot::mechanism_views).
  MechanismFrame mechanism_frame();
  const std::vector<MechanismFrame>& mechanism_history() const { return *mechanism_views_; }
  // A panel's request to the layers of `mechanism` (AttentionModule::set_view_request), then
  // every layer's view observed again at once (the last frame replaced when it is of this step).
  // Throws attn::Error naming the mechanism when a layer refuses the request; the layers asked
  // before it keep theirs.
  void set_view_request(const std::string& mechanism, const nlohmann::json& request);

  // Checkpoint directory (docs/guide/runs.md), data only, so that opening one never runs code:
  // model.safetensors (every parameter and buffer by its named_parameters()/named_buffers() name,
  // in its own dtype), optimizer.safetensors (AdamW's "<name>.exp_avg", ".exp_avg_sq" and, with
  // amsgrad, ".max_exp_avg_sq"), state.json (format_version 2: step, histories, config, AdamW's
  // per-parameter steps and group options under "optimizer", each file's size and CRC-32).
  // Written to a temporary sibling and renamed into place, so an interrupted save never replaces
  // a good checkpoint.
  // A graphed run's pending losses are settled first; a divergence found then has already
  // restored the last good state (which is what is saved) and is thrown by the next train_step().
  void save(const std::string& dir);
  // Restores a checkpoint saved by a session with the same config (throws attn::Error). Both
  // files are read by the bounded safetensors reader (core/runs/formats/safetensors.h) against this
  // model's own names, dtypes and shapes, and checked against state.json's records, before
  // anything is touched: a refused checkpoint leaves the session as it was. A checkpoint in the
  // old format (format_version 1: model.pt, optimizer.pt, TorchScript archives that can run code
  // when opened) is refused, unopened, with a message naming `attnlab migrate`.
  void load(const std::string& dir);
  // Reads only the config stored in a checkpoint (throws attn::Error if unreadable; the old
  // format is refused as by load).
  static ExperimentConfig checkpoint_config(const std::string& dir);
  // state.json's format_version (1: the old TorchScript format; 2: the current one), without
  // refusing either. Throws attn::Error when dir holds no attnlab checkpoint.
  static int checkpoint_format_version(const std::string& dir);
  // `attnlab migrate --run DIR`: converts checkpoint `dir` from the old format to the current
  // one and returns its step. It reads the TorchScript archives as data only (their pickles and
  // storages, core/runs/formats/legacy_archive.h; never their code: attnlab calls no archive loader
  // of LibTorch's), checked against this run's model before anything is copied. The new checkpoint
  // replaces `dir` whole, the old files going only once it is complete. Throws attn::Error (a
  // checkpoint not in the old format, a damaged or foreign one).
  static int64_t migrate_old_format(const std::string& dir);
  // Tests only (`attnlab migrate --to-old-format-for-tests`, hidden): rewrites a current-format
  // checkpoint in the old format, so that migrate and the refusals can be tested on an honest
  // old run. Writing the old format runs nothing; only opening it does.
  static int64_t downgrade_for_tests(const std::string& dir);

  // The train losses since the last metrics row, summed in step order: train_step adds each, the
  // writer of a row takes them (and so resets them). Saved in checkpoints, so the row a resumed
  // run writes across the stop averages exactly the steps an uninterrupted run's would.
  struct LossInterval {
    double sum = 0;
    int64_t steps = 0;
  };
  const LossInterval& loss_interval() const { return interval_; }
  LossInterval take_loss_interval() { return std::exchange(interval_, LossInterval{}); }

  int64_t step() const { return step_; }
  int64_t total_steps() const { return config_.train.steps; }
  void set_total_steps(int64_t steps) { config_.train.steps = steps; }
  double learning_rate() const { return lr_at(step_); }
  void set_peak_learning_rate(double lr) { peak_lr_ = lr; }
  const ExperimentConfig& config() const { return config_; }
  const Task& task() const { return *task_; }
  Transformer& model() { return model_; }
  std::string device_name() const;
  bool on_gpu() const { return device_.is_cuda(); }
  int64_t parameters() const { return model_->parameter_count(); }
  int64_t attention_parameters() const { return model_->attention_parameter_count(); }
  // Whether a step / an evaluation was ever recorded (in this run, checkpoints included): the
  // last_* values below are measurements only then.
  bool has_train_loss() const { return !train_loss_.empty(); }
  bool has_evaluation() const { return !eval_loss_.empty(); }
  double last_eval_loss() const { return last_eval_.loss; }
  double last_eval_accuracy() const { return last_eval_.accuracy; }
  double last_train_loss() const { return last_train_loss_; }
  // The architecture's monitor (core/models/architectures/architecture_monitor.h); nullptr for
  // architectures that measure nothing of their own (attention layers observe themselves).
  ArchitectureMonitor* architecture_monitor() const { return monitor_.get(); }

 private:
  double lr_at(int64_t step) const;
  // Appends the current mechanism frame to the history, unless one at this step is there.
  void record_mechanism_views();
  void capture_good_state();
  // The graphed step (graphed_step.h): false when this step must run eagerly.
  bool graphed_train_step();
  void drop_graph();      // after anything that replaces the tensors the graph reads
  void settle_quietly();  // settle(), with a divergence deferred to the next train_step()
  // Restores the last good state if there is one; returns the DivergedError message.
  std::string recover(const std::string& what);
  torch::Tensor masked_loss(const torch::Tensor& logits, const torch::Tensor& targets) const;

  ExperimentConfig config_;
  torch::Device device_;
  torch::Generator dropout_stream_;  // reseeded at every step (see train_step)
  std::unique_ptr<Task> task_;
  Transformer model_{nullptr};
  // CPU float32 models step through core/training/optimizer/fused_adamw.h (the same arithmetic, one
  // loop per tensor instead of ~10 ops); others through its step() and clip_grad_norm_.
  std::unique_ptr<torch::optim::AdamW> optimizer_;
  std::unique_ptr<GraphedStep> graphed_;
  std::string graph_refusal_;     // why steps run eagerly on this GPU run ("" while graphed)
  torch::Tensor pending_losses_;  // the graphed steps' losses not read back yet (device)
  int64_t pending_ = 0;
  int64_t nonfinite_seen_ = 0;  // GraphedStep::nonfinite_steps() at the last read-back
  int64_t classes_ = 0;         // the logits' width (the blow-up threshold's ln(classes))
  std::string deferred_divergence_;
  int64_t step_ = 0;
  int64_t max_length_ = 0;             // positions the model takes
  std::vector<int64_t> probe_tokens_;  // the user's probe; empty = the task's
  // The probe as the model sees it and its row labels: the user's tokens, else the task's.
  bool own_probe() const { return !probe_tokens_.empty() && task_->patch_dim() == 0; }
  torch::Tensor probe_input() const;
  std::vector<std::string> probe_labels() const;
  double peak_lr_;
  double last_train_loss_ = 0;
  LossInterval interval_;
  EvalResult last_eval_;
  MetricHistory train_loss_, eval_loss_, eval_accuracy_;
  std::unique_ptr<ArchitectureMonitor> monitor_;  // architecture_monitor()
  // Divergence recovery: the state before the latest update, and its step and books.
  struct Books {
    double last_train_loss = 0;
    LossInterval interval;
    EvalResult last_eval;
    MetricHistory train_loss, eval_loss, eval_accuracy;
  };
  // What a checkpoint's state.json restores besides the tensors (load, load_old_format).
  struct Checkpointed {
    int64_t step = 0;
    double peak_lr = 0;
    Books books;
  };
  void check_checkpoint_config(const nlohmann::json& state, const std::string& dir) const;
  Checkpointed read_checkpointed(const nlohmann::json& state, const std::string& dir) const;
  void install(Checkpointed&& c);
  // The old format (TorchScript): only for migrate_old_format and downgrade_for_tests.
  void load_old_format(const std::string& dir, const nlohmann::json& state);
  void save_checkpoint(const std::string& dir, bool old_format);
  nlohmann::json write_old_format(const std::filesystem::path& tmp);
  bool recovery_ = true;
  GoodState good_;
  int64_t good_step_ = -1;
  Books good_books_;
  int64_t restores_ = 0;
  // Replaced, never mutated, so snapshots can share it.
  std::shared_ptr<const std::vector<MechanismFrame>> mechanism_views_;
};

// The attention maps of one forward pass on a batch of one (layer-major, every head), and for a
// classifier the class probabilities. The model is in eval mode for the pass (no dropout) and is
// returned to the mode it was in.
struct ProbeResult {
  int layers = 0;
  std::vector<AttentionMap> maps;
  std::vector<float> probabilities;  // classifiers only
};
ProbeResult probe_model(Transformer& model, const torch::Tensor& input);
// The same, with the pass's logits in `logits`. Hooks already set on the model's attention
// modules (HeadIntervention) act in the pass: the maps are the intervened model's.
ProbeResult probe_model(Transformer& model, const torch::Tensor& input, torch::Tensor* logits);

// Reads checkpoint `dir`'s model.safetensors into `model` in place (every parameter and buffer,
// checked as TrainingSession::load checks it; the old format is refused the same way). For
// readers that need the weights only (core/training/session/image_probe.h). Throws attn::Error.
void load_checkpoint_weights(torch::nn::Module& model, const std::string& dir);

// Whether AdamW decays this parameter (name as in named_parameters()): matrices only, and not
// the matrices that are per-head biases (a trailing "bias", ky's b1/b2/b3) or the CLS token.
bool weight_decayed(const std::string& name, const torch::Tensor& parameter);

// Resolves "auto" | "cpu" | "cuda" (throws attn::Error if cuda is asked for but absent).
torch::Device resolve_device(const std::string& name);

}  // namespace attn
