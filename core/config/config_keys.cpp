// The table of config keys (core/config/config_keys.h). A key's range here is the range
// parse_config enforces; its meaning is the line docs/guide/config.md shows.
#include "core/config/config_keys.h"

#include <stdexcept>

#include "core/attention/registry.h"
#include "core/config/config.h"

namespace attn {
namespace {

using T = ConfigType;

ConfigKey section(const char* path, const char* meaning) {
  return {path, T::section, 0, 0, false, {}, meaning};
}
ConfigKey integer(const char* path, double lo, double hi, const char* meaning,
                  const char* default_text = "") {
  return {path, T::integer, lo, hi, false, {}, meaning, default_text};
}
ConfigKey number(const char* path, double lo, double hi, bool lo_open, const char* meaning) {
  return {path, T::number, lo, hi, lo_open, {}, meaning};
}
ConfigKey text(const char* path, std::vector<std::string> allowed, const char* meaning) {
  return {path, T::string, 0, 0, false, std::move(allowed), meaning};
}
ConfigKey boolean(const char* path, const char* meaning) {
  return {path, T::boolean, 0, 0, false, {}, meaning};
}

constexpr double kMaxSteps = 1e8;

std::vector<ConfigKey> top_and_task_keys() {
  return {
      text("name", {},
           "The run's name; it becomes its directory's name (letters, digits, `-`, `_`, `.`; "
           "not starting with `.` or `-`; at most 100 bytes)"),
      integer("seed", 0, 9007199254740992.0,
              "Seeds the model's initialisation, the data and dropout: the same seed gives the "
              "same run"),
      text("device", {"auto", "cpu", "cuda"},
           "Where to train: `auto` takes CUDA when there is one"),
      integer("threads", 0, 1024, "Torch intra-op threads; 0 = automatic"),
      section("task", "What the model learns"),
      text("task.name", task_names(),
           "The task: synthetic (copy, reverse, sort, recall, modadd, induction), the standard "
           "benchmarks (mqar ... duplicate_string), `text` (a corpus) or `fashion-mnist` "
           "(images)"),
      integer("task.length", 1, 256,
              "copy/reverse/sort: symbols; recall, mqar: key-value pairs; induction: prefix; "
              "selective_copy: tokens to copy; parity/reverse_string/duplicate_string: the "
              "longest string"),
      integer("task.vocab", 2, 8192,
              "Symbols of a synthetic task (mqar, selective_copy, induction_head: in all)"),
      integer("task.modulus", 2, 1000, "modadd: p in (a + b) mod p"),
      number("task.train_fraction", 0, 1, true, "modadd: share of the p*p pairs used for training"),
      text("task.text_path", {}, "text: a UTF-8 file or a directory of them"),
      integer("task.context", 2, 4096,
              "text: tokens per window; mqar, selective_copy, induction_head: sequence length"),
      number("task.eval_fraction", 0, 0.5, true, "text: share of the corpus held out for eval"),
      text("task.split", {"tail", "blocks"},
           "text: `tail` evaluates the last eval_fraction of the corpus; `blocks` deals "
           "4096-character blocks to eval, validation and training by a fixed permutation and "
           "scores every held-out character (eval_batches is ignored)"),
      number("task.validation_fraction", 0, 0.5, true,
             "text, split `blocks`: share held out for validation (with eval_fraction at most "
             "0.5)"),
      text("task.data_dir", {}, "fashion-mnist: the directory of the IDX files"),
      integer("task.patch", 1, 28,
              "fashion-mnist: patch side in pixels; must divide 28 (7: 16 patch tokens)"),
      integer("task.shift", 0, 8,
              "fashion-mnist: random shifts of up to this many pixels in training; 0 = none"),
      integer("task.train_examples", 0, 1e7,
              "The training set's size. Synthetic tasks: 0 = every batch freshly generated (an "
              "endless stream); N > 0 = a fixed set of N training sequences generated once from "
              "the seed (a stream of its own, not the eval set's), served in shuffled epochs "
              "(as the references' dataloaders do) and regenerated on resume; at most 2 GiB "
              "(N x input length x 16 bytes). fashion-mnist: training images used, at most "
              "60000; 0 = all. text and modadd (task.train_fraction splits its pairs): must be 0"),
      integer("task.test_examples", 0, 10000,
              "fashion-mnist: the first N test images; 0 = all 10000"),
      integer("task.validation_examples", 0, 30000,
              "fashion-mnist: the last N training images held out for validation (never "
              "trained on); 0 = none"),
  };
}

std::vector<ConfigKey> model_keys() {
  return {
      section("model", "The network"),
      text("model.architecture", architecture_names(),
           "`transformer`, or `conn`: the Connection Transformer (model.conn)"),
      section("model.conn",
              "The Connection Transformer (architecture `conn`): slots H [N, D], a learned "
              "connection matrix C [N, N], K reasoning steps; heads, layers, mlp_ratio and "
              "attention do not apply"),
      integer("model.conn.slots", 1, 4096, "N, the slots"),
      integer("model.conn.steps", 0, 64, "K, the reasoning steps"),
      number("model.conn.init_std", 0, 10, false, "C starts as N(0, init_std)"),
      text("model.conn.mixing", {"slots", "literal"},
           "`slots`: Influence[b,j] = sum_i C[i,j] H[b,i]; `literal`: H @ C (needs N = D)"),
      text("model.conn.variant", {"linear", "nonlinear"},
           "`linear`: H + Influence; `nonlinear`: H + GELU(Influence)"),
      integer("model.conn.connection_heads", 1, 64, "h matrices C_1..C_h, averaged"),
      number("model.conn.regularization", 0, 1e3, false,
             "lambda in lambda * ||C||_F^2, added to the loss"),
      text("model.conn.control", {"none", "spec", "norm-bound"},
           "The stability control applied to C after each optimiser step"),
      number("model.conn.limit", 0, 100, true, "r, the control's spectral limit"),
      {"model.conn.track",
       T::boolean,
       0,
       0,
       false,
       {},
       "Track rho(I+C) and ||I+C||_2 every step (warm-started estimates)"},
      integer("model.conn.eigen_every", 1, kMaxSteps,
              "All eigenvalues of I+C every this many steps"),
      integer("model.conn.matrix_every", 1, kMaxSteps,
              "C and its statistics every this many steps"),
      number("model.conn.link_threshold", 0, 1e6, false,
             "Statistics: an edge where C > t, inhibitory where C < -t"),
      integer("model.d_model", 1, 8192, "Width D; a multiple of model.heads"),
      integer("model.heads", 1, 128, "Attention heads per layer"),
      integer("model.layers", 1, 64, "Transformer blocks"),
      integer("model.mlp_ratio", 1, 16, "The MLP's hidden width is mlp_ratio * d_model"),
      number("model.dropout", 0, 0.9, false, "Dropout probability in training"),
      {"model.attention", T::names, 0, 0, false, attention_mechanism_names(),
       "The attention mechanism: one name for every layer, or a list of one per layer"},
      text("model.head", {"lm", "classifier"},
           "`lm`: causal language model (token tasks); `classifier`: a CLS token, "
           "bidirectional (fashion-mnist)"),
      integer("model.classes", 0, 100000,
              "classifier only: classes; 0 = the task's count (fashion-mnist: 10)"),
      {"model.attention_options",
       T::options,
       0,
       0,
       false,
       {},
       "Each mechanism's own options, `{\"<mechanism>\": {...}}`: see "
       "[Mechanism options](#mechanism-options)"},
      text("model.position", {"learned", "rope", "alibi", "none"},
           "How the model sees position: a learned absolute table, rotary q and k, an ALiBi "
           "logit bias, or only the causal mask; rope and alibi where the mechanism applies "
           "them"),
      number("model.rope_base", 1, 1e12, true, "rope: theta_i = rope_base^(-2i/Dh)"),
  };
}

std::vector<ConfigKey> train_keys() {
  return {
      section("train", "How it is trained (AdamW, linear warmup, cosine decay)"),
      integer("train.steps", 1, kMaxSteps, "Optimiser steps"),
      integer("train.batch_size", 1, 65536, "Examples per step"),
      number("train.lr", 0, 1e9, true, "Peak learning rate"),
      number("train.min_lr_ratio", 0, 1, false, "The cosine decays to lr * min_lr_ratio"),
      integer("train.warmup", 0, kMaxSteps, "Linear warmup steps; smaller than train.steps"),
      number("train.weight_decay", 0, 10, false,
             "AdamW weight decay, on weight matrices only (not biases or norms)"),
      number("train.beta1", 0, 0.999999, false, "AdamW beta1"),
      number("train.beta2", 0, 0.999999, false, "AdamW beta2"),
      number("train.grad_clip", 0, 1e6, false, "Largest global gradient norm; 0 = no clipping"),
      integer("train.eval_every", 1, kMaxSteps,
              "Evaluate (a metrics.csv row; the window's interventions refresh) every this many "
              "steps, and at the last"),
      integer("train.eval_batches", 1, 100000, "Batches per evaluation"),
      integer("train.record_every", 0, kMaxSteps,
              "Record the probe's views into the run's views.rec every this many steps, and at "
              "the first and last; 0 = no views.rec",
              "train.eval_every"),
      boolean(
          "train.record_attribution",
          "At every recorded step, also record attribution patching of every head (the probe "
          "and the task's corrupted twin: one forward and backward) and the direct logit "
          "attribution (token tasks with twins; `attnlab export --figure attribution --steps`)"),
      integer(
          "train.record_importance_batches", 1, 100000,
          "Eval batches the recorded head importance (each head zero-ablated alone, at every "
          "recorded step) runs on, each cut to train.batch_size examples; each costs one forward "
          "pass plus, per head, the layers from that head's on (at most layers x heads + 1 "
          "forward passes)"),
      integer("train.keep_checkpoints", 0, kMaxSteps,
              "Keep a checkpoint (the run's checkpoints/step-<N>/, laid out as checkpoint/; "
              "attnlab.load(DIR, step=N)) every this many steps, and at the last; 0 = none. At "
              "most 100000 per run"),
  };
}

}  // namespace

const std::vector<ConfigKey>& config_keys() {
  static const std::vector<ConfigKey> keys = [] {
    std::vector<ConfigKey> all = top_and_task_keys();
    for (auto part : {model_keys(), train_keys()}) all.insert(all.end(), part.begin(), part.end());
    return all;
  }();
  return keys;
}

const ConfigKey& config_key(const std::string& path) {
  for (const ConfigKey& k : config_keys())
    if (k.path == path) return k;
  throw std::logic_error("config key '" + path + "' is read but not described in config_keys()");
}

}  // namespace attn
