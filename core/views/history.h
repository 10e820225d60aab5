// MetricHistory: a bounded record of (step, value) pairs for loss curves.
// When it reaches capacity it drops every other point and doubles its stride, so memory and
// the cost of copying it into a snapshot stay bounded however long the run is, while the
// curve keeps its shape end to end. Torch-free; not thread-safe (the trainer owns it).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>

#include "core/views/snapshot.h"

namespace attn {

class MetricHistory {
 public:
  explicit MetricHistory(size_t capacity = 4096) : capacity_(capacity < 2 ? 2 : capacity) {}

  // Records a value; kept if step is on the current stride (the latest point is always kept
  // as a pending tail so the curve reaches the current step).
  void add(int64_t step, float value);
  void clear();
  // The recorded points, including the latest one.
  Series series() const;
  int64_t stride() const { return stride_; }
  bool empty() const { return count_ == 0; }
  // Exact internal state, for checkpoints: a resumed run continues the same curve.
  nlohmann::json to_json() const;
  void from_json(const nlohmann::json& j);

 private:
  size_t capacity_;
  int64_t stride_ = 1;
  int64_t count_ = 0;  // values seen
  Series kept_;
  bool has_tail_ = false;
  int64_t tail_step_ = 0;
  float tail_value_ = 0;
};

}  // namespace attn
