#include "core/base/memory.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/base/error.h"

namespace attn {

namespace {

// ATTNLAB_MEMORY_LIMIT as bytes ("2G", "512M", "1048576"); 0 when unset or unreadable.
uint64_t memory_limit() {
  const char* env = std::getenv("ATTNLAB_MEMORY_LIMIT");
  if (!env || !*env) return 0;
  char* end = nullptr;
  const double v = std::strtod(env, &end);
  if (end == env || !(v > 0)) return 0;
  const char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(*end)));
  const double scale = unit == 'G'   ? 1024.0 * 1024 * 1024
                       : unit == 'M' ? 1024.0 * 1024
                       : unit == 'K' ? 1024.0
                                     : 1.0;
  return static_cast<uint64_t>(v * scale);
}

}  // namespace

uint64_t available_memory_bytes() {
  uint64_t kib = 0;
  if (std::FILE* f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "MemAvailable: %lu kB", &kib) == 1) break;
    std::fclose(f);
  }
  const uint64_t available = kib * 1024, limit = memory_limit();
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

void require_memory(uint64_t bytes, const std::string& what, const std::string& shrink) {
  const uint64_t available = available_memory_bytes();
  if (available == 0 || bytes <= available) return;
  throw Error(what + " needs about " + format_bytes(bytes) + "; this machine has " +
              format_bytes(available) + " available: " + shrink);
}

}  // namespace attn
