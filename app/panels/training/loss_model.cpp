#include "app/panels/training/loss_model.h"

#include <algorithm>
#include <cstdio>
#include <exception>

#include "core/training/interventions/length_eval.h"

namespace attn::gui {

float LossModel::least_height(const fig::Figure& figure, float font_px) {
  return font_px * (9.0f * static_cast<float>(std::max(1, figure.rows)) + 3.0f);
}

figures::FigureOptions LossModel::options() const {
  figures::FigureOptions o;
  o.smoothing = smoothing;
  o.log_y = log_y;
  o.show_accuracy = show_accuracy;
  return o;
}

const fig::Figure& LossModel::figure(const Snapshot& snap) {
  if (!empty(snap) && (snap.serial != figure_serial_ || smoothing != built_smoothing_ ||
                       log_y != built_log_y_ || show_accuracy != built_accuracy_)) {
    figure_ = figures::loss_figure(snap, options());
    figure_serial_ = snap.serial;
    built_smoothing_ = smoothing, built_log_y_ = log_y, built_accuracy_ = show_accuracy;
  }
  return figure_;
}

void LossModel::set_task(const Snapshot& snap, const TaskConfig& task) {
  task_serial_ = snap.serial;
  try {
    task_key_ = attn::length_key(task);
    task_meaning_ = length_meaning(task);
    task_trained_ = task_length(task);
  } catch (const std::exception&) {
    task_key_.clear();  // modadd, images: no length to change
    task_meaning_.clear();
  }
  // A new model (a loaded run, another config) refills the field: twice its training length.
  if (!task_key_.empty() && (task_trained_ != field_trained_ || task_key_ != field_key_)) {
    eval_length = 2 * task_trained_;
    field_trained_ = task_trained_;
    field_key_ = task_key_;
  }
}

LossModel::LengthRow LossModel::length_row(const Snapshot& snap) {
  eval_length = std::max(1, eval_length);
  LengthRow row;
  const std::string& key = task_key_;
  row.report = {{"key", key}, {"asked", eval_length}};
  const auto& v = snap.length_eval;
  if (!v) {
    // The key and what it counts for this task (recall's task.length is its key-value pairs).
    row.text = key + " (" + task_meaning_ + ") of the model's task; Evaluate or Enter";
    row.tone = Tone::Disabled;
    return row;
  }
  row.report["length"] = v->length;
  row.report["step"] = v->step;
  row.report["error"] = v->error;
  if (!v->error.empty()) {
    row.text = v->error;  // may be long: the view wraps it
    row.tone = Tone::Warning;
    return row;
  }
  row.report["eval_loss"] = v->figures.loss;
  row.report["eval_accuracy"] = v->figures.accuracy;
  char line[256];
  std::snprintf(line, sizeof line, "%s %d (trained %d): loss %.4f, accuracy %.1f%% at step %lld",
                key.c_str(), v->length, v->trained, v->figures.loss, 100 * v->figures.accuracy,
                static_cast<long long>(v->step));
  row.text = line;
  return row;
}

}  // namespace attn::gui
