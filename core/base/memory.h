// Estimate before allocating: a command whose input asks for more memory than the machine has
// refuses with the estimate and what to shrink, instead of dying of bad_alloc (or the kernel's
// OOM killer) after gigabytes.
// Torch-free.
#pragma once
#include <cstdint>
#include <string>

namespace attn {

// MemAvailable from /proc/meminfo (what can be allocated without swapping), in bytes, or less
// when ATTNLAB_MEMORY_LIMIT caps it (a share of a busy machine; tests); 0 where unknown (then
// nothing is refused). Throws attn::Error when ATTNLAB_MEMORY_LIMIT is set but not a size.
uint64_t available_memory_bytes();

// A size as ATTNLAB_MEMORY_LIMIT takes it: a positive decimal number (fractions allowed) and an
// optional unit, with or without a space between: B, K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB,
// any case. Units are binary: K = 1024 bytes, G = 2^30 ("2G" = "2 GiB" = 2147483648); no unit
// means bytes. Throws attn::Error naming `name` and the accepted forms for anything else
// (garbage, 0, a negative number, a size beyond 2^64 bytes).
uint64_t parse_memory_size(const std::string& text, const std::string& name);

// ATTNLAB_MEMORY_LIMIT in bytes; 0 when unset or empty. Throws like parse_memory_size, so a
// command can refuse a malformed value at start instead of ignoring it.
uint64_t memory_limit_from_env();

// "3.2 GB", "512 MB": one decimal for GB.
std::string format_bytes(uint64_t bytes);

// The process's resident memory now (VmRSS of /proc/self/status), in bytes; 0 where unknown.
uint64_t resident_memory_bytes();

// Throws attn::Error when `bytes` more do not fit: with ATTNLAB_MEMORY_LIMIT set, the limit
// bounds the process's peak resident memory, so `bytes` plus what the process holds already
// (resident_memory_bytes) must stay within it; without it, `bytes` must stay within MemAvailable.
// "<what> needs about X; this machine has Y available (...): <shrink>". Nothing is refused
// where neither is known.
void require_memory(uint64_t bytes, const std::string& what, const std::string& shrink);

// Keeps freed blocks in glibc's heap instead of handing them back to the kernel (mmap threshold
// 32 MiB, trim threshold 256 MiB), unless the environment sets MALLOC_MMAP_THRESHOLD_ or
// MALLOC_TRIM_THRESHOLD_. Call once at the start of main, before any thread: attnlab's main
// and every benchmark that times training, so a benchmark measures the allocator the program
// runs with. Does nothing outside glibc.
void keep_freed_memory_in_heap();

// The allocator setting keep_freed_memory_in_heap() picks from this process's environment: "kept
// heap" (attnlab's, above), "environment: MALLOC_MMAP_THRESHOLD_=131072" (the environment's knobs,
// as set), or "glibc default" outside glibc. It reads the environment only, so "kept heap" is
// true where main called keep_freed_memory_in_heap() (attnlab and the benchmarks do). A memory
// figure is only comparable with one taken under the same setting (bench-step prints it).
std::string allocator_setting();

}  // namespace attn
