// views.rec (core/runs/records/view_records.h) and the head metrics (core/analysis/head_metrics.h):
// round trips, torn and damaged records, the size bound, resumption, and the metrics against
// direct formulas on hand-made maps.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>

#include "core/analysis/head_metrics.h"
#include "core/attention/ky/ky_view.h"
#include "core/attention/neural/neural_view.h"
#include "core/base/error.h"
#include "core/models/conn/conn_view.h"
#include "core/runs/directory/run_files.h"
#include "core/runs/records/view_records.h"
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
  r.mechanisms.push_back(ky_view_of(c));
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
  REQUIRE(a.mechanisms.size() == b.mechanisms.size());
  for (size_t i = 0; i < a.mechanisms.size(); ++i) {
    const auto ca = ky_curves_of(a.mechanisms[i]), cb = ky_curves_of(b.mechanisms[i]);
    REQUIRE(ca.has_value());
    REQUIRE(cb.has_value());
    CHECK(ca->g == cb->g);
    CHECK(ca->beta == cb->beta);
    CHECK(ca->edges == cb->edges);
  }
}

std::vector<int64_t> steps_of(const std::vector<ViewIndexEntry>& index) {
  std::vector<int64_t> s;
  for (const auto& e : index) s.push_back(e.step);
  return s;
}

// The run in `dir` that record_at's records belong to: a 2-layer, 2-head model (the config's
// defaults otherwise), with its identity in the run's marker.
ViewRun run_in(const fs::path& dir, int layers = 2, int heads = 2) {
  ExperimentConfig c;
  c.model.layers = layers;
  c.model.heads = heads;
  mark_run_directory(dir.string());
  return view_run_of(dir.string(), c);
}
const ViewShape kShape = [] {
  ExperimentConfig c;
  c.model.layers = 2;
  c.model.heads = 2;
  return view_shape_of(c);
}();

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void flip_byte(const fs::path& p, uint64_t at) {
  std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(at));
  char c;
  f.get(c);
  f.seekp(static_cast<std::streamoff>(at));
  f.put(static_cast<char>(c ^ 0x5a));
}

// CRC-32 (IEEE), written here from its definition, for version-1 files made by hand.
uint32_t crc32_of(const std::string& s) {
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : s) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
  }
  return c ^ 0xFFFFFFFFu;
}

// A version-1 file (no identity; the CRC covers the payload only), as attnlab wrote it before:
// records given as (step, payload).
void write_v1_payloads(const fs::path& p,
                       const std::vector<std::pair<int64_t, std::string>>& records) {
  std::string out = "ATTNVIEWS1\n";
  for (const auto& [record_step, payload] : records) {
    const uint32_t magic = 0x43455256, bytes = static_cast<uint32_t>(payload.size()),
                   crc = crc32_of(payload);
    const int64_t step = record_step;
    out.append(reinterpret_cast<const char*>(&magic), 4);
    out.append(reinterpret_cast<const char*>(&bytes), 4);
    out.append(reinterpret_cast<const char*>(&step), 8);
    out.append(reinterpret_cast<const char*>(&crc), 4);
    out += payload;
  }
  std::ofstream(p, std::ios::binary) << out;
}

void write_v1(const fs::path& p, const std::vector<ViewRecord>& records) {
  std::vector<std::pair<int64_t, std::string>> payloads;
  for (const ViewRecord& r : records) payloads.emplace_back(r.step, encode_view_record(r));
  write_v1_payloads(p, payloads);
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

TEST_CASE("view records: an old record's neural surfaces are read as neural's generic view") {
  // Records written before Neural Attention observed itself held each head's surface under
  // "neural" (grid, xs, ys, z, qx, qy, angle, t, slice): read through the descriptor's legacy
  // hook, one view per layer, the references recomputed.
  nlohmann::json j = nlohmann::json::from_cbor(encode_view_record(record_at(7)));
  nlohmann::json list = nlohmann::json::array();
  std::vector<std::vector<float>> learned(2);
  for (int head = 0; head < 2; ++head) {
    for (int k = 0; k < 9; ++k) learned[head].push_back(0.25f * k - head);
    list.push_back({{"layer", 1},
                    {"head", head},
                    {"grid", 3},
                    {"xs", float_array_json({-1, 0, 2}, true)},
                    {"ys", float_array_json({-2, 0.5f, 1}, true)},
                    {"z", float_array_json(learned[head], true)},
                    {"qx", 1.0f},
                    {"qy", -0.5f},
                    {"angle", 0.3f},
                    {"t", float_array_json({-1, 0, 1, 3}, true)},
                    {"slice", float_array_json({0.5f, -0.25f, 1, head + 0.125f}, true)}});
  }
  j["neural"] = list;
  auto bytes = nlohmann::json::to_cbor(j);
  const ViewRecord back = decode_view_record(std::string(bytes.begin(), bytes.end()));
  // The layer's two heads in one view, after the record's own views.
  REQUIRE(back.mechanisms.size() == record_at(7).mechanisms.size() + 1);
  CHECK(back.mechanisms.back().mechanism == "neural");
  CHECK(back.mechanisms.back().layer == 1);
  MechanismFrame frame{7, back.mechanisms};
  for (int head = 0; head < 2; ++head) {
    NeuralViewRequest want;
    want.layer = 1, want.head = head;
    const auto view = neural_view_of(frame, &want);
    REQUIRE(view);
    const NeuralScoreSurface& a = view->surface;
    REQUIRE(a.available);
    CHECK(a.layer == 1);
    CHECK(a.head == head);
    CHECK(a.learned == learned[head]);
    CHECK(a.slice_t == std::vector<float>{-1, 0, 1, 3});
    CHECK(a.slice_learned == std::vector<float>{0.5f, -0.25f, 1, head + 0.125f});
    // x^2 + y^2 at (xs[c], ys[r]), row r over y; q'.k'(t) = t (qx cos a + qy sin a).
    REQUIRE(a.paraboloid.size() == 9);
    CHECK(a.paraboloid[1 * 3 + 2] == doctest::Approx(4 + 0.25));
    CHECK(a.paraboloid[0 * 3 + 0] == doctest::Approx(1 + 4));
    REQUIRE(a.slice_dot.size() == 4);
    CHECK(a.slice_dot[3] ==
          doctest::Approx(3 * (std::cos(0.3) - 0.5 * std::sin(0.3))).epsilon(1e-6));
  }
  // A surface whose grid and values disagree is refused, naming what is wrong.
  j["neural"][0]["z"] = float_array_json({1, 2, 3}, true);
  bytes = nlohmann::json::to_cbor(j);
  CHECK_THROWS_WITH_AS(decode_view_record(std::string(bytes.begin(), bytes.end())),
                       doctest::Contains("neural surface of grid 3"), Error);
}

TEST_CASE("view records: appended records are indexed and read back, across reopening") {
  TempDir dir;
  const std::string path = (dir.path / kViewRecordsFile).string();
  const ViewRun run = run_in(dir.path);
  {
    ViewRecorder rec(path, run);
    for (int64_t s : {0, 10, 20, 35, 50}) {
      rec.append(record_at(s));
      CHECK(steps_of(index_view_records(path)) == steps_of(rec.index()));  // a follower's view
    }
  }
  const auto index = index_view_records(path);
  CHECK(steps_of(index) == std::vector<int64_t>{0, 10, 20, 35, 50});
  for (const auto& e : index) check_same(read_view_record(path, e, kShape), record_at(e.step));
  CHECK(view_record_at(index, 34).step == 20);
  CHECK(view_record_at(index, 35).step == 35);
  CHECK(view_record_at(index, -1).step == 50);
  CHECK_THROWS_WITH_AS(view_record_at({}, 3), doctest::Contains("no recorded views"), Error);
  ViewRecorder again(path, run);  // reopening keeps them and appends after
  CHECK(again.notes().empty());
  again.append(record_at(60));
  CHECK(steps_of(index_view_records(path)) == std::vector<int64_t>{0, 10, 20, 35, 50, 60});
}

TEST_CASE("view records: a torn tail is ignored; the writer moves it aside, never away") {
  TempDir dir;
  const std::string path = (dir.path / kViewRecordsFile).string();
  const ViewRun run = run_in(dir.path);
  {
    ViewRecorder rec(path, run);
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
  // The writer reopening a torn file moves the torn bytes beside it and records on.
  const std::string before = bytes_of(path);
  fs::resize_file(path, whole - 5);
  ViewRecorder rec(path, run);
  CHECK(steps_of(rec.index()) == std::vector<int64_t>{0, 1});
  REQUIRE(rec.notes().size() == 1);
  CHECK(rec.notes()[0].find("a torn end, after the record at step 1) moved to "
                            "views.rec.damaged-1") != std::string::npos);
  CHECK(bytes_of(path + ".damaged-1") ==
        before.substr(index[2].offset, whole - 5 - index[2].offset));
  rec.append(record_at(7));
  CHECK(steps_of(index_view_records(path)) == std::vector<int64_t>{0, 1, 7});
  check_same(read_view_record(path, index_view_records(path).back(), kShape), record_at(7));
  // A file that is not a recording is refused by name, and left alone.
  { std::ofstream(dir.path / "other.rec") << "hello, this is my file\n"; }
  CHECK_THROWS_WITH_AS(index_view_records((dir.path / "other.rec").string()),
                       doctest::Contains("other.rec is not an attnlab view recording"), Error);
  CHECK_THROWS_AS(ViewRecorder((dir.path / "other.rec").string(), run), Error);
  CHECK(fs::file_size(dir.path / "other.rec") == 23);
}

TEST_CASE("view records: one damaged byte hides its record only; the writer keeps every other") {
  TempDir dir;
  const std::string path = (dir.path / kViewRecordsFile).string();
  const ViewRun run = run_in(dir.path);
  {
    ViewRecorder rec(path, run);
    for (int64_t s : {0, 50, 100, 150, 200}) rec.append(record_at(s));
  }
  const auto index = index_view_records(path);
  const std::string good = bytes_of(path);
  // A flipped byte in the payload, the length, the step or the magic of the second record:
  // every other record is still listed (the reader finds the next valid one).
  for (const uint64_t at : {index[1].offset + 20 + index[1].bytes / 2, index[1].offset + 4,
                            index[1].offset + 9, index[1].offset + 0}) {
    std::ofstream(path, std::ios::binary) << good;
    flip_byte(path, at);
    const ViewFile f = scan_view_file(path);
    CHECK(steps_of(f.records) == std::vector<int64_t>{0, 100, 150, 200});
    REQUIRE(f.damaged.size() == 1);
    CHECK(f.damaged[0].begin == index[1].offset);
    CHECK(f.damaged[0].end == index[2].offset);
    for (const auto& e : f.records)
      check_same(read_view_record(path, e, kShape), record_at(e.step));
  }
  // The writer (a resume at step 200) moves the damaged bytes aside and keeps every valid record.
  const std::string damaged = bytes_of(path);
  {
    ViewRecorder rec(plan_view_recording(path, run, 201));
    CHECK(steps_of(rec.index()) == std::vector<int64_t>{0, 100, 150, 200});
    REQUIRE(rec.notes().size() == 1);
    CHECK(
        rec.notes()[0].find("damaged, after the record at step 0) moved to views.rec.damaged-1") !=
        std::string::npos);
  }
  CHECK(bytes_of(path + ".damaged-1") ==
        damaged.substr(index[1].offset, index[2].offset - index[1].offset));
  CHECK(scan_view_file(path).damaged.empty());
  CHECK(steps_of(index_view_records(path)) == std::vector<int64_t>{0, 100, 150, 200});
  // A second damage goes to a second file: nothing is written over.
  flip_byte(path, index_view_records(path)[2].offset + 30);
  { ViewRecorder rec(plan_view_recording(path, run, 201)); }
  CHECK(fs::exists(path + ".damaged-2"));
  CHECK(bytes_of(path + ".damaged-1") ==
        damaged.substr(index[1].offset, index[2].offset - index[1].offset));
  CHECK(steps_of(index_view_records(path)) == std::vector<int64_t>{0, 100, 200});
}

TEST_CASE("view records: a hostile file of false record headers is searched in bounded work") {
  TempDir dir;
  const std::string path = (dir.path / kViewRecordsFile).string();
  const ViewRun run = run_in(dir.path);
  { ViewRecorder rec(path, run); }
  // 8 MiB of "VREC" headers, each claiming a payload that runs to the end of the file: a naive
  // search would check 8 MiB of CRC at each of 400,000 places.
  std::string junk;
  const uint64_t n = uint64_t(8) << 20, start = fs::file_size(path);
  while (junk.size() + 20 <= n) {
    const uint32_t magic = 0x43455256, bytes = static_cast<uint32_t>(n - junk.size() - 20), crc = 1;
    const int64_t step = 5;
    junk.append(reinterpret_cast<const char*>(&magic), 4);
    junk.append(reinterpret_cast<const char*>(&bytes), 4);
    junk.append(reinterpret_cast<const char*>(&step), 8);
    junk.append(reinterpret_cast<const char*>(&crc), 4);
  }
  { std::ofstream(path, std::ios::binary | std::ios::app) << junk; }
  const ViewFile f = scan_view_file(path);
  CHECK(f.records.empty());
  CHECK(f.good_bytes == start);  // all of it the tail
}
TEST_CASE("view records: a long run stays under the budget, keeping the first and last steps") {
  TempDir dir;
  const std::string path = (dir.path / kViewRecordsFile).string();
  const uint64_t budget = 256 * 1024;
  ViewRecorder rec(path, run_in(dir.path), budget);
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
  for (const auto& e : index) check_same(read_view_record(path, e, kShape), record_at(e.step, 8));
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

TEST_CASE("view records: resuming from an earlier step moves the later records aside") {
  TempDir dir;
  const std::string path = (dir.path / kViewRecordsFile).string();
  const ViewRun run = run_in(dir.path);
  {
    ViewRecorder rec(path, run);
    for (int64_t s : {0, 10, 20, 30, 40}) rec.append(record_at(s));
  }
  // A resume from the checkpoint at step 20 records 21 on again: 30 and 40 go beside the file,
  // as a recording of their own that reads back whole.
  {
    ViewRecorder rec(plan_view_recording(path, run, 21));
    CHECK(steps_of(rec.index()) == std::vector<int64_t>{0, 10, 20});
    REQUIRE(rec.notes().size() == 1);
    CHECK(rec.notes()[0].find("the records at steps 30 to 40") != std::string::npos);
    CHECK(rec.notes()[0].find("moved to views.rec.superseded-1") != std::string::npos);
    rec.append(record_at(25));
  }
  CHECK(steps_of(index_view_records(path)) == std::vector<int64_t>{0, 10, 20, 25});
  const std::string aside = path + ".superseded-1";
  const auto moved = index_view_records(aside, run);
  CHECK(steps_of(moved) == std::vector<int64_t>{30, 40});
  for (const auto& e : moved) check_same(read_view_record(aside, e, kShape), record_at(e.step));
  // An append at or before the last step (in one process) does the same, to the next name.
  ViewRecorder rec(path, run);
  rec.append(record_at(20));
  CHECK(steps_of(index_view_records(path)) == std::vector<int64_t>{0, 10, 20});
  CHECK(steps_of(index_view_records(path + ".superseded-2")) == std::vector<int64_t>{20, 25});
  CHECK(steps_of(index_view_records(aside)) == std::vector<int64_t>{30, 40});
}

TEST_CASE("view records: a record is checked against the run's model before it is used") {
  TempDir dir;
  const std::string path = (dir.path / kViewRecordsFile).string();
  const ViewRun run = run_in(dir.path);
  {
    ViewRecorder rec(path, run);
    rec.append(record_at(0));
    // Valid CRCs, claims the run's model cannot make: 100,000 layers and heads over 2 maps, one
    // layer of -1, a map of size 0, C of 64 slots.
    ViewRecord huge = record_at(100);
    huge.layers = huge.heads = 100000;
    rec.append(huge);
    ViewRecord negative = record_at(110);
    negative.layers = -1;
    rec.append(negative);
    ViewRecord empty = record_at(120, 1);
    empty.maps[0].size = 0;
    empty.maps[0].weights.clear();
    rec.append(empty);
    ViewRecord conn = record_at(130);
    ConnView c;
    c.slots = 64;
    c.matrix = std::make_shared<const std::vector<float>>(size_t(64) * 64, 0.0f);
    conn.model_views = {conn_record_view(c)};
    rec.append(conn);
  }
  const auto index = index_view_records(path, run);
  REQUIRE(steps_of(index) == std::vector<int64_t>{0, 100, 110, 120, 130});
  check_same(read_view_record(path, index[0], run.shape), record_at(0));
  CHECK_THROWS_WITH_AS(read_view_record(path, index[1], run.shape),
                       doctest::Contains("views.rec: the record at step 100 states 100000 layers; "
                                         "the run's model has 2 (model.layers)"),
                       Error);
  CHECK_THROWS_WITH_AS(read_view_record(path, index[2], run.shape),
                       doctest::Contains("the record at step 110 states -1 layers; the run's "
                                         "model has 2 (model.layers)"),
                       Error);
  CHECK_THROWS_WITH_AS(read_view_record(path, index[3], run.shape),
                       doctest::Contains("the record at step 120: a map of size 0 (a map is at "
                                         "least 1 x 1)"),
                       Error);
  CHECK_THROWS_WITH_AS(read_view_record(path, index[4], run.shape),
                       doctest::Contains("holds a view of the whole model (conn); the run's "
                                         "model (model.architecture \"transformer\") has none"),
                       Error);
  // A writer refuses to record on after such records, and writes nothing.
  const std::string before = bytes_of(path);
  CHECK_THROWS_WITH_AS(ViewRecorder(path, run), doctest::Contains("states 100000 layers"), Error);
  CHECK(bytes_of(path) == before);
  // A record of more CBOR items than the stated limit is refused before it is decoded.
  ViewRecord many = record_at(5);
  many.probe_tokens.assign(kMaxViewRecordItems + 1, "");
  CHECK_THROWS_WITH_AS(decode_view_record(encode_view_record(many)),
                       doctest::Contains("a record of more than 1048576 items"), Error);
}

// Records written before the Connection Transformer's views were generic held C and the
// spectrum of I + C under their own "conn" field: such a file still reads, through the
// architecture's row, into the generic view the figures decode; its C is checked against the
// run's model.conn.slots like a new record's.
TEST_CASE("view records: an old record's \"conn\" field reads into the generic conn view") {
  TempDir dir;
  ExperimentConfig config;
  config.model.architecture = "conn";
  config.model.heads = 1;
  config.model.conn.slots = 2;
  mark_run_directory(dir.path.string());
  const ViewRun run = view_run_of(dir.path.string(), config);
  const std::vector<float> c = {0.5f, -0.25f, 0.125f, 1.0f}, re = {1.5f, 0.75f}, im = {0, -0.5f};
  auto payload = [&](int64_t step, int slots) {
    const nlohmann::json old = {
        {"step", step},
        {"tokens", {"a", "b"}},
        {"layers", 0},
        {"heads", 1},
        {"maps", nlohmann::json::array()},
        {"conn",
         {{"slots", slots},
          {"c", float_array_json(std::vector<float>(c.begin(), c.begin() + slots * slots), true)},
          {"eig_re", float_array_json(re, true)},
          {"eig_im", float_array_json(im, true)},
          {"rho", 1.5},
          {"norm", 1.75}}}};
    const std::vector<uint8_t> cbor = nlohmann::json::to_cbor(old);
    return std::string(cbor.begin(), cbor.end());
  };
  const fs::path path = dir.path / "old.rec";
  write_v1_payloads(path, {{10, payload(10, 2)}, {20, payload(20, 1)}});
  const auto index = index_view_records(path.string(), run);
  REQUIRE(index.size() == 2);
  const ViewRecord r = read_view_record(path.string(), index[0], run.shape);
  REQUIRE(r.model_views.size() == 1);
  CHECK(r.model_views[0].mechanism == "conn");
  const ConnView v = conn_view_from(r.model_views[0]);
  REQUIRE(v.matrix);
  CHECK(*v.matrix == c);
  CHECK(v.slots == 2);
  CHECK(v.eigen_re == re);
  CHECK(v.eigen_im == im);
  CHECK(v.exact_radius == 1.5);
  CHECK(v.exact_norm == 1.75);
  CHECK(v.matrix_step == 10);
  CHECK(v.eigen_step == 10);
  // rho(I + C) is still the record's metric of the model.
  bool rho = false;
  for (const HeadMetric& m : head_metrics(r))
    rho |= m.metric == "spectral_radius" && m.layer == -1 && m.value == 1.5;
  CHECK(rho);
  // The second record's C is 1 x 1: the run's model has 2 slots.
  CHECK_THROWS_WITH_AS(read_view_record(path.string(), index[1], run.shape),
                       doctest::Contains("holds C of 1 slots; the run's model has 2 "
                                         "(model.conn.slots)"),
                       Error);
  // A C larger than the stated limit is refused before it is allocated, naming the field.
  nlohmann::json huge = nlohmann::json::from_cbor(payload(30, 2));
  huge["conn"]["slots"] = 1 << 20;
  const std::vector<uint8_t> cbor = nlohmann::json::to_cbor(huge);
  CHECK_THROWS_WITH_AS(decode_view_record(std::string(cbor.begin(), cbor.end())),
                       doctest::Contains("views.rec: \"conn\": a conn record of 1048576 slots"),
                       Error);
}

TEST_CASE("view records: a file over 1 GiB is refused by name, without being read") {
  TempDir dir;
  const std::string path = (dir.path / kViewRecordsFile).string();
  { ViewRecorder rec(path, run_in(dir.path)); }
  fs::resize_file(path, kMaxViewFileBytes + 1);  // sparse: no disk, and no memory if not read
  CHECK_THROWS_WITH_AS(index_view_records(path),
                       doctest::Contains("views.rec is 1073741825 bytes, over attnlab's limit of 1 "
                                         "GiB for a view recording"),
                       Error);
  // Just under the cap, a damaged 1 GiB is searched in place, and its header record is found.
  fs::resize_file(path, kMaxViewFileBytes);
  CHECK(index_view_records(path).empty());
}

TEST_CASE(
    "view records: another run's recording is refused naming both runs; older files by shape") {
  TempDir a_dir, b_dir;
  const ViewRun a = run_in(a_dir.path), b = run_in(b_dir.path);
  REQUIRE(a.run_id.size() == 32);
  REQUIRE(a.run_id != b.run_id);
  const std::string a_path = (a_dir.path / kViewRecordsFile).string();
  const std::string b_path = (b_dir.path / kViewRecordsFile).string();
  {
    ViewRecorder rec(a_path, a);
    rec.append(record_at(0));
  }
  fs::copy_file(a_path, b_path);
  const std::string copied = bytes_of(b_path);
  CHECK(steps_of(index_view_records(a_path, a)) == std::vector<int64_t>{0});
  const std::string expected = b_path + " was recorded by another run (" +
                               fs::absolute(a_dir.path).string() + ", run id " + a.run_id +
                               ") than " + b.dir + " (run id " + b.run_id + ")";
  CHECK_THROWS_WITH_AS(index_view_records(b_path, b), doctest::Contains(expected.c_str()), Error);
  CHECK_THROWS_WITH_AS(ViewRecorder(b_path, b), doctest::Contains(expected.c_str()), Error);
  CHECK(bytes_of(b_path) == copied);  // refused: nothing written
  // A version-1 file (no identity) is read by the shape check alone: a 2-layer run's records
  // pass, a 1-layer run refuses them.
  const std::string v1 = (b_dir.path / "old.rec").string();
  write_v1(v1, {record_at(0), record_at(10)});
  const auto old = index_view_records(v1, b);
  REQUIRE(steps_of(old) == std::vector<int64_t>{0, 10});
  check_same(read_view_record(v1, old[1], b.shape), record_at(10));
  ExperimentConfig one;
  one.model.layers = 1;
  one.model.heads = 2;
  CHECK_THROWS_WITH_AS(read_view_record(v1, old[0], view_shape_of(one)),
                       doctest::Contains("states 2 layers; the run's model has 1"), Error);
  {
    ViewRecorder rec(v1, b);  // a resumed older run records on in its file's format
    CHECK(rec.version() == 1);
    rec.append(record_at(20));
  }
  CHECK(steps_of(index_view_records(v1, b)) == std::vector<int64_t>{0, 10, 20});
  check_same(read_view_record(v1, index_view_records(v1, b).back(), b.shape), record_at(20));
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
  // An empty map is named as such (it once read "needs 0 weights, got 0").
  CHECK_THROWS_WITH_AS(map_entropy({}, 0),
                       doctest::Contains("entropy: a map of size 0 (a map is at least 1 x 1)"),
                       Error);

  const float skewed[] = {0.7f, 0.2f, 0.1f};
  CHECK(effective_window(skewed, 3) == 2);
  const float flat[] = {0.25f, 0.25f, 0.25f, 0.25f};
  CHECK(effective_window(flat, 4) == 4);  // 3 slots hold 75%
  const float onehot[] = {0.0f, 0.0f, 1.0f};
  CHECK(effective_window(onehot, 3) == 1);
}
