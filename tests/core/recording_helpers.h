// Training a small run headless and reading what it recorded: the steps the views.rec tests
// (test_run_recording.cpp, test_recorded_attribution.cpp) share. Call from inside a TEST_CASE:
// the REQUIREs stop the test case that calls them.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "core/runs/records/view_records.h"
#include "core/training/headless/headless.h"
#include "core/training/session/session.h"
#include "core/training/trainer.h"
#include "file_helpers.h"
#include "helpers.h"

namespace attn::test {

// tiny_config(task) as a Connection Transformer of 6 slots and 2 steps (heads 1: it has none).
inline attn::ExperimentConfig tiny_conn_config(const std::string& task) {
  attn::ExperimentConfig c = tiny_config(task);
  c.model.architecture = "conn";
  c.model.heads = 1;
  c.model.conn.slots = 6;
  c.model.conn.steps = 2;
  return c;
}

// The options of a window's Trainer (fast_options) that records its runs under `root`.
inline attn::TrainerOptions recording_options(const std::string& root) {
  attn::TrainerOptions o = fast_options();
  o.runs_root = root;
  return o;
}

// A runs root that cannot be created: it lies under root/file, which this makes a plain file.
inline std::string blocked_runs_root(const std::filesystem::path& root) {
  { std::ofstream(root / "file") << "x"; }
  return (root / "file" / "runs").string();
}

// Trains `c` as `attnlab train --out dir` does, on one thread (so two runs of one config give
// the same rows).
inline void train_into(const attn::ExperimentConfig& c, const std::filesystem::path& dir) {
  attn::HeadlessOptions h;
  h.out_dir = dir.string();
  h.threads = 1;
  attn::train_headless(c, h);
}

// A trained run's views.rec: its path, its index, and its first and last records decoded at the
// run config's shape.
struct RecordedRun {
  std::string rec;
  std::vector<attn::ViewIndexEntry> index;
  attn::ViewRecord first, last;
};

// Trains `c` into `dir` (train_into) and reads its views.rec, which must hold `records` records.
inline RecordedRun train_recorded(const attn::ExperimentConfig& c, const std::filesystem::path& dir,
                                  size_t records) {
  train_into(c, dir);
  RecordedRun r;
  r.rec = (dir / attn::kViewRecordsFile).string();
  r.index = attn::index_view_records(r.rec);
  REQUIRE(r.index.size() == records);
  r.first = attn::read_view_record(r.rec, r.index.front(), attn::view_shape_of(c));
  r.last = attn::read_view_record(r.rec, r.index.back(), attn::view_shape_of(c));
  return r;
}

// The run's final checkpoint (dir/checkpoint) loaded into a session on the CPU, as `attnlab
// export` loads it.
inline std::unique_ptr<attn::TrainingSession> checkpoint_session(const std::filesystem::path& dir) {
  const std::string checkpoint = (dir / "checkpoint").string();
  attn::ExperimentConfig cc = attn::TrainingSession::checkpoint_config(checkpoint);
  cc.device = "cpu";
  auto session = std::make_unique<attn::TrainingSession>(cc);
  session->load(checkpoint);
  return session;
}

}  // namespace attn::test
