#include "app/panels/mechanisms/ky_lab_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>

#include "app/figures/models/ky_lab_figures.h"
#include "core/base/error.h"

namespace attn::gui {
namespace {

bool is_polynomial(KyKind k) {
  return k == KyKind::poly || k == KyKind::poly_literal;
}

// The settings an Inputs computes with (its kind index resolved).
KySettings settings_of(const KyLabModel::Inputs& in) {
  KySettings s = in.settings;
  s.kind = all_ky_kinds()[static_cast<size_t>(in.kind)];
  return s;
}

void copy_field(char* field, const std::string& text) {
  std::snprintf(field, KyLabModel::kTextCapacity, "%s", text.c_str());
}

}  // namespace

bool KyLabModel::Inputs::operator==(const Inputs& o) const {
  const KySettings &a = settings, &b = o.settings;
  return f == o.f && g == o.g && x0 == o.x0 && kind == o.kind && a.degree == b.degree &&
         a.amplitude == b.amplitude && a.h0 == b.h0 && a.rho == b.rho && a.eps == b.eps &&
         a.max_iterations == b.max_iterations;
}

KyLabModel::KyLabModel() {
  copy_field(f_buf_, in_.f);
  copy_field(g_buf_, in_.g);
  // Example 3.1 depends on nothing the user types: once is enough.
  for (double h : {0.1, 0.01, 0.001}) seed_.push_back(ky_seed_example(h));
}

void KyLabModel::set_f(const std::string& f) {
  copy_field(f_buf_, f);
  in_.f = f_buf_;
}

void KyLabModel::set_g(const std::string& g) {
  copy_field(g_buf_, g);
  in_.g = g_buf_;
}

bool KyLabModel::polynomial() const {
  return result_ && is_polynomial(result_->kind);
}

void KyLabModel::update() {
  if (have_computed_ && in_ == computed_) return;
  computed_ = in_;
  have_computed_ = true;
  error_.clear(), chain_error_.clear(), reference_label_.clear();
  error_position_ = -1;
  f_.reset(), result_.reset(), other_reading_.reset(), chain_.reset();
  reference_.clear();
  const KySettings s = settings_of(in_);
  try {
    validate_ky_settings(s);
    try {
      f_.emplace(in_.f);
    } catch (const ExpressionError& e) {
      error_position_ = e.position;
      throw;
    }
    result_ = ky_transform(*f_, in_.x0, s);
  } catch (const std::exception& e) {
    error_ = e.what();
    return;
  }
  second_opinion(s);
  try {
    const Expression g(in_.g);
    chain_ = ky_chain_check(*f_, g, in_.x0, s);
  } catch (const std::exception& e) {
    chain_error_ = std::string("g: ") + e.what();
  }
  set_fit_step(fit_step_);
  set_component(component_);
}

// The second opinion: the other polynomial reading, or (f, f') from a degree-2 fit turned into
// the limit each non-polynomial kind should reach.
void KyLabModel::second_opinion(const KySettings& s) {
  try {
    if (is_polynomial(s.kind)) {
      other_reading_ = figures::ky_other_reading(ky_function(*f_), in_.x0, s);
      return;
    }
    KySettings o = s;
    o.kind = KyKind::poly, o.degree = 2;
    const KyResult fit = ky_transform(*f_, in_.x0, o);
    const double value = fit.theta[0], slope = fit.theta[1], m = s.amplitude;
    const double a = slope > 0 ? m : slope < 0 ? -m : 0.0;
    if (s.kind == KyKind::linear) reference_ = {slope, value};
    if (s.kind == KyKind::exp) reference_ = {a, std::fabs(slope) / m, value - a};
    if (s.kind == KyKind::harmonic) reference_ = {a, std::fabs(slope) / m, value};
    reference_label_ = "expected from f, f' (poly fit)";
  } catch (const std::exception&) {  // the main result stands on its own
  }
}

void KyLabModel::set_component(int c) {
  const int n = result_ ? static_cast<int>(result_->theta.size()) : 0;
  component_ = c >= 0 && c < n ? c : -1;
}

int KyLabModel::steps() const {
  return result_ ? static_cast<int>(result_->history.size()) : 0;
}

void KyLabModel::set_fit_step(int k) {
  fit_step_ = std::clamp(k, 0, std::max(0, steps() - 1));
}

fig::Figure KyLabModel::theta_figure() const {
  if (!result_) throw Error("no KY transform computed: " + error_);
  return figures::ky_theta_figure(*result_, other_reading_ ? &*other_reading_ : nullptr,
                                  component_);
}

fig::Figure KyLabModel::fit_figure() const {
  if (!result_ || !f_) throw Error("no KY transform computed: " + error_);
  return figures::ky_fit_figure(*result_, ky_function(*f_), computed_.x0, settings_of(computed_),
                                fit_step_);
}

fig::Figure KyLabModel::convergence_figure() const {
  if (!result_ || !f_) throw Error("no KY transform computed: " + error_);
  const double x0 = computed_.x0, span = figures::ky_fit_span(*result_, settings_of(computed_));
  return figures::ky_convergence_figure(*result_, ky_function(*f_), x0, x0 - span, x0 + span);
}

double KyLabModel::f_at(double t) const {
  return f_ ? (*f_)(t) : NAN;
}

nlohmann::json KyLabModel::report() const {
  nlohmann::json out = {{"f", computed_.f},
                        {"x0", computed_.x0},
                        {"kind", ky_kind_name(settings_of(computed_).kind)},
                        {"error", error_},
                        {"component", component_},
                        {"fit_step", fit_step_}};
  if (result_) {
    out["converged"] = result_->converged;
    out["theta"] = result_->theta;
    out["steps"] = steps();
  }
  return out;
}

}  // namespace attn::gui
