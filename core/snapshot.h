// Snapshot: the immutable, plain-CPU view of a training run that the trainer publishes for the
// UI (and tests). Published as std::shared_ptr<const Snapshot>; readers never lock or touch
// torch. No torch here.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attn {

enum class TrainerState { Idle, Running, Paused, Stopping, Finished, Diverged, Error };
const char* to_string(TrainerState s);

// A metric over training steps. Bounded: when full it keeps every other point (see
// MetricHistory in core/history.h), so copying it into a snapshot stays cheap for long runs.
struct Series {
  std::vector<int64_t> steps;
  std::vector<float> values;
  bool empty() const { return steps.empty(); }
};

// Attention weights of one head for the probe input: size x size, row = query, col = key.
struct AttentionMap {
  int layer = 0;
  int head = 0;
  int size = 0;
  std::vector<float> weights;
};

struct Snapshot {
  uint64_t serial = 0;      // increases with every publish
  uint64_t generation = 0;  // increases whenever the model is rebuilt (reset, reconfigure, load)
  TrainerState state = TrainerState::Idle;
  std::string message;  // error / divergence text, or a status note
  int64_t step = 0;
  int64_t total_steps = 0;
  double learning_rate = 0.0;
  double steps_per_second = 0.0;
  // Time the trainer spent publishing snapshots (probes included) over time spent training,
  // since the model was built: the UI's cost to training, measured directly.
  double publish_overhead = 0.0;
  std::string device;
  std::string task;
  std::vector<std::string> mechanisms;  // per layer
  int64_t parameters = 0;
  int64_t attention_parameters = 0;

  Series train_loss;
  Series eval_loss;
  Series eval_accuracy;
  double baseline_loss = 0.0;  // text: unigram cross-entropy on eval; 0 if not applicable

  // Probe input and the attention maps of every layer and head on it (layer-major).
  std::vector<std::string> probe_tokens;
  int layers = 0;
  int heads = 0;
  int64_t attention_step = -1;  // step the maps were computed at; -1 = none yet
  // Shared between consecutive snapshots until the next probe, so publishing never copies maps.
  std::shared_ptr<const std::vector<AttentionMap>> attention;
  const std::vector<AttentionMap>& attention_maps() const {
    static const std::vector<AttentionMap> none;
    return attention ? *attention : none;
  }
};

}  // namespace attn
