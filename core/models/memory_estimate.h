// How much memory a training step, an eval pass or an analyze pass of a config takes at its peak,
// from the config alone (no model, no task built), so that a command refuses a size that cannot
// fit before it allocates (docs/guide/hardening.md, "Sizes beyond the machine"). Torch-free.
//
// The estimate is of the bytes the work adds to the process (on top of what it holds when the
// check runs): the model's parameters with their gradients, AdamW moments and recovery copy, the
// task's eval set, the activations autograd keeps, the [B, H, T, T] score tensors of
// softmax-like mechanisms (ky: [B, H, T, ~3 W] bands; neural: its [B, H, chunk, T, hidden]
// blocks; linear-sim: its [B, H, T, Dh^2] features; conn: its [B, T, slots, D] states) and the
// [B, T, vocab] logits. It is meant as an upper bound in practice: tests/core/test_memory_estimate
// checks it against the peak resident memory measured for small configs (estimate >= measured,
// and within a stated factor of it), docs/guide/hardening.md lists measured peaks for larger ones.
#pragma once
#include <cstdint>
#include <string>

#include "core/config/config.h"

namespace attn {

// What a task feeds the model, by formula (equals Task::sequence_length(), vocab_size() and
// patch_dim() of make_task's task for the same config; tests/core/test_memory_estimate.cpp
// checks it for every task). A text task's vocabulary is its corpus's alphabet, unknown before
// the corpus is read: `vocab` is then a floor (kTextVocabFloor) and vocab_known false.
struct TaskShape {
  int64_t tokens = 0;     // model input length (image tasks: patches, without the CLS token)
  int64_t vocab = 0;      // token vocabulary (0 for image tasks)
  int64_t patch_dim = 0;  // pixels per patch (0 for token tasks)
  bool vocab_known = true;
};
constexpr int64_t kTextVocabFloor = 256;

// What the first computation adds to a process whatever the config: LibTorch's and OpenBLAS's
// thread pools and buffers, the run's recorder (measured: 29 MB for the smallest config, one or
// two threads). Included in every estimate.
constexpr uint64_t kRuntimeOverhead = uint64_t(48) << 20;
TaskShape task_shape(const TaskConfig& task);

// The config key that sets a task's input length ("task.length", "task.context", "task.patch"),
// or "" for modadd (always 3 tokens).
std::string task_length_key(const TaskConfig& task);

enum class MemoryUse {
  train,    // one training step (forward, backward, AdamW) with the eval set held
  eval,     // one eval batch without gradients, the eval set held
  analyze,  // an eval batch that also keeps every layer's attention weights
};

struct MemoryEstimate {
  uint64_t bytes = 0;  // the peak the work adds, in bytes
  // The sizes that set it, as config keys: "train.batch_size 64 x task.length 4096 (8192
  // tokens); model.heads 4 x model.layers 2 of 8192 x 8192 scores; model.d_model 64".
  std::string sizes;
  // What to lower: "train.batch_size, task.length, model.heads, model.layers or model.d_model".
  std::string shrink;
};

// `batch`: sequences per batch (train.batch_size for every use today). Throws attn::Error for a
// mechanism option that does not parse (as parse_config would have refused).
MemoryEstimate estimate_memory(const ExperimentConfig& c, const TaskShape& shape, MemoryUse use);

// Throws attn::Error, before anything is allocated, when the estimate does not fit the memory
// limit (core/base/memory.h's require_memory: ATTNLAB_MEMORY_LIMIT less what the process holds,
// else MemAvailable): "<what> needs about X (<sizes>); ... : lower <shrink>". `what` names the
// work ("training", "eval at task.length 1000000").
void require_memory_for(const ExperimentConfig& c, const TaskShape& shape, MemoryUse use,
                        const std::string& what);

}  // namespace attn
