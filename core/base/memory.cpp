#include "core/base/memory.h"

#include <cstdio>
#include <cstring>

#include "core/base/error.h"

namespace attn {

uint64_t available_memory_bytes() {
  std::FILE* f = std::fopen("/proc/meminfo", "r");
  if (!f) return 0;
  char line[256];
  uint64_t kib = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "MemAvailable: %lu kB", &kib) == 1) break;
  std::fclose(f);
  return kib * 1024;
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
