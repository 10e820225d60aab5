// The user's own probe input (Trainer::request_probe, TrainingSession::parse_probe,
// Task::parse_probe): the maps are those of a direct forward pass on the typed tokens, and bad
// text is refused with a message while the run goes on.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "core/base/error.h"
#include "core/training/session/session.h"
#include "core/training/trainer.h"
#include "helpers.h"

using namespace attn;
namespace fs = std::filesystem;
using test::in_state;
using test::wait_until;

TEST_CASE("a typed probe gives the maps of a direct forward pass on those tokens") {
  const fs::path dir = test::temp_dir("probe-maps");
  auto c = test::tiny_config();
  c.train.steps = 100000;
  Trainer t(c, test::fast_options());
  t.start();
  REQUIRE(wait_until([&] { return t.latest()->step >= 20; }));
  t.pause();
  REQUIRE(wait_until([&] { return in_state(t, TrainerState::Paused); }));
  const fs::path ckpt = dir / "run" / "checkpoint";  // Save writes a whole run in dir/run
  t.save_checkpoint(ckpt.string());
  REQUIRE(wait_until([&] { return fs::exists(ckpt / "state.json"); }));
  const std::vector<std::string> task_probe = t.latest()->probe_tokens;

  t.request_probe("3 1 4 1 5");
  REQUIRE(wait_until([&] { return t.latest()->probe_text == "3 1 4 1 5"; }));
  const auto snap = t.latest();
  CHECK(snap->probe_error.empty());
  CHECK(snap->probe_tokens == std::vector<std::string>{"3", "1", "4", "1", "5"});
  CHECK(snap->probe_tokens != task_probe);

  // The same weights, loaded independently, on the same five tokens.
  TrainingSession s(c);
  s.load(ckpt.string());
  const ProbeResult direct =
      probe_model(s.model(), torch::tensor(std::vector<int64_t>{3, 1, 4, 1, 5}).unsqueeze(0));
  const auto& maps = snap->attention_maps();
  REQUIRE(maps.size() == direct.maps.size());
  REQUIRE(maps.size() == static_cast<size_t>(c.model.layers * c.model.heads));
  for (size_t m = 0; m < maps.size(); ++m) {
    CHECK(maps[m].size == 5);
    REQUIRE(maps[m].weights.size() == direct.maps[m].weights.size());
    for (size_t i = 0; i < maps[m].weights.size(); ++i)
      CHECK(maps[m].weights[i] == doctest::Approx(direct.maps[m].weights[i]).epsilon(1e-5));
  }

  // Back to the task's own probe.
  t.request_probe("");
  REQUIRE(wait_until([&] { return t.latest()->probe_text.empty(); }));
  CHECK(t.latest()->probe_tokens == task_probe);
  fs::remove_all(dir);
}

TEST_CASE("bad probe text is refused with a message naming the culprit; training goes on") {
  auto c = test::tiny_config();
  c.train.steps = 100000;
  Trainer t(c, test::fast_options());
  t.request_probe("1 2");
  t.start();
  REQUIRE(wait_until([&] { return t.latest()->probe_text == "1 2" && t.latest()->step > 2; }));
  TrainingSession s(c);
  std::string long_probe;
  for (int64_t i = 0; i <= s.max_probe_length(); ++i) long_probe += "1 ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"3 x 1", "token 2 'x'"},
      {"1 " + std::to_string(s.task().vocab_size()), "past this task's vocabulary"},
      {long_probe, "at most " + std::to_string(s.max_probe_length())},
      {" , ", "empty"},
  };
  for (const auto& [text, want] : cases) {
    const int64_t before = t.latest()->step;
    t.request_probe(text);
    REQUIRE(wait_until([&] { return t.latest()->probe_error.find(want) != std::string::npos; }));
    CHECK(t.latest()->probe_text == "1 2");  // the accepted probe stays
    CHECK(t.latest()->probe_tokens == std::vector<std::string>{"1", "2"});
    REQUIRE(wait_until([&] { return t.latest()->step > before + 3; }));
    CHECK(t.state() == TrainerState::Running);
  }
  t.request_probe("2 1");  // a good probe clears the message
  REQUIRE(wait_until([&] { return t.latest()->probe_text == "2 1"; }));
  CHECK(t.latest()->probe_error.empty());
}

TEST_CASE("text tasks take characters of the corpus, and name the one that is not") {
  const fs::path dir = test::temp_dir("probe-text");
  {
    std::ofstream out(dir / "corpus.txt");
    for (int i = 0; i < 200; ++i) out << "the quick brown fox jumps over the lazy dog\n";
  }
  auto c = test::tiny_config("text");
  c.task.text_path = (dir / "corpus.txt").string();
  c.task.context = 16;
  TrainingSession s(c);
  const std::vector<int64_t> ids = s.parse_probe("lazy fox");
  std::string back;
  for (const int64_t id : ids) back += s.task().token_label(id);
  CHECK(back == "lazy\u2423fox");  // the corpus's own labels: a space is shown as U+2423
  try {
    s.parse_probe("fox\u00e9");
    FAIL("accepted a character outside the corpus");
  } catch (const Error& e) {
    const std::string what = e.what();
    CHECK(what.find("character 4") != std::string::npos);
    CHECK(what.find("U+00E9") != std::string::npos);
  }
  CHECK_THROWS_AS(s.parse_probe(std::string(17, 'a')), Error);  // context 16
  fs::remove_all(dir);
}
