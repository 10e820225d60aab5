#include "app/panels/mechanisms/ky_lab_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "app/gui/plot/export_dialog.h"
#include "app/gui/window/palette.h"
#include "app/gui/window/widgets.h"
#include "render/plot/colormap.h"

namespace attn::gui {
namespace {

const ImVec4 kRed(0.95f, 0.35f, 0.30f, 1.0f);
const ImVec4 kGood(0.40f, 0.80f, 0.55f, 1.0f);

// Theta component i's colour: the theta figure's (Okabe-Ito by index), for the tooltips.
ImU32 component_color(size_t i) {
  const render::Rgba8 c = render::okabe_ito(static_cast<int>(i));
  return IM_COL32(c.r, c.g, c.b, 255);
}

bool is_polynomial(KyKind k) {
  return k == KyKind::poly || k == KyKind::poly_literal;
}

}  // namespace

bool KyLabPanel::Inputs::operator==(const Inputs& o) const {
  const KySettings &a = settings, &b = o.settings;
  return f == o.f && g == o.g && x0 == o.x0 && kind == o.kind && a.degree == b.degree &&
         a.amplitude == b.amplitude && a.h0 == b.h0 && a.rho == b.rho && a.eps == b.eps &&
         a.max_iterations == b.max_iterations;
}

KyLabPanel::KyLabPanel() {
  std::snprintf(f_buf_, sizeof f_buf_, "%s", in_.f.c_str());
  std::snprintf(g_buf_, sizeof g_buf_, "%s", in_.g.c_str());
  // Example 3.1 depends on nothing the user types: once is enough.
  for (double h : {0.1, 0.01, 0.001}) seed_.push_back(ky_seed_example(h));
}

void KyLabPanel::recompute() {
  computed_ = in_;
  have_computed_ = true;
  error_.clear(), chain_error_.clear(), reference_label_.clear();
  error_position_ = -1;
  f_.reset(), result_.reset(), other_reading_.reset(), chain_.reset();
  reference_.clear();

  KySettings s = in_.settings;
  s.kind = all_ky_kinds()[in_.kind];
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
  // The second opinion: the other polynomial reading, or (f, f') from a degree-2 fit turned
  // into the limit each non-polynomial kind should reach.
  try {
    KySettings o = s;
    if (is_polynomial(s.kind)) {
      o.kind = s.kind == KyKind::poly ? KyKind::poly_literal : KyKind::poly;
      other_reading_ = ky_transform(*f_, in_.x0, o);
    } else {
      o.kind = KyKind::poly, o.degree = 2;
      const KyResult fit = ky_transform(*f_, in_.x0, o);
      const double value = fit.theta[0], slope = fit.theta[1], m = s.amplitude;
      const double a = slope > 0 ? m : slope < 0 ? -m : 0.0;
      if (s.kind == KyKind::linear) reference_ = {slope, value};
      if (s.kind == KyKind::exp) reference_ = {a, std::fabs(slope) / m, value - a};
      if (s.kind == KyKind::harmonic) reference_ = {a, std::fabs(slope) / m, value};
      reference_label_ = "expected from f, f' (poly fit)";
    }
  } catch (const std::exception&) {  // the main result stands on its own
  }
  try {
    const Expression g(in_.g);
    chain_ = ky_chain_check(*f_, g, in_.x0, s);
  } catch (const std::exception& e) {
    chain_error_ = std::string("g: ") + e.what();
  }
  fit_step_ = std::clamp(fit_step_, 0, static_cast<int>(result_->history.size()) - 1);
  if (plot_component_ >= static_cast<int>(result_->theta.size())) plot_component_ = -1;
}

void KyLabPanel::draw(FrameContext& frame) {
  ImFont* small_font = frame.small_font;
  ImFont* font = small_font ? small_font : ImGui::GetFont();
  draw_inputs();
  if (!have_computed_ || !(in_ == computed_)) recompute();

  if (!error_.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kRed);
    ImGui::TextWrapped("%s", error_.c_str());
    if (error_position_ >= 0) {  // the expression again, with a caret under the position
      const std::string& f = computed_.f;
      ImGui::TextUnformatted(f.c_str());
      const size_t pos = std::min<size_t>(error_position_, f.size());
      const float x = ImGui::CalcTextSize(f.substr(0, pos).c_str()).x;
      ImGui::SetCursorPosX(ImGui::GetCursorPosX() + x);
      ImGui::TextUnformatted("^");
    }
    ImGui::PopStyleColor();
  } else if (result_) {
    ImGui::PushStyleColor(ImGuiCol_Text, result_->converged ? kGood : kRed);
    ImGui::TextWrapped("%s", result_->message.c_str());
    ImGui::PopStyleColor();
    if (f_ && !result_->history.empty() && ImGui::SmallButton("Export...")) {
      // The fit plot's range: a few first steps around x0.
      const double x0 = computed_.x0;
      const int points = result_->kind == KyKind::poly ? computed_.settings.degree : 1;
      const double span = std::max(points * computed_.settings.h0, 1e-6) * 1.5;
      gui::request_figure_export(
          figures::ky_convergence_figure(*result_, ky_function(*f_), x0, x0 - span, x0 + span),
          false);
    }
    if (ImGui::CollapsingHeader("theta(h) against h", ImGuiTreeNodeFlags_DefaultOpen))
      draw_theta_plot(font);
    if (ImGui::CollapsingHeader("Parameters and limits", ImGuiTreeNodeFlags_DefaultOpen))
      draw_parameter_table();
    if (ImGui::CollapsingHeader("f and the connection function g(t; theta)",
                                ImGuiTreeNodeFlags_DefaultOpen))
      draw_fit_plot(font);
  }
  constexpr ImGuiTreeNodeFlags kOpen = ImGuiTreeNodeFlags_DefaultOpen;
  if (ImGui::CollapsingHeader("Linear-linear chain rule (seed eq. 32)", kOpen))
    draw_chain_section();
  if (ImGui::CollapsingHeader("The seed's Example 3.1 (x^3 at 1, degree 2)", kOpen))
    draw_seed_note();
}

void KyLabPanel::draw_inputs() {
  ImGui::SetNextItemWidth(-80);
  if (ImGui::InputText("f(x)", f_buf_, sizeof f_buf_)) in_.f = f_buf_;
  ImGui::SetNextItemWidth(110);
  ImGui::InputDouble("x0", &in_.x0, 0, 0, "%g");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(130);
  const auto& kinds = all_ky_kinds();
  if (ImGui::BeginCombo("kind", ky_kind_name(kinds[in_.kind]))) {
    for (size_t i = 0; i < kinds.size(); ++i)
      if (ImGui::Selectable(ky_kind_name(kinds[i]), static_cast<int>(i) == in_.kind))
        in_.kind = static_cast<int>(i);
    ImGui::EndCombo();
  }
  KySettings& s = in_.settings;
  ImGui::SameLine();
  if (is_polynomial(kinds[in_.kind])) {
    ImGui::SetNextItemWidth(110);
    ImGui::SliderInt("degree", &s.degree, 1, kKyMaxDegree);
  } else if (kinds[in_.kind] != KyKind::linear) {
    ImGui::SetNextItemWidth(110);
    ImGui::InputDouble("M (|A| <=)", &s.amplitude, 0, 0, "%g");
  }
  ImGui::SetNextItemWidth(90);
  ImGui::InputDouble("h0", &s.h0, 0, 0, "%g");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(90);
  ImGui::InputDouble("rho", &s.rho, 0, 0, "%g");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(90);
  ImGui::InputDouble("eps", &s.eps, 0, 0, "%g");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "h_k = h0 rho^k; theta(h_k) is extrapolated to h = 0 (Richardson) and\n"
        "the iteration stops when successive estimates differ by < eps.\n"
        "eps = 0: automatic (now %g): 1e-8, raised for poly of degree >= 3\n"
        "to what evaluating f in double allows.",
        ky_eps(s));
}

// theta(h) against h (log x), one line per shown component with its limit dashed; the other
// polynomial reading faded behind. The figure on screen is the one "Export" writes.
fig::Figure KyLabPanel::theta_figure() const {
  const KyResult& r = *result_;
  const KyResult* other = other_reading_ ? &*other_reading_ : nullptr;
  fig::Figure f;
  f.name = "ky-theta";
  f.title = "KY transform of f at x0: theta(h) as h -> 0";
  f.aspect = 0.5;
  fig::Panel p;
  p.x.label = "h";
  p.x.log = true;
  p.y.label = "theta";
  p.grid = true;
  for (size_t i = 0; i < r.theta.size(); ++i) {
    if (plot_component_ >= 0 && plot_component_ != static_cast<int>(i)) continue;
    const fig::Color color = fig::Color::from(render::okabe_ito(static_cast<int>(i)));
    fig::Color pale = color;
    pale.a = 0.45f;
    if (other && i < other->theta.size()) {
      fig::LineSeries o;
      for (const KyStep& st : other->history)
        o.x.push_back(st.h), o.y.push_back(i < st.theta.size() ? st.theta[i] : NAN);
      o.color = pale;
      p.lines.push_back(std::move(o));
    }
    fig::LineSeries line;
    line.name = r.names[i];
    for (const KyStep& st : r.history)
      line.x.push_back(st.h), line.y.push_back(i < st.theta.size() ? st.theta[i] : NAN);
    line.color = color;
    line.width_pt = 1.2;
    fig::ScatterSeries dots;
    dots.x = line.x, dots.y = line.y, dots.color = color, dots.size_pt = 3;
    fig::LineSeries limit;
    if (!line.x.empty()) {
      const auto [lo, hi] = std::minmax_element(line.x.begin(), line.x.end());
      limit.x = {*lo, *hi};
      limit.y = {r.theta[i], r.theta[i]};
    }
    limit.color = pale;
    limit.style = fig::LineStyle::Dashed;
    p.lines.push_back(std::move(line));
    p.lines.push_back(std::move(limit));
    p.scatters.push_back(std::move(dots));
  }
  f.panels.push_back(std::move(p));
  return f;
}

void KyLabPanel::draw_theta_plot(ImFont* font) {
  const KyResult& r = *result_;
  ImGui::SetNextItemWidth(140);
  const char* shown = plot_component_ < 0 ? "all" : r.names[plot_component_].c_str();
  if (ImGui::BeginCombo("component", shown)) {
    if (ImGui::Selectable("all", plot_component_ < 0)) plot_component_ = -1;
    for (size_t i = 0; i < r.names.size(); ++i)
      if (ImGui::Selectable(r.names[i].c_str(), plot_component_ == static_cast<int>(i)))
        plot_component_ = static_cast<int>(i);
    ImGui::EndCombo();
  }
  const fig::Figure figure = theta_figure();
  ImGui::SameLine();
  if (ImGui::SmallButton("Export...##theta")) request_figure_export(figure, false);
  if (other_reading_) {
    ImGui::SameLine();
    ImGui::TextDisabled("solid: %s, faded: %s", ky_kind_name(r.kind),
                        ky_kind_name(other_reading_->kind));
  }
  theta_plot_.draw(figure, ImVec2(std::max(100.0f, ImGui::GetContentRegionAvail().x), 230), font);
  // Hover: the raw theta at the nearest h; click: show that h in the fit plot.
  const auto hit = theta_plot_.hover(figure, 12.0f, true);
  if (!hit || r.history.empty()) return;
  const size_t best = std::min(hit->point, r.history.size() - 1);
  if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) fit_step_ = static_cast<int>(best);
  ImGui::BeginTooltip();
  ImGui::Text("h = %.4g (k = %d), click to show it below", r.history[best].h,
              static_cast<int>(best));
  for (size_t i = 0; i < r.names.size(); ++i)
    if (plot_component_ < 0 || plot_component_ == static_cast<int>(i))
      ImGui::TextColored(ImColor(component_color(i)), "%s = %.10g", r.names[i].c_str(),
                         r.history[best].theta[i]);
  ImGui::EndTooltip();
}

void KyLabPanel::draw_parameter_table() {
  const KyResult& r = *result_;
  constexpr ImGuiTableFlags kFlags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp;
  if (is_polynomial(r.kind)) {
    ImGui::TextUnformatted("Both polynomial readings:");
    const KyResult* poly = r.kind == KyKind::poly ? &r
                           : other_reading_       ? &*other_reading_
                                                  : nullptr;
    const KyResult* literal = r.kind == KyKind::poly_literal ? &r
                              : other_reading_               ? &*other_reading_
                                                             : nullptr;
    if (ImGui::BeginTable("##poly", 3, kFlags)) {
      ImGui::TableSetupColumn("parameter");
      ImGui::TableSetupColumn("poly: n+1 points (-> Taylor f^(k)/k!)");
      ImGui::TableSetupColumn("poly-literal: 2 constraints + min norm");
      ImGui::TableHeadersRow();
      for (size_t i = 0; i < r.theta.size(); ++i) {
        table_row_label(r.names[i].c_str());
        for (const KyResult* run : {poly, literal}) {
          ImGui::TableNextColumn();
          if (run && i < run->theta.size()) ImGui::Text("%.10g", run->theta[i]);
        }
      }
      table_row_label("converged");
      for (const KyResult* run : {poly, literal}) {
        ImGui::TableNextColumn();
        if (run)
          ImGui::TextColored(run->converged ? kGood : kRed, "%s (error %.2g, %d h)",
                             run->converged ? "yes" : "no", run->error, run->iterations);
      }
      ImGui::EndTable();
    }
    ImGui::TextWrapped(
        "With only the seed's two constraints and the minimum-norm rule (Def. 3.4), a_k(h) = D "
        "h^k / sum h^(2m) -> (f, f', 0, ..., 0): eq. 35's Taylor coefficients are reached only "
        "by the fit through the n+1 points x0, x0+h, ..., x0+nh.");
    return;
  }
  if (ImGui::BeginTable("##params", 4, kFlags)) {
    ImGui::TableSetupColumn("parameter");
    ImGui::TableSetupColumn("limit");
    ImGui::TableSetupColumn(reference_label_.empty() ? "expected" : reference_label_.c_str());
    ImGui::TableSetupColumn("difference");
    ImGui::TableHeadersRow();
    for (size_t i = 0; i < r.theta.size(); ++i) {
      table_row_label(r.names[i].c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%.12g", r.theta[i]);
      ImGui::TableNextColumn();
      if (i < reference_.size()) ImGui::Text("%.12g", reference_[i]);
      ImGui::TableNextColumn();
      if (i < reference_.size()) ImGui::Text("%.2g", r.theta[i] - reference_[i]);
    }
    ImGui::EndTable();
  }
  ImGui::TextColored(r.converged ? kGood : kRed, "converged: %s (error %.2g, %d values of h)",
                     r.converged ? "yes" : "no", r.error, r.iterations);
}

// f, g(t; theta(h_k)) and g(t; limit) around x0, with the points the fit at h_k goes through.
fig::Figure KyLabPanel::fit_figure(double* lo_out, double* hi_out) const {
  const KyResult& r = *result_;
  const KyStep& step = r.history[fit_step_];
  const double x0 = computed_.x0;
  const int points = r.kind == KyKind::poly ? computed_.settings.degree : 1;
  const double span = std::max(points * computed_.settings.h0, 1e-6) * 1.5;
  const double lo = x0 - span, hi = x0 + span;
  *lo_out = lo, *hi_out = hi;
  constexpr int kSamples = 241;
  fig::LineSeries f_line, g_step, g_limit;
  double ymin = INFINITY, ymax = -INFINITY;
  for (int i = 0; i < kSamples; ++i) {
    const double t = lo + (hi - lo) * i / (kSamples - 1);
    const double ft = (*f_)(t);
    f_line.x.push_back(t), f_line.y.push_back(ft);
    g_step.x.push_back(t), g_step.y.push_back(ky_connection(r.kind, step.theta, x0, t));
    g_limit.x.push_back(t), g_limit.y.push_back(ky_connection(r.kind, r.theta, x0, t));
    if (std::isfinite(ft)) ymin = std::min(ymin, ft), ymax = std::max(ymax, ft);
  }
  fig::ScatterSeries dots;
  dots.name = "fit points";
  const int n_points = r.kind == KyKind::poly ? computed_.settings.degree + 1 : 2;
  for (int j = 0; j < n_points; ++j) {
    const double t = x0 + j * step.h, ft = (*f_)(t);
    dots.x.push_back(t), dots.y.push_back(ft);
    if (std::isfinite(ft)) ymin = std::min(ymin, ft), ymax = std::max(ymax, ft);
  }
  f_line.name = "f", f_line.color = fig::Color::rgb(0.63f, 0.63f, 0.63f), f_line.width_pt = 2;
  g_step.name = "g(t; theta(h))", g_step.color = fig::Color::from(render::okabe_ito(1));
  g_limit.name = "g(t; limit)", g_limit.color = fig::Color::from(render::okabe_ito(0));
  dots.color = fig::Color::from(render::okabe_ito(4));
  fig::Figure fig;
  fig.name = "ky-fit";
  char title[96];
  std::snprintf(title, sizeof title, "f and its connection functions at h = %.3g", step.h);
  fig.title = title;
  fig.aspect = 0.5;
  fig::Panel p;
  p.x.label = "t";
  p.x.min = lo, p.x.max = hi;
  // The range follows f; connection curves that run off it are clipped.
  if (ymin < ymax) {
    const double pad = 0.08 * (ymax - ymin);
    p.y.min = ymin - pad, p.y.max = ymax + pad;
  }
  p.grid = true;
  p.lines = {std::move(f_line), std::move(g_limit), std::move(g_step)};
  p.scatters.push_back(std::move(dots));
  fig.panels.push_back(std::move(p));
  return fig;
}

void KyLabPanel::draw_fit_plot(ImFont* font) {
  const KyResult& r = *result_;
  if (r.history.empty() || !f_) return;
  ImGui::SetNextItemWidth(200);
  fit_step_ = std::clamp(fit_step_, 0, static_cast<int>(r.history.size()) - 1);
  ImGui::SliderInt("k", &fit_step_, 0, static_cast<int>(r.history.size()) - 1);
  const KyStep& step = r.history[fit_step_];
  ImGui::SameLine();
  ImGui::Text("h = %.4g", step.h);
  double lo = 0, hi = 1;
  const fig::Figure figure = fit_figure(&lo, &hi);
  ImGui::SameLine();
  if (ImGui::SmallButton("Export...##fit")) request_figure_export(figure, false);
  fit_plot_.draw(figure, ImVec2(std::max(100.0f, ImGui::GetContentRegionAvail().x), 220), font);
  if (const auto hit = fit_plot_.hover(figure, 1e6f)) {  // any point: the nearest t
    const double t = hit->x, x0 = computed_.x0;
    ImGui::SetTooltip("t = %.6g\nf = %.10g\ng(h) = %.10g\ng(limit) = %.10g", t, (*f_)(t),
                      ky_connection(r.kind, step.theta, x0, t),
                      ky_connection(r.kind, r.theta, x0, t));
  }
}

void KyLabPanel::draw_chain_section() {
  ImGui::SetNextItemWidth(-80);
  if (ImGui::InputText("g(x)", g_buf_, sizeof g_buf_)) in_.g = g_buf_;
  ImGui::TextDisabled("f o g at x0 = %g, all three with the linear kind", computed_.x0);
  if (!error_.empty()) {
    ImGui::TextDisabled("(fix f first)");
    return;
  }
  if (!chain_error_.empty()) {
    ImGui::TextColored(kRed, "%s", chain_error_.c_str());
    return;
  }
  if (!chain_) return;
  const KyChainCheck& c = *chain_;
  ImGui::Text("u0 = g(x0) = %.10g", c.u0);
  ImGui::Text("grad_L[f](u0)     = (a_f, b_f) = (%.10g, %.10g)", c.f_at_u0.theta[0],
              c.f_at_u0.theta[1]);
  ImGui::Text("grad_L[g](x0)     = (c_g, d_g) = (%.10g, %.10g)", c.g_at_x0.theta[0],
              c.g_at_x0.theta[1]);
  ImGui::Text("grad_L[f o g](x0) = measured   (%.10g, %.10g)", c.fg_at_x0.theta[0],
              c.fg_at_x0.theta[1]);
  ImGui::Text("eq. 32: (a_f c_g, a_f d_g + b_f) = (%.10g, %.10g)", c.eq32_slope, c.eq32_second);
  ImGui::TextColored(c.slope_error < 1e-6 ? kGood : kRed,
                     "slope: |measured - a_f c_g| = %.2g: the classical chain rule holds",
                     c.slope_error);
  ImGui::TextColored(c.eq32_second_error < 1e-6 ? kGood : kRed,
                     "second: |measured - (a_f d_g + b_f)| = %.6g (= |a_f g(x0)|)",
                     c.eq32_second_error);
  ImGui::TextWrapped(
      "With the seed's centred lines (Def. 3.9, b is the value at the base point) f o g has "
      "value b_f = %.10g, so eq. 32's second component is off by a_f d_g. Read b as the "
      "intercept of an uncentred line a t + b and eq. 32 holds: intercept of f o g %.10g, eq. "
      "32 gives %.10g (difference %.2g).",
      c.centred_second, c.fg_intercept, c.eq32_intercept, c.uncentred_second_error);
  if (!c.converged) ImGui::TextColored(kRed, "(not all three transforms converged)");
}

void KyLabPanel::draw_seed_note() {
  ImGui::TextWrapped(
      "The seed compares coefficients in h to get a1 = 3 + h^2, a2 = 3 + h (eqs. 28-29) and the "
      "limit (3, 3, 1). Those do not satisfy its own eq. 26, a2 h^2 + a1 h + 1 = (1+h)^3 (the "
      "residual is h^3), and the two constraints cannot fix a1, a2 anyway. Computed:");
  constexpr ImGuiTableFlags kFlags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp;
  if (ImGui::BeginTable("##seed", 5, kFlags)) {
    for (const char* h :
         {"h", "seed a1, a2", "eq. 26: seed lhs vs (1+h)^3", "literal a1, a2", "3-point a1, a2"})
      ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (const KySeedExample& e : seed_) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%g", e.h);
      ImGui::TableNextColumn();
      ImGui::Text("%.8g, %.8g", e.seed_a1, e.seed_a2);
      ImGui::TableNextColumn();
      ImGui::TextColored(kRed, "%.10g vs %.10g", e.seed_lhs, e.rhs);
      ImGui::TableNextColumn();
      ImGui::Text("%.8g, %.8g", e.literal[1], e.literal[2]);
      ImGui::TableNextColumn();
      ImGui::Text("%.8g, %.8g", e.three_point[1], e.three_point[2]);
    }
    ImGui::EndTable();
  }
  if (!seed_.empty()) {
    const auto& l = seed_.front().literal_limit.theta;
    const auto& p = seed_.front().three_point_limit.theta;
    ImGui::Text(
        "limits (a0, a1, a2): literal min-norm (%.6g, %.6g, %.3g); 3-point (%.6g, %.6g, %.6g)",
        l[0], l[1], std::fabs(l[2]) < 1e-9 ? 0.0 : l[2], p[0], p[1], p[2]);
    ImGui::TextWrapped(
        "So the seed's (a2, a1, a0) = (3, 3, 1) is the 3-point (Taylor) answer; "
        "its own two-constraint system gives (0, 3, 1).");
  }
}

}  // namespace attn::gui
