// The Help menu's experiment picker: one note per shipped experiment, none for a config that
// does not exist, each naming its outcome.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "app/gui/help/experiment_notes.h"

namespace fs = std::filesystem;
using attn::gui::experiment_note;
using attn::gui::experiment_notes;

TEST_CASE("every shipped config has exactly one note, and every note a shipped config") {
  const fs::path dir = fs::path(ATTN_SOURCE_DIR) / "assets" / "configs";
  std::set<std::string> shipped, noted;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".json")
      shipped.insert(e.path().filename().string());
  REQUIRE(shipped.size() >= 20);
  for (const auto& n : experiment_notes()) {
    CHECK_MESSAGE(noted.insert(n.file).second, "two notes for ", n.file);
    CHECK_MESSAGE(shipped.count(n.file) == 1, n.file, " is not in assets/configs");
    CHECK(std::string(n.sentence).size() > 30);
  }
  for (const std::string& f : shipped) CHECK_MESSAGE(noted.count(f) == 1, f, " has no note");
  CHECK(experiment_note("no-such.json") == nullptr);
}

TEST_CASE("the experiments meant to fail say so and why") {
  for (const auto& n : experiment_notes()) {
    const std::string s = n.sentence;
    if (n.meant_to_fail)
      CHECK_MESSAGE(
          (s.find("fail") != std::string::npos || s.find("prevents") != std::string::npos), n.file);
  }
  const auto* gap = experiment_note("copy_gap_ky.json");
  REQUIRE(gap != nullptr);
  CHECK(gap->meant_to_fail);
  // Chance on copy is a uniform guess over the task's vocabulary: ln(vocab) nats.
  std::ifstream in(fs::path(ATTN_SOURCE_DIR) / "assets" / "configs" / "copy_gap_ky.json");
  const int vocab = nlohmann::json::parse(in)["task"]["vocab"];
  char chance[16];
  std::snprintf(chance, sizeof chance, "%.2f", std::log(static_cast<double>(vocab)));
  CHECK(std::string(gap->sentence).find(chance) != std::string::npos);
}
