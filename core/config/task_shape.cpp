#include "core/config/task_shape.h"

#include "core/base/error.h"

namespace attn {

namespace {

bool is_context_task(const std::string& n) {
  return n == "text" || n == "mqar" || n == "selective_copy" || n == "induction_head";
}

}  // namespace

std::string task_length_key(const TaskConfig& task) {
  if (is_context_task(task.name)) return "task.context";
  if (task.name == "fashion-mnist") return "task.patch";
  if (task.name == "modadd") return "";
  return "task.length";
}

TaskShape task_shape(const TaskConfig& c) {
  TaskShape s;
  const std::string& n = c.name;
  const int64_t len = c.length, vocab = c.vocab;
  if (n == "copy" || n == "reverse" || n == "sort") {
    s.tokens = 2 * len, s.vocab = vocab + 1;
  } else if (n == "recall") {
    s.tokens = 4 * len, s.vocab = 2 * vocab + 1;
  } else if (n == "modadd") {
    s.tokens = 3, s.vocab = c.modulus + 1;
  } else if (n == "induction") {
    s.tokens = 3 * len - 1, s.vocab = 2 * vocab;
  } else if (n == "text") {
    s.tokens = c.context, s.vocab = kTextVocabFloor, s.vocab_known = false;
  } else if (n == "mqar" || n == "selective_copy") {
    s.tokens = c.context, s.vocab = vocab;
  } else if (n == "induction_head") {
    s.tokens = c.context + 1, s.vocab = vocab;
  } else if (n == "parity" || n == "reverse_string" || n == "duplicate_string") {
    const int64_t outputs = n == "parity" ? 1 : n == "duplicate_string" ? 2 * len : len;
    s.tokens = len + outputs, s.vocab = vocab + 1;
  } else if (n == "fashion-mnist") {
    const int64_t g = 28 / std::max(1, c.patch);
    s.tokens = g * g, s.patch_dim = int64_t(c.patch) * c.patch;
  } else {
    throw Error("task.name \"" + n + "\": no memory estimate for this task");
  }
  return s;
}

void check_train_examples(const TaskConfig& task, const std::string& where) {
  const int64_t n = task.train_examples;
  if (n == 0) return;
  const std::string key = where + ": task.train_examples " + std::to_string(n);
  if (task.name == "text")
    throw Error(key +
                ": task \"text\" trains on windows of its corpus; a fixed training set of "
                "generated sequences is for the synthetic tasks only (set 0)");
  if (task.name == "modadd")
    throw Error(key +
                ": task \"modadd\" already trains on a fixed split of its pairs, sized by "
                "task.train_fraction (set 0)");
  if (task.name == "fashion-mnist") {
    if (n > 60000)
      throw Error(where +
                  ": task.train_examples must be in [0, 60000] for task \"fashion-mnist\" (the "
                  "training images used), got " +
                  std::to_string(n));
    return;
  }
  const int64_t tokens = task_shape(task).tokens, per_example = tokens * 8 * 2;
  const int64_t bytes = n * per_example;
  if (bytes > kTrainSetByteLimit)
    throw Error(key + " x " + std::to_string(tokens) +
                " tokens x 8 bytes x 2 (inputs and targets) = " + std::to_string(bytes) +
                " bytes of fixed training set, over the limit of " +
                std::to_string(kTrainSetByteLimit) + " bytes (2 GiB): give at most " +
                std::to_string(kTrainSetByteLimit / per_example) + " examples");
}

}  // namespace attn
