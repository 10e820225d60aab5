// The regions of each benchmark task's probe (task_regions.h), read from the layout that
// benchmark_tasks.cpp generates: the special tokens and the part lengths the config states.
#include "core/data/task_regions.h"

#include <algorithm>
#include <map>

#include "core/config/benchmark_settings.h"
#include "core/config/config.h"
#include "core/data/tasks.h"

namespace attn {
namespace {

using Regions = std::vector<TaskRegion>;

TaskRegion part(const std::string& name, int64_t first, int64_t last) {
  return {name, first, last, first, last};
}

// The rows of `rows` reading the keys of `keys`.
TaskRegion cross(const std::string& name, const TaskRegion& rows, const TaskRegion& keys) {
  return {name, rows.first, rows.last, keys.key_first, keys.key_last};
}

int64_t find_token(const std::vector<int64_t>& tokens, int64_t token) {
  const auto it = std::find(tokens.begin(), tokens.end(), token);
  return it == tokens.end() ? -1 : static_cast<int64_t>(it - tokens.begin());
}

// MQAR: the n key-value pairs first, then the queried keys (ids 1..V/2-1) among fillers.
void mqar(const TaskConfig& c, const std::vector<int64_t>& p, Regions& out) {
  const int64_t L = static_cast<int64_t>(p.size()), pairs = std::min<int64_t>(2 * c.length, L);
  if (pairs <= 0) return;
  out.push_back(part("context", 0, pairs - 1));
  int64_t first = -1, last = -1;
  for (int64_t t = pairs; t < L; ++t)
    if (p[t] > 0 && p[t] < c.vocab / 2) {
      if (first < 0) first = t;
      last = t;
    }
  if (first < 0) return;
  out.push_back(part("queries", first, last));
  out.push_back(cross("queries-context", out.back(), out[out.size() - 2]));
}

// Selective copy: the tokens to copy among blanks (V-2), the copy token (V-1), then one answer
// blank per copied token.
void selective_copy(const TaskConfig& c, const std::vector<int64_t>& p, Regions& out) {
  const int64_t L = static_cast<int64_t>(p.size()), copy = find_token(p, c.vocab - 1);
  if (copy < 0) return;
  int64_t first = -1, last = -1;
  for (int64_t t = 0; t < copy; ++t)
    if (p[t] != c.vocab - 2) {
      if (first < 0) first = t;
      last = t;
    }
  if (first >= 0) out.push_back(part("copied", first, last));
  if (copy + 1 >= L) return;
  out.push_back(part("answers", copy + 1, std::min<int64_t>(copy + c.length, L - 1)));
  if (first >= 0) out.push_back(cross("answers-copied", out.back(), out[out.size() - 2]));
}

// Induction head: an earlier trigger (V-2) and the token after it; the last position (the final
// trigger) answers with that token.
void induction_head(const TaskConfig& c, const std::vector<int64_t>& p, Regions& out) {
  const int64_t last = static_cast<int64_t>(p.size()) - 1;
  int64_t trigger = -1;
  for (int64_t t = 0; t + 1 < last; ++t)
    if (p[t] == c.vocab - 2) trigger = t;
  if (trigger < 0) return;
  out.push_back(part("trigger", trigger, trigger + 1));
  out.push_back(part("answer", last, last));
  out.push_back(cross("answer-trigger", out.back(), out[out.size() - 2]));
}

// The Chomsky tasks: n input symbols, then the placeholders (id V) that answer: one for parity,
// n for reverse_string, 2n for duplicate_string.
void chomsky(const TaskConfig& c, const std::vector<int64_t>& p, Regions& out) {
  const int64_t L = static_cast<int64_t>(p.size()), n = find_token(p, c.vocab);
  if (n <= 0) return;
  out.push_back(part("input", 0, n - 1));
  const int64_t outputs = c.name == "parity" ? 1 : c.name == "duplicate_string" ? 2 * n : n;
  out.push_back(part("output", n, std::min(n + outputs, L) - 1));
  out.push_back(cross("output-input", out.back(), out[out.size() - 2]));
}

}  // namespace

std::vector<TaskRegion> task_regions(const TaskConfig& c, const std::vector<int64_t>& probe) {
  Regions out;
  if (probe.empty()) return out;
  const int64_t L = static_cast<int64_t>(probe.size());
  out.push_back(part("whole", 0, L - 1));
  if (c.name == "mqar") mqar(c, probe, out);
  if (c.name == "selective_copy") selective_copy(c, probe, out);
  if (c.name == "induction_head") induction_head(c, probe, out);
  if (is_length_generalisation_task(c.name)) chomsky(c, probe, out);
  return out;
}

std::vector<TaskRegion> task_regions_of_labels(const ExperimentConfig& config,
                                               const std::vector<std::string>& labels) {
  const auto& names = benchmark_task_names();
  const bool structured = std::find(names.begin(), names.end(), config.task.name) != names.end();
  std::vector<int64_t> tokens;
  if (structured) {
    const std::unique_ptr<Task> task = make_task(config.task, config.seed, 1, 1);
    std::map<std::string, int64_t> ids;
    for (int64_t t = 0; t < task->vocab_size(); ++t) ids.emplace(task->token_label(t), t);
    for (const std::string& l : labels) {
      const auto it = ids.find(l);
      if (it == ids.end()) break;  // not this task's probe: the whole map only
      tokens.push_back(it->second);
    }
  }
  if (tokens.size() == labels.size()) return task_regions(config.task, tokens);
  return labels.empty() ? Regions{}
                        : Regions{part("whole", 0, static_cast<int64_t>(labels.size()) - 1)};
}

const TaskRegion* find_region(const std::vector<TaskRegion>& regions, const std::string& name) {
  for (const TaskRegion& r : regions)
    if (r.name == name) return &r;
  return nullptr;
}

std::string region_names(const std::vector<TaskRegion>& regions) {
  std::string s;
  for (const TaskRegion& r : regions) s += (s.empty() ? "" : ", ") + r.name;
  return s;
}

}  // namespace attn
