#include "core/base/memory.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/base/error.h"

namespace attn {

uint64_t parse_memory_size(const std::string& text, const std::string& name) {
  auto refuse = [&](const std::string& why) -> uint64_t {
    throw Error(name + "=\"" + text + "\" " + why +
                ": give a size such as 2G, 512M, \"1.5 GiB\" or 1048576 (bytes); units B, K, "
                "M, G, T, optionally followed by B or iB, binary (K = 1024)");
  };
  size_t i = 0;
  const size_t n = text.size();
  while (i < n && text[i] == ' ') ++i;
  const size_t number_start = i;
  size_t digits = 0;
  while (i < n && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, ++digits;
  if (i < n && text[i] == '.') {
    ++i;
    while (i < n && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, ++digits;
  }
  if (digits == 0) return refuse("is not a size");
  const double value = std::strtod(text.substr(number_start, i - number_start).c_str(), nullptr);
  while (i < n && text[i] == ' ') ++i;
  std::string unit;
  for (; i < n && text[i] != ' '; ++i)
    unit += static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
  while (i < n && text[i] == ' ') ++i;
  if (i != n) return refuse("is not a size");
  double scale = 0;
  const char* units[] = {"", "K", "M", "G", "T"};
  for (int k = 0; k < 5; ++k) {
    const std::string u = units[k];
    if (unit == u || unit == u + "B" || (k > 0 && unit == u + "IB"))
      scale = std::ldexp(1.0, 10 * k);
  }
  if (scale == 0) return refuse("has an unknown unit '" + unit + "'");
  const double bytes = value * scale;
  if (!(bytes >= 1)) return refuse("is not a positive size");
  if (!(bytes < 18446744073709551616.0)) return refuse("is larger than 2^64 bytes");
  return static_cast<uint64_t>(bytes);
}

uint64_t memory_limit_from_env() {
  const char* env = std::getenv("ATTNLAB_MEMORY_LIMIT");
  if (!env || !*env) return 0;
  return parse_memory_size(env, "ATTNLAB_MEMORY_LIMIT");
}

namespace {

// The first line of a /proc file that `format` ("MemAvailable: %lu kB") reads, in bytes; 0 where
// unknown.
uint64_t proc_kib_line(const char* path, const char* format) {
  unsigned long kib = 0;
  if (std::FILE* f = std::fopen(path, "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, format, &kib) == 1) break;
    std::fclose(f);
  }
  return uint64_t(kib) * 1024;
}

// MemAvailable alone, in bytes; 0 where unknown.
uint64_t mem_available() {
  return proc_kib_line("/proc/meminfo", "MemAvailable: %lu kB");
}

}  // namespace

uint64_t available_memory_bytes() {
  const uint64_t available = mem_available(), limit = memory_limit_from_env();
  if (limit && (!available || limit < available)) return limit;
  return available;
}

std::string format_bytes(uint64_t bytes) {
  char buf[32];
  if (bytes >= (uint64_t(1) << 30))
    std::snprintf(buf, sizeof buf, "%.1f GB", bytes / double(uint64_t(1) << 30));
  else
    std::snprintf(buf, sizeof buf, "%lu MB", static_cast<unsigned long>(bytes >> 20));
  return buf;
}

uint64_t resident_memory_bytes() {
  return proc_kib_line("/proc/self/status", "VmRSS: %lu kB");
}

void require_memory(uint64_t bytes, const std::string& what, const std::string& shrink) {
  const uint64_t limit = memory_limit_from_env();
  if (limit) {
    // The limit is the process's: what it holds already counts against it.
    const uint64_t held = resident_memory_bytes();
    if (bytes > limit || held > limit - bytes)
      throw Error(what + " needs about " + format_bytes(bytes) + " on top of the " +
                  format_bytes(held) + " attnlab holds; this machine has " + format_bytes(limit) +
                  " available (ATTNLAB_MEMORY_LIMIT): " + shrink);
  }
  const uint64_t available = mem_available();
  if (available == 0 || bytes <= available) return;
  throw Error(what + " needs about " + format_bytes(bytes) + "; this machine has " +
              format_bytes(available) + " available (MemAvailable): " + shrink);
}

// glibc hands freed blocks above its (dynamic) mmap threshold back to the kernel, trims the heap's
// top, and maps the memory again at the next training step: on copy.json a third of the run was
// system time, and a probe between steps (views.rec at every step) made it worse, halving
// steps/s. Kept in the heap: system time 2.0 s -> 0.4 s, 200 steps 10.4-12.3 s -> 6.5-9.0 s,
// peak RSS +3% (2026-11-27, docs/guide/performance.md). An environment that sets either knob
// (MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_) keeps its own. The benchmarks call it too:
// without it, bench_recording measured records costing 11% of steps/s on the default allocator
// while 2% of the time was inside them (2026-11-30).
void keep_freed_memory_in_heap() {
#ifdef __GLIBC__
  if (!std::getenv("MALLOC_MMAP_THRESHOLD_") && !std::getenv("MALLOC_TRIM_THRESHOLD_")) {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest allowed on 64-bit
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
  }
#endif
}

std::string allocator_setting() {
#ifdef __GLIBC__
  std::string env;
  for (const char* knob : {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"})
    if (const char* v = std::getenv(knob))
      env += (env.empty() ? "" : " ") + std::string(knob) + "=" + v;
  return env.empty() ? "kept heap" : "environment: " + env;
#else
  return "glibc default";
#endif
}

}  // namespace attn
