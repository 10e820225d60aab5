// Attribution over training (issue 48, item 4): the attribution patching and direct logit
// attribution that views.rec records at every recorded step (core/runs/records/view_records.h,
// core/training/recording/run_recorder.h): their round trip through the file, their equality with
// the analyses run on the same step's model, the refusal of damaged or oversized tables, and the
// filmstrip `attnlab export --figure attribution --steps` draws of them.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "app/figures/catalog/figures.h"
#include "app/figures/runs/causal_figures.h"
#include "core/base/error.h"
#include "core/runs/directory/run_files.h"
#include "core/runs/records/view_records.h"
#include "core/training/headless/headless.h"
#include "core/training/interventions/run_interventions.h"
#include "core/training/recording/run_recorder.h"
#include "core/training/session/session.h"
#include "helpers.h"
#include "recording_helpers.h"

using namespace attn;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A 2 x 2 model's record with every causal field set to values that depend on the step.
ViewRecord causal_record(int64_t step) {
  ViewRecord r;
  r.step = step;
  r.layers = 2;
  r.heads = 2;
  r.probe_tokens = {"a", "b", "c"};
  RecordedAttribution& a = r.attribution;
  a.metric = "logit_diff";
  a.clean = 1.5 + step, a.corrupt = -0.25 - step;
  a.layers = 2, a.heads = 2;
  a.values = {0.125f * step, -1.0f / 3.0f, 7.5f, 1e-7f};
  RecordedLogitAttribution& d = r.dla;
  d.answer = "v" + std::to_string(step);
  d.answer_logit = 2.0 / 3.0 + step;
  d.held_out = -0.0625;
  d.names = {"embed", "L0.H0", "L0.H1", "L0.attn_bias", "L0.mlp"};
  d.values = {0.5f, -0.25f, 1.0f / 7.0f, 3.0f, float(step)};
  return r;
}

void check_same_causal(const ViewRecord& a, const ViewRecord& b) {
  CHECK(a.step == b.step);
  CHECK(a.attribution.metric == b.attribution.metric);
  CHECK(a.attribution.clean == b.attribution.clean);
  CHECK(a.attribution.corrupt == b.attribution.corrupt);
  CHECK(a.attribution.layers == b.attribution.layers);
  CHECK(a.attribution.heads == b.attribution.heads);
  CHECK(a.attribution.values == b.attribution.values);  // bit-exact floats
  CHECK(a.dla.answer == b.dla.answer);
  CHECK(a.dla.answer_logit == b.dla.answer_logit);
  CHECK(a.dla.held_out == b.dla.held_out);
  CHECK(a.dla.names == b.dla.names);
  CHECK(a.dla.values == b.dla.values);
}

ViewShape shape_2x2() {
  ExperimentConfig c;
  c.model.layers = 2;
  c.model.heads = 2;
  return view_shape_of(c);
}

std::string cbor(const json& j) {
  const std::vector<uint8_t> b = json::to_cbor(j);
  return std::string(b.begin(), b.end());
}

}  // namespace

TEST_CASE("recorded attribution round-trips through views.rec; records without it read empty") {
  const fs::path dir = test::temp_dir("recorded-attribution");
  fs::create_directories(dir);
  ExperimentConfig c;
  c.model.layers = 2;
  c.model.heads = 2;
  mark_run_directory(dir.string());
  const ViewRun run = view_run_of(dir.string(), c);
  const std::string path = (dir / kViewRecordsFile).string();
  {
    ViewRecorder rec(path, run);
    for (int64_t s : {0, 10, 20}) rec.append(causal_record(s));
    ViewRecord plain = causal_record(30);
    plain.attribution = {};
    plain.dla = {};
    rec.append(plain);  // a record without them (attribution off, or an older recorder)
  }
  const auto index = index_view_records(path, run);
  REQUIRE(index.size() == 4);
  for (size_t i = 0; i < 3; ++i)
    check_same_causal(read_view_record(path, index[i], run.shape), causal_record(index[i].step));
  const ViewRecord plain = read_view_record(path, index[3], run.shape);
  CHECK(plain.attribution.empty());
  CHECK(plain.dla.empty());
  // An older reader skips keys it does not know, as this one skips a later field: the format
  // stays at version 2 (a record's "v") when an optional field is added.
  json j = json::from_cbor(encode_view_record(causal_record(5)));
  CHECK(j.at("v") == kViewRecordVersion);
  j["a_later_field"] = {{"x", 1}};
  check_same_causal(decode_view_record(cbor(j), shape_2x2()), causal_record(5));
  fs::remove_all(dir);
}

TEST_CASE("recorded attribution: damaged or oversized tables are refused by name") {
  const json good = json::from_cbor(encode_view_record(causal_record(7)));
  auto refused = [](json j, const char* what) {
    CHECK_THROWS_WITH_AS(decode_view_record(cbor(j), shape_2x2()), doctest::Contains(what), Error);
  };
  // Counts past the stated limit, refused before a value is read.
  json j = good;
  j["attribution"]["layers"] = 1 << 20;
  j["attribution"]["heads"] = 1 << 20;
  refused(j, "attribution table of 1048576 x 1048576 heads (at most 65536)");
  j = good;
  j["attribution"]["values"] = json::binary(std::vector<uint8_t>(4 * 70000, 0));
  refused(j, "views.rec: the attribution");
  j = good;
  j["attribution"]["values"] = json::binary(std::vector<uint8_t>(4 * 3, 0));  // 3 for 2 x 2
  refused(j, "attribution table of 2 x 2 holds 3 values");
  j = good;
  j["dla"]["names"] = std::vector<std::string>(70000, "x");
  refused(j, "\"names\" is not an array of at most 65536");
  j = good;
  j["dla"]["names"].push_back("L1.H0");
  refused(j, "holds 5 values for 6 components");
  j = good;
  j["attribution"].erase("clean");
  refused(j, "lacks a field");
  // Another model's table: the run's shape refuses it.
  ViewRecord other = causal_record(7);
  other.attribution.layers = 3;
  other.attribution.values.assign(6, 0.0f);
  other.layers = 2;
  CHECK_THROWS_WITH_AS(decode_view_record(encode_view_record(other), shape_2x2()),
                       doctest::Contains("attribution table of 3 x 2"), Error);
  other = causal_record(7);
  other.dla.names.assign(12, "x");
  other.dla.values.assign(12, 0.0f);
  CHECK_THROWS_WITH_AS(decode_view_record(encode_view_record(other), shape_2x2()),
                       doctest::Contains("direct logit attribution of 12 components"), Error);
}

TEST_CASE("recorded attribution equals the analyses on that step's model") {
  const fs::path root = test::temp_dir("record-attribution-run");
  ExperimentConfig c = test::tiny_config("recall");
  c.train.steps = 20;
  c.train.record_every = 10;
  c.train.record_importance_batches = 2;
  const test::RecordedRun run = test::train_recorded(c, root / "on", 3);
  const ViewRecord& first = run.first;
  const ViewRecord& last = run.last;
  CHECK(last.importance.batches == 2);  // train.record_importance_batches

  // The last record against the checkpoint's model, analysed directly.
  const auto loaded = test::checkpoint_session(root / "on");
  TrainingSession& session = *loaded;
  REQUIRE(session.step() == last.step);
  const PatchProbes probes = patch_probes(session, "", "", "clean", "corrupt");
  const AttributionTable a = session_attribution(session, probes);
  REQUIRE(last.attribution.values.size() == a.attribution.size());
  CHECK(last.attribution.metric == a.metric);
  CHECK(last.attribution.clean == doctest::Approx(a.clean_metric).epsilon(1e-9));
  CHECK(last.attribution.corrupt == doctest::Approx(a.corrupt_metric).epsilon(1e-9));
  for (size_t i = 0; i < a.attribution.size(); ++i)
    CHECK(std::abs(last.attribution.values[i] - a.attribution[i]) <=
          1e-5 * (1 + std::abs(a.attribution[i])));
  const LogitAttribution d = session_logit_attribution(session, probes.clean);
  REQUIRE(last.dla.names.size() == d.components.size());
  CHECK(last.dla.answer == d.answer);
  for (size_t i = 0; i < d.components.size(); ++i) {
    CHECK(last.dla.names[i] == d.components[i].first);
    CHECK(std::abs(last.dla.values[i] - d.components[i].second) <=
          1e-5 * (1 + std::abs(d.components[i].second)));
  }
  // The first record is the initial model's, which training then changed.
  TrainingSession initial(c);
  const AttributionTable a0 =
      session_attribution(initial, patch_probes(initial, "", "", "clean", "corrupt"));
  for (size_t i = 0; i < a0.attribution.size(); ++i)
    CHECK(std::abs(first.attribution.values[i] - a0.attribution[i]) <=
          1e-5 * (1 + std::abs(a0.attribution[i])));
  CHECK(first.attribution.values != last.attribution.values);

  // The filmstrip export draws: one frame per recorded step, in order.
  const fig::Figure film = figures::filmstrip_figure(
      {figures::recorded_attribution_figure(first.attribution, first.step),
       figures::recorded_attribution_figure(last.attribution, last.step)});
  REQUIRE(film.panels.size() == 2);
  CHECK(film.panels[0].heatmaps.at(0).values == first.attribution.values);
  CHECK(film.panels[1].heatmaps.at(0).values == last.attribution.values);
  CHECK_THROWS_AS(figures::recorded_attribution_figure(RecordedAttribution{}, 3), Error);

  // Off: the records hold none; the rest of the recording is unchanged.
  c.train.record_attribution = false;
  test::train_into(c, root / "off");
  const std::string off = (root / "off" / kViewRecordsFile).string();
  for (const auto& e : index_view_records(off)) {
    const ViewRecord r = read_view_record(off, e, view_shape_of(c));
    CHECK(r.attribution.empty());
    CHECK(r.dla.empty());
  }
  fs::remove_all(root);
}

TEST_CASE("recorded attribution: a run that cannot give it records without it, and says why") {
  const fs::path root = test::temp_dir("record-attribution-conn");
  ExperimentConfig c = test::tiny_conn_config("recall");
  c.train.steps = 4;
  c.train.record_every = 2;
  fs::create_directories(root);
  TrainingSession session(c);
  mark_run_directory(root.string());
  SessionViews views(root.string(), session);
  bool said = false;
  for (const std::string& n : views.notes())
    said = said || n.find("train.record_attribution") != std::string::npos;
  CHECK(said);
  views.finish(session);
  const std::string rec = (root / kViewRecordsFile).string();
  for (const auto& e : index_view_records(rec))
    CHECK(read_view_record(rec, e, view_shape_of(c)).attribution.empty());
  fs::remove_all(root);
}
