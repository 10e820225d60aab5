// The window's frame pacing (frame_pacer.h).
#include "app/gui/window/frame_pacer.h"

#include <algorithm>

namespace attn::gui {
namespace {

constexpr double kMinWait = 1e-4;  // glfwWaitEventsTimeout needs a positive timeout

bool changed(const PaceInput& in, uint64_t serial, int state) {
  return in.snapshot_serial != serial || in.trainer_state != state;
}

}  // namespace

FramePacer::FramePacer(PacerOptions options) : options_(options) {
  for (const char* r :
       {"first", "snapshot", "input", "settle", "animating", "text_input", "watch", "idle"})
    counts_.by_reason[r] = 0;
}

FramePacer::Decision FramePacer::decide(const PaceInput& in) const {
  const double since = in.now - last_begin_;
  const double period = options_.watch_s > 0 && in.watching ? options_.watch_s : options_.idle_s;
  const bool new_serial = in.snapshot_serial != drawn_serial_;
  // A new snapshot waits while the frames it causes would take more than the budget of a core;
  // not while the user interacts (an answer to a click shows at once).
  const bool interacting = in.last_event_time >= 0 && in.now - in.last_event_time < 0.5;
  const double snapshot_gap =
      interacting || options_.snapshot_budget <= 0 ? 0 : frame_cost_s_ / options_.snapshot_budget;
  const char* reason = nullptr;
  if (!drawn_any_)
    reason = "first";
  else if (in.trainer_state != drawn_state_ || (new_serial && since >= snapshot_gap))
    reason = "snapshot";
  else if (in.last_event_time > last_begin_)
    reason = "input";
  else if (settle_left_ > 0 || (change_settle_ && !new_serial && since >= options_.change_settle_s))
    reason = "settle";
  else if (needs_.animating)
    reason = "animating";
  else if (needs_.text_input && since >= options_.text_input_s)
    reason = "text_input";
  else if (since >= period)
    reason = in.watching ? "watch" : "idle";
  const double frame_s = 1.0 / std::max(1.0, options_.cap_hz);
  if (reason) {
    if (drawn_any_ && since < frame_s) return {false, std::max(kMinWait, frame_s - since), ""};
    return {true, 0, reason};
  }
  // Nothing due: look again within a frame (a new snapshot shows no sooner than that), or at
  // the deadline of a periodic redraw when that comes first.
  double wait = std::min(frame_s, period - since);
  if (needs_.text_input) wait = std::min(wait, options_.text_input_s - since);
  if (change_settle_ && !new_serial) wait = std::min(wait, options_.change_settle_s - since);
  if (new_serial) wait = std::min(wait, snapshot_gap - since);
  return {false, std::max(kMinWait, wait), ""};
}

void FramePacer::frame_cost(double seconds) {
  if (!(seconds >= 0)) return;
  frame_cost_s_ = frame_cost_s_ <= 0 ? seconds : 0.8 * frame_cost_s_ + 0.2 * seconds;
}

void FramePacer::frame_begun(const PaceInput& in, const Decision& why) {
  change_settle_ = drawn_any_ && changed(in, drawn_serial_, drawn_state_);
  if (!drawn_any_ || in.last_event_time > last_begin_)
    settle_left_ = std::max(settle_left_, options_.settle_after_input);
  if (settle_left_ > 0) --settle_left_;  // this frame is one of them
  drawn_any_ = true;
  drawn_serial_ = in.snapshot_serial;
  drawn_state_ = in.trainer_state;
  last_begin_ = in.now;
  needs_ = {};  // until the frame says what it needs
  ++counts_.frames;
  ++counts_.by_reason[why.reason ? why.reason : "idle"];
}

}  // namespace attn::gui
