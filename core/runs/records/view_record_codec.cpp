// views.rec's record codec: a ViewRecord as CBOR and back, and the head metrics of a record
// (core/runs/records/view_records.h). Torch-free.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/analysis/head_metrics.h"
#include "core/attention/registry.h"
#include "core/base/error.h"
#include "core/models/architectures/architecture.h"
#include "core/runs/records/view_records.h"

namespace attn {

// A record's "image" keys are ProbeImage's field names; its pixels, a float32 byte string, are
// written and read beside them.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ProbeImage, rows, cols, patch, index, label, label_name)

namespace {

using nlohmann::json;

json floats(const std::vector<float>& v) {
  return float_array_json(v, true);
}

// A record's float array: a byte string of float32 only (what attnlab writes), within the payload.
std::vector<float> floats_of(const json& j, const char* what) {
  if (!j.is_binary())
    throw Error(std::string("views.rec: ") + what + " is not an array of float32");
  return float_array_of(j, kMaxViewPayload / sizeof(float), std::string("views.rec: ") + what);
}

void decode_maps(const json& j, ViewRecord& r) {
  for (const json& m : j.at("maps")) {
    AttentionMap a;
    a.layer = m.at("layer").get<int>();
    a.head = m.at("head").get<int>();
    a.size = m.at("size").get<int>();
    a.weights = floats_of(m.at("w"), "a map's weights");
    if (a.size < 1)
      throw Error("views.rec: a map of size " + std::to_string(a.size) +
                  " (a map is at least 1 x 1)");
    if (a.weights.size() != static_cast<size_t>(a.size) * a.size)
      throw Error("views.rec: a map of size " + std::to_string(a.size) + " holds " +
                  std::to_string(a.weights.size()) + " weights, not " +
                  std::to_string(static_cast<size_t>(a.size) * a.size));
    r.maps.push_back(std::move(a));
  }
}

// Throws unless a rows x cols table holds exactly one of its `unit` per cell.
void check_table(const char* what, int rows, int cols, size_t n, const char* unit = "values") {
  if (rows <= 0 || cols <= 0 || n != size_t(rows) * size_t(cols))
    throw Error(std::string("views.rec: ") + what + " of " + std::to_string(rows) + " x " +
                std::to_string(cols) + " holds " + std::to_string(n) + " " + unit);
}

void decode_image(const json& j, ViewRecord& r) {
  if (j.contains("image")) {
    const json& m = j.at("image");
    ProbeImage& im = r.image;
    m.get_to(im);
    im.pixels = floats_of(m.at("pixels"), "the probe image");
    check_table("a probe image", im.rows, im.cols, im.pixels.size(), "pixels");
  }
}

void decode_importance(const json& j, ViewRecord& r) {
  if (j.contains("importance")) {
    const json& e = j.at("importance");
    ImportanceTable& t = r.importance;
    t.step = r.step;
    t.mode = parse_ablation_mode(e.at("mode").get<std::string>(), "views.rec: importance mode");
    t.batches = e.at("batches").get<int>();
    t.layers = e.at("layers").get<int>();
    t.heads = e.at("heads").get<int>();
    t.baseline = {e.at("base_loss").get<double>(), e.at("base_acc").get<double>()};
    t.loss = floats_of(e.at("loss"), "the head importance losses");
    t.accuracy = floats_of(e.at("acc"), "the head importance accuracies");
    check_table("a head importance table", t.layers, t.heads, t.loss.size());
    check_table("a head importance table", t.layers, t.heads, t.accuracy.size());
  }
}

// "attribution" and "dla" (optional; see view_records.h): every count checked against the
// stated limits (kMaxRecordedHeads, kMaxRecordedComponents) before its values are read.
void decode_attribution(const json& j, ViewRecord& r) {
  if (!j.contains("attribution")) return;
  const json& e = j.at("attribution");
  RecordedAttribution& a = r.attribution;
  a.metric = e.at("metric").get<std::string>();
  a.clean = e.at("clean").get<double>();
  a.corrupt = e.at("corrupt").get<double>();
  a.layers = e.at("layers").get<int>();
  a.heads = e.at("heads").get<int>();
  if (a.layers <= 0 || a.heads <= 0 || uint64_t(a.layers) * uint64_t(a.heads) > kMaxRecordedHeads)
    throw Error("views.rec: an attribution table of " + std::to_string(a.layers) + " x " +
                std::to_string(a.heads) + " heads (at most " + std::to_string(kMaxRecordedHeads) +
                ")");
  a.values = float_array_of(e.at("values"), kMaxRecordedHeads, "views.rec: the attribution");
  check_table("an attribution table", a.layers, a.heads, a.values.size());
}

void decode_dla(const json& j, ViewRecord& r) {
  if (!j.contains("dla")) return;
  const json& e = j.at("dla");
  RecordedLogitAttribution& d = r.dla;
  d.answer = e.at("answer").get<std::string>();
  d.answer_logit = e.at("logit").get<double>();
  d.held_out = e.at("held_out").get<double>();
  const json& names = e.at("names");
  if (!names.is_array() || names.size() > kMaxRecordedComponents)
    throw Error("views.rec: the direct logit attribution's \"names\" is not an array of at most " +
                std::to_string(kMaxRecordedComponents) + " names");
  d.names = names.get<std::vector<std::string>>();
  d.values = float_array_of(e.at("values"), kMaxRecordedComponents,
                            "views.rec: the direct logit attribution");
  if (d.values.size() != d.names.size())
    throw Error("views.rec: the direct logit attribution holds " + std::to_string(d.values.size()) +
                " values for " + std::to_string(d.names.size()) + " components");
}

// The generic views under `key`: an array of at most kMaxViewEntries (checked before any is read).
std::vector<MechanismView> views_of(const json& j, const std::string& key) {
  const json& list = j.at(key);
  if (!list.is_array() || list.size() > kMaxViewEntries)
    throw Error("views.rec: \"" + key + "\" is not an array of at most " +
                std::to_string(kMaxViewEntries) + " views");
  std::vector<MechanismView> out;
  for (size_t i = 0; i < list.size(); ++i)
    out.push_back(
        mechanism_view_from_json(list[i], "views.rec: " + key + "[" + std::to_string(i) + "]"));
  return out;
}

// The whole-model views: generic under "model"; an architecture's own entry from before its
// views were generic through its row (ArchitectureDescriptor::legacy_record_view).
void decode_model_views(const json& j, ViewRecord& r) {
  if (j.contains("model")) r.model_views = views_of(j, "model");
  for (const ArchitectureDescriptor* a : architecture_descriptors()) {
    if (!a->legacy_record_view || !j.contains(a->legacy_record_key)) continue;
    try {
      MechanismView view = a->legacy_record_view(j.at(a->legacy_record_key), r.step);
      view.mechanism = a->name;
      r.model_views.push_back(std::move(view));
    } catch (const Error& e) {
      throw Error("views.rec: \"" + a->legacy_record_key + "\": " + e.what());
    }
  }
}

// Adds `view` to `views`, or its entries to the view of the same mechanism and layer there (an
// old record held one entry per head): entries of a name that view already has are dropped.
void merge_view(std::vector<MechanismView>& views, MechanismView view) {
  auto same = std::find_if(views.begin(), views.end(), [&](const MechanismView& v) {
    return v.mechanism == view.mechanism && v.layer == view.layer;
  });
  if (same == views.end()) return views.push_back(std::move(view));
  auto add = [](auto& to, auto& from) {
    for (auto& e : from)
      if (std::none_of(to.begin(), to.end(), [&](const auto& t) { return t.name == e.name; }))
        to.push_back(std::move(e));
  };
  add(same->curves, view.curves);
  add(same->matrices, view.matrices);
  add(same->scalars, view.scalars);
  add(same->texts, view.texts);
  check_mechanism_view(*same);
}

// The layers' mechanism views: version 2 records hold them generically under "mechanisms";
// version 1 records (no "v") held a mechanism's own entries under its key, read through the
// mechanism's descriptor (legacy_view_readers).
void decode_mechanisms(const json& j, ViewRecord& r) {
  const int version = j.contains("v") ? j.at("v").get<int>() : 1;
  if (version > kViewRecordVersion)
    throw Error("views.rec: a record of version " + std::to_string(version) +
                ", written by a newer attnlab (this one reads versions 1 to " +
                std::to_string(kViewRecordVersion) + ")");
  if (version >= 2) r.mechanisms = views_of(j, "mechanisms");
  // Version 2 records written before a mechanism observed itself may hold its old entries too.
  for (const LegacyViewReader& reader : legacy_view_readers()) {
    if (reader.record_key.empty() || !j.contains(reader.record_key)) continue;
    const json& list = j.at(reader.record_key);
    if (!list.is_array() || list.size() > kMaxViewEntries)
      throw Error("views.rec: \"" + reader.record_key + "\" is not an array of at most " +
                  std::to_string(kMaxViewEntries) + " entries");
    try {
      for (const json& entry : list) {
        MechanismView view = reader.read(entry);
        view.mechanism = reader.mechanism;
        merge_view(r.mechanisms, std::move(view));
      }
    } catch (const Error& e) {
      throw Error(std::string("views.rec: ") + e.what());
    }
  }
}

// Counts a CBOR document's items without building it (nlohmann's SAX interface); stops past the
// limit.
struct ItemCounter {
  uint64_t items = 0;
  bool more() { return ++items <= kMaxViewRecordItems; }
  bool null() { return more(); }
  bool boolean(bool) { return more(); }
  bool number_integer(json::number_integer_t) { return more(); }
  bool number_unsigned(json::number_unsigned_t) { return more(); }
  bool number_float(json::number_float_t, const json::string_t&) { return more(); }
  bool string(json::string_t&) { return more(); }
  bool binary(json::binary_t&) { return more(); }
  bool start_object(std::size_t) { return more(); }
  bool key(json::string_t&) { return more(); }
  bool end_object() { return true; }
  bool start_array(std::size_t) { return more(); }
  bool end_array() { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    error = e.what();
    return false;
  }
  std::string error;
};

}  // namespace

std::vector<HeadMetric> head_metrics(const ViewRecord& r, const std::vector<int>& rows) {
  std::vector<HeadMetric> out;
  const bool labelled = r.probe_tokens.size() > 0;
  for (const AttentionMap& m : r.maps) {
    auto add = [&](const char* name, double v) {
      out.push_back({r.step, m.layer, m.head, name, v});
    };
    add("entropy", map_entropy(m.weights, m.size, rows));
    add("diagonal", map_diagonal(m.weights, m.size, rows));
    add("previous_token", map_previous_token(m.weights, m.size, rows));
    const size_t index = static_cast<size_t>(&m - r.maps.data());
    if (r.induction.size() == r.maps.size() && rows.empty())
      add("induction", r.induction[index]);
    else if (labelled && r.probe_tokens.size() == static_cast<size_t>(m.size))
      add("induction", map_induction(m.weights, m.size, r.probe_tokens, rows));
  }
  if (!rows.empty()) return out;
  // A mechanism's per-head scalars (ky's effective_window) are head metrics of their own name.
  for (const MechanismView& v : r.mechanisms)
    for (const ViewScalar& x : v.scalars)
      if (x.head >= 0) out.push_back({r.step, v.layer, x.head, x.name, x.value});
  for (const MechanismView& v : r.model_views)
    for (const ViewScalar& x : v.scalars)
      if (x.unit != "step") out.push_back({r.step, -1, -1, x.name, x.value});
  return out;
}

std::string encode_view_record(const ViewRecord& r) {
  json maps = json::array();
  for (const AttentionMap& m : r.maps)
    maps.push_back(
        {{"layer", m.layer}, {"head", m.head}, {"size", m.size}, {"w", floats(m.weights)}});
  json views = json::array();
  for (const MechanismView& v : r.mechanisms) views.push_back(mechanism_view_to_json(v, true));
  json j = {{"v", kViewRecordVersion}, {"step", r.step},   {"tokens", r.probe_tokens},
            {"layers", r.layers},      {"heads", r.heads}, {"maps", maps},
            {"mechanisms", views}};
  if (!r.image.empty()) {
    j["image"] = r.image;
    j["image"]["pixels"] = floats(r.image.pixels);
  }
  if (!r.probabilities.empty()) j["probs"] = floats(r.probabilities);
  if (!r.induction.empty()) j["induction"] = floats(r.induction);
  if (!r.importance.empty()) {
    const ImportanceTable& t = r.importance;
    j["importance"] = {{"mode", ablation_mode_name(t.mode)},
                       {"batches", t.batches},
                       {"layers", t.layers},
                       {"heads", t.heads},
                       {"base_loss", t.baseline.loss},
                       {"base_acc", t.baseline.accuracy},
                       {"loss", floats(t.loss)},
                       {"acc", floats(t.accuracy)}};
  }
  if (!r.attribution.empty()) {
    const RecordedAttribution& a = r.attribution;
    j["attribution"] = {{"metric", a.metric}, {"clean", a.clean}, {"corrupt", a.corrupt},
                        {"layers", a.layers}, {"heads", a.heads}, {"values", floats(a.values)}};
  }
  if (!r.dla.empty())
    j["dla"] = {{"answer", r.dla.answer},
                {"logit", r.dla.answer_logit},
                {"held_out", r.dla.held_out},
                {"names", r.dla.names},
                {"values", floats(r.dla.values)}};
  if (!r.model_views.empty()) {
    json model = json::array();
    for (const MechanismView& v : r.model_views) model.push_back(mechanism_view_to_json(v, true));
    j["model"] = std::move(model);
  }
  const std::vector<uint8_t> cbor = json::to_cbor(j);
  return std::string(cbor.begin(), cbor.end());
}

// Refuses a payload of more than kMaxViewRecordItems CBOR items, counted without building it:
// the decoded tree costs tens of bytes per item, whatever the payload's size.
namespace {
void check_item_count(const std::string& payload) {
  ItemCounter counter;
  bool counted = false;
  try {
    counted = json::sax_parse(payload, &counter, json::input_format_t::cbor);
  } catch (const std::exception& e) {
    throw Error(std::string("views.rec: a record is not valid CBOR: ") + e.what());
  }
  if (counter.items > kMaxViewRecordItems)
    throw Error("views.rec: a record of more than " + std::to_string(kMaxViewRecordItems) +
                " items (attnlab's limit; its own records hold a few per map)");
  if (!counted) throw Error("views.rec: a record is not valid CBOR: " + counter.error);
}
}  // namespace

ViewRecord decode_view_record(const std::string& payload) {
  check_item_count(payload);
  json j;
  try {
    j = json::from_cbor(payload);
  } catch (const std::exception& e) {
    throw Error(std::string("views.rec: a record is not valid CBOR: ") + e.what());
  }
  ViewRecord r;
  try {
    r.step = j.at("step").get<int64_t>();
    r.probe_tokens = j.at("tokens").get<std::vector<std::string>>();
    r.layers = j.at("layers").get<int>();
    r.heads = j.at("heads").get<int>();
    decode_maps(j, r);
    decode_mechanisms(j, r);
    decode_image(j, r);
    if (j.contains("probs")) r.probabilities = floats_of(j.at("probs"), "the class probabilities");
    if (j.contains("induction")) {
      r.induction = floats_of(j.at("induction"), "the induction scores");
      if (r.induction.size() != r.maps.size())
        throw Error("views.rec: " + std::to_string(r.induction.size()) + " induction scores for " +
                    std::to_string(r.maps.size()) + " maps");
    }
    decode_importance(j, r);
    decode_attribution(j, r);
    decode_dla(j, r);
    decode_model_views(j, r);
  } catch (const json::exception& e) {
    throw Error(std::string("views.rec: a record lacks a field or has the wrong type: ") +
                e.what());
  }
  return r;
}

ViewRecord decode_view_record(const std::string& payload, const ViewShape& shape) {
  ViewRecord r = decode_view_record(payload);
  check_view_record(r, shape);
  return r;
}

}  // namespace attn
