#include "core/data/task_dump.h"

#include <algorithm>

#include "core/data/tasks.h"

namespace attn {
namespace {

// A tensor as nested JSON arrays: integers as integers, floating point as doubles (float32
// values convert exactly, and nlohmann writes the shortest text that reads back the same).
nlohmann::json tensor_json(const torch::Tensor& t) {
  if (t.dim() == 0)
    return t.is_floating_point() ? nlohmann::json(t.item<double>())
                                 : nlohmann::json(t.item<int64_t>());
  nlohmann::json out = nlohmann::json::array();
  for (int64_t i = 0; i < t.size(0); ++i) out.push_back(tensor_json(t[i]));
  return out;
}

}  // namespace

nlohmann::json task_data_json(const ExperimentConfig& c, int batches) {
  const auto task = make_task(c.task, c.seed, c.train.eval_batches, c.train.batch_size);
  const auto& eval = task->eval_set();
  const size_t count = batches > 0 ? std::min<size_t>(batches, eval.size()) : eval.size();
  nlohmann::json list = nlohmann::json::array();
  for (size_t b = 0; b < count; ++b)
    list.push_back(
        {{"inputs", tensor_json(eval[b].inputs)}, {"targets", tensor_json(eval[b].targets)}});
  const bool image = task->patch_dim() > 0;
  return {{"task", c.task.name},
          {"seed", c.seed},
          {"vocab", task->vocab_size()},
          {"sequence_length", task->sequence_length()},
          {"patch_dim", task->patch_dim()},
          {"eval_batches", eval.size()},
          {"eval", list},
          {"probe", image ? tensor_json(task->probe_input()[0]) : nlohmann::json(task->probe())}};
}

}  // namespace attn
