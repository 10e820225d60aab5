// Making tasks and reading their batches: what the task tests (test_benchmark_tasks.cpp,
// test_twins.cpp, test_tasks.cpp) share.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/config.h"

namespace attn::test {

// A task section with the shape keys set (context: the benchmark tasks' sequence length; the
// others keep TaskConfig's defaults).
inline attn::TaskConfig task_config(const std::string& name, int context, int length, int vocab) {
  attn::TaskConfig t;
  t.name = name;
  t.context = context;
  t.length = length;
  t.vocab = vocab;
  return t;
}

// Row b of an int64 batch tensor [B, T], as a vector.
inline std::vector<int64_t> row(const torch::Tensor& t, int64_t b) {
  auto r = t[b].contiguous();
  return {r.data_ptr<int64_t>(), r.data_ptr<int64_t>() + r.numel()};
}

}  // namespace attn::test
