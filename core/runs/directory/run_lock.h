// One writer per run directory. Every process that writes a run directory (`attnlab train`, a
// sweep cell, the window) holds an advisory lock on DIR/.attnlab.lock for as long as it writes;
// a second writer is refused with the holder's pid and what it is doing, or waits for it.
// Contract:
//  - RunDirLock(dir, what, wait) creates dir if needed and takes the lock (flock, so it is
//    released when the holder exits or is killed: no stale locks). The lock file then holds
//    "pid <pid>\n<what>\n". Without `wait`, a held lock throws attn::Error naming dir, the
//    holder's pid and its `what`; with `wait` it blocks until the holder is done.
//  - Readers (compare, export, the window following a run) never lock.
//  - A lock is per open file, so a process must not lock the same directory twice.
// Torch-free.
#pragma once
#include <string>

namespace attn {

inline constexpr const char* kRunLockName = ".attnlab.lock";

class RunDirLock {
 public:
  RunDirLock(const std::string& dir, const std::string& what, bool wait);
  ~RunDirLock();
  RunDirLock(const RunDirLock&) = delete;
  RunDirLock& operator=(const RunDirLock&) = delete;

  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  int fd_ = -1;
};

// Who holds dir's lock now ("pid 123: attnlab train"), or "" when nobody does.
std::string run_lock_holder(const std::string& dir);

// Whether dir's lock is held now by process `pid` (its lock file names that pid). A sweep's child
// trains its cell under the sweep's lock only when this holds for its parent: an environment
// variable alone would turn any process's lock off.
bool run_lock_held_by(const std::string& dir, long pid);

}  // namespace attn
