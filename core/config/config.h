// ExperimentConfig: everything that defines a run, parsed strictly from JSON. Every key's type,
// range and meaning: core/config/config_keys.h (docs/guide/config.md is generated from it).
// Contract: parse_config() either returns a fully validated config or throws attn::Error whose
// message names the offending key ("model.heads"), what was found and what is allowed.
// Unknown keys are errors, so a typo never silently falls back to a default.
// No torch here: the app and panels include this header.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attn {

struct TaskConfig {
  // copy | reverse | sort | recall | modadd | induction | text | fashion-mnist, and the standard
  // benchmarks (core/data/benchmark_tasks.h): mqar | selective_copy | induction_head | parity |
  // reverse_string | duplicate_string
  std::string name = "copy";
  // copy/reverse/sort: symbols; recall, mqar: key-value pairs; induction: prefix;
  // selective_copy: tokens to copy; parity/reverse_string/duplicate_string: the longest string
  int length = 8;
  int vocab = 10;    // symbols of a synthetic task (mqar, selective_copy, induction_head: in all)
  int modulus = 23;  // modadd: p in (a + b) mod p
  double train_fraction = 0.8;  // modadd: share of the p*p pairs used for training
  std::string text_path = "/usr/share/games/fortunes";  // text: a UTF-8 file or a directory
  int context = 128;  // text: tokens per window; mqar, selective_copy, induction_head: length
  double eval_fraction = 0.1;  // text: share of the corpus held out for eval
  // text: how the held-out shares are cut. tail: eval is the last eval_fraction of the corpus
  // (its files in name order), evaluated at eval_batches x batch_size evenly spaced windows.
  // blocks: the corpus is cut into 4096-character blocks and a fixed permutation (the same for
  // every seed and arm) gives eval_fraction of them to eval and validation_fraction to a
  // validation set, the rest to training; eval and validation tile their blocks with
  // non-overlapping windows, so every held-out character is scored (eval_batches is ignored).
  std::string split = "tail";
  double validation_fraction = 0.05;  // text, split "blocks": share held out for validation
  // fashion-mnist: the IDX files' directory (Debian's dataset-fashion-mnist by default), the
  // patch side in pixels (must divide 28: 7 -> 16 patch tokens, 4 -> 49), training-time random
  // shifts of up to `shift` pixels (0 = no augmentation), and caps on the training and test
  // images used (0 = all 60000 / all 10000; the test cap takes the first N test images).
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  int patch = 7;
  int shift = 0;
  // The training set's size. fashion-mnist: the cap on training images above. Synthetic tasks:
  // 0 = every batch freshly generated; N > 0 = a fixed set of N sequences generated once from
  // the seed and served in shuffled epochs (core/data/training_set.h). text: must be 0.
  int train_examples = 0;
  int test_examples = 0;
  // fashion-mnist: the last N training images held out as a validation set (never trained on),
  // for choosing hyperparameters without looking at the test set. 0 = none.
  int validation_examples = 0;
};

// The Connection Transformer (model.architecture "conn", seed 001; core/models/conn/conn_model.h):
// fixed slots H [N, D], a learned connection matrix C [N, N], K reasoning steps. D is
// model.d_model; heads/layers/mlp_ratio/attention do not apply to it.
struct ConnConfig {
  int slots = 32;                  // N
  int steps = 4;                   // K reasoning steps
  double init_std = 0.01;          // C ~ N(0, init_std)
  std::string mixing = "slots";    // slots: Influence[b,j] = sum_i C[i,j] H[b,i] | literal: H @ C
  std::string variant = "linear";  // linear: H + Infl | nonlinear: H + GELU(Infl)
  int connection_heads = 1;        // h matrices C_1..C_h, averaged
  double regularization = 1e-4;    // lambda in lambda * ||C||_F^2 added to the loss
  std::string control = "norm-bound";  // none | spec | norm-bound, after each optimiser step
  double limit = 0.95;                 // r: the spectral limit of the control
  bool track = true;                   // rho(I+C), ||I+C||_2 every step (warm-started estimates)
  int eigen_every = 50;                // all eigenvalues of I+C every this many steps
  int matrix_every = 10;               // C and its statistics every this many steps
  double link_threshold = 0.1;         // statistics: edge C > t, inhibitory C < -t
};

struct ModelConfig {
  std::string architecture = "transformer";  // transformer | conn
  ConnConfig conn;                           // architecture "conn" only
  int d_model = 64;
  int heads = 4;
  int layers = 2;
  int mlp_ratio = 4;
  double dropout = 0.0;
  // Attention mechanism per layer (registry names). JSON accepts one string for all layers.
  std::vector<std::string> attention = {"dot"};
  // lm (causal language model) | classifier (CLS token, bidirectional; image tasks)
  std::string head = "lm";
  int classes = 0;  // classifier only; 0 = the task's class count
  nlohmann::json attention_options = nlohmann::json::object();  // {"<mechanism>": {...}}
  // How the model sees position: learned (a learned absolute table added to the embeddings),
  // rope (q and k rotated inside attention), alibi (a -m_h (i - j) logit bias inside attention),
  // none (no position at all but the causal mask). rope and alibi apply where the mechanism's
  // descriptor says so (core/attention/mechanism.h); parse_config refuses the rest.
  std::string position = "learned";
  double rope_base = 10000.0;  // rope: theta_i = rope_base^(-2i/Dh)
};

struct TrainConfig {
  int64_t steps = 2000;
  int batch_size = 32;
  double lr = 3e-3;
  double min_lr_ratio = 0.1;  // cosine decays to lr * min_lr_ratio
  int64_t warmup = 100;
  double weight_decay = 0.01;  // applied to weight matrices only (not biases, norms)
  double beta1 = 0.9;
  double beta2 = 0.98;
  double grad_clip = 1.0;  // max global grad norm; 0 disables
  int64_t eval_every = 100;
  int eval_batches = 8;
  // Recorded views (core/runs/records/view_records.h): the probe's maps every this many steps into
  // the run's views.rec, plus the first and last step; 0 = off (no views.rec), wherever a run is
  // trained (attnlab train, the window). Absent from a config file: its eval_every (resolved,
  // so config.json shows it). It sets nothing else: the window's live answers (interventions,
  // the eval-length figures) refresh at every evaluation (eval_every).
  int64_t record_every = 100;
  // At every recorded step, attribution patching and direct logit attribution on the probe and
  // its twin (core/training/recording/run_recorder.h); eval batches of the recorded importance.
  bool record_attribution = true;
  int record_importance_batches = 1;
  // Kept checkpoints (DIR/checkpoints/step-<N>/, core/runs/directory/run_files.h): one every this
  // many steps and at the last (train.steps), beside the run's checkpoint/; 0 = none. At most
  // kMaxKeptCheckpoints per run (kept_checkpoint_count; a config over it is refused).
  int64_t keep_checkpoints = 0;
};

// The most checkpoints a run may keep (train.keep_checkpoints); attnlab.load reads no
// checkpoints/ holding more (python's attnlab.limits.MAX_KEPT_CHECKPOINTS).
inline constexpr int64_t kMaxKeptCheckpoints = 100000;
// How many checkpoints train.keep_checkpoints keeps over train.steps: ceil(steps / K), 0 for K 0.
int64_t kept_checkpoint_count(const TrainConfig& t);
// Whether train.keep_checkpoints keeps the checkpoint at `step` (a multiple of K, or train.steps).
bool keeps_checkpoint_at(const TrainConfig& t, int64_t step);
// Throws attn::Error naming train.keep_checkpoints (and `where`) when the run would keep more than
// kMaxKeptCheckpoints. parse_config calls it; so does a resume that changes train.steps.
void check_kept_checkpoints(const TrainConfig& t, const std::string& where);

struct ExperimentConfig {
  std::string name = "experiment";
  uint64_t seed = 1;
  std::string device = "auto";  // auto | cpu | cuda
  int threads = 0;              // torch intra-op threads; 0 = automatic
  TaskConfig task;
  ModelConfig model;
  TrainConfig train;
};

// Parses and validates. `where` names the source (a file path) in messages.
ExperimentConfig parse_config(const nlohmann::json& j, const std::string& where = "config");
ExperimentConfig load_config_file(const std::string& path);
// The config file as JSON, before parse_config: a regular file of at most 64 MiB, strict JSON
// (parse_json_strict: no comments, no duplicate keys), nested at most 32 levels. For callers that
// edit it first (sweep, reproduce): a hostile nesting would overflow the stack of any recursive
// walk. Throws attn::Error naming the file.
nlohmann::json read_config_json(const std::string& path);
// A JSON file attnlab wrote or reads (summary.json, repro.json, ...): a regular file of at most
// 1 GiB, strict JSON (parse_json_strict), nested at most 32 levels. Throws attn::Error naming the
// file.
nlohmann::json read_json_file(const std::string& path);
// Throws attn::Error naming `where` when j nests deeper than a config can.
void check_config_depth(const nlohmann::json& j, const std::string& where);
// Fully resolved JSON (defaults included); parse_config(to_json(c)) == c. Keys added after runs
// were recorded (task.split, task.validation_fraction, task.validation_examples) appear only
// when they differ from their defaults, so older runs' config_hash stays the same.
nlohmann::json to_json(const ExperimentConfig& c);
// Every key, those too (docs/guide/config.md's defaults, core/config/config_keys.h).
nlohmann::json to_json_every_key(const ExperimentConfig& c);
// Stable short hash of the resolved config (hex), for provenance.
std::string config_hash(const ExperimentConfig& c);

// Allowed values, for UI combos and messages.
const std::vector<std::string>& task_names();
// model.architecture: transformer, and conn (the Connection Transformer,
// core/models/conn/conn_model.h).
const std::vector<std::string>& architecture_names();

}  // namespace attn
