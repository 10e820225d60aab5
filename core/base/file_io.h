// Reading the user's files without hanging or exhausting memory: every file attnlab reads from a
// run directory, a config or a matrix goes through read_regular_file.
// Contract:
//  - read_regular_file returns the whole contents of a regular file (symlinks followed). It
//    refuses with attn::Error naming the path: a missing file, a directory, a FIFO, a socket or
//    a device (a FIFO would block, /dev/zero never ends), and a file over max_bytes (the limit
//    is in the message, with what to do). The file is opened non-blocking, so naming a FIFO
//    never hangs even if it appears between a check and the open.
//  - regular_file_or_absent: true for a regular file, false when nothing is there; throws the
//    same message as read_regular_file for anything else (readers of optional files).
// Torch-free, json-free.
#pragma once
#include <cstdint>
#include <string>

namespace attn {

// 1 GiB: far above any config, metrics.csv or matrix attnlab writes, far below what would take
// the machine's memory.
inline constexpr uint64_t kMaxReadBytes = uint64_t(1) << 30;

std::string read_regular_file(const std::string& path, uint64_t max_bytes = kMaxReadBytes);
bool regular_file_or_absent(const std::string& path);

}  // namespace attn
