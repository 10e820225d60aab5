// Estimate before allocating: a command whose input asks for more memory than the machine has
// refuses with the estimate and what to shrink, instead of dying of bad_alloc (or the kernel's
// OOM killer) after gigabytes.
// Torch-free.
#pragma once
#include <cstdint>
#include <string>

namespace attn {

// MemAvailable from /proc/meminfo (what can be allocated without swapping), in bytes, or less
// when ATTNLAB_MEMORY_LIMIT caps it ("2G", "512M" or bytes: a share of a busy machine; tests);
// 0 where unknown (then nothing is refused).
uint64_t available_memory_bytes();

// "3.2 GB", "512 MB": one decimal for GB.
std::string format_bytes(uint64_t bytes);

// Throws attn::Error when `bytes` exceeds what is available: "<what> needs about X; this
// machine has Y available: <shrink>".
void require_memory(uint64_t bytes, const std::string& what, const std::string& shrink);

}  // namespace attn
