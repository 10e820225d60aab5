// The standard benchmark tasks' names and settings (core/data/benchmark_tasks.h generates them),
// here in config so that the parser can check a config without reaching up into data.
#pragma once
#include <string>
#include <vector>

#include "core/config/config.h"

namespace attn {

const std::vector<std::string>& benchmark_task_names();
// parity, reverse_string, duplicate_string: trained on every length up to task.length.
bool is_length_generalisation_task(const std::string& name);
// Throws attn::Error naming `where`, the key, its value and the allowed range when the task's
// settings cannot make an example (an odd MQAR length, too many pairs for the vocabulary...).
void check_benchmark_task(const TaskConfig& task, const std::string& where);

}  // namespace attn
