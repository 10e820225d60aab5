// Training tasks (private to core). Token tasks are next-token prediction problems:
// inputs [B, L] and targets [B, L] (int64), target -1 where a position is not scored.
// Image tasks (patch_dim() > 0) are classification problems: inputs are float patch vectors
// [B, S, patch_dim] and targets are class labels [B] (int64).
// Batches are pure functions of a seed, so a run is reproducible and a resumed run sees exactly
// the data it would have seen (the trainer derives each step's seed from (run seed, step)).
// The eval set is fixed by the run seed and disjoint from training where the task is finite
// (modadd holds out pairs; text holds out the corpus tail or spread blocks; fashion-mnist
// evaluates on its test files).
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/views/snapshot.h"

namespace attn {

struct Batch {
  torch::Tensor inputs;   // [B, L] int64 tokens, or [B, S, patch_dim] float32 patches
  torch::Tensor targets;  // [B, L] int64, -1 = ignored; or [B] int64 class labels
};

class Task {
 public:
  virtual ~Task() = default;
  virtual int vocab_size() const = 0;       // 0 for image tasks
  virtual int sequence_length() const = 0;  // model input length (image tasks: patches)
  // Image tasks: features per patch token; the model embeds patches with a Linear layer instead
  // of a token embedding. 0 for token tasks.
  virtual int patch_dim() const { return 0; }
  virtual Batch train_batch(int batch_size, uint64_t seed) const = 0;
  // Training step `step`'s batch (steps from 0; `seed` is that step's stream seed, which the
  // trainer derives from (run seed, step)): train_batch(batch_size, seed), except for a
  // synthetic task with a fixed training set (task.train_examples > 0), which serves its set in
  // shuffled epochs by the step (core/data/training_set.h; its train_batch draws from the set
  // uniformly with replacement). Either way a function of (run seed, step), so a resumed run
  // sees the batches an uninterrupted one would.
  virtual Batch step_batch(int batch_size, uint64_t seed, int64_t step) const {
    (void)step;
    return train_batch(batch_size, seed);
  }
  // The fixed eval set, as batches.
  virtual const std::vector<Batch>& eval_set() const = 0;
  // A held-out validation set for choosing hyperparameters, disjoint from both training and the
  // eval set: text with task.split "blocks", fashion-mnist with task.validation_examples. Empty
  // for the others (the synthetic tasks draw one from another seed instead: length_eval.h's
  // evaluate_validation).
  virtual std::vector<Batch> validation_set() const { return {}; }
  // A fixed input shown in the attention panel (one sequence; empty for image tasks).
  virtual std::vector<int64_t> probe() const = 0;
  virtual std::string token_label(int64_t token) const = 0;
  // What the labels that are not plain symbols stand for, for a map's legend: "| = separator",
  // ".k = filler token k", "␣ = space" (empty when every label is a plain symbol).
  virtual std::string label_legend() const { return ""; }
  // The probe as a model input batch of one: [1, L] int64 by default, [1, S, patch_dim] for
  // image tasks.
  virtual torch::Tensor probe_input() const;
  // One label per row of the probe's attention maps (token labels by default).
  virtual std::vector<std::string> probe_labels() const;
  // Image tasks: the probe image, for drawing maps over it. Empty otherwise.
  virtual ProbeImage probe_image() const { return {}; }
  // Image tasks: make test image `index` the probe. Throws attn::Error naming the allowed range
  // (and, for token tasks, that there are no test images to pick).
  virtual void set_probe_index(int64_t index);
  // A probe typed by the user, as token ids: characters for a text task; token ids or labels
  // ("3", "|") separated by spaces or commas for a synthetic task. Throws attn::Error naming
  // the culprit (the unknown character and its position, the id out of range) and what is
  // allowed; image tasks refuse (they pick a test image instead). Length is not checked here.
  virtual std::vector<int64_t> parse_probe(const std::string& text) const;
  // Activation patching's corrupted probe for a clean one
  // (core/training/interventions/interventions.h): the same length, one token changed so that the
  // answer at the last position changes. Recall rebinds the last queried key to another value; copy
  // and reverse change the symbol the next output copies; other synthetic tasks change the first
  // token. Text and image tasks throw attn::Error (type the corrupted probe).
  virtual std::vector<int64_t> corrupted_twin(const std::vector<int64_t>& clean) const;
  // The input positions whose prediction the task scores for an input of these tokens (its
  // loss mask as the eval set has it, read from the tokens alone), ascending. The benchmark
  // tasks give every scored position (MQAR's queried keys, selective copy's blanks after the
  // copy token, induction head's last trigger, the Chomsky placeholders that answer); attnlab's
  // own tasks give the last position, where their probes end on an answer.
  virtual std::vector<int64_t> scored_positions(const std::vector<int64_t>& tokens) const;
  // The corrupted twin and where the patch metric reads it: `read` holds the scored positions
  // whose answer the one changed token changes (a subset of scored_positions(clean)). The
  // benchmark tasks: MQAR rebinds the last queried key to a value no pair uses; selective copy
  // changes the last copied token; induction head the token after the earlier trigger; parity
  // flips the lowest bit of the first symbol, reverse_string and duplicate_string change it.
  // Default: corrupted_twin(clean), read at the last position. Throws as corrupted_twin does.
  // `answers` and `twin_answers`: the task's own targets at each read position on the clean
  // probe and on the twin (what the eval set would score there), so the patch metric does not
  // depend on what the model predicts; empty where the task does not state them (the default
  // first-token twins), and the metric then reads the model's argmax.
  struct Twin {
    std::vector<int64_t> tokens;
    std::vector<int64_t> read;
    std::vector<int64_t> answers, twin_answers;
  };
  virtual Twin twin(const std::vector<int64_t>& clean) const;
  // Cross-entropy of a trivial predictor on the eval set (text: unigram); 0 if none.
  virtual double baseline_loss() const { return 0.0; }
};

// Throws attn::Error (e.g. the text file is missing: names the path and the Debian package).
std::unique_ptr<Task> make_task(const TaskConfig& config, uint64_t seed, int eval_batches,
                                int batch_size);

// splitmix64: decorrelates (seed, step) pairs into independent stream seeds.
uint64_t mix_seed(uint64_t seed, uint64_t salt);

}  // namespace attn
