// The one writer of the run-directory format that core/runs/directory/run_dir.h reads back: used by
// `attnlab train` (core/training/headless/headless.cpp) and by runs trained in the window
// (RunRecorder and Trainer's save, core/training/recording/run_recorder.h). Torch-free. Every file is written
// through write_file_atomic (core/base/atomic_file.h): a reader sees the old file or the new one.
// Layout: config.json (the resolved config), metrics.csv (kMetricsHeader, then a row per
// evaluation), summary.json (run_summary_json plus the writer's own keys), checkpoint/.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/config/config.h"

namespace attn {

class TensorBoardEvents;  // core/runs/formats/tensorboard_events.h

struct RunSummary {
  std::string mechanism;
  std::string task;
  int64_t steps = 0;
  // Absent (null in summary.json) when never measured: a run that diverged before its first
  // step or evaluation has no loss to report, and 0 would read as a perfect one.
  std::optional<double> final_train_loss;
  std::optional<double> eval_loss;
  std::optional<double> eval_accuracy;
  double baseline_loss = 0;  // text task: unigram cross-entropy of eval text
  int64_t parameters = 0;
  int64_t attention_parameters = 0;
  double steps_per_second = 0;
  uint64_t seed = 0;
  std::string device;
  bool diverged = false;
};

inline constexpr const char* kMetricsHeader =
    "step,train_loss,eval_loss,eval_accuracy,lr,steps_per_s";

// One metrics.csv row (with its newline), 7 significant digits; absent values stay empty.
std::string metrics_row(int64_t step, std::optional<double> train_loss,
                        std::optional<double> eval_loss, std::optional<double> eval_accuracy,
                        std::optional<double> lr, std::optional<double> steps_per_s);

// The first layer's mechanism; a model of its own (model.architecture other than "transformer")
// is named by its architecture.
std::string run_mechanism(const ExperimentConfig& config);

// Creates dir (and parents), marks it as attnlab's run (core/runs/directory/run_files.h) and writes
// config.json. Throws attn::Error naming the path.
void write_run_config(const std::string& dir, const ExperimentConfig& config);

// summary.json's fields that every run has: mechanism(s), task, steps, losses, parameters,
// speed, seed, device, diverged, config_hash, attnlab version, unigram baseline when known.
nlohmann::json run_summary_json(const ExperimentConfig& config, const RunSummary& summary,
                                double wall_seconds);

// Writes dir/name atomically: JSON pretty-printed (indent 2) or compact, with a final newline.
void write_run_json(const std::string& dir, const std::string& name, const nlohmann::json& j,
                    bool pretty = true);

// metrics.csv opened for appending, every row checked: a failed or short write (a full disk)
// truncates the file back to its last complete row and throws attn::Error naming it, so the file
// never holds a mangled row or a silent gap. A reader sees whole rows only, plus at most one
// row being written without its newline (core/runs/directory/run_dir.h drops that one).
// TensorBoard: the run's event file (run_events, core/runs/formats/tensorboard_events.h) gets
// the config and the file's rows at construction, then each row appended, and is synced with it.
class MetricsAppender {
 public:
  explicit MetricsAppender(const std::string& path);  // the file must exist (header written)
  ~MetricsAppender();
  MetricsAppender(const MetricsAppender&) = delete;
  MetricsAppender& operator=(const MetricsAppender&) = delete;
  void append(const std::string& row);
  // Flushes the rows to disk (at the end of a run, so a power loss cannot lose them).
  void sync();

 private:
  std::string path_;
  int fd_ = -1;
  int64_t good_size_ = 0;
  std::shared_ptr<TensorBoardEvents> events_;
};

// Where the window records its runs when no --runs-dir is given: $XDG_DATA_HOME/attnlab/runs,
// else $HOME/.local/share/attnlab/runs; "" when neither variable is set.
std::string default_runs_root();

// A new, unused run directory under root for a run named `name`: root/<name>-<YYYYMMDD-HHMMSS>
// (local time), with -2, -3, ... appended when that exists. Creates nothing.
std::string new_run_dir(const std::string& root, const std::string& name);

}  // namespace attn
