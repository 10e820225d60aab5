// The field's standard synthetic tasks (docs/guide/benchmarks.md), as their reference code
// generates them: mqar (Zoology's multi-query associative recall: task.vocab, task.context the
// sequence length, task.length the key-value pairs), selective_copy (MAD: task.vocab,
// task.context, task.length the tokens to copy), induction_head (Safari: task.vocab,
// task.context), and the Chomsky-hierarchy length tasks parity, reverse_string and
// duplicate_string (task.vocab symbols, trained on lengths 1..task.length, evaluated at
// task.length). Names and setting checks: core/config/benchmark_settings.h.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config/benchmark_settings.h"

namespace attn {

class Task;  // core/data/tasks.h

// The task, or null when `task.name` is not one of benchmark_task_names().
std::unique_ptr<Task> make_benchmark_task(const TaskConfig& task, uint64_t seed, int eval_batches,
                                          int batch_size);

}  // namespace attn
