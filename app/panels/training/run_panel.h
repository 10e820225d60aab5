// Run panel: trainer controls (start, pause, step, reset, save/load, live learning rate), the
// run's status from the snapshot, and the experiment editor ("Apply & reset").
// Contract: draws into the region the workspace gives it. Reads the snapshot and `state` (taken
// once per frame by the caller); talks to the trainer only through its non-blocking commands,
// except trainer.config() on "Revert" (a short copy under the trainer's lock, never a training
// step).
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "app/gui/panel.h"
#include "app/gui/ui_state.h"
#include "core/training/trainer.h"
#include "core/views/snapshot.h"

namespace attn::gui {

class RunPanel : public Panel {
 public:
  void draw(FrameContext& frame) override;
  void update(FrameContext& frame) override;
  // Where Start and "Apply & reset" were drawn ([x, y, w, h], window pixels): the tiles test
  // checks both lie inside the panel, reachable without scrolling. Also what the status shows:
  // state, message, record_error, run_dir, and the Save field's text (save_field).
  nlohmann::json report() const override {
    return {{"start_rect", start_rect_},
            {"apply_rect", apply_rect_},
            {"threads", threads_},
            {"threads_reason", threads_reason_},
            {"state", state_},
            {"message", message_},
            {"record_error", record_error_},
            {"run_dir", run_dir_},
            {"save_field", save_field_}};
  }

 private:
  std::array<float, 4> start_rect_{}, apply_rect_{};
  int threads_ = 0;  // the trainer's CPU thread count and why, as the panel shows them
  std::string threads_reason_;
  std::string state_, message_, record_error_, run_dir_, save_field_;
  uint64_t seen_generation_ = 0;  // the model whose config the editor was last given
};

}  // namespace attn::gui
