// Timeline: one control for the whole window over the steps the run on screen recorded its
// views at (views.rec, core/runs/records/view_timeline.h). A bar under the menu: step back and
// forward, play at a chosen speed, a slider over the recorded steps, and Latest (follow the live
// model). Contract:
//  - view(live) is the snapshot every panel draws this frame: the live one while Latest, else the
//    live one as it was at the chosen recorded step (snapshot_at_record: maps, tokens, image,
//    ky history up to the step, C and its spectrum). Its serial is built from the live serial
//    and a counter, so it increases whenever either changes and panels rebuild their figures.
//  - Sources follow the snapshot: the run a model was loaded from (an opened or followed run),
//    then the directory the window records it into as it trains on, whose records replace the
//    opened run's from its first step. Records appear as their writers append them (re-read at
//    most twice a second).
//  - A panel asks to move the timeline through UiState::timeline_request (a click on a loss
//    curve); UiState::timeline_step is the step shown (-1 while Latest).
//  - start_at(dir, step): the timeline moves to `step` once the model loaded from `dir` is on
//    screen (gui --run DIR --step N).
//  - causal_record(): the record the causal views (the recorded attribution patching and direct
//    logit attribution) read: the chosen step's, and while Latest the newest recorded (following
//    the recording); null when the run on screen recorded nothing (the live model alone).
//  - report(): {"step", "steps", "latest", "playing", "sources", "error", "latest_rect",
//    "slider_rect"}; the rects are where the last frame drew Latest and the step slider.
//  - UI thread only.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "app/gui/ui_state.h"
#include "core/runs/records/view_timeline.h"
#include "core/views/snapshot.h"

namespace attn::gui {

class Timeline {
 public:
  void start_at(const std::string& dir, int64_t step);
  // Benchmark hook (ATTN_GUI_TIMELINE_SCRUB=1): the next recorded step every frame, wrapping
  // around, so frame statistics measure every panel redrawn at a new step each frame.
  void scrub_every_frame(bool on) { scrub_every_frame_ = on; }
  // Reads new records, applies panel requests and playback. now_s: the frame clock.
  void update(const Snapshot& live, UiState& ui, double now_s);
  // Draws the bar at `pos`, `width` wide; returns its height.
  float draw(float x, float y, float width, float ui_scale);
  std::shared_ptr<const Snapshot> view(const std::shared_ptr<const Snapshot>& live);
  nlohmann::json report() const;
  bool latest() const { return latest_; }
  int64_t step() const { return step_; }
  ViewTimeline& records() { return records_; }
  std::shared_ptr<const ViewRecord> causal_record();

 private:
  void choose(int64_t step);
  int index_of(int64_t step) const;

  ViewTimeline records_;
  bool latest_ = true;
  int64_t step_ = -1;  // the chosen recorded step (not Latest)
  bool playing_ = false;
  bool scrub_every_frame_ = false;
  float speed_ = 4.0f;  // records per second
  double next_play_ = 0;
  double now_ = 0;
  std::string pending_dir_;  // start_at
  int64_t pending_step_ = -1;
  int64_t live_step_ = -1;  // the live snapshot's probe step, for the bar while Latest
  std::string opened_;      // the run the live model was loaded from ("" = none)
  std::string note_;
  // Where the last frame drew the Latest button and the step slider ([x, y, w, h], window
  // pixels; zeros before the first frame): the report's, for tests that click them.
  std::array<float, 4> latest_rect_{};
  std::array<float, 4> slider_rect_{};
  // The view built for the chosen step, reused while the live serial and the step are unchanged.
  std::shared_ptr<const Snapshot> built_;
  uint64_t built_live_serial_ = 0;
  int64_t built_step_ = -2;
  size_t built_records_ = 0;
  uint64_t counter_ = 0;
};

}  // namespace attn::gui
