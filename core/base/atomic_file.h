// Crash-safe files: every file and directory attnlab writes for the user (checkpoints, run
// directories, exports) goes through here, so a crash or SIGKILL in the middle of a write
// leaves the previous version or the new one, never a partial file.
// Contract:
//  - Only regular files are replaced: a path naming a directory, a symbolic link, a FIFO, a
//    socket or a device is refused with attn::Error before anything is written.
//  - write_file_atomic: writes a temporary sibling "<path>.tmp.<pid>", flushes it to disk
//    (fsync), renames it over path, then syncs the directory. On failure the temporary is
//    removed and attn::Error names the path and the reason.
//  - write_files_atomic: several files all-or-nothing: every one is written to its temporary
//    sibling and flushed first; only then are they renamed into place, last to first (the
//    first, the main file, appears last). On failure the temporaries are removed and so are
//    the files this call had already created (a file it replaced cannot be restored); attn::Error
//    names the path.
//  - replace_directory: `staged` (a complete directory) takes the place of `target` in one
//    step (renameat2 RENAME_EXCHANGE where the file system has it), then the old contents are
//    removed. Where it has not, target is renamed to "<target>.old-<pid>" first, and
//    recover_directory() (called before every read of a checkpoint) puts such a leftover back
//    if target is missing.
// Torch-free; paths are plain strings.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace attn {

void write_file_atomic(const std::string& path, const std::string& text);
// (path, contents) pairs; see the contract above.
void write_files_atomic(const std::vector<std::pair<std::string, std::string>>& files);
// Flushes a file that was written by other means (e.g. torch::save) to disk.
void sync_file(const std::string& path);
void replace_directory(const std::string& staged, const std::string& target);
// If `target` does not exist but an interrupted replace_directory left "<target>.old-<pid>",
// renames the newest such leftover back to target. Returns whether it did.
bool recover_directory(const std::string& target);
// Removes what writers of `target` killed mid-write left beside it: "<target>.tmp.<pid>" and
// "<target>.tmp-<pid>" of processes that no longer run (and "<target>.old-<pid>" once target
// exists again). Called before each checkpoint save, so killed saves do not pile up.
void remove_stale_siblings(const std::string& target);
// "<path>.tmp.<pid>": the temporary name write_file_atomic uses (tests look for leftovers).
std::string temporary_path(const std::string& path);
// Writes all `size` bytes to fd, retrying short writes and EINTR. Returns 0, or the errno of
// the write that failed (ENOSPC for a full disk; a write that stores nothing counts as ENOSPC).
int write_all(int fd, const char* data, size_t size);

}  // namespace attn
