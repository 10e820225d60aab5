#include "core/attention/neural/neural_view.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/base/error.h"

namespace attn {
namespace {

using json = nlohmann::json;

// The request's fields by name, for the JSON form and the view's "request.<field>" scalars.
struct RequestField {
  const char* name;
  float NeuralViewRequest::*real;  // null for the integer fields
  int NeuralViewRequest::*integer;
};
const RequestField kRequestFields[] = {
    {"layer", nullptr, &NeuralViewRequest::layer},
    {"head", nullptr, &NeuralViewRequest::head},
    {"x_min", &NeuralViewRequest::x_min, nullptr},
    {"x_max", &NeuralViewRequest::x_max, nullptr},
    {"y_min", &NeuralViewRequest::y_min, nullptr},
    {"y_max", &NeuralViewRequest::y_max, nullptr},
    {"grid", nullptr, &NeuralViewRequest::grid},
    {"query_x", &NeuralViewRequest::query_x, nullptr},
    {"query_y", &NeuralViewRequest::query_y, nullptr},
    {"key_angle", &NeuralViewRequest::key_angle, nullptr},
    {"slice_min", &NeuralViewRequest::slice_min, nullptr},
    {"slice_max", &NeuralViewRequest::slice_max, nullptr},
};

double field_value(const NeuralViewRequest& r, const RequestField& f) {
  return f.real ? static_cast<double>(r.*f.real) : static_cast<double>(r.*f.integer);
}

// Values are clamped to +-1e6 (finite in float and int, so a recorded view stays valid JSON);
// the range, grid and head are clamped again where they are used.
void set_field(NeuralViewRequest& r, const RequestField& f, double v) {
  v = std::clamp(v, -1e6, 1e6);
  if (f.real)
    r.*f.real = static_cast<float>(v);
  else
    r.*f.integer = static_cast<int>(v);
}

const char* const kScalarParameter = "b_a";  // the one parameter shown as its signed value

std::string head_name(const char* what, int head) {
  return std::string(what) + " head " + std::to_string(head);
}

ViewMatrix table_matrix(const NeuralLayerInfo& info, const char* name, bool gradient) {
  ViewMatrix m;
  m.name = name;
  m.rows = {"head", ""};
  m.cols = {"parameter", ""};
  m.value = {gradient ? "gradient norm" : "norm", ""};
  m.row_count = static_cast<int>(info.parameters.size());
  for (size_t h = 0; h < info.parameters.size(); ++h) {
    m.row_labels.push_back(std::to_string(h));
    for (const NeuralParameterStat& p : info.parameters[h]) {
      if (p.scalar) continue;
      if (h == 0) m.col_labels.push_back(p.name);
      m.values.push_back(static_cast<float>(gradient ? p.gradient : p.value));
    }
  }
  m.col_count = static_cast<int>(m.col_labels.size());
  return m;
}

void add_surface(MechanismView& v, const NeuralScoreSurface& s, bool first) {
  const ViewAxis x{"x", ""}, y{"y", ""}, score{"score", ""};
  if (first) {
    v.curves.push_back({"grid", x, y, s.xs, {"y"}, s.ys});
    v.matrices.push_back({"paraboloid", y, x, score, s.grid, s.grid, {}, {}, s.paraboloid});
  }
  v.matrices.push_back(
      {head_name("learned", s.head), y, x, score, s.grid, s.grid, {}, {}, s.learned});
  std::vector<float> ys = s.slice_learned;
  ys.insert(ys.end(), s.slice_dot.begin(), s.slice_dot.end());
  v.curves.push_back(
      {head_name("slice", s.head), {"t", ""}, score, s.slice_t, {"learned", "dot"}, std::move(ys)});
}

const ViewMatrix& need_matrix(const MechanismView& v, const std::string& name) {
  const ViewMatrix* m = v.find_matrix(name);
  if (!m) throw Error("neural view of layer " + std::to_string(v.layer) + ": no matrix " + name);
  return *m;
}

NeuralLayerInfo layer_info_of(const MechanismView& v) {
  NeuralLayerInfo info;
  info.layer = v.layer;
  info.heads = static_cast<int>(v.scalar("heads", 0));
  info.head_dim = static_cast<int>(v.scalar("head_dim", 0));
  info.reduced_dim = static_cast<int>(v.scalar("reduced_dim", 0));
  info.down_projection = v.scalar("down_projection", 0) != 0;
  info.hidden = static_cast<int>(v.scalar("hidden", 0));
  info.activation = v.text("activation");
  if (!v.find_matrix("parameters")) return info;  // an old views.rec record: surfaces only
  const ViewMatrix& values = need_matrix(v, "parameters");
  const ViewMatrix* grads = v.find_matrix("gradients");  // absent before the first backward
  if ((grads && (grads->row_count != values.row_count || grads->col_count != values.col_count)) ||
      values.col_labels.size() != static_cast<size_t>(values.col_count))
    throw Error("neural view of layer " + std::to_string(v.layer) +
                ": its parameter and gradient tables disagree");
  for (int h = 0; h < values.row_count; ++h) {
    std::vector<NeuralParameterStat> row;
    for (int c = 0; c < values.col_count; ++c) {
      const size_t i = static_cast<size_t>(h) * values.col_count + c;
      const double g = grads ? grads->values[i] : 0.0;
      row.push_back({values.col_labels[c], false, values.values[i], g, grads != nullptr});
    }
    const ViewScalar* value = v.find_scalar(kScalarParameter, h);
    const ViewScalar* grad = v.find_scalar(std::string("grad ") + kScalarParameter, h);
    if (value)
      row.push_back(
          {kScalarParameter, true, value->value, grad ? grad->value : 0.0, grad != nullptr});
    info.parameters.push_back(std::move(row));
  }
  return info;
}

NeuralViewRequest recorded_request(const MechanismView& v) {
  NeuralViewRequest r;
  for (const RequestField& f : kRequestFields)
    set_field(r, f, v.scalar(std::string("request.") + f.name, field_value(r, f)));
  return r;
}

NeuralScoreSurface surface_of(const MechanismView& v, int head, const NeuralViewRequest& r) {
  NeuralScoreSurface s;
  s.layer = v.layer;
  s.head = head;
  s.note = v.text("note");
  const ViewCurves* grid = v.find_curves("grid");
  const ViewMatrix* learned = v.find_matrix(head_name("learned", head));
  const ViewMatrix* paraboloid = v.find_matrix("paraboloid");
  const ViewCurves* slice = v.find_curves(head_name("slice", head));
  if (!grid || !learned || !paraboloid || !slice || slice->series.size() != 2) {
    if (s.note.empty()) s.note = "no surface recorded for head " + std::to_string(head);
    return s;
  }
  s.grid = static_cast<int>(grid->xs.size());
  s.xs = grid->xs;
  s.ys = grid->ys;
  s.learned = learned->values;
  s.paraboloid = paraboloid->values;
  s.query_x = std::isfinite(r.query_x) ? r.query_x : 0.0f;
  s.query_y = std::isfinite(r.query_y) ? r.query_y : 0.0f;
  s.key_angle = std::isfinite(r.key_angle) ? r.key_angle : 0.0f;
  s.slice_t = slice->xs;
  s.slice_learned.assign(slice->series_values(0), slice->series_values(0) + slice->xs.size());
  s.slice_dot.assign(slice->series_values(1), slice->series_values(1) + slice->xs.size());
  s.available = true;
  return s;
}

}  // namespace

json neural_request_to_json(const NeuralViewRequest& request) {
  json j = json::object();
  for (const RequestField& f : kRequestFields)
    if (f.real)
      j[f.name] = request.*f.real;
    else
      j[f.name] = request.*f.integer;
  return j;
}

NeuralViewRequest neural_request_from_json(const json& j) {
  if (!j.is_object()) throw Error("neural view request: not a JSON object");
  NeuralViewRequest r;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const RequestField* f = std::find_if(std::begin(kRequestFields), std::end(kRequestFields),
                                         [&](const RequestField& k) { return it.key() == k.name; });
    if (f == std::end(kRequestFields))
      throw Error("neural view request: unknown key \"" + it.key() + "\"");
    if (!it.value().is_number() || !std::isfinite(it.value().get<double>()))
      throw Error("neural view request: \"" + it.key() + "\" is not a finite number");
    set_field(r, *f, it.value().get<double>());
  }
  return r;
}

MechanismView neural_mechanism_view(const NeuralLayerInfo& info,
                                    const std::vector<NeuralScoreSurface>& surfaces,
                                    const NeuralViewRequest& request) {
  MechanismView v;
  v.layer = info.layer;
  if (!info.parameters.empty()) {  // a view has no empty matrix
    v.matrices.push_back(table_matrix(info, "parameters", false));
    // Only when every tensor has one (JSON has no NaN): before the first backward pass, none.
    bool gradients = true;
    for (const auto& head : info.parameters)
      for (const NeuralParameterStat& p : head)
        gradients = gradients && (p.scalar || p.has_gradient);
    if (gradients) v.matrices.push_back(table_matrix(info, "gradients", true));
  }
  for (size_t h = 0; h < info.parameters.size(); ++h)
    for (const NeuralParameterStat& p : info.parameters[h]) {
      if (!p.scalar) continue;
      const int head = static_cast<int>(h);
      v.scalars.push_back({p.name, "", head, p.value});
      if (p.has_gradient) v.scalars.push_back({"grad " + p.name, "", head, p.gradient});
    }
  v.scalars.push_back({"heads", "", -1, static_cast<double>(info.heads)});
  v.scalars.push_back({"head_dim", "", -1, static_cast<double>(info.head_dim)});
  v.scalars.push_back({"reduced_dim", "", -1, static_cast<double>(info.reduced_dim)});
  v.scalars.push_back({"down_projection", "", -1, info.down_projection ? 1.0 : 0.0});
  v.scalars.push_back({"hidden", "", -1, static_cast<double>(info.hidden)});
  for (const RequestField& f : kRequestFields)
    v.scalars.push_back({std::string("request.") + f.name, "", -1, field_value(request, f)});
  v.texts.push_back({"activation", info.activation});
  for (const NeuralScoreSurface& s : surfaces)
    if (s.available) add_surface(v, s, v.find_curves("grid") == nullptr);
  if (!surfaces.empty() && !surfaces.front().available)
    v.texts.push_back({"note", surfaces.front().note});
  return v;
}

std::shared_ptr<const NeuralView> neural_view_of(const MechanismFrame& frame,
                                                 const NeuralViewRequest* request) {
  auto view = std::make_shared<NeuralView>();
  view->step = frame.step;
  const MechanismView* chosen = nullptr;
  for (const MechanismView& v : frame.layers) {
    if (v.mechanism != "neural") continue;
    view->layers.push_back(layer_info_of(v));
    const int wanted = request ? request->layer : static_cast<int>(v.scalar("request.layer", 0));
    if (!chosen || v.layer == wanted) chosen = &v;
  }
  if (!chosen) return nullptr;
  view->request = recorded_request(*chosen);
  const int head = request ? request->head : view->request.head;
  int recorded = 0;  // heads with a surface (an old record holds no "heads")
  while (chosen->find_matrix(head_name("learned", recorded))) ++recorded;
  const int heads = std::max(1, static_cast<int>(chosen->scalar("heads", recorded)));
  view->surface = surface_of(*chosen, std::clamp(head, 0, heads - 1), view->request);
  return view;
}

MechanismFrame neural_frame_of(const NeuralView& view) {
  MechanismFrame frame;
  frame.step = view.step;
  const NeuralScoreSurface& s = view.surface;
  NeuralViewRequest request = view.request;  // the surface's layer, head, query and angle
  request.layer = s.layer, request.head = s.head;
  request.query_x = s.query_x, request.query_y = s.query_y, request.key_angle = s.key_angle;
  std::vector<NeuralLayerInfo> layers = view.layers;
  if (!view.layer_info(s.layer)) {
    layers.push_back({});
    layers.back().layer = s.layer;
    layers.back().heads = s.head + 1;
  }
  for (const NeuralLayerInfo& info : layers) {
    MechanismView v =
        neural_mechanism_view(info,
                              info.layer == s.layer ? std::vector<NeuralScoreSurface>{s}
                                                    : std::vector<NeuralScoreSurface>(),
                              request);
    v.mechanism = "neural";
    frame.layers.push_back(std::move(v));
  }
  return frame;
}

std::shared_ptr<const NeuralView> neural_view_of(const std::vector<MechanismFrame>& history,
                                                 const NeuralViewRequest* request) {
  return history.empty() ? nullptr : neural_view_of(history.back(), request);
}

MechanismView neural_legacy_view(const json& entry) {
  NeuralScoreSurface n;
  n.available = true;
  n.layer = entry.at("layer").get<int>();
  n.head = entry.at("head").get<int>();
  n.grid = entry.at("grid").get<int>();
  const size_t limit = kMaxViewCells;
  n.xs = float_array_of(entry.at("xs"), limit, "a neural surface's x");
  n.ys = float_array_of(entry.at("ys"), limit, "a neural surface's y");
  n.learned = float_array_of(entry.at("z"), limit, "a neural surface");
  n.query_x = entry.at("qx").get<float>();
  n.query_y = entry.at("qy").get<float>();
  n.key_angle = entry.at("angle").get<float>();
  n.slice_t = float_array_of(entry.at("t"), limit, "a neural slice's t");
  n.slice_learned = float_array_of(entry.at("slice"), limit, "a neural slice");
  const size_t g = static_cast<size_t>(std::max(n.grid, 0));
  if (n.grid < 2 || n.xs.size() != g || n.ys.size() != g || n.learned.size() != g * g ||
      n.slice_t.size() != n.slice_learned.size())
    throw Error("a neural surface of grid " + std::to_string(n.grid) + " holds " +
                std::to_string(n.learned.size()) + " values");
  // The references are formulas of the coordinates: recomputed, not stored.
  n.paraboloid.resize(g * g);
  for (size_t r = 0; r < g; ++r)
    for (size_t c = 0; c < g; ++c) n.paraboloid[r * g + c] = n.xs[c] * n.xs[c] + n.ys[r] * n.ys[r];
  const float ux = std::cos(n.key_angle), uy = std::sin(n.key_angle);
  for (const float t : n.slice_t) n.slice_dot.push_back(n.query_x * t * ux + n.query_y * t * uy);
  MechanismView v;
  v.layer = n.layer;
  NeuralViewRequest request;  // recorded at the default range, for the panel's query and angle
  request.query_x = n.query_x, request.query_y = n.query_y, request.key_angle = n.key_angle;
  request.layer = n.layer;
  add_surface(v, n, true);
  for (const RequestField& f : kRequestFields)
    v.scalars.push_back({std::string("request.") + f.name, "", -1, field_value(request, f)});
  return v;
}

}  // namespace attn
