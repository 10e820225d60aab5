#include "core/views/mechanism_view.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/base/error.h"

namespace attn {
namespace {

using nlohmann::json;

json axis_json(const ViewAxis& a) {
  return {{"name", a.name}, {"unit", a.unit}};
}

// Reads fields of one JSON object, every size checked against its limit before allocating.
struct Reader {
  const json& j;
  std::string where;

  [[noreturn]] void fail(const std::string& what) const { throw Error(where + ": " + what); }
  const json& at(const char* key) const {
    if (!j.is_object() || !j.contains(key)) fail(std::string("no \"") + key + "\"");
    return j.at(key);
  }
  std::string text(const char* key) const {
    const json& v = at(key);
    if (!v.is_string()) fail(std::string("\"") + key + "\" is not a string");
    if (v.get_ref<const std::string&>().size() > kMaxViewNameBytes)
      fail(std::string("\"") + key + "\" is over " + std::to_string(kMaxViewNameBytes) + " bytes");
    return v.get<std::string>();
  }
  int64_t integer(const char* key, int64_t lo, int64_t hi) const {
    const json& v = at(key);
    if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
      fail(std::string("\"") + key + "\" is not an integer in " + std::to_string(lo) + ".." +
           std::to_string(hi));
    return v.get<int64_t>();
  }
  double number(const char* key) const {
    const json& v = at(key);
    if (!v.is_number()) fail(std::string("\"") + key + "\" is not a number");
    return v.get<double>();
  }
  const json& list(const char* key, size_t limit) const {
    const json& v = at(key);
    if (!v.is_array()) fail(std::string("\"") + key + "\" is not an array");
    if (v.size() > limit)
      fail(std::string("\"") + key + "\" holds " + std::to_string(v.size()) + " entries (at most " +
           std::to_string(limit) + ")");
    return v;
  }
  std::vector<float> floats(const char* key, size_t limit) const {
    return float_array_of(at(key), limit, where + ": \"" + key + "\"");
  }
  std::vector<std::string> labels(const char* key, size_t limit) const {
    std::vector<std::string> out;
    for (const json& x : list(key, limit)) {
      if (!x.is_string() || x.get_ref<const std::string&>().size() > kMaxViewNameBytes)
        fail(std::string("\"") + key + "\" holds a label that is no string of at most " +
             std::to_string(kMaxViewNameBytes) + " bytes");
      out.push_back(x.get<std::string>());
    }
    return out;
  }
  ViewAxis axis(const char* key) const {
    Reader r{at(key), where + "." + key};
    return {r.text("name"), r.text("unit")};
  }
  Reader sub(const json& e, const char* key, size_t i) const {
    return {e, where + "." + key + "[" + std::to_string(i) + "]"};
  }
};

constexpr int kMaxAxisCount = 1 << 16;

ViewCurves read_curves(const Reader& r) {
  ViewCurves c;
  c.name = r.text("name");
  c.x = r.axis("x");
  c.y = r.axis("y");
  c.xs = r.floats("xs", kMaxViewSamples);
  c.series = r.labels("series", kMaxViewSeries);
  c.ys = r.floats("ys", kMaxViewCells);
  return c;
}

ViewMatrix read_matrix(const Reader& r) {
  ViewMatrix m;
  m.name = r.text("name");
  m.rows = r.axis("rows");
  m.cols = r.axis("cols");
  m.value = r.axis("value");
  m.row_count = static_cast<int>(r.integer("row_count", 0, kMaxAxisCount));
  m.col_count = static_cast<int>(r.integer("col_count", 0, kMaxAxisCount));
  m.row_labels = r.labels("row_labels", static_cast<size_t>(m.row_count));
  m.col_labels = r.labels("col_labels", static_cast<size_t>(m.col_count));
  m.values = r.floats("values", kMaxViewCells);
  return m;
}

std::string entry_name(const MechanismView& v, const std::string& kind, const std::string& name) {
  return "the " + (v.mechanism.empty() ? std::string("mechanism") : v.mechanism) +
         " view of layer " + std::to_string(v.layer) + ": " + kind + " \"" + name + "\"";
}

}  // namespace

nlohmann::json float_array_json(const std::vector<float>& v, bool binary) {
  if (!binary) return v;
  std::vector<uint8_t> bytes(v.size() * sizeof(float));
  if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
  return json::binary(std::move(bytes));
}

std::vector<float> float_array_of(const nlohmann::json& j, size_t limit, const std::string& what) {
  std::vector<float> out;
  if (j.is_binary()) {
    const auto& b = j.get_binary();
    if (b.size() % sizeof(float) != 0) throw Error(what + " is not float32 data");
    if (b.size() / sizeof(float) > limit)
      throw Error(what + " holds over " + std::to_string(limit) + " values");
    out.resize(b.size() / sizeof(float));
    if (!out.empty()) std::memcpy(out.data(), b.data(), b.size());
    return out;
  }
  if (!j.is_array()) throw Error(what + " is not an array of numbers");
  if (j.size() > limit) throw Error(what + " holds over " + std::to_string(limit) + " values");
  out.reserve(j.size());
  for (const json& x : j) {
    if (!x.is_number()) throw Error(what + " holds a value that is not a number");
    out.push_back(x.get<float>());
  }
  return out;
}

const ViewCurves* MechanismView::find_curves(const std::string& name) const {
  for (const ViewCurves& c : curves)
    if (c.name == name) return &c;
  return nullptr;
}

const ViewMatrix* MechanismView::find_matrix(const std::string& name) const {
  for (const ViewMatrix& m : matrices)
    if (m.name == name) return &m;
  return nullptr;
}

const ViewScalar* MechanismView::find_scalar(const std::string& name, int head) const {
  for (const ViewScalar& s : scalars)
    if (s.name == name && s.head == head) return &s;
  return nullptr;
}

double MechanismView::scalar(const std::string& name, double fallback) const {
  const ViewScalar* s = find_scalar(name);
  return s ? s->value : fallback;
}

std::string MechanismView::text(const std::string& name) const {
  for (const ViewText& t : texts)
    if (t.name == name) return t.value;
  return "";
}

const MechanismView* MechanismFrame::layer(int index) const {
  for (const MechanismView& v : layers)
    if (v.layer == index) return &v;
  return nullptr;
}

void check_mechanism_view(const MechanismView& v) {
  auto refuse = [&](const std::string& what) { throw Error(what); };
  if (v.layer < 0 || v.layer > kMaxAxisCount)
    refuse("a mechanism view of layer " + std::to_string(v.layer) + " (layers are 0.." +
           std::to_string(kMaxAxisCount) + ")");
  if (v.curves.size() > kMaxViewEntries || v.matrices.size() > kMaxViewEntries ||
      v.scalars.size() > kMaxViewEntries || v.texts.size() > kMaxViewEntries)
    refuse(entry_name(v, "entries", "*") + " number over " + std::to_string(kMaxViewEntries));
  for (const ViewCurves& c : v.curves) {
    if (c.xs.empty() || c.xs.size() > kMaxViewSamples || c.series.size() > kMaxViewSeries ||
        c.ys.size() != c.series.size() * c.xs.size())
      refuse(entry_name(v, "curves", c.name) + " hold " + std::to_string(c.ys.size()) +
             " values for " + std::to_string(c.series.size()) + " series of " +
             std::to_string(c.xs.size()) + " samples (at most " + std::to_string(kMaxViewSamples) +
             " samples and " + std::to_string(kMaxViewSeries) + " series)");
  }
  for (const ViewMatrix& m : v.matrices) {
    const size_t cells = static_cast<size_t>(std::max(m.row_count, 0)) *
                         static_cast<size_t>(std::max(m.col_count, 0));
    if (m.row_count < 1 || m.col_count < 1 || cells > kMaxViewCells || m.values.size() != cells ||
        (!m.row_labels.empty() && m.row_labels.size() != static_cast<size_t>(m.row_count)) ||
        (!m.col_labels.empty() && m.col_labels.size() != static_cast<size_t>(m.col_count)))
      refuse(entry_name(v, "matrix", m.name) + " holds " + std::to_string(m.values.size()) +
             " values and " + std::to_string(m.row_labels.size()) + " x " +
             std::to_string(m.col_labels.size()) + " labels for " + std::to_string(m.row_count) +
             " x " + std::to_string(m.col_count) + " cells (at most " +
             std::to_string(kMaxViewCells) + ")");
  }
  for (const ViewScalar& s : v.scalars)
    if (s.head < -1 || s.head > kMaxAxisCount)
      refuse(entry_name(v, "scalar", s.name) + " of head " + std::to_string(s.head));
}

nlohmann::json mechanism_view_to_json(const MechanismView& v, bool binary) {
  json curves = json::array(), matrices = json::array(), scalars = json::array(),
       texts = json::array();
  for (const ViewCurves& c : v.curves)
    curves.push_back({{"name", c.name},
                      {"x", axis_json(c.x)},
                      {"y", axis_json(c.y)},
                      {"xs", float_array_json(c.xs, binary)},
                      {"series", c.series},
                      {"ys", float_array_json(c.ys, binary)}});
  for (const ViewMatrix& m : v.matrices)
    matrices.push_back({{"name", m.name},
                        {"rows", axis_json(m.rows)},
                        {"cols", axis_json(m.cols)},
                        {"value", axis_json(m.value)},
                        {"row_count", m.row_count},
                        {"col_count", m.col_count},
                        {"row_labels", m.row_labels},
                        {"col_labels", m.col_labels},
                        {"values", float_array_json(m.values, binary)}});
  for (const ViewScalar& s : v.scalars)
    scalars.push_back({{"name", s.name}, {"unit", s.unit}, {"head", s.head}, {"value", s.value}});
  for (const ViewText& t : v.texts) texts.push_back({{"name", t.name}, {"value", t.value}});
  return {{"mechanism", v.mechanism}, {"layer", v.layer},   {"curves", curves},
          {"matrices", matrices},     {"scalars", scalars}, {"texts", texts}};
}

MechanismView mechanism_view_from_json(const nlohmann::json& j, const std::string& where) {
  const Reader r{j, where};
  if (!j.is_object()) r.fail("a mechanism view is not an object");
  MechanismView v;
  v.mechanism = r.text("mechanism");
  v.layer = static_cast<int>(r.integer("layer", 0, kMaxAxisCount));
  const json& curves = r.list("curves", kMaxViewEntries);
  for (size_t i = 0; i < curves.size(); ++i)
    v.curves.push_back(read_curves(r.sub(curves[i], "curves", i)));
  const json& matrices = r.list("matrices", kMaxViewEntries);
  for (size_t i = 0; i < matrices.size(); ++i)
    v.matrices.push_back(read_matrix(r.sub(matrices[i], "matrices", i)));
  const json& scalars = r.list("scalars", kMaxViewEntries);
  for (size_t i = 0; i < scalars.size(); ++i) {
    const Reader s = r.sub(scalars[i], "scalars", i);
    v.scalars.push_back({s.text("name"), s.text("unit"),
                         static_cast<int>(s.integer("head", -1, kMaxAxisCount)),
                         s.number("value")});
  }
  const json& texts = r.list("texts", kMaxViewEntries);
  for (size_t i = 0; i < texts.size(); ++i) {
    const Reader t = r.sub(texts[i], "texts", i);
    v.texts.push_back({t.text("name"), t.text("value")});
  }
  try {
    check_mechanism_view(v);
  } catch (const Error& e) {
    r.fail(e.what());
  }
  return v;
}

nlohmann::json mechanism_frames_to_json(const std::vector<MechanismFrame>& frames) {
  json list = json::array();
  for (const MechanismFrame& f : frames) {
    json layers = json::array();
    for (const MechanismView& v : f.layers) layers.push_back(mechanism_view_to_json(v, false));
    list.push_back({{"step", f.step}, {"layers", std::move(layers)}});
  }
  return {{"format", "attnlab-mechanism-views"}, {"version", 1}, {"frames", std::move(list)}};
}

std::vector<MechanismFrame> mechanism_frames_from_json(const nlohmann::json& j,
                                                       const std::string& where) {
  const Reader r{j, where};
  if (!j.is_object() || j.value("format", "") != "attnlab-mechanism-views")
    r.fail("not an attnlab mechanism-views file (\"format\": \"attnlab-mechanism-views\")");
  if (r.integer("version", 0, 1 << 20) != 1)
    r.fail("version " + j.at("version").dump() + " (this attnlab reads version 1)");
  std::vector<MechanismFrame> frames;
  const json& list = r.list("frames", kMaxMechanismFrames);
  for (size_t i = 0; i < list.size(); ++i) {
    const Reader f = r.sub(list[i], "frames", i);
    MechanismFrame frame;
    frame.step = f.integer("step", 0, std::numeric_limits<int64_t>::max());
    const json& layers = f.list("layers", kMaxAxisCount);
    for (size_t l = 0; l < layers.size(); ++l)
      frame.layers.push_back(
          mechanism_view_from_json(layers[l], f.where + ".layers[" + std::to_string(l) + "]"));
    frames.push_back(std::move(frame));
  }
  return frames;
}

void append_thinned(std::vector<MechanismFrame>& history, MechanismFrame frame, size_t keep) {
  history.push_back(std::move(frame));
  if (history.size() <= keep) return;
  std::vector<MechanismFrame> kept;
  for (size_t i = 0; i + 1 < history.size(); i += 2) kept.push_back(std::move(history[i]));
  kept.push_back(std::move(history.back()));
  history = std::move(kept);
}

}  // namespace attn
