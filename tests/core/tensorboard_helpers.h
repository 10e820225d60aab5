// Reading TensorBoard event files back: what the event writer's tests
// (test_tensorboard_events.cpp, torch-free) and the recording's (test_tensorboard_recording.cpp)
// share. Torch-free. event_records REQUIREs: call it from inside a TEST_CASE.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/runs/formats/tensorboard_events.h"
#include "file_helpers.h"

namespace attn::test {

// The files in `dir` named as event files (events.out.tfevents.*), in directory order.
inline std::vector<std::filesystem::path> event_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().rfind("events.out.tfevents.", 0) == 0)
      files.push_back(e.path());
  return files;
}

// The events of an event file, each record's length and both CRCs checked.
inline std::vector<std::string> event_records(const std::filesystem::path& path) {
  const std::string raw = file_bytes(path);
  std::vector<std::string> events;
  for (size_t at = 0; at < raw.size();) {
    REQUIRE(at + 12 <= raw.size());
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = n << 8 | static_cast<unsigned char>(raw[at + i]);
    REQUIRE(at + 16 + n <= raw.size());
    const std::string event = raw.substr(at + 12, n);
    REQUIRE(tensorboard_record(event) == raw.substr(at, 16 + n));  // both masked CRCs
    events.push_back(event);
    at += 16 + n;
  }
  return events;
}

}  // namespace attn::test
