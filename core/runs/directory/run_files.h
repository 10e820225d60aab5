// What a run directory consists of, and how attnlab tells its own runs from a user's files.
// Contract:
//  - A directory is an attnlab run only when it holds attnlab's marker, kRunMarkerName (written by
//    write_run_config, core/runs/directory/run_writer.h, before any other run file), or, for runs
//    written before the marker existed, a checkpoint/state.json whose format is attnlab's or a
//    summary.json that names an attnlab version and a config hash. A config.json alone makes
//    nothing a run.
//  - kRunFiles are the only names a run writes at its top level, kCheckpointFiles the only ones
//    inside checkpoint/. Replacing a run (--force) removes exactly those (and the temporaries of
//    writes attnlab was killed in), never a subdirectory, never a file of another name: a nested
//    run, a user's notes or a folder inside checkpoint/ are left where they are.
//  - Kept checkpoints (train.keep_checkpoints) are folders kept_checkpoint_dir(dir, N) =
//    dir/checkpoints/step-<N> (N in decimal, no padding), each laid out as checkpoint/ is.
//    Replacing a run removes their kCheckpointFiles, then each folder and checkpoints/ once empty;
//    any other entry of checkpoints/ (or of a step-<N> folder) stays.
// Torch-free.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

inline constexpr const char* kRunMarkerName = ".attnlab-run";
// The top-level files a run writes (besides the marker and the lock), and checkpoint/'s.
// connections.json: ky's curves as runs wrote them before mechanism_views.json (core/views/
// mechanism_view.h), still attnlab's.
inline constexpr const char* kRunFiles[] = {
    "config.json",          "metrics.csv",      "summary.json", "views.rec",
    "mechanism_views.json", "connections.json", "conn.json",    "C.csv"};
// model.pt and optimizer.pt: the old format's (`attnlab migrate` converts them), still attnlab's.
inline constexpr const char* kCheckpointFiles[] = {"model.safetensors", "optimizer.safetensors",
                                                   "state.json", "model.pt", "optimizer.pt"};

// The folder of kept checkpoints in a run directory, and the one kept at `step`.
inline constexpr const char* kKeptCheckpointsDir = "checkpoints";
std::string kept_checkpoint_dir(const std::string& dir, int64_t step);

// Whether dir is an attnlab run (see the contract).
bool is_run_directory(const std::string& dir);

// The run file names present in dir (top level, plus "checkpoint/" when that exists), whoever
// wrote them: a directory that has any is no place for a new run unless it is attnlab's.
std::vector<std::string> run_files_present(const std::string& dir);

// Entries of dir/checkpoint that are not attnlab's checkpoint files (nor temporaries of them):
// a checkpoint save replaces the whole directory, so such entries must be moved away first.
std::vector<std::string> foreign_checkpoint_entries(const std::string& dir);
// The same for each kept checkpoint's folder, dir/checkpoints/step-<N> (named relative to dir:
// "checkpoints/step-5/notes.txt"), which a save at step N replaces whole.
std::vector<std::string> foreign_kept_checkpoint_entries(const std::string& dir);

// Writes the marker (creating dir): this directory is an attnlab run. The marker also holds the
// run's identity, "run_id" (32 random hex digits): made when the marker is first written and kept
// by every later write (a resume), so that a file recorded by another run (views.rec,
// core/runs/records/view_records.h) is told apart from this run's. Returns the identity. Throws
// attn::Error.
std::string mark_run_directory(const std::string& dir);
// The run's identity from its marker; "" when it has none (no marker, or a run written before
// identities existed). Never throws.
std::string run_identity(const std::string& dir);

// Removes one run's files from dir: summary.json first (the mark of a finished run), then
// checkpoint/state.json (of a resumable one), then the other kRunFiles, checkpoint/'s files,
// the temporaries of killed writes and attnlab's TensorBoard event files (is_attnlab_event_file);
// checkpoint/ itself only when it is then empty; the kept checkpoints likewise (see the contract).
// Nothing else: not the marker, not the lock, no other file (another writer's event file included),
// no subdirectory. The caller holds the lock. Throws attn::Error naming the file it could not
// remove.
void clear_run_files(const std::string& dir);

// "config.json, metrics.csv and checkpoint/" for messages.
std::string join_file_names(const std::vector<std::string>& names);

}  // namespace attn
