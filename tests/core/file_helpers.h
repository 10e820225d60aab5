// Reading a file back whole: what the suites that check files they or attnlab wrote share.
// Torch-free.
#pragma once

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace attn::test {

// The bytes of a file ("" when it cannot be read).
inline std::string file_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A JSON file, parsed (throws nlohmann's parse error when it is not JSON).
inline nlohmann::json json_of(const std::filesystem::path& p) {
  return nlohmann::json::parse(file_bytes(p));
}

}  // namespace attn::test
