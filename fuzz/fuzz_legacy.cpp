// libFuzzer entry point for attn::fuzz::legacy_one (fuzz/targets.h): see there for the contract.
#include <cstdint>

#include "fuzz/targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  attn::fuzz::legacy_one(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
