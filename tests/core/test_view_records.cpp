// views.rec (core/runs/view_records.h) and the head metrics (core/analysis/head_metrics.h):
// round trips, torn and damaged records, the size bound, resumption, and the metrics against
// direct formulas on hand-made maps.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "core/analysis/head_metrics.h"
#include "core/base/error.h"
#include "core/runs/view_records.h"
#include "temp_dir.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

using TempDir = test::ScopedTempDir;

// A record whose every number depends on the step, so a mix-up shows.
ViewRecord record_at(int64_t step, int size = 5, int layers = 2, int heads = 2) {
  ViewRecord r;
  r.step = step;
  r.layers = layers;
  r.heads = heads;
  for (int i = 0; i < size; ++i) r.probe_tokens.push_back(i == 2 ? " " : std::to_string(i));
  std::mt19937 rng(static_cast<uint32_t>(step) * 7919u + 1);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int l = 0; l < layers; ++l)
    for (int h = 0; h < heads; ++h) {
      AttentionMap m{l, h, size, {}};
      for (int k = 0; k < size * size; ++k) m.weights.push_back(u(rng));
      r.maps.push_back(std::move(m));
    }
  ConnectionCurves c;
  c.layer = 1, c.heads = heads, c.window = 3, c.query_slot = 2, c.causal = true;
  c.edges = "masked";
  for (int k = 0; k < 4; ++k) c.t.push_back(k / 3.0f);
  for (int k = 0; k < heads * 4; ++k) c.g.push_back(u(rng) - 0.5f);
  for (int k = 0; k < heads * 3; ++k) c.slot_g.push_back(u(rng)), c.beta.push_back(u(rng));
  r.connections.push_back(c);
  return r;
}

void check_same(const ViewRecord& a, const ViewRecord& b) {
  CHECK(a.step == b.step);
  CHECK(a.probe_tokens == b.probe_tokens);
  CHECK(a.layers == b.layers);
  CHECK(a.heads == b.heads);
  REQUIRE(a.maps.size() == b.maps.size());
  for (size_t i = 0; i < a.maps.size(); ++i) {
    CHECK(a.maps[i].layer == b.maps[i].layer);
    CHECK(a.maps[i].head == b.maps[i].head);
    CHECK(a.maps[i].weights == b.maps[i].weights);  // bit-exact floats
  }
  REQUIRE(a.connections.size() == b.connections.size());
  for (size_t i = 0; i < a.connections.size(); ++i) {
    CHECK(a.connections[i].g == b.connections[i].g);
    CHECK(a.connections[i].beta == b.connections[i].beta);
    CHECK(a.connections[i].edges == b.connections[i].edges);
  }
}

std::vector<int64_t> steps_of(const std::vector<ViewIndexEntry>& index) {
  std::vector<int64_t> s;
  for (const auto& e : index) s.push_back(e.step);
  return s;
}

}  // namespace

TEST_CASE("view records: a record survives its encoding bit for bit") {
  const ViewRecord r = record_at(123);
  check_same(decode_view_record(encode_view_record(r)), r);
  CHECK_THROWS_AS(decode_view_record("not cbor at all"), Error);
}

TEST_CASE("view records: head importance survives the encoding; a short table is refused") {
  ViewRecord r = record_at(40);
  ImportanceTable& t = r.importance;
  t.mode = AblationMode::zero;
  t.batches = 2;
  t.layers = 2;
  t.heads = 2;
  t.baseline = {0.625, 0.875};
  t.loss = {0.5f, 7.25f, 0.75f, 1.0f / 3.0f};
  t.accuracy = {1.0f, 0.25f, 0.875f, 0.9f};
  const ViewRecord back = decode_view_record(encode_view_record(r));
  check_same(back, r);
  CHECK(back.importance.step == 40);
  CHECK(back.importance.mode == AblationMode::zero);
  CHECK(back.importance.batches == 2);
  CHECK(back.importance.loss == t.loss);  // bit-exact floats
  CHECK(back.importance.accuracy == t.accuracy);
  CHECK(back.importance.baseline.loss == 0.625);
  CHECK(back.importance.loss_change(0, 1) == 7.25f - 0.625f);
  CHECK(decode_view_record(encode_view_record(record_at(41))).importance.empty());  // optional
  t.loss.pop_back();
  CHECK_THROWS_WITH_AS(decode_view_record(encode_view_record(r)),
                       doctest::Contains("head importance table of 2 x 2"), Error);
}

TEST_CASE("view records: neural surfaces survive the encoding; the references are recomputed") {
  ViewRecord r = record_at(7);
  for (int head = 0; head < 2; ++head) {
    NeuralScoreSurface n;
    n.available = true;
    n.layer = 1, n.head = head, n.grid = 3;
    n.xs = {-1, 0, 2};
    n.ys = {-2, 0.5f, 1};
    for (int k = 0; k < 9; ++k) n.learned.push_back(0.25f * k - head);
    n.query_x = 1, n.query_y = -0.5f, n.key_angle = 0.3f;
    n.slice_t = {-1, 0, 1, 3};
    n.slice_learned = {0.5f, -0.25f, 1, head + 0.125f};
    r.neural.push_back(n);
  }
  const ViewRecord back = decode_view_record(encode_view_record(r));
  check_same(back, r);
  REQUIRE(back.neural.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const NeuralScoreSurface &a = back.neural[i], &b = r.neural[i];
    CHECK(a.available);
    CHECK(a.layer == b.layer);
    CHECK(a.head == b.head);
    CHECK(a.learned == b.learned);
    CHECK(a.slice_learned == b.slice_learned);
    CHECK(a.slice_t == b.slice_t);
    // x^2 + y^2 at (xs[c], ys[r]), row r over y; q'.k'(t) = t (qx cos a + qy sin a).
    REQUIRE(a.paraboloid.size() == 9);
    CHECK(a.paraboloid[1 * 3 + 2] == doctest::Approx(4 + 0.25));
    CHECK(a.paraboloid[0 * 3 + 0] == doctest::Approx(1 + 4));
    REQUIRE(a.slice_dot.size() == 4);
    CHECK(a.slice_dot[3] ==
          doctest::Approx(3 * (std::cos(0.3) - 0.5 * std::sin(0.3))).epsilon(1e-6));
  }
  // A surface whose grid and values disagree is refused, naming what is wrong.
  r.neural[0].learned.pop_back();
  CHECK_THROWS_WITH_AS(decode_view_record(encode_view_record(r)),
                       doctest::Contains("neural surface of grid 3"), Error);
}

TEST_CASE("view records: appended records are indexed and read back, across reopening") {
  TempDir dir;
  const std::string path = (dir.path / kViewRecordsFile).string();
  {
    ViewRecorder rec(path);
    for (int64_t s : {0, 10, 20, 35, 50}) {
      rec.append(record_at(s));
      CHECK(steps_of(index_view_records(path)) == steps_of(rec.index()));  // a follower's view
    }
  }
  const auto index = index_view_records(path);
  CHECK(steps_of(index) == std::vector<int64_t>{0, 10, 20, 35, 50});
  for (const auto& e : index) check_same(read_view_record(path, e), record_at(e.step));
  CHECK(view_record_at(index, 34).step == 20);
  CHECK(view_record_at(index, 35).step == 35);
  CHECK(view_record_at(index, -1).step == 50);
  CHECK_THROWS_WITH_AS(view_record_at({}, 3), doctest::Contains("no recorded views"), Error);
  ViewRecorder again(path);  // reopening keeps them and appends after
  again.append(record_at(60));
  CHECK(steps_of(index_view_records(path)) == std::vector<int64_t>{0, 10, 20, 35, 50, 60});
}

TEST_CASE("view records: a torn or damaged record ends the recording; the writer cuts it") {
  TempDir dir;
  const std::string path = (dir.path / kViewRecordsFile).string();
  {
    ViewRecorder rec(path);
    for (int64_t s : {0, 1, 2}) rec.append(record_at(s));
  }
  const auto whole = fs::file_size(path);
  const auto index = index_view_records(path);
  // Every cut inside the last record leaves the first two, never a partial third.
  for (uint64_t cut = index[2].offset + 1; cut < whole; cut += 97) {
    fs::copy_file(path, path + ".cut", fs::copy_options::overwrite_existing);
    fs::resize_file(path + ".cut", cut);
    CHECK(steps_of(index_view_records(path + ".cut")) == std::vector<int64_t>{0, 1});
  }
  // A flipped byte in the second record's payload: only the first is read.
  {
    fs::copy_file(path, path + ".bad", fs::copy_options::overwrite_existing);
    std::fstream f(path + ".bad", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(index[1].offset + 20 + index[1].bytes / 2));
    char c;
    f.seekg(f.tellp());
    f.get(c);
    f.seekp(-1, std::ios::cur);
    f.put(static_cast<char>(c ^ 0x5a));
  }
  CHECK(steps_of(index_view_records(path + ".bad")) == std::vector<int64_t>{0});
  // The writer reopening a torn file cuts the tail and records on.
  fs::resize_file(path, whole - 5);
  ViewRecorder rec(path);
  CHECK(steps_of(rec.index()) == std::vector<int64_t>{0, 1});
  rec.append(record_at(7));
  CHECK(steps_of(index_view_records(path)) == std::vector<int64_t>{0, 1, 7});
  check_same(read_view_record(path, index_view_records(path).back()), record_at(7));
  // A file that is not a recording is refused by name, and left alone.
  { std::ofstream(dir.path / "other.rec") << "hello, this is my file\n"; }
  CHECK_THROWS_WITH_AS(index_view_records((dir.path / "other.rec").string()),
                       doctest::Contains("other.rec is not an attnlab view recording"), Error);
  CHECK_THROWS_AS(ViewRecorder((dir.path / "other.rec").string()), Error);
  CHECK(fs::file_size(dir.path / "other.rec") == 23);
}

TEST_CASE("view records: a long run stays under the budget, keeping the first and last steps") {
  TempDir dir;
  const std::string path = (dir.path / kViewRecordsFile).string();
  const uint64_t budget = 256 * 1024;
  ViewRecorder rec(path, budget);
  uint64_t largest = 0;
  for (int64_t s = 0; s < 3000; s += 1) {
    rec.append(record_at(s * 10, 8));
    largest = std::max<uint64_t>(largest, fs::file_size(path));
    REQUIRE(rec.size() == fs::file_size(path));
  }
  CHECK(largest <= budget + 2000);  // at most one record past it, before the thinning
  const auto index = index_view_records(path);
  CHECK(index.front().step == 0);
  CHECK(index.back().step == 29990);
  CHECK(index.size() >= 40);  // half the budget's worth of records
  for (size_t i = 1; i < index.size(); ++i) CHECK(index[i].step > index[i - 1].step);
  // Early training (log-spaced) and the rest (linear-spaced) are both represented.
  int early = 0, late = 0;
  for (const auto& e : index) early += e.step<1000, late += e.step> 15000;
  CHECK(early >= 5);
  CHECK(late >= 5);
  for (const auto& e : index) check_same(read_view_record(path, e), record_at(e.step, 8));
}

TEST_CASE("view records: thin_steps keeps the ends and exactly `keep` distinct records") {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = 1 + rng() % 300;
    std::vector<int64_t> steps;
    int64_t s = 0;
    for (size_t i = 0; i < n; ++i) steps.push_back(s += 1 + static_cast<int64_t>(rng() % 50));
    const size_t keep = 2 + rng() % 120;
    const auto kept = thin_steps(steps, keep);
    CHECK(kept.size() == std::min(n, keep));
    CHECK(std::set<size_t>(kept.begin(), kept.end()).size() == kept.size());
    CHECK(std::is_sorted(kept.begin(), kept.end()));
    CHECK(kept.front() == 0);
    CHECK(kept.back() == n - 1);
  }
}

TEST_CASE("view records: resuming from an earlier step drops the records after it") {
  TempDir dir;
  const std::string path = (dir.path / kViewRecordsFile).string();
  ViewRecorder rec(path);
  for (int64_t s : {0, 10, 20, 30}) rec.append(record_at(s));
  rec.append(record_at(20));  // the checkpoint was at 20: its record is written again
  CHECK(steps_of(index_view_records(path)) == std::vector<int64_t>{0, 10, 20});
  rec.append(record_at(25));
  CHECK(steps_of(index_view_records(path)) == std::vector<int64_t>{0, 10, 20, 25});
}

TEST_CASE("head metrics against direct formulas on hand-made maps") {
  const int L = 6;
  auto map = [&](auto weight) {
    std::vector<float> w(L * L, 0.0f);
    for (int q = 0; q < L; ++q)
      for (int k = 0; k < L; ++k) w[q * L + k] = static_cast<float>(weight(q, k));
    return w;
  };
  const auto diagonal = map([](int q, int k) { return q == k ? 1.0 : 0.0; });
  CHECK(map_entropy(diagonal, L) == doctest::Approx(0.0));
  CHECK(map_diagonal(diagonal, L) == doctest::Approx(1.0));
  CHECK(map_previous_token(diagonal, L) == doctest::Approx(0.0));

  const auto previous = map([](int q, int k) { return q == 0 ? (k == 0) : (k == q - 1); });
  CHECK(map_previous_token(previous, L) == doctest::Approx(1.0));
  CHECK(map_diagonal(previous, L) == doctest::Approx(1.0 / L));  // row 0 only
  CHECK(map_entropy(previous, L) == doctest::Approx(0.0));

  const auto uniform = map([](int q, int k) { return k <= q ? 1.0 / (q + 1) : 0.0; });
  double expected = 0;  // -sum over the q+1 visible keys of (1/(q+1)) log(1/(q+1)) = log(q+1)
  for (int q = 0; q < L; ++q) expected += std::log(q + 1.0);
  CHECK(map_entropy(uniform, L) == doctest::Approx(expected / L).epsilon(1e-6));
  double diag = 0, prev = 0;
  for (int q = 0; q < L; ++q) diag += 1.0 / (q + 1);
  for (int q = 1; q < L; ++q) prev += 1.0 / (q + 1);
  CHECK(map_diagonal(uniform, L) == doctest::Approx(diag / L));
  CHECK(map_previous_token(uniform, L) == doctest::Approx(prev / (L - 1)));

  // "a b c a b c": queries 3, 4, 5 repeat tokens first seen at 0, 1, 2; an induction head
  // attends to the token after that occurrence (1, 2, 3).
  const std::vector<std::string> tokens{"a", "b", "c", "a", "b", "c"};
  const auto induction = map([](int q, int k) { return q >= 3 ? (k == q - 2) : (k == q); });
  CHECK(map_induction(induction, L, tokens) == doctest::Approx(1.0));
  CHECK(map_induction(diagonal, L, tokens) == doctest::Approx(0.0));
  CHECK(map_induction(uniform, L, tokens) == doctest::Approx((1.0 / 4 + 1.0 / 5 + 1.0 / 6) / 3));
  CHECK(std::isnan(map_induction(diagonal, L, {"a", "b", "c", "d", "e", "f"})));
  CHECK_THROWS_AS(map_induction(diagonal, L, {"a"}), Error);
  CHECK_THROWS_AS(map_entropy(std::vector<float>(5), L), Error);

  const float skewed[] = {0.7f, 0.2f, 0.1f};
  CHECK(effective_window(skewed, 3) == 2);
  const float flat[] = {0.25f, 0.25f, 0.25f, 0.25f};
  CHECK(effective_window(flat, 4) == 4);  // 3 slots hold 75%
  const float onehot[] = {0.0f, 0.0f, 1.0f};
  CHECK(effective_window(onehot, 3) == 1);
}
