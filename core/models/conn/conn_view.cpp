// The Connection Transformer's view as a generic MechanismView and back (core/models/conn/conn_view.h),
// and the hooks its architecture row gives the records' readers. Torch-free.
#include "core/models/conn/conn_view.h"

#include <cmath>
#include <filesystem>

#include "core/base/error.h"
#include "core/base/file_io.h"

namespace attn {
namespace {

constexpr const char* kMechanism = "conn";
constexpr const char* kStepUnit = "step";

void add_scalar(MechanismView& v, const char* name, double value, const char* unit = "") {
  v.scalars.push_back({name, unit, -1, value});
}

void add_series(MechanismView& v, const char* name, const char* y, const Series& s) {
  if (s.empty()) return;
  ViewCurves c;
  c.name = name;
  c.x = {"step", ""};
  c.y = {y, ""};
  for (const int64_t step : s.steps) c.xs.push_back(static_cast<float>(step));
  c.series = {y};
  c.ys = s.values;
  v.curves.push_back(std::move(c));
}

Series series_of(const ViewCurves* c) {
  Series s;
  if (!c || c->series.empty()) return s;
  for (size_t i = 0; i < c->xs.size(); ++i) {
    s.steps.push_back(std::llround(c->xs[i]));
    s.values.push_back(c->ys[i]);
  }
  return s;
}

void add_eigenvalues(MechanismView& v, const std::vector<float>& re, const std::vector<float>& im) {
  if (re.empty()) return;
  ViewCurves c;
  c.name = "eigenvalues";
  c.x = {"Re", ""};
  c.y = {"Im", ""};
  c.xs = re;
  c.series = {"I + C"};
  c.ys = im;
  v.curves.push_back(std::move(c));
}

void add_matrix(MechanismView& v, const char* name, int rows, int cols, ViewAxis row_axis,
                ViewAxis col_axis, ViewAxis value, std::vector<float> values) {
  if (values.empty() || rows <= 0 || cols <= 0) return;
  ViewMatrix m;
  m.name = name;
  m.rows = std::move(row_axis);
  m.cols = std::move(col_axis);
  m.value = std::move(value);
  m.row_count = rows;
  m.col_count = cols;
  m.values = std::move(values);
  v.matrices.push_back(std::move(m));
}

void add_c(MechanismView& v, const ConnView& c) {
  if (!c.matrix) return;
  add_matrix(v, "C", c.slots, c.slots, {"slot i (sends)", ""}, {"slot j (receives)", ""},
             {"C_ij", ""}, *c.matrix);
  add_scalar(v, "matrix_step", static_cast<double>(c.matrix_step), kStepUnit);
}

void add_spectrum(MechanismView& v, const ConnView& c) {
  add_eigenvalues(v, c.eigen_re, c.eigen_im);
  add_scalar(v, "spectral_radius", c.exact_radius);
  add_scalar(v, "spectral_norm", c.exact_norm);
  add_scalar(v, "eigen_step", static_cast<double>(c.eigen_step), kStepUnit);
}

}  // namespace

MechanismView conn_record_view(const ConnView& c) {
  MechanismView v;
  v.mechanism = kMechanism;
  add_c(v, c);
  add_spectrum(v, c);
  return v;
}

MechanismView conn_mechanism_view(const ConnView& c) {
  MechanismView v = conn_record_view(c);
  for (const auto& [name, value] : std::vector<std::pair<const char*, double>>{
           {"slots", c.slots},
           {"d_model", c.d_model},
           {"steps", c.steps},
           {"heads", c.heads},
           {"limit", c.limit},
           {"tracking", c.tracking ? 1 : 0},
           {"parameters", static_cast<double>(c.parameters)},
           {"spec_formula", static_cast<double>(c.spec_formula)},
           {"control_events", static_cast<double>(c.control_events)},
           {"estimate_error", c.estimate_error},
           {"link_threshold", c.stats.threshold}})
    add_scalar(v, name, value);
  add_scalar(v, "trace_step", static_cast<double>(c.trace_step), kStepUnit);
  v.texts = {{"mixing", c.mixing}, {"variant", c.variant}, {"control", c.control}};
  add_series(v, "spectral_radius_estimate", "rho(I + C)", c.spectral_radius);
  add_series(v, "spectral_norm_estimate", "||I + C||_2", c.spectral_norm);
  if (c.slots > 0 && c.trace.size() % static_cast<size_t>(c.slots) == 0)
    add_matrix(v, "trace", static_cast<int>(c.trace.size() / c.slots), c.slots, {"step k", ""},
               {"slot", ""}, {"state norm", ""}, c.trace);
  return v;
}

std::shared_ptr<const std::vector<MechanismView>> conn_model_views(const ConnView& v) {
  return std::make_shared<const std::vector<MechanismView>>(
      std::vector<MechanismView>{conn_mechanism_view(v)});
}

ConnView conn_view_from(const MechanismView& v) {
  ConnView c;
  auto integer = [&](const char* name, int64_t fallback) {
    return static_cast<int64_t>(std::llround(v.scalar(name, static_cast<double>(fallback))));
  };
  c.slots = static_cast<int>(integer("slots", 0));
  c.d_model = static_cast<int>(integer("d_model", 0));
  c.steps = static_cast<int>(integer("steps", 0));
  c.heads = static_cast<int>(integer("heads", 1));
  c.limit = v.scalar("limit", 0);
  c.tracking = v.scalar("tracking", 0) != 0;
  c.parameters = integer("parameters", 0);
  c.spec_formula = integer("spec_formula", 0);
  c.control_events = integer("control_events", 0);
  c.estimate_error = v.scalar("estimate_error", 0);
  c.mixing = v.text("mixing");
  c.variant = v.text("variant");
  c.control = v.text("control");
  c.spectral_radius = series_of(v.find_curves("spectral_radius_estimate"));
  c.spectral_norm = series_of(v.find_curves("spectral_norm_estimate"));
  if (const ViewCurves* e = v.find_curves("eigenvalues"); e && !e->series.empty()) {
    c.eigen_re = e->xs;
    c.eigen_im = e->ys;
  }
  c.eigen_step = integer("eigen_step", -1);
  c.exact_radius = v.scalar("spectral_radius", 0);
  c.exact_norm = v.scalar("spectral_norm", 0);
  c.stats.threshold = v.scalar("link_threshold", c.stats.threshold);
  if (const ViewMatrix* m = v.find_matrix("C")) {
    if (m->row_count != m->col_count || (c.slots && m->row_count != c.slots))
      throw Error("the conn view's C is " + std::to_string(m->row_count) + " x " +
                  std::to_string(m->col_count) + ", not slots x slots (" + std::to_string(c.slots) +
                  ")");
    c.slots = m->row_count;
    c.matrix = std::make_shared<const std::vector<float>>(m->values);
    c.matrix_step = integer("matrix_step", -1);
    c.stats = compute_conn_stats(m->values.data(), c.slots, c.stats.threshold);
  }
  if (const ViewMatrix* t = v.find_matrix("trace"); t && t->col_count == c.slots) {
    c.trace = t->values;
    c.trace_step = integer("trace_step", -1);
  }
  return c;
}

std::shared_ptr<const ConnView> conn_view_of(const Snapshot& s) {
  const MechanismView* v = s.model_view(kMechanism);
  return v ? std::make_shared<const ConnView>(conn_view_from(*v)) : nullptr;
}

bool has_conn_matrix(const Snapshot& s) {
  const MechanismView* v = s.model_view(kMechanism);
  return v && v->find_matrix("C");
}

void check_conn_view(const MechanismView& v, const ModelConfig& m) {
  if (v.mechanism != kMechanism)
    throw Error("holds a model view of \"" + v.mechanism +
                "\"; the run's model is a Connection Transformer");
  const int slots = m.conn.slots;
  if (const ViewMatrix* c = v.find_matrix("C");
      c && (c->row_count != slots || c->col_count != slots))
    throw Error("holds C of " + std::to_string(c->row_count) + " slots; the run's model has " +
                std::to_string(slots) + " (model.conn.slots)");
  if (const ViewCurves* e = v.find_curves("eigenvalues"); e && e->xs.size() > size_t(slots))
    throw Error("holds more eigenvalues than C has slots");
}

MechanismView conn_legacy_record_view(const nlohmann::json& j, int64_t step) {
  const auto slots = j.at("slots").get<int>();
  if (slots <= 0 || size_t(slots) * size_t(slots) > kMaxViewCells)
    throw Error("a conn record of " + std::to_string(slots) + " slots (1 to " +
                std::to_string(static_cast<int>(std::sqrt(double(kMaxViewCells)))) + ")");
  const size_t n = size_t(slots);
  ConnView c;
  c.slots = slots;
  c.matrix = std::make_shared<const std::vector<float>>(float_array_of(j.at("c"), n * n, "C"));
  // At most as many eigenvalues as slots: check_conn_view says so against the run's model.
  c.eigen_re = float_array_of(j.at("eig_re"), kMaxViewSamples, "the eigenvalues");
  c.eigen_im = float_array_of(j.at("eig_im"), kMaxViewSamples, "the eigenvalues");
  if (c.matrix->size() != n * n || c.eigen_re.size() != c.eigen_im.size())
    throw Error("a conn record of " + std::to_string(slots) + " slots holds " +
                std::to_string(c.matrix->size()) + " entries of C");
  c.exact_radius = j.at("rho").get<double>();
  c.exact_norm = j.at("norm").get<double>();
  c.matrix_step = c.eigen_step = step;
  MechanismView v = conn_record_view(c);
  check_mechanism_view(v);
  return v;
}

void restore_conn_views(std::vector<MechanismView>& views, const std::string& run_dir,
                        int64_t step) {
  const std::string path = (std::filesystem::path(run_dir) / "conn.json").string();
  if (!regular_file_or_absent(path)) return;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_regular_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + " is not valid JSON: " + e.what());
  }
  if (!j.is_object()) return;
  for (MechanismView& v : views) {
    if (v.mechanism != kMechanism) continue;
    ConnView c = conn_view_from(v);
    auto pairs = [&](const char* key, Series& out) {
      if (!j.contains(key) || !j[key].is_array()) return;
      out = Series();
      for (const auto& p : j[key]) {
        if (!p.is_array() || p.size() != 2) continue;
        out.steps.push_back(p[0].get<int64_t>());
        out.values.push_back(p[1].get<float>());
      }
    };
    pairs("spectral_radius_estimate", c.spectral_radius);
    pairs("spectral_norm_estimate", c.spectral_norm);
    if (c.eigen_re.empty() && j.contains("final") && j["final"].contains("eigenvalues")) {
      for (const auto& z : j["final"]["eigenvalues"]) {
        c.eigen_re.push_back(z.at(0).get<float>());
        c.eigen_im.push_back(z.at(1).get<float>());
      }
      c.eigen_step = step;
      c.exact_radius = j["final"].value("spectral_radius", 0.0);
      c.exact_norm = j["final"].value("spectral_norm", 0.0);
    }
    v = conn_mechanism_view(c);
  }
}

}  // namespace attn
