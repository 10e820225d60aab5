// The generic mechanism view (core/views/mechanism_view.h): its codec both ways (JSON numbers and
// CBOR byte strings), hostile sizes refused naming the limit, views.rec records of version 1
// (ky's curves under "ky") and the old connections.json read through ky's descriptor, and a
// record of a later version refused. Torch-free.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/analysis/head_metrics.h"
#include "core/attention/ky/ky_view.h"
#include "core/base/error.h"
#include "core/runs/directory/run_dir.h"
#include "core/runs/records/view_records.h"
#include "temp_dir.h"

using namespace attn;
using nlohmann::json;

namespace {

MechanismView sample_view() {
  MechanismView v;
  v.mechanism = "sample";
  v.layer = 1;
  v.curves.push_back({"g",
                      {"t", ""},
                      {"g", "logit"},
                      {0, 0.5f, 1},
                      {"head 0", "head 1"},
                      {1, 2, 3, -4, 5.25f, 1e-7f}});
  v.matrices.push_back(
      {"m", {"row", ""}, {"col", ""}, {"value", "nats"}, 2, 3, {"a", "b"}, {}, {1, 2, 3, 4, 5, 6}});
  v.scalars.push_back({"width", "slots", -1, 4});
  v.scalars.push_back({"score", "", 1, 0.125});
  v.texts.push_back({"edges", "masked"});
  return v;
}

void check_equal(const MechanismView& a, const MechanismView& b) {
  CHECK(a.mechanism == b.mechanism);
  CHECK(a.layer == b.layer);
  REQUIRE(a.curves.size() == b.curves.size());
  CHECK(a.curves[0].xs == b.curves[0].xs);
  CHECK(a.curves[0].ys == b.curves[0].ys);  // bit-exact floats
  CHECK(a.curves[0].series == b.curves[0].series);
  CHECK(a.curves[0].y.unit == b.curves[0].y.unit);
  REQUIRE(a.matrices.size() == b.matrices.size());
  CHECK(a.matrices[0].values == b.matrices[0].values);
  CHECK(a.matrices[0].row_labels == b.matrices[0].row_labels);
  CHECK(a.matrices[0].value.unit == b.matrices[0].value.unit);
  REQUIRE(a.scalars.size() == b.scalars.size());
  CHECK(a.scalars[1].head == b.scalars[1].head);
  CHECK(a.scalars[1].value == b.scalars[1].value);
  CHECK(a.text("edges") == b.text("edges"));
}

// Decodes a view's JSON and returns the refusal's message ("" when it was accepted).
std::string refusal(const json& j) {
  try {
    mechanism_view_from_json(j, "test");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

json binary_floats(size_t n) {
  return json::binary(std::vector<uint8_t>(n * sizeof(float), 0));
}

// ky's curves as a layer of 2 heads and a window of 3 (the old record's entry, as views.rec and
// connections.json held it before the generic views).
ConnectionCurves ky_curves() {
  ConnectionCurves c;
  c.layer = 0, c.heads = 2, c.window = 3, c.query_slot = 2, c.causal = true, c.edges = "masked";
  c.t = {0, 0.25f, 0.5f, 0.75f, 1};
  for (int k = 0; k < 10; ++k) c.g.push_back(0.1f * k - 0.3f);
  c.slot_g = {0.1f, 0.2f, 0.3f, -0.1f, 0.0f, 0.4f};
  c.beta = {0.7f, 0.2f, 0.1f, 0.3f, 0.3f, 0.4f};
  return c;
}

json old_entry(const ConnectionCurves& c, bool binary) {
  auto floats = [&](const std::vector<float>& v) -> json {
    if (!binary) return v;
    std::vector<uint8_t> b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return json::binary(b);
  };
  return {{"layer", c.layer},           {"heads", c.heads},   {"window", c.window},
          {"query_slot", c.query_slot}, {"causal", c.causal}, {"edges", c.edges},
          {"t", floats(c.t)},           {"g", floats(c.g)},   {"slot_g", floats(c.slot_g)},
          {"beta", floats(c.beta)}};
}

std::string cbor(const json& j) {
  const std::vector<uint8_t> b = json::to_cbor(j);
  return std::string(b.begin(), b.end());
}

}  // namespace

TEST_CASE("mechanism view codec: JSON numbers and CBOR byte strings round-trip exactly") {
  const MechanismView v = sample_view();
  check_equal(mechanism_view_from_json(mechanism_view_to_json(v, false), "json"), v);
  const json through_cbor = json::from_cbor(json::to_cbor(mechanism_view_to_json(v, true)));
  CHECK(through_cbor.at("curves")[0].at("ys").is_binary());
  check_equal(mechanism_view_from_json(through_cbor, "cbor"), v);

  std::vector<MechanismFrame> frames = {{5, {v}}, {9, {v}}};
  const auto back = mechanism_frames_from_json(mechanism_frames_to_json(frames), "file");
  REQUIRE(back.size() == 2);
  CHECK(back[1].step == 9);
  check_equal(back[1].layers[0], v);
  // Thinning keeps the first and the latest.
  std::vector<MechanismFrame> history;
  for (int64_t s = 0; s < 10; ++s) append_thinned(history, {s, {}}, 4);
  CHECK(history.size() <= 4);
  CHECK(history.front().step == 0);
  CHECK(history.back().step == 9);
}

TEST_CASE("mechanism view codec refuses hostile sizes, naming the field and the limit") {
  const json good = mechanism_view_to_json(sample_view(), true);
  CHECK(refusal(good).empty());

  json j = good;
  j["curves"][0]["xs"] = binary_floats(kMaxViewSamples + 1);
  CHECK(refusal(j).find("\"xs\" holds over 65536 values") != std::string::npos);
  j = good;
  j["curves"][0]["ys"] = binary_floats(7);  // 2 series x 3 samples is 6
  CHECK(refusal(j).find("hold 7 values for 2 series of 3 samples") != std::string::npos);
  j = good;
  j["curves"][0]["xs"] = json::binary(std::vector<uint8_t>(6));  // not whole floats
  CHECK(refusal(j).find("not float32") != std::string::npos);
  j = good;
  j["curves"] = json::array();
  for (size_t i = 0; i <= kMaxViewEntries; ++i) j["curves"].push_back(good["curves"][0]);
  CHECK(refusal(j).find("at most 256") != std::string::npos);
  j = good;
  j["matrices"][0]["row_count"] = 1 << 20;
  CHECK(refusal(j).find("\"row_count\" is not an integer in 0..65536") != std::string::npos);
  j = good;
  j["matrices"][0]["values"] = binary_floats(5);
  CHECK(refusal(j).find("holds 5 values") != std::string::npos);
  j = good;
  j["matrices"][0]["row_labels"] = {"a", "b", "c"};  // 2 rows
  CHECK(refusal(j).find("\"row_labels\" holds 3 entries (at most 2)") != std::string::npos);
  j = good;
  j["texts"][0]["value"] = std::string(kMaxViewNameBytes + 1, 'x');
  CHECK(refusal(j).find("over 256 bytes") != std::string::npos);
  j = good;
  j["layer"] = -1;
  CHECK(!refusal(j).empty());
  j = good;
  j["scalars"][1]["head"] = -2;
  CHECK(!refusal(j).empty());
  j = good;
  j.erase("scalars");
  CHECK(refusal(j).find("no \"scalars\"") != std::string::npos);

  json file = mechanism_frames_to_json({});
  file["frames"] = json::array();
  for (size_t i = 0; i <= kMaxMechanismFrames; ++i) file["frames"].push_back({{"step", 0}});
  CHECK_THROWS_WITH_AS(mechanism_frames_from_json(file, "f.json"),
                       doctest::Contains("at most 4096"), Error);
  file = mechanism_frames_to_json({});
  file["version"] = 2;
  CHECK_THROWS_WITH_AS(mechanism_frames_from_json(file, "f.json"),
                       doctest::Contains("this attnlab reads version 1"), Error);
}

TEST_CASE("ky's curves through the generic view equal the typed curves, both ways") {
  const ConnectionCurves c = ky_curves();
  const MechanismView v = ky_view_of(c);
  CHECK(v.mechanism == "ky");
  const auto back = ky_curves_of(v);
  REQUIRE(back.has_value());
  CHECK(back->g == c.g);
  CHECK(back->slot_g == c.slot_g);
  CHECK(back->beta == c.beta);
  CHECK(back->t == c.t);
  CHECK(back->window == 3);
  CHECK(back->query_slot == 2);
  CHECK(back->edges == "masked");
  // The head metric travels as a per-head scalar of the view.
  REQUIRE(v.find_scalar(ky_view::kEffectiveWindow, 1));
  CHECK(v.find_scalar(ky_view::kEffectiveWindow, 1)->value ==
        effective_window(c.beta_values(1), c.window));
  // Another mechanism's view, or damaged sizes, are never read as ky's.
  MechanismView other = v;
  other.mechanism = "dot";
  CHECK(!ky_curves_of(other).has_value());
  MechanismView damaged = v;
  damaged.curves[2].ys.pop_back();
  CHECK(!ky_curves_of(damaged).has_value());
}

TEST_CASE("views.rec: a version-1 record's ky curves are read through ky's descriptor") {
  const ConnectionCurves c = ky_curves();
  const json old = {{"step", 7},  {"tokens", {"a", "b", "c"}}, {"layers", 1},
                    {"heads", 2}, {"maps", json::array()},     {"ky", {old_entry(c, true)}}};
  const ViewRecord r = decode_view_record(cbor(old));
  REQUIRE(r.mechanisms.size() == 1);
  CHECK(r.mechanisms[0].mechanism == "ky");
  const auto curves = ky_curves_of(r.mechanisms[0]);
  REQUIRE(curves.has_value());
  CHECK(curves->g == c.g);
  CHECK(curves->beta == c.beta);
  // The head metric a version-1 record gave ("effective_window" per ky head) is still given.
  int windows = 0;
  for (const HeadMetric& m : head_metrics(r)) windows += m.metric == "effective_window";
  CHECK(windows == 2);
  ViewShape shape;
  shape.layers = 1, shape.heads = 2, shape.max_tokens = 8;
  CHECK_NOTHROW(check_view_record(r, shape));
  shape.heads = 1;  // the view's per-head scalars name head 1
  CHECK_THROWS_AS(check_view_record(r, shape), Error);

  // A damaged old entry is refused naming the field.
  json bad = old;
  bad["ky"][0]["beta"] = json::binary(std::vector<uint8_t>(5));
  CHECK_THROWS_WITH_AS(decode_view_record(cbor(bad)), doctest::Contains("\"beta\""), Error);

  // A version-2 record round-trips; a later version is refused naming it.
  ViewRecord now;
  now.step = 3, now.layers = 1, now.heads = 2;
  now.mechanisms.push_back(ky_view_of(c));
  const ViewRecord again = decode_view_record(encode_view_record(now));
  REQUIRE(again.mechanisms.size() == 1);
  CHECK(ky_curves_of(again.mechanisms[0])->g == c.g);
  json later = json::from_cbor(encode_view_record(now));
  later["v"] = 3;
  CHECK_THROWS_WITH_AS(decode_view_record(cbor(later)),
                       doctest::Contains("a record of version 3, written by a newer attnlab"),
                       Error);
}

TEST_CASE("a run's mechanism views: mechanism_views.json, or an old run's connections.json") {
  test::ScopedTempDir dir("mechanism-views");
  CHECK(read_mechanism_frames(dir.path.string()).empty());  // none recorded
  const ConnectionCurves c = ky_curves();
  std::ofstream(dir.path / "connections.json")
      << json{{"format", "attnlab-connections"},
              {"version", 1},
              {"frames", {{{"step", 4}, {"layers", {old_entry(c, false)}}}}}}
             .dump();
  auto frames = read_mechanism_frames(dir.path.string());
  REQUIRE(frames.size() == 1);
  CHECK(frames[0].step == 4);
  REQUIRE(frames[0].layers.size() == 1);
  // Numbers written as JSON decimals read back as the same floats.
  CHECK(ky_curves_of(frames[0].layers[0])->g == c.g);

  // The current file wins over the old one.
  std::ofstream(dir.path / kMechanismViewsFile)
      << mechanism_frames_to_json({{8, {sample_view()}}}).dump();
  frames = read_mechanism_frames(dir.path.string());
  REQUIRE(frames.size() == 1);
  CHECK(frames[0].step == 8);
  // A malformed file is refused naming it.
  std::ofstream(dir.path / kMechanismViewsFile) << "{\"format\": \"attnlab-mechanism-views\"}";
  CHECK_THROWS_WITH_AS(read_mechanism_frames(dir.path.string()),
                       doctest::Contains(kMechanismViewsFile), Error);
}
