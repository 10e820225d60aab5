// What a task feeds the model, by formula from its config alone (no task built), so that the
// config parser can hand the model's input length to the mechanisms' layout rules (linear-sim's
// slots, core/attention/registry.h) and the memory estimate can size a run. Torch-free.
#pragma once
#include <cstdint>
#include <string>

#include "core/config/config.h"

namespace attn {

// Equals Task::sequence_length(), vocab_size() and patch_dim() of make_task's task for the same
// config (tests/core/test_memory_estimate.cpp checks it for every task). A text task's
// vocabulary is its corpus's alphabet, unknown before the corpus is read: `vocab` is then a
// floor (kTextVocabFloor) and vocab_known false.
struct TaskShape {
  int64_t tokens = 0;     // model input length (image tasks: patches, without the CLS token)
  int64_t vocab = 0;      // token vocabulary (0 for image tasks)
  int64_t patch_dim = 0;  // pixels per patch (0 for token tasks)
  bool vocab_known = true;
};
constexpr int64_t kTextVocabFloor = 256;

// Throws attn::Error for a task it does not know.
TaskShape task_shape(const TaskConfig& task);

// task.train_examples: a synthetic task's fixed training set holds that many sequences' inputs
// and targets (int64 each): train_examples x tokens x 8 bytes x 2, at most this.
constexpr int64_t kTrainSetByteLimit = int64_t{2} << 30;  // 2 GiB
// Throws attn::Error, prefixed by `where`, naming task.train_examples when the task cannot take
// it: a text task with any nonzero value (its training windows come from the corpus), modadd
// with any nonzero value (task.train_fraction already fixes its training pairs),
// fashion-mnist over its 60000 training images, a synthetic task whose fixed set would pass
// kTrainSetByteLimit (the message gives its size in bytes and the limit). Allocates nothing.
void check_train_examples(const TaskConfig& task, const std::string& where);

// The config key that sets a task's input length ("task.length", "task.context", "task.patch"),
// or "" for modadd (always 3 tokens).
std::string task_length_key(const TaskConfig& task);

}  // namespace attn
