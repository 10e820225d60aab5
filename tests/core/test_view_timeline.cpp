// The timeline's reading of views.rec (core/runs/records/view_timeline.h): the record fields added
// for images and the Connection Transformer (and old records without them), incremental indexing
// against a full index, a run written while it is read, a file thinned under a reader, two
// sources (an opened run, then the window's own), and the snapshot at a recorded step.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "core/attention/ky/ky_view.h"
#include "core/base/error.h"
#include "core/models/conn/conn_view.h"
#include "core/runs/directory/run_files.h"
#include "core/runs/records/view_records.h"
#include "core/runs/records/view_timeline.h"
#include "temp_dir.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

// A run directory of its own for each case (config.json of a 1-layer, 2-head model, and the
// run's marker with its identity), and its views.rec.
struct TempDir : test::ScopedTempDir {
  ExperimentConfig config;
  TempDir() : test::ScopedTempDir("timeline") {
    config.model.layers = 1;
    config.model.heads = 2;
    mark_run_directory(path.string());
    std::ofstream(path / "config.json") << to_json(config).dump();
  }
  std::string views() const { return (path / kViewRecordsFile).string(); }
  ViewRun run() const { return view_run_of(path.string(), config); }
};

// Every number depends on the step, so a mix-up between steps shows.
ViewRecord make_record(int64_t step, bool with_ky = true) {
  ViewRecord r;
  r.step = step;
  r.layers = 1;
  r.heads = 2;
  for (int i = 0; i < 4; ++i) r.probe_tokens.push_back(std::to_string(i));
  for (int h = 0; h < 2; ++h) {
    AttentionMap m{0, h, 4, {}};
    for (int k = 0; k < 16; ++k) m.weights.push_back(static_cast<float>(step * 100 + h * 16 + k));
    r.maps.push_back(std::move(m));
  }
  if (with_ky) {
    ConnectionCurves c;
    c.layer = 0, c.heads = 2, c.window = 2, c.query_slot = 1, c.edges = "masked";
    c.t = {0.0f, 1.0f};
    c.g = {float(step), 1, 2, 3};
    c.slot_g = c.g;
    c.beta = {0.5f, 0.5f, 0.25f, 0.75f};
    r.mechanisms.push_back(ky_view_of(c));
  }
  return r;
}

std::vector<int64_t> steps_of(const std::vector<ViewIndexEntry>& index) {
  std::vector<int64_t> s;
  for (const auto& e : index) s.push_back(e.step);
  return s;
}

// The Connection Transformer's record view (core/models/conn/conn_view.h) at `step`: C, the
// eigenvalues of I + C, rho and ||I + C||_2.
MechanismView conn_record(std::vector<float> c, std::vector<float> re, std::vector<float> im,
                          double rho, double norm, int64_t step) {
  ConnView v;
  v.slots = static_cast<int>(std::lround(std::sqrt(double(c.size()))));
  v.matrix = std::make_shared<const std::vector<float>>(std::move(c));
  v.eigen_re = std::move(re);
  v.eigen_im = std::move(im);
  v.exact_radius = rho;
  v.exact_norm = norm;
  v.matrix_step = v.eigen_step = step;
  return conn_record_view(v);
}

}  // namespace

TEST_CASE(
    "view records: image, class probabilities and conn fields round trip; old records "
    "read without them") {
  ViewRecord r = make_record(7, false);
  r.image.rows = 4, r.image.cols = 6, r.image.patch = 2, r.image.index = 11, r.image.label = 3;
  r.image.label_name = "Dress";
  for (int i = 0; i < 24; ++i) r.image.pixels.push_back(i / 23.0f);
  r.probabilities = {0.1f, 0.7f, 0.2f};
  r.model_views = {
      conn_record({0.5f, -0.25f, 0.125f, 1.0f}, {1.5f, 0.75f}, {0.0f, -0.5f}, 1.5, 1.75, 7)};
  r.induction = {0.25f, 0.5f};
  const ViewRecord back = decode_view_record(encode_view_record(r));
  CHECK(back.induction == r.induction);
  // The induction metric is the record's score on its induction probe, head by head.
  for (const HeadMetric& m : head_metrics(back))
    if (m.metric == "induction") CHECK(m.value == (m.head == 0 ? 0.25 : 0.5));
  CHECK(back.image.pixels == r.image.pixels);
  CHECK(back.image.label_name == "Dress");
  CHECK(back.image.patch == 2);
  CHECK(back.image.index == 11);
  CHECK(back.probabilities == r.probabilities);
  REQUIRE(back.model_views.size() == 1);
  const ConnView bc = conn_view_from(back.model_views[0]);
  CHECK(*bc.matrix == std::vector<float>{0.5f, -0.25f, 0.125f, 1.0f});
  CHECK(bc.eigen_im == std::vector<float>{0.0f, -0.5f});
  CHECK(bc.exact_radius == 1.5);
  CHECK(bc.exact_norm == 1.75);
  CHECK(bc.matrix_step == 7);

  // A record written before these fields existed (the first format's keys only).
  const nlohmann::json old = {{"step", 3},
                              {"tokens", {"a", "b"}},
                              {"layers", 0},
                              {"heads", 0},
                              {"maps", nlohmann::json::array()},
                              {"ky", nlohmann::json::array()}};
  const std::vector<uint8_t> cbor = nlohmann::json::to_cbor(old);
  const ViewRecord o = decode_view_record(std::string(cbor.begin(), cbor.end()));
  CHECK(o.step == 3);
  CHECK(o.image.empty());
  CHECK(o.probabilities.empty());
  CHECK(o.model_views.empty());

  // Scores that do not match the maps, and a conn record whose C does not match its size, are
  // refused by name.
  r.induction.push_back(1);
  CHECK_THROWS_WITH_AS(decode_view_record(encode_view_record(r)),
                       doctest::Contains("3 induction scores for 2 maps"), Error);
  r.induction.pop_back();
  r.model_views[0].matrices[0].values.pop_back();
  CHECK_THROWS_WITH_AS(decode_view_record(encode_view_record(r)),
                       doctest::Contains("holds 3 values"), Error);

  // rho(I + C) is the model's metric, not a head's (the steps in the view are none).
  ViewRecord c = make_record(5, false);
  c.model_views = back.model_views;
  for (const HeadMetric& m : head_metrics(c)) CHECK(m.metric.find("_step") == std::string::npos);
  bool found = false;
  for (const HeadMetric& m : head_metrics(c))
    if (m.metric == "spectral_radius") {
      found = true;
      CHECK(m.layer == -1);
      CHECK(m.head == -1);
      CHECK(m.value == 1.5);
    }
  CHECK(found);
}

TEST_CASE("view index: extending from the last whole record equals indexing the whole file") {
  TempDir dir;
  ViewRecorder writer(dir.views(), dir.run());
  std::vector<ViewIndexEntry> index;
  uint64_t good = 0;
  CHECK_FALSE(extend_view_index(dir.views(), &index, &good));  // header only: no records
  for (int64_t step : {0, 10, 20}) writer.append(make_record(step));
  CHECK(extend_view_index(dir.views(), &index, &good));
  CHECK(steps_of(index) == std::vector<int64_t>{0, 10, 20});
  // A torn record at the end is not read until it is whole.
  const std::string payload = encode_view_record(make_record(30));
  {
    std::ofstream out(dir.views(), std::ios::binary | std::ios::app);
    out << "VREC";  // a header begun, nothing more
  }
  CHECK_FALSE(extend_view_index(dir.views(), &index, &good));
  CHECK(steps_of(index) == std::vector<int64_t>{0, 10, 20});
  uint64_t full_good = 0;
  const auto full = index_view_records(dir.views(), &full_good);
  CHECK(full_good == good);
  REQUIRE(full.size() == index.size());
  for (size_t i = 0; i < full.size(); ++i) {
    CHECK(full[i].offset == index[i].offset);
    CHECK(full[i].bytes == index[i].bytes);
  }
}

TEST_CASE("timeline: records appear as the writer appends, and survive thinning under a reader") {
  TempDir dir;
  ViewTimeline timeline;
  timeline.set_sources({{dir.path.string()}});
  CHECK(timeline.steps().empty());
  CHECK(timeline.record_at(100) == nullptr);
  {
    // A small budget: the writer thins the file (rewrites it) as records come.
    ViewRecorder writer(dir.views(), dir.run(), 20000);
    double now = 0;
    std::vector<int64_t> seen;
    for (int64_t step = 0; step <= 600; step += 10) {
      writer.append(make_record(step));
      now += 1;
      timeline.refresh(now);
      // Always what a fresh reader of the file sees.
      CHECK(timeline.steps() == steps_of(index_view_records(dir.views())));
      const auto r = timeline.record_at(step);
      REQUIRE(r != nullptr);
      CHECK(r->step == step);
      CHECK(r->maps[1].weights[3] == static_cast<float>(step * 100 + 16 + 3));
    }
    CHECK(timeline.steps().front() == 0);
    CHECK(timeline.steps().size() < 61);  // thinned
  }
  // A refresh sooner than the interval reads nothing new.
  {
    ViewRecorder writer(dir.views(), dir.run(), 20000);
    writer.append(make_record(700));
  }
  CHECK_FALSE(timeline.refresh(1e6 + 0.1, 1e9));
  CHECK(timeline.refresh(2e9));
  CHECK(timeline.steps().back() == 700);
  // The record at or before a step between records.
  const auto r = timeline.record_at(705);
  REQUIRE(r != nullptr);
  CHECK(r->step == 700);
  CHECK(timeline.step_at_or_before(-1) == -1);

  // Thinned under a reader that indexed the file before: the record is found again.
  ViewTimeline stale;
  stale.set_sources({{dir.path.string()}});
  stale.refresh(0);
  const std::vector<int64_t> before = stale.steps();
  {
    ViewRecorder writer(dir.views(), dir.run(), 20000);
    for (int64_t step = 710; step <= 900; step += 10) writer.append(make_record(step));
  }
  const std::vector<int64_t> fresh = steps_of(index_view_records(dir.views()));
  const bool still_there = std::binary_search(fresh.begin(), fresh.end(), before.back());
  const auto again = stale.record_at(before.back());  // its offset is stale: read anew
  CHECK((again != nullptr) == still_there);
  if (again) CHECK(again->step == before.back());
  stale.refresh(10);
  CHECK(stale.steps() == steps_of(index_view_records(dir.views())));
  CHECK(stale.steps() == fresh);
}

TEST_CASE("timeline: an opened run up to its loaded step, then the window's own recording") {
  TempDir opened, own;
  {
    ViewRecorder a(opened.views(), opened.run());
    for (int64_t step : {0, 50, 100, 150, 200}) a.append(make_record(step));
    ViewRecorder b(own.views(), own.run());
    for (int64_t step : {100, 120, 140}) b.append(make_record(step + 1000 * 0));
  }
  ViewTimeline timeline;
  // Loaded at step 100 and trained on: the window's own records replace the opened run's from
  // their first step (100), so the opened run's later records (150, 200) are not shown.
  timeline.set_sources({{opened.path.string()}, {own.path.string()}});
  timeline.refresh(0);
  CHECK(timeline.steps() == std::vector<int64_t>{0, 50, 100, 120, 140});
  // Opened alone: every record of the opened run.
  ViewTimeline alone;
  alone.set_sources({{opened.path.string()}});
  alone.refresh(0);
  CHECK(alone.steps() == std::vector<int64_t>{0, 50, 100, 150, 200});

  // The mechanism views' history up to the step, oldest first.
  const auto frames = timeline.mechanism_frames(125);
  REQUIRE(frames != nullptr);
  REQUIRE(frames->size() == 4);
  CHECK(frames->front().step == 0);
  CHECK(frames->back().step == 120);
  CHECK(frames->back().layers.at(0).find_curves("g")->ys.at(0) == 120.0f);

  // No mechanism view: no history from the recording.
  TempDir plain;
  {
    ViewRecorder w(plain.views(), plain.run());
    w.append(make_record(0, false));
  }
  ViewTimeline p;
  p.set_sources({{plain.path.string()}});
  p.refresh(0);
  CHECK(p.mechanism_frames(0) == nullptr);
}

TEST_CASE("snapshot at a recorded step: maps, tokens, image and C are the record's") {
  Snapshot live;
  live.step = 900;
  live.attention_step = 900;
  live.probe_tokens = {"x"};
  live.train_loss.steps = {1, 2};
  live.train_loss.values = {3, 2};
  auto conn = std::make_shared<ConnView>();
  conn->slots = 2;
  conn->stats.threshold = 0.1;
  conn->matrix = std::make_shared<const std::vector<float>>(std::vector<float>{9, 9, 9, 9});
  conn->exact_radius = 9;
  conn->spectral_radius.steps = {0, 900};
  conn->spectral_radius.values = {1, 2};
  live.model_views = conn_model_views(*conn);
  ViewRecord r = make_record(40, false);
  const std::vector<float> recorded_c = {0.5f, 0.2f, 0.0f, -0.3f};
  r.model_views = {conn_record(recorded_c, {1.5f, 0.7f}, {0, 0}, 1.5, 1.6, 40)};
  r.image.rows = r.image.cols = 2;
  r.image.patch = 1;
  r.image.pixels = {0, 1, 1, 0};
  const Snapshot s = snapshot_at_record(live, r);
  CHECK(s.attention_step == 40);
  CHECK(s.step == 900);  // the live model's step is still the run's
  CHECK(s.probe_tokens == r.probe_tokens);
  REQUIRE(s.attention_maps().size() == 2);
  CHECK(s.attention_maps()[1].weights == r.maps[1].weights);
  CHECK(s.probe_image.pixels == r.image.pixels);
  CHECK(s.train_loss.values == live.train_loss.values);  // histories stay whole
  const auto sc = conn_view_of(s);
  REQUIRE(sc);
  CHECK(*sc->matrix == recorded_c);
  CHECK(sc->matrix_step == 40);
  CHECK(sc->exact_radius == 1.5);
  CHECK(sc->exact_norm == doctest::Approx(1.6));
  CHECK(sc->stats.edges == compute_conn_stats(recorded_c.data(), 2, 0.1).edges);
  CHECK(sc->spectral_radius.values == conn->spectral_radius.values);
  CHECK(*conn_view_of(live)->matrix ==
        std::vector<float>{9, 9, 9, 9});  // the live view is untouched
}

TEST_CASE(
    "timeline: another run's recording, a record of another model and a deleted run are said") {
  TempDir mine, other;
  {
    ViewRecorder w(other.views(), other.run());
    w.append(make_record(0));
  }
  fs::copy_file(other.views(), mine.views());  // another run's recording copied in
  ViewTimeline t;
  t.set_sources({{mine.path.string()}});
  t.refresh(0);
  CHECK(t.steps().empty());
  CHECK(t.error().find("was recorded by another run (" + fs::absolute(other.path).string()) !=
        std::string::npos);
  CHECK(t.error().find(mine.path.string()) != std::string::npos);

  // This run's own file, whose second record states another model (3 layers): listed, never
  // handed to the panels, said in error().
  fs::remove(mine.views());
  {
    ViewRecorder w(mine.views(), mine.run());
    w.append(make_record(0));
    ViewRecord wide = make_record(10);
    wide.layers = 3;
    w.append(wide);
  }
  ViewTimeline u;
  u.set_sources({{mine.path.string()}});
  u.refresh(0);
  CHECK(u.steps() == std::vector<int64_t>{0, 10});
  CHECK(u.record_at(0) != nullptr);
  CHECK(u.record_at(10) == nullptr);
  CHECK(u.error().find("the record at step 10 states 3 layers; the run's model has 1") !=
        std::string::npos);

  // The run's directory deleted under the window: said, not "recorded no views".
  ViewTimeline gone;
  gone.set_sources({{mine.path.string()}});
  gone.refresh(0);
  CHECK(gone.steps() == std::vector<int64_t>{0, 10});
  fs::remove_all(mine.path);
  CHECK(gone.refresh(1));
  CHECK(gone.steps().empty());
  CHECK(gone.error().find("the run's directory is gone (deleted or moved): " +
                          mine.path.string()) != std::string::npos);
}
