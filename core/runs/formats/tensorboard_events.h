// TensorBoard event files for attnlab's runs, written by attnlab itself (torch-free, no
// TensorFlow, no protobuf library): every run directory gets one as training goes, and `attnlab
// export --run DIR --tensorboard` writes one for an older run. TensorBoard (`tensorboard --logdir
// RUNS_ROOT`), `wandb sync --sync-tensorboard` and Aim's converter read them.
// Format (docs/guide/runs.md): a file of records, each
//   u64 length N (little-endian), u32 masked CRC32C of those 8 bytes, N bytes of data,
//   u32 masked CRC32C of the data; mask(c) = ((c >> 15) | (c << 17)) + 0xa282ead8.
// The data is a protobuf Event, hand-encoded here (only the fields attnlab writes):
//   Event{wall_time=1 double, step=2 int64, file_version=3 string, summary=5 Summary}
//   Summary{value=1 repeated Value}
//   Value{tag=1 string, simple_value=2 float, tensor=8 TensorProto, metadata=9 SummaryMetadata}
//   text: metadata.plugin_data{plugin_name=1 "text"}, tensor{dtype=1 DT_STRING (7),
//   tensor_shape=2 {} (a scalar), string_val=8 the text}.
// The first record is Event{wall_time, file_version "brain.Event:2"}.
// Tags (kept in step with docs/guide/runs.md and tests/e2e/tensorboard_events.py):
//   metrics.csv's columns: train_loss -> loss/train, eval_loss -> loss/eval, eval_accuracy ->
//   accuracy/eval, lr -> train/lr, steps_per_s -> train/steps_per_s, any other column C ->
//   metrics/C; an empty cell writes nothing. Head metrics (core/runs/records/view_records.h
//   HeadMetric): heads_<metric>/layer<l>/head<h>; a model's own metric (layer -1: conn's
//   spectral_radius, rho(I + C)) model/<metric>; a non-finite value writes nothing. The config:
//   text "config" at step 0, config.json in a Markdown json code block.
// Contract:
//  - A TensorBoardEvents creates a new file events.out.tfevents.<unix time>.<host>.<pid>.attnlab
//    in an existing directory, ".<n>" appended while that name is taken: it never opens,
//    truncates or overwrites a file it did not create (O_CREAT | O_EXCL). A resumed run writes a
//    new file. That name (is_attnlab_event_file) is how attnlab knows the files it wrote: a run
//    replaced (train --force) or saved again whole (the window's Save to a directory) loses
//    those, never another writer's event file.
//  - Every event is written to the file with one write(2) as it is added (no buffer to lose
//    when the process dies); sync() flushes the file to disk. A failed or short write truncates
//    the file back to its last whole record and throws attn::Error naming the file.
//  - Scalars are float32 (TensorBoard's simple_value): metrics.csv's values rounded to float.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/base/unique_fd.h"
#include "core/runs/records/view_records.h"

namespace attn {

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), continuing from `crc` (0 to start).
uint32_t crc32c(const void* data, size_t size, uint32_t crc = 0);
// TensorFlow's masked form of crc32c(data) (see the format above).
uint32_t masked_crc32c(const void* data, size_t size);
// One record: the framing around a serialized Event.
std::string tensorboard_record(const std::string& event);

using TensorBoardScalars = std::vector<std::pair<std::string, float>>;  // tag -> value
// Serialized Events (the message, without the record framing).
std::string tensorboard_version_event(double wall_time);
std::string tensorboard_scalars_event(double wall_time, int64_t step,
                                      const TensorBoardScalars& values);
std::string tensorboard_text_event(double wall_time, int64_t step, const std::string& tag,
                                   const std::string& text);

// The tag of a metrics.csv column, and of a head metric (see the tags above).
std::string metrics_column_tag(const std::string& column);
std::string head_metric_tag(const HeadMetric& metric);

// metrics.csv's rows as scalars, one entry per row (header first, as kMetricsHeader; a last row
// without its newline is one being written and is left out). Throws attn::Error naming `where`
// for a row whose step or value is not a number.
struct TensorBoardRow {
  int64_t step = 0;
  TensorBoardScalars values;
};
std::vector<TensorBoardRow> metrics_csv_scalars(const std::string& csv, const std::string& where);

// One event file this process created and appends to (closed with the object; not copyable).
class TensorBoardEvents {
 public:
  // Creates the new event file in `dir` (which must exist) and writes its version record.
  explicit TensorBoardEvents(const std::string& dir);

  const std::string& path() const { return path_; }
  void add_scalars(int64_t step, const TensorBoardScalars& values);
  void add_text(int64_t step, const std::string& tag, const std::string& text);
  // config.json's text as the text "config" at step 0.
  void add_config(const std::string& config_json);
  // Every head metric, one event per step (records come in step order).
  void add_head_metrics(const std::vector<HeadMetric>& metrics);
  // For the writer of a run's metrics.csv (MetricsAppender): the file's rows so far (a resumed
  // run's kept rows; every event file holds the whole run up to its end) and, from the same
  // directory, config.json when present; once per file. Later rows follow by add_metrics_row.
  void begin_metrics(const std::string& metrics_path);
  // One metrics.csv row (with or without its newline), in begin_metrics' header's columns.
  void add_metrics_row(const std::string& row);
  // Flushes the file to disk.
  void sync();

 private:
  void write_event(const std::string& event);
  std::string path_;
  UniqueFd fd_;
  int64_t good_size_ = 0;
  bool metrics_begun_ = false;
  std::vector<std::string> columns_;  // metrics.csv's header
};

// The event file of `dir` in this process, shared by the writers of one run (its metrics rows
// and its recorded views): opened (a new file) by the first user, closed with the last.
std::shared_ptr<TensorBoardEvents> run_events(const std::string& dir);

// Whether a file name is one TensorBoardEvents makes ("events.out.tfevents.<...>.attnlab" with an
// optional ".<n>"): TensorFlow's and PyTorch's writers never end a name that way.
bool is_attnlab_event_file(const std::string& name);
// Removes the regular files of `dir` that is_attnlab_event_file names (not links, nor anyone
// else's event files); returns their names. Throws attn::Error naming one it cannot remove.
std::vector<std::string> remove_attnlab_event_files(const std::string& dir);
// A run directory written whole (the window's Save to a directory, again and again): attnlab's
// earlier event files there go and one new file gets config.json and metrics.csv's rows, as a run
// trained there would (begin_metrics). metrics.csv is read and checked first: when it throws
// (attn::Error naming it), nothing was removed. Returns the new file's path.
std::string rewrite_run_events(const std::string& dir);

// A whole run in one new event file of `dir` (an older run: `attnlab export --tensorboard`):
// config.json's text, metrics.csv's rows and the head metrics. Returns the file's path.
std::string write_run_events(const std::string& dir, const std::string& config_json,
                             const std::string& metrics_csv,
                             const std::vector<HeadMetric>& head_metrics);

}  // namespace attn
