// A saved run as the window shows a live one: its checkpoint loaded on the CPU and probed, with
// the full curves of metrics.csv, the mechanisms' views over training (read_mechanism_frames) and
// the spectra of conn.json. What `attnlab export --run DIR` draws its figures from. Contract:
//  - snapshot_of_run() throws attn::Error naming the directory when it has no checkpoint (the
//    loss curves alone are still available from RunDirectory).
//  - The snapshot's step is the checkpoint's step; its attention maps, mechanism views and C are
//    computed at that step. probe_image >= 0 picks the test image of an image task.
#pragma once
#include <cstdint>
#include <memory>

#include "core/config/config.h"
#include "core/runs/directory/run_dir.h"
#include "core/runs/formats/safetensors.h"
#include "core/views/snapshot.h"

namespace attn {

std::shared_ptr<const Snapshot> snapshot_of_run(const RunDirectory& run, int64_t probe_image = -1);

// The checkpoint's tensors by their module names (named_parameters(), then named_buffers() such
// as conn's fixed "slots"), float32 on the CPU, and the checkpoint's step. Throws attn::Error as
// snapshot_of_run() does. docs/guide/python.md tabulates the names per mechanism.
std::vector<NamedTensor> weights_of_run(const RunDirectory& run, int64_t* step,
                                        std::vector<std::string>* buffer_names);

// The run's checkpoint as a safetensors file's bytes (core/runs/formats/safetensors.h): weights_of_run's
// tensors with the metadata a reader needs to rebuild the model (format "attnlab-weights-1",
// attnlab_version, the resolved config as JSON, step, run, buffers). What `attnlab export
// --weights` and the window's File > Export weights write. *tensors / *values: the counts.
std::string weights_file_of_run(const RunDirectory& run, int64_t* step = nullptr,
                                size_t* tensors = nullptr, int64_t* values = nullptr);

class TrainingSession;  // core/training/session/session.h

// A saved run's checkpoint loaded on the CPU into a session, for the commands that compute on
// its model (`attnlab analyze`, `attnlab eval`). Throws attn::Error naming the directory when it
// has no checkpoint, or what is wrong with the checkpoint.
class SavedSession {
 public:
  explicit SavedSession(const RunDirectory& run);
  ~SavedSession();
  SavedSession(const SavedSession&) = delete;
  SavedSession& operator=(const SavedSession&) = delete;
  TrainingSession& session() { return *session_; }
  const ExperimentConfig& config() const;
  int64_t step() const;
  int eval_batches() const;  // the run's eval set (train.eval_batches)

 private:
  std::unique_ptr<TrainingSession> session_;
};

// The loss curves of a run directory as a snapshot (no checkpoint needed).
std::shared_ptr<const Snapshot> curves_of_run(const RunDirectory& run);

}  // namespace attn
