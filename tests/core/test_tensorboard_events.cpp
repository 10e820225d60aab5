// attnlab's TensorBoard event writer (core/runs/formats/tensorboard_events.h): its CRC32C against
// the standard check values, the record framing, files it never overwrites, and the metrics.csv
// rows it refuses. The events themselves are decoded by an independent reader in
// tests/e2e/tensorboard_events.py.
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/base/error.h"
#include "core/runs/formats/tensorboard_events.h"
#include "temp_dir.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

uint32_t u32_at(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(s[at + i]);
  return v;
}

std::vector<fs::path> event_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("events.out.tfevents.", 0) == 0)
      files.push_back(e.path());
  return files;
}

}  // namespace

TEST_CASE("tensorboard: crc32c matches the standard check values") {
  const char* check = "123456789";
  CHECK(crc32c(check, 9) == 0xE3069283u);  // the CRC-32C catalogue's check value
  const std::string zeros(32, '\0'), ones(32, '\xff');
  CHECK(crc32c(zeros.data(), zeros.size()) == 0x8A9136AAu);  // RFC 3720 B.4
  CHECK(crc32c(ones.data(), ones.size()) == 0x62A8AB43u);
  CHECK(crc32c(check + 4, 5, crc32c(check, 4)) == 0xE3069283u);  // continued in pieces
  const uint32_t c = 0xE3069283u;
  CHECK(masked_crc32c(check, 9) == ((c >> 15) | (c << 17)) + 0xa282ead8u);
}

TEST_CASE("tensorboard: a record frames the event with its length and both masked CRCs") {
  const std::string event = tensorboard_version_event(1.5);
  const std::string record = tensorboard_record(event);
  REQUIRE(record.size() == 8 + 4 + event.size() + 4);
  uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = length << 8 | static_cast<unsigned char>(record[i]);
  CHECK(length == event.size());
  CHECK(u32_at(record, 8) == masked_crc32c(record.data(), 8));
  CHECK(record.substr(12, event.size()) == event);
  CHECK(u32_at(record, 12 + event.size()) == masked_crc32c(event.data(), event.size()));
  // Event{wall_time=1 (tag 0x09) 1.5, file_version=3 (tag 0x1a) "brain.Event:2"}
  const std::string expected =
      std::string("\x09\x00\x00\x00\x00\x00\x00\xf8\x3f", 9) + "\x1a\x0d" + "brain.Event:2";
  CHECK(event == expected);
}

TEST_CASE("tensorboard: a new event file never replaces a file that is there") {
  test::ScopedTempDir dir("tensorboard");
  char host[256] = "localhost";
  REQUIRE(::gethostname(host, sizeof host - 1) == 0);
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  // A user's files at the names of this second and the next (the writer's own names).
  std::vector<fs::path> planted;
  for (int64_t t = now; t <= now + 1; ++t) {
    planted.push_back(dir.path / ("events.out.tfevents." + std::to_string(t) + "." + host + "." +
                                  std::to_string(::getpid())));
    std::ofstream(planted.back()) << "user data";
  }
  std::string a, b;
  {
    TensorBoardEvents first(dir.path.string());
    TensorBoardEvents second(dir.path.string());  // the same second: a name of its own
    a = first.path();
    b = second.path();
  }
  CHECK(a != b);
  for (const auto& p : planted) {
    CHECK(a != p.string());
    CHECK(b != p.string());
    CHECK(slurp(p) == "user data");
  }
  CHECK(slurp(a) == tensorboard_record(slurp(a).substr(12, slurp(a).size() - 16)));
  CHECK(event_files(dir.path).size() == 4);
}

TEST_CASE("tensorboard: the writers of one run share its file; a later run opens a new one") {
  test::ScopedTempDir dir("tensorboard");
  std::string first;
  {
    auto a = run_events(dir.path.string());
    auto b = run_events((dir.path / ".").string());
    CHECK(a.get() == b.get());
    first = a->path();
  }
  auto c = run_events(dir.path.string());
  CHECK(c->path() != first);
  CHECK(event_files(dir.path).size() == 2);
}

TEST_CASE("tensorboard: metrics.csv rows become tagged scalars; a bad row is refused by name") {
  const auto rows = metrics_csv_scalars(
      "step,train_loss,eval_loss,eval_accuracy,lr,steps_per_s,rho\n"
      "10,2.5,2.25,0.5,0.001,,1.25\n20,1,,,,3,\n30,1",  // the last row is being written
      "m.csv");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].step == 10);
  const TensorBoardScalars expected = {{"loss/train", 2.5f},
                                       {"loss/eval", 2.25f},
                                       {"accuracy/eval", 0.5f},
                                       {"train/lr", 0.001f},
                                       {"metrics/rho", 1.25f}};
  CHECK(rows[0].values == expected);
  CHECK(rows[1].values == TensorBoardScalars{{"loss/train", 1.0f}, {"train/steps_per_s", 3.0f}});
  const auto refused = [](const std::string& csv, const std::string& what) {
    try {
      metrics_csv_scalars(csv, "dir/metrics.csv");
      FAIL("accepted: " << csv);
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find("dir/metrics.csv") != std::string::npos);
      CHECK(std::string(e.what()).find(what) != std::string::npos);
    }
  };
  refused("step,train_loss\nx,1\n", "the step 'x'");
  refused("step,train_loss\n1,abc\n", "train_loss 'abc'");
  refused("step,train_loss\n1,2,3\n", "3 cells");
  refused("loss,step\n1,2\n", "header");
}

TEST_CASE("tensorboard: head metric tags, a model's own metric under model/") {
  CHECK(head_metric_tag({5, 1, 3, "entropy", 0.5}) == "heads_entropy/layer1/head3");
  CHECK(head_metric_tag({5, -1, -1, "spectral_radius", 0.9}) == "model/spectral_radius");
  CHECK(metrics_column_tag("steps_per_s") == "train/steps_per_s");
}
