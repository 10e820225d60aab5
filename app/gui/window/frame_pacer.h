// FramePacer: when the interactive window draws its next frame. No GLFW, no ImGui, no clock of
// its own: the frame loop (gui_main.cpp) asks it with what it sees, and waits (glfwWaitEvents-
// Timeout, which any input event ends early) for as long as it says.
//
// Why: the window shares the machine with the trainer thread. Drawing at the display's rate when
// nothing changed took the core the trainer needs (issue 50: copy trained at 0.75x headless with
// another process keeping one core busy). Training publishes a snapshot at most every 100 ms,
// so a window that draws only on change draws at most 10 frames a second while training, fewer
// where a frame costs more than a tenth of that (software GL at 1920x1080: about 4).
//
// Contract (decide()):
//  - A frame is due when: nothing was drawn yet; the trainer's state differs from the last
//    frame's; the snapshot's serial differs and the last frame began at least its cost (a moving
//    average of frame_cost()) / `snapshot_budget` ago, so that redrawing for snapshots takes at
//    most that share of a core (no such wait within 0.5 s of an input event: an answer to a click
//    shows at once); `change_settle_s` after such a frame when nothing was drawn since and no
//    newer snapshot waits (one settling frame: ImGui sizes what a frame's content grew to in the
//    next one; while training the next snapshot settles it); an input or window event came after
//    the last frame began (then `settle_after_input` frames: ImGui needs a couple of frames to
//    settle hover, popups and sizes after input); the last frame
//    said it is animating (an item held or dragged, a mouse button down, the timeline playing, an
//    export job running); text input is active (every `text_input_s`, for the cursor's blink);
//    or no frame was drawn for `watch_s` while something outside the snapshot may change (the
//    Runs or Compare panel open), else for `idle_s` (a safety net for anything else).
//  - A due frame starts no sooner than 1 / cap_hz after the previous one began (the cap holds
//    where the display has no vsync, e.g. Xvfb); until then, and while no frame is due, decide()
//    says how long to wait: at most one frame period, so a new snapshot is seen within one.
//  - Otherwise nothing is drawn: no frame when neither the snapshot nor the input changed.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

namespace attn::gui {

struct PacerOptions {
  double cap_hz = 60;
  double change_settle_s = 0.15;  // the settling frame after a new snapshot or trainer state
  double snapshot_budget = 0.1;   // share of a core that redrawing for new snapshots may take
  int settle_after_input = 4;     // frames drawn after an input event
  double text_input_s = 0.2;      // redraw period while a text field has the keyboard
  double watch_s = 0.25;          // redraw period while a panel watches things outside the snapshot
  double idle_s = 1.0;            // redraw period otherwise
};

// What the frame loop sees now. Times are seconds on one clock (glfwGetTime).
struct PaceInput {
  double now = 0;
  uint64_t snapshot_serial = 0;
  int trainer_state = 0;
  double last_event_time = -1;  // the last input or window event; < 0: none yet
  bool watching = false;        // a panel shows what changes outside the snapshot
};

// What the last drawn frame asked for (read after it was drawn).
struct FrameNeeds {
  bool animating = false;   // keep drawing at the cap
  bool text_input = false;  // a text field has the keyboard (a blinking cursor)
};

class FramePacer {
 public:
  explicit FramePacer(PacerOptions options = {});

  struct Decision {
    bool draw = false;
    double wait_s = 0;        // when !draw: wait this long (or until an event), then ask again
    const char* reason = "";  // when draw: why ("first", "snapshot", "input", "settle", ...)
  };
  Decision decide(const PaceInput& in) const;

  // A frame began at `in.now` with what decide() saw; `needs` is what it asked for once drawn.
  void frame_begun(const PaceInput& in, const Decision& why);
  void frame_needs(const FrameNeeds& needs) { needs_ = needs; }
  // What the frame just drawn cost: seconds from its start to its present's return.
  void frame_cost(double seconds);
  // One more frame is due whatever changed (a frame a drawing fault ended early).
  void request_frame() { settle_left_ = std::max(settle_left_, 1); }

  // Frames drawn, in all and by the reason decide() gave ("first", "snapshot", "input",
  // "settle", "animating", "text_input", "watch", "idle"; each present, 0 when none); and waits
  // that drew nothing.
  struct Counts {
    int64_t frames = 0;
    std::map<std::string, int64_t> by_reason;
    int64_t of(const std::string& reason) const {
      const auto it = by_reason.find(reason);
      return it == by_reason.end() ? 0 : it->second;
    }
  };
  const Counts& counts() const { return counts_; }
  void count_wait() { ++waits_; }
  int64_t waits() const { return waits_; }
  const PacerOptions& options() const { return options_; }

 private:
  const PacerOptions options_;
  bool drawn_any_ = false;
  uint64_t drawn_serial_ = 0;
  int drawn_state_ = 0;
  double last_begin_ = 0;
  int settle_left_ = 0;         // frames still to draw after the last input
  bool change_settle_ = false;  // the last frame drew a change and was not settled yet
  FrameNeeds needs_;
  double frame_cost_s_ = 0;  // moving average of frame_cost()
  Counts counts_;
  int64_t waits_ = 0;
};

}  // namespace attn::gui
