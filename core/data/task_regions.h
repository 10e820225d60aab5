// The named regions of a task's sequence (issue 48 item 7): the parts of a probe a reader crops
// the attention maps to (MQAR's key-value context and its queries, selective copy's copied tokens
// and answers, induction head's trigger and answer, the Chomsky tasks' input and output).
// Torch-free: a region is plain positions, read from the probe's tokens as the task lays them out
// (core/data/benchmark_tasks.cpp generates that layout).
// Contract:
//  - A region names query rows [first, last] and key columns [key_first, key_last] of the maps,
//    both inclusive, inside [0, probe length). A region of positions alone has the same range on
//    both axes; a cross region ("queries-context") has the rows of one part and the keys of the
//    other (what the answers read).
//  - task_regions() starts with "whole" (the whole sequence; for every task and probe, the
//    default), then the task's own regions where it can state them for this probe (a part the
//    probe lacks, e.g. a typed MQAR probe without queries, is left out). Names are one word or
//    two joined by '-', usable as a command-line value.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

struct TaskConfig;        // core/config/config.h
struct ExperimentConfig;  // core/config/config.h

struct TaskRegion {
  std::string name;
  int64_t first = 0, last = 0;          // query rows, inclusive
  int64_t key_first = 0, key_last = 0;  // key columns, inclusive
};

// The regions of `probe` (token ids) for `task`: mqar, selective_copy, induction_head, parity,
// reverse_string and duplicate_string name theirs; every other task has "whole" alone.
std::vector<TaskRegion> task_regions(const TaskConfig& task, const std::vector<int64_t>& probe);

// The same for a probe given by its token labels (a snapshot's or a view record's probe_tokens):
// the labels are read back into ids through the run's task (built from `config`). A label the
// task does not know, or a task without regions, gives "whole" alone.
std::vector<TaskRegion> task_regions_of_labels(const ExperimentConfig& config,
                                               const std::vector<std::string>& labels);

// The region called `name`, or null.
const TaskRegion* find_region(const std::vector<TaskRegion>& regions, const std::string& name);
// "whole, context, queries, queries-context" (for messages).
std::string region_names(const std::vector<TaskRegion>& regions);

}  // namespace attn
