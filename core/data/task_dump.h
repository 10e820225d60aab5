// A task's data as JSON, for comparing another implementation's generators with attnlab's
// (`attnlab data`; tests/python/test_task_data.py). Torch-free header: the CLI calls it.
#pragma once
#include <nlohmann/json.hpp>

#include "core/config/config.h"

namespace attn {

// The task of `config`, built as training builds it (its seed, train.eval_batches and
// train.batch_size): {"task", "seed", "vocab", "sequence_length", "patch_dim", "eval_batches"
// (the eval set's size), "eval": [{"inputs", "targets"}, ...] (its first `batches` batches, all
// when 0; token ids, -1 = not scored; image tasks: patch features and class labels), "probe"
// (token ids; image tasks: the probe's patches)}. Throws attn::Error when the task cannot be
// built (its data missing, a setting out of range).
nlohmann::json task_data_json(const ExperimentConfig& config, int batches);

}  // namespace attn
