// Reading a run directory as `attnlab train --out DIR` writes it (config.json, metrics.csv,
// summary.json, checkpoint/, and for some models mechanism_views.json, conn.json, C.csv), without
// torch: for the export, compare and sweep commands and for the window's saved-run views.
// Contract:
//  - read_run_directory() needs config.json and metrics.csv; summary.json is optional (a run
//    that was interrupted has none: `finished` is false). Throws attn::Error naming the file and,
//    for metrics.csv, the line that is malformed.
//  - Series hold only the rows where the metric was recorded (eval columns are empty between
//    evaluations), as floats, exactly as written.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "core/config/config.h"
#include "core/views/mechanism_view.h"
#include "core/views/snapshot.h"

namespace attn {

struct RunDirectory {
  std::string dir;  // as given
  std::string id;   // the directory's name ("dot", "seed-1")
  ExperimentConfig config;
  std::string config_hash;
  bool finished = false;   // summary.json present
  nlohmann::json summary;  // summary.json (null when absent)
  Series train_loss, eval_loss, eval_accuracy, learning_rate;
  int64_t rows = 0;             // complete data rows of metrics.csv
  bool has_checkpoint = false;  // checkpoint/state.json present
  // A mechanism's name ("dot", ...); per-layer mechanisms joined with "+" when they differ. A
  // model of its own (model.architecture other than "transformer") is named by its architecture.
  std::string mechanism() const;
};

RunDirectory read_run_directory(const std::string& dir);

// The mechanisms' views over training that the run recorded (core/views/mechanism_view.h):
// dir/mechanism_views.json, or for a run recorded before it, a mechanism's old side file read
// through its descriptor (legacy_view_readers, core/attention/registry.h). Empty when the run has
// none. Throws attn::Error naming the file when one is present but malformed or over 256 MiB.
std::vector<MechanismFrame> read_mechanism_frames(const std::string& dir);

// Whether dir/summary.json records a finished run of `steps` steps: it parses, is not
// "interrupted", and reached `steps` (or diverged on the way). A damaged, partial or interrupted
// summary is false, never an error: the caller then resumes or retrains.
bool summary_finished(const std::string& dir, int64_t steps);

// Parses metrics.csv text (step,train_loss,eval_loss,eval_accuracy,lr,...) into `run`'s series.
// `where` names the file in errors. Steps must increase row by row (StepOrder): a repeated or
// earlier step (two runs appended to one file, an edit) is refused naming the file and line, as
// curves and exports would zigzag.
void parse_metrics_csv(const std::string& text, const std::string& where, RunDirectory& run);

// The rule parse_metrics_csv applies, for other readers of metrics rows (train --resume keeps the
// rows up to its checkpoint): next() throws attn::Error naming `where`, the line and the previous
// step when `step` does not exceed the previous row's.
class StepOrder {
 public:
  explicit StepOrder(std::string where) : where_(std::move(where)) {}
  void next(int64_t step, int line);

 private:
  std::string where_;
  int64_t last_step_ = 0;
  int last_line_ = 0;
};

}  // namespace attn
