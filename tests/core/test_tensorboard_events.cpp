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
#include "tensorboard_helpers.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

using test::event_files;
using test::file_bytes;

uint32_t u32_at(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(s[at + i]);
  return v;
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
                                  std::to_string(::getpid()) + ".attnlab"));
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
    CHECK(file_bytes(p) == "user data");
  }
  CHECK(file_bytes(a) == tensorboard_record(file_bytes(a).substr(12, file_bytes(a).size() - 16)));
  CHECK(event_files(dir.path).size() == 4);
}

TEST_CASE("tensorboard: attnlab's event files are told apart by name; only they are removed") {
  test::ScopedTempDir dir("tensorboard");
  std::string ours, second;
  {
    TensorBoardEvents a(dir.path.string());
    TensorBoardEvents b(dir.path.string());  // the same second and process: ".1" appended
    ours = fs::path(a.path()).filename().string();
    second = fs::path(b.path()).filename().string();
  }
  CHECK(is_attnlab_event_file(ours));
  CHECK(is_attnlab_event_file(second));
  CHECK(second == ours + ".1");
  // TensorFlow's, PyTorch's and TensorBoard's own names, and look-alikes, are not ours.
  for (const char* other :
       {"events.out.tfevents.1700000000.host.123", "events.out.tfevents.1700000000.host.123.0.v2",
        "events.out.tfevents.1700000000.host.attnlab.123", "events.out.tfevents..attnlab",
        "events.out.tfevents.1.h.2.attnlab.x", "events.out.tfevents.1.h.2.attnlab.", "x.attnlab",
        "events.out.tfevents.1.h.2.attnlab.1.bak"}) {
    INFO(other);
    CHECK_FALSE(is_attnlab_event_file(other));
    std::ofstream(dir.path / other) << "someone else's";
  }
  // A link with our name (to a file of the user's) is not a file we wrote either.
  std::ofstream(dir.path / "target") << "the user's";
  fs::create_symlink(dir.path / "target", dir.path / "events.out.tfevents.1.h.2.attnlab");
  const auto removed = remove_attnlab_event_files(dir.path.string());
  CHECK(removed.size() == 2);
  CHECK_FALSE(fs::exists(dir.path / ours));
  CHECK_FALSE(fs::exists(dir.path / second));
  CHECK(fs::is_symlink(dir.path / "events.out.tfevents.1.h.2.attnlab"));
  CHECK(file_bytes(dir.path / "target") == "the user's");
  CHECK(file_bytes(dir.path / "events.out.tfevents.1700000000.host.123") == "someone else's");
  CHECK(event_files(dir.path).size() == 8);  // the 7 others of that prefix and the link
}

TEST_CASE("tensorboard: a run saved whole again keeps one event file, of its rows") {
  test::ScopedTempDir dir("tensorboard");
  const std::string d = dir.path.string();
  std::ofstream(dir.path / "config.json") << "{\"name\": \"x\"}\n";
  std::ofstream(dir.path / "metrics.csv") << "step,train_loss\n1,0.5\n";
  rewrite_run_events(d);
  std::ofstream(dir.path / "metrics.csv") << "step,train_loss\n1,0.5\n2,0.25\n";
  std::ofstream(dir.path / "events.out.tfevents.1.h.2") << "another writer's";
  const std::string second = rewrite_run_events(d);  // may reuse the first's name (same second)
  CHECK(event_files(dir.path).size() == 2);          // the new one and the other writer's
  CHECK(file_bytes(dir.path / "events.out.tfevents.1.h.2") == "another writer's");
  const std::string raw = file_bytes(second);
  size_t rows = 0;
  for (size_t at = 0; (at = raw.find("loss/train", at)) != std::string::npos; ++at) ++rows;
  CHECK(rows == 2);  // the second save's rows only: not the first file's row beside them
  CHECK(raw.find("config") != std::string::npos);
  // A damaged metrics.csv is refused before the file it would replace goes.
  std::ofstream(dir.path / "metrics.csv") << "step,train_loss\n1,abc\n";
  CHECK_THROWS_AS(rewrite_run_events(d), Error);
  CHECK(fs::exists(second));
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
