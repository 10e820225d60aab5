#include "core/views/history.h"

#include "core/base/enum_names.h"

namespace attn {

void MetricHistory::add(int64_t step, float value) {
  if (count_ % stride_ == 0) {
    kept_.steps.push_back(step);
    kept_.values.push_back(value);
    has_tail_ = false;
    if (kept_.steps.size() >= capacity_) {
      size_t w = 0;
      for (size_t r = 0; r < kept_.steps.size(); r += 2, ++w) {
        kept_.steps[w] = kept_.steps[r];
        kept_.values[w] = kept_.values[r];
      }
      kept_.steps.resize(w);
      kept_.values.resize(w);
      stride_ *= 2;
    }
  } else {
    has_tail_ = true;
    tail_step_ = step;
    tail_value_ = value;
  }
  ++count_;
}

void MetricHistory::clear() {
  stride_ = 1;
  count_ = 0;
  kept_ = {};
  has_tail_ = false;
}

Series MetricHistory::series() const {
  Series s = kept_;
  if (has_tail_) {
    s.steps.push_back(tail_step_);
    s.values.push_back(tail_value_);
  }
  return s;
}

nlohmann::json MetricHistory::to_json() const {
  return {{"capacity", capacity_},   {"stride", stride_},        {"count", count_},
          {"steps", kept_.steps},    {"values", kept_.values},   {"has_tail", has_tail_},
          {"tail_step", tail_step_}, {"tail_value", tail_value_}};
}

void MetricHistory::from_json(const nlohmann::json& j) {
  capacity_ = j.at("capacity").get<size_t>();
  stride_ = j.at("stride").get<int64_t>();
  count_ = j.at("count").get<int64_t>();
  kept_.steps = j.at("steps").get<std::vector<int64_t>>();
  kept_.values = j.at("values").get<std::vector<float>>();
  has_tail_ = j.at("has_tail").get<bool>();
  tail_step_ = j.at("tail_step").get<int64_t>();
  tail_value_ = j.at("tail_value").get<float>();
}

namespace {
constexpr EnumName<TrainerState> kStateNames[] = {
    {TrainerState::Idle, "Idle"},         {TrainerState::Running, "Running"},
    {TrainerState::Paused, "Paused"},     {TrainerState::Stopping, "Stopping"},
    {TrainerState::Finished, "Finished"}, {TrainerState::Diverged, "Diverged"},
    {TrainerState::Error, "Error"}};
}  // namespace

const char* to_string(TrainerState s) {
  return enum_name(s, kStateNames);
}

}  // namespace attn
