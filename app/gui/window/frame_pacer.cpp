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

FramePacer::Decision FramePacer::decide(const PaceInput& in) const {
  const double since = in.now - last_begin_;
  const double period = options_.watch_s > 0 && in.watching ? options_.watch_s : options_.idle_s;
  const char* reason = nullptr;
  if (!drawn_any_)
    reason = "first";
  else if (changed(in, drawn_serial_, drawn_state_))
    reason = "snapshot";
  else if (in.last_event_time > last_begin_)
    reason = "input";
  else if (settle_left_ > 0 || (change_settle_ && since >= options_.change_settle_s))
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
  if (change_settle_) wait = std::min(wait, options_.change_settle_s - since);
  return {false, std::max(kMinWait, wait), ""};
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
  const std::string r = why.reason ? why.reason : "";
  int64_t* slot = r == "first"        ? &counts_.first
                  : r == "snapshot"   ? &counts_.snapshot
                  : r == "input"      ? &counts_.input
                  : r == "settle"     ? &counts_.settle
                  : r == "animating"  ? &counts_.animating
                  : r == "text_input" ? &counts_.text_input
                  : r == "watch"      ? &counts_.watch
                                      : &counts_.idle;
  ++*slot;
}

}  // namespace attn::gui
