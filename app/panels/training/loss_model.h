// The Loss panel's model (loss_panel.h is its view): the controls' state (smoothing, log y,
// accuracy, the eval-length field), the figure they give for a snapshot and the eval-length
// row's text and report. No ImGui: tests drive it without a window
// (tests/app/panel_models/test_loss.cpp).
// Contract:
//  - figure(snap) is figures::loss_figure(snap, options()), rebuilt only when snap.serial or a
//    control changed since the last call; a snapshot without any loss point keeps the last one.
//  - The eval-length row exists for token tasks with a length (length_eval.h): set_task() reads
//    the model's task once per snapshot (task_stale() says when); a new task or training length
//    refills the field with twice the training length.
//  - length_row(snap) is what the row shows (Snapshot::length_eval's loss and accuracy at the
//    asked length, its error, or a hint naming the key and what it counts for the task) and
//    report()'s "length_eval" without the rectangles.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "app/figures/catalog/figures.h"
#include "core/config/config.h"
#include "core/views/snapshot.h"

namespace attn::gui {

class LossModel {
 public:
  // The controls (the view binds widgets to them).
  float smoothing = 0.6f;  // TensorBoard's default: smooth, but no long lag
  bool log_y = true;
  bool show_accuracy = true;
  int eval_length = 0;  // the eval-length field

  figures::FigureOptions options() const;
  // No train or eval loss yet: nothing to draw or export.
  static bool empty(const Snapshot& snap) {
    return snap.train_loss.empty() && snap.eval_loss.empty();
  }
  const fig::Figure& figure(const Snapshot& snap);
  // The least height the figure is drawn at, the tile scrolling below it: about nine font sizes
  // a row of plots (title, plot, ticks and axis label) and three for the figure's title and
  // legend (at UI scale 2 on 1280x720 the plots had no height left under the controls).
  static float least_height(const fig::Figure& figure, float font_px);

  // The eval-length row.
  bool task_stale(const Snapshot& snap) const { return snap.serial != task_serial_; }
  void set_task(const Snapshot& snap, const TaskConfig& task);
  const std::string& length_key() const { return task_key_; }  // "": no row
  enum class Tone { Normal, Disabled, Warning };
  struct LengthRow {
    std::string text;
    Tone tone = Tone::Normal;
    nlohmann::json report;  // key, asked, and the answer's length, step, error, loss, accuracy
  };
  LengthRow length_row(const Snapshot& snap);  // clamps the field to >= 1

 private:
  fig::Figure figure_;
  uint64_t figure_serial_ = ~uint64_t(0);
  float built_smoothing_ = -1;
  bool built_log_y_ = false, built_accuracy_ = false;
  int field_trained_ = -1;  // the training length the field was filled for
  std::string field_key_;
  uint64_t task_serial_ = ~uint64_t(0);  // the snapshot the task's length key was read at
  std::string task_key_;                 // "" when the task has no length
  std::string task_meaning_;             // what the key counts (length_meaning)
  int task_trained_ = 0;
};

}  // namespace attn::gui
