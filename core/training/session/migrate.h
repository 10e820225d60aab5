// `attnlab migrate` (torch-free interface): converts a run's checkpoint from attnlab's old format
// (model.pt and optimizer.pt, TorchScript archives: opening one with LibTorch can run code from
// the file) to the current data-only one (model.safetensors, optimizer.safetensors, state.json
// format 2).
// Contract:
//  - checkpoint_format_of reads only state.json (never the archives).
//  - migrate_run reads the archives as data only (core/runs/formats/legacy_archive.h: their pickles and
//    storages, never their code/), so it needs no trust. It holds the run's lock
//    (core/runs/directory/run_lock.h), refuses a checkpoint/ holding entries attnlab did not write, and
//    writes the new checkpoint beside the old one, swapping it into place in one step once it is
//    complete: the old files are removed only after that succeeded (they are attnlab's own). Throws
//    attn::Error naming the run (a run not in the old format, a damaged checkpoint, another
//    writer).
#pragma once
#include <cstdint>
#include <string>

namespace attn {

struct CheckpointFormat {
  std::string checkpoint;  // DIR/checkpoint
  int version = 0;         // state.json's format_version (1 old, 2 current)
};

// The checkpoint of run directory `run` (or of a checkpoint directory itself) and its format.
// Throws attn::Error when there is none.
CheckpointFormat checkpoint_format_of(const std::string& run);

// Converts run `run`'s old-format checkpoint (see the contract); returns the checkpoint's step.
int64_t migrate_run(const std::string& run);

// Tests only: rewrites run `run`'s current checkpoint in the old format (writing runs nothing),
// to make honest old runs for the tests of migrate and of the refusals. Holds the run's lock.
int64_t downgrade_run_for_tests(const std::string& run);

}  // namespace attn
