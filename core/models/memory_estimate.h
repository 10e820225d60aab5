// How much memory a training step, an eval pass or an analyze pass of a config takes at its peak,
// from the config alone (no model, no task built), so that a command refuses a size that cannot
// fit before it allocates (docs/guide/hardening.md, "Sizes beyond the machine"). Torch-free.
//
// The estimate is of the bytes the work adds to the process (on top of what it holds when the
// check runs): the model's parameters with their gradients, AdamW moments and recovery copy, the
// task's eval set, the activations autograd keeps, the [B, H, T, T] score tensors of
// softmax-like mechanisms and each mechanism's own tensors as its descriptor states them
// (MechanismDescriptor::memory, core/attention/mechanism.h: windowed bands, scorer blocks,
// features), the states of a model of its own as its architecture states them
// (ArchitectureDescriptor::memory, core/models/architectures/architecture.h) and the [B, T, vocab] logits. It is meant as an upper bound in practice: tests/core/test_memory_estimate
// checks it against the peak resident memory measured for small configs (estimate >= measured,
// and within a stated factor of it), docs/guide/hardening.md lists measured peaks for larger ones.
#pragma once
#include <cstdint>
#include <string>

#include "core/config/config.h"
#include "core/config/task_shape.h"  // TaskShape, task_shape, task_length_key

namespace attn {

// What the first computation adds to a process whatever the config: LibTorch's and OpenBLAS's
// thread pools and buffers, the run's recorder (measured: 29 MB for the smallest config, one or
// two threads). Included in every estimate.
constexpr uint64_t kRuntimeOverhead = uint64_t(48) << 20;

enum class MemoryUse {
  train,    // one training step (forward, backward, AdamW) with the eval set held
  eval,     // one eval batch without gradients, the eval set held
  analyze,  // an eval batch that also keeps every layer's attention weights
  // One views.rec record on top of a run's training state (head importance, the record's maps,
  // attribution patching with train.record_attribution). `train` includes it when the run
  // records (train.record_every > 0): freed heap stays resident, so the two peaks add.
  record,
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
