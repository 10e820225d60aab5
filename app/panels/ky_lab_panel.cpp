#include "panels/ky_lab_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "gui/export_dialog.h"
#include "gui/plot_draw.h"
#include "render/plot/plot_math.h"

namespace attn::gui {
namespace {

constexpr ImU32 kPalette[] = {
    colors::kSkyBlue,           colors::kOrange, colors::kGreen,
    colors::kVermillion,        colors::kYellow, IM_COL32(204, 121, 167, 255),
    IM_COL32(0, 114, 178, 255), colors::kGrey};
const ImVec4 kRed(0.95f, 0.35f, 0.30f, 1.0f);
const ImVec4 kGood(0.40f, 0.80f, 0.55f, 1.0f);

ImU32 component_color(size_t i) {
  return kPalette[i % (sizeof kPalette / sizeof kPalette[0])];
}
ImU32 faded(ImU32 c) {
  return (c & 0x00FFFFFFu) | (110u << IM_COL32_A_SHIFT);
}

bool is_polynomial(KyKind k) {
  return k == KyKind::poly || k == KyKind::poly_literal;
}

// A polyline through (x, y) in data units: breaks at non-finite points; screen coordinates are
// clamped so huge values (a diverging theta) stay drawable and get clipped.
void polyline(ImDrawList* dl, const PlotArea& a, const std::vector<double>& xs,
              const std::vector<double>& ys, ImU32 color, float thickness, bool markers) {
  dl->PushClipRect(a.min, a.max, true);
  std::vector<ImVec2> run;
  auto flush = [&] {
    if (run.size() >= 2)
      dl->AddPolyline(run.data(), static_cast<int>(run.size()), color, ImDrawFlags_None, thickness);
    run.clear();
  };
  for (size_t i = 0; i < xs.size() && i < ys.size(); ++i) {
    const float py = a.py(ys[i]);
    if (!std::isfinite(xs[i]) || std::isnan(py)) {
      flush();
      continue;
    }
    const ImVec2 p(a.px(xs[i]), std::clamp(py, a.min.y - 1e4f, a.max.y + 1e4f));
    run.push_back(p);
    if (markers) dl->AddCircleFilled(p, thickness + 1.5f, color, 8);
  }
  flush();
  dl->PopClipRect();
}

void legend(ImDrawList* dl, const PlotArea& a, ImFont* font,
            const std::vector<std::pair<std::string, ImU32>>& entries) {
  const float fs = font->FontSize;
  float y = a.min.y + 4;
  for (const auto& [label, color] : entries) {
    const ImVec2 sz = font->CalcTextSizeA(fs, FLT_MAX, 0, label.c_str());
    const float x = a.max.x - sz.x - 6;
    dl->AddLine(ImVec2(x - 18, y + fs * 0.5f), ImVec2(x - 4, y + fs * 0.5f), color, 2.0f);
    dl->AddText(font, fs, ImVec2(x, y), IM_COL32(210, 210, 210, 255), label.c_str());
    y += fs + 2;
  }
}

// One theta component of a run against log10 h.
void component_series(const KyResult& r, size_t i, std::vector<double>& xs,
                      std::vector<double>& ys) {
  xs.clear(), ys.clear();
  for (const KyStep& s : r.history) {
    xs.push_back(std::log10(s.h));
    ys.push_back(i < s.theta.size() ? s.theta[i] : NAN);
  }
}

// A plot region of the given height spanning the available width; returns its corners.
std::pair<ImVec2, ImVec2> plot_rect(const char* id, float height, bool* hovered) {
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const ImVec2 size(std::max(100.0f, ImGui::GetContentRegionAvail().x), height);
  ImGui::InvisibleButton(id, size);
  *hovered = ImGui::IsItemHovered();
  return {p0, ImVec2(p0.x + size.x, p0.y + size.y)};
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
  const KyResult* other = other_reading_ ? &*other_reading_ : nullptr;
  if (other) {
    ImGui::SameLine();
    ImGui::TextDisabled("solid: %s, faded: %s", ky_kind_name(r.kind), ky_kind_name(other->kind));
  }

  std::vector<size_t> comps;
  for (size_t i = 0; i < r.theta.size(); ++i)
    if (plot_component_ < 0 || plot_component_ == static_cast<int>(i)) comps.push_back(i);
  render::Range xr, yr;
  std::vector<double> xs, ys;
  for (const KyResult* run : {&r, other}) {
    if (!run) continue;
    for (size_t i : comps) {
      component_series(*run, i, xs, ys);
      for (size_t j = 0; j < xs.size(); ++j) xr.include(xs[j]), yr.include(ys[j]);
      if (i < run->theta.size()) yr.include(run->theta[i]);
    }
  }
  bool hovered = false;
  const auto [p0, p1] = plot_rect("##thetaplot", 230, &hovered);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const PlotArea a = draw_plot_frame(dl, p0, p1, render::padded(xr, 0.03, false),
                                     render::padded(yr, 0.06, false), false, font, "log10 h");
  std::vector<std::pair<std::string, ImU32>> entries;
  for (size_t i : comps) {
    if (other && i < other->theta.size()) {
      component_series(*other, i, xs, ys);
      polyline(dl, a, xs, ys, faded(component_color(i)), 1.5f, false);
    }
    component_series(r, i, xs, ys);
    polyline(dl, a, xs, ys, component_color(i), 1.5f, true);
    draw_dashed_hline(dl, a, r.theta[i], faded(component_color(i)), 1.0f,
                      comps.size() == 1 ? "limit" : nullptr, font);
    if (entries.size() < 8) entries.push_back({r.names[i], component_color(i)});
  }
  legend(dl, a, font, entries);

  // Hover: the raw theta at the nearest h; click: show that h in the fit plot.
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (!hovered || !a.contains(mouse) || r.history.empty()) return;
  const double lx = a.x_at(mouse.x);
  size_t best = 0;
  for (size_t k = 1; k < r.history.size(); ++k)
    if (std::fabs(std::log10(r.history[k].h) - lx) < std::fabs(std::log10(r.history[best].h) - lx))
      best = k;
  if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) fit_step_ = static_cast<int>(best);
  ImGui::BeginTooltip();
  ImGui::Text("h = %.4g (k = %d), click to show it below", r.history[best].h,
              static_cast<int>(best));
  for (size_t i : comps)
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
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(r.names[i].c_str());
        for (const KyResult* run : {poly, literal}) {
          ImGui::TableNextColumn();
          if (run && i < run->theta.size()) ImGui::Text("%.10g", run->theta[i]);
        }
      }
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted("converged");
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
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r.names[i].c_str());
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

void KyLabPanel::draw_fit_plot(ImFont* font) {
  const KyResult& r = *result_;
  if (r.history.empty() || !f_) return;
  ImGui::SetNextItemWidth(200);
  ImGui::SliderInt("k", &fit_step_, 0, static_cast<int>(r.history.size()) - 1);
  const KyStep& step = r.history[fit_step_];
  ImGui::SameLine();
  ImGui::Text("h = %.4g", step.h);

  const double x0 = computed_.x0;
  const int points = r.kind == KyKind::poly ? computed_.settings.degree : 1;
  const double span = std::max(points * computed_.settings.h0, 1e-6) * 1.5;
  const double lo = x0 - span, hi = x0 + span;
  constexpr int kSamples = 241;
  std::vector<double> ts(kSamples), fs(kSamples), gh(kSamples), gl(kSamples);
  render::Range yr;
  for (int i = 0; i < kSamples; ++i) {
    ts[i] = lo + (hi - lo) * i / (kSamples - 1);
    fs[i] = (*f_)(ts[i]);
    gh[i] = ky_connection(r.kind, step.theta, x0, ts[i]);
    gl[i] = ky_connection(r.kind, r.theta, x0, ts[i]);
    yr.include(fs[i]);  // the range follows f; connection curves that run off are clipped
  }
  std::vector<double> px, py;
  const int n_points = r.kind == KyKind::poly ? computed_.settings.degree + 1 : 2;
  for (int j = 0; j < n_points; ++j) {
    px.push_back(x0 + j * step.h);
    py.push_back((*f_)(px.back()));
    yr.include(py.back());
  }
  bool hovered = false;
  const auto [p0, p1] = plot_rect("##fitplot", 220, &hovered);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const PlotArea a =
      draw_plot_frame(dl, p0, p1, {lo, hi}, render::padded(yr, 0.08, false), false, font, "t");
  polyline(dl, a, ts, fs, colors::kGrey, 3.0f, false);
  polyline(dl, a, ts, gl, colors::kSkyBlue, 1.5f, false);
  polyline(dl, a, ts, gh, colors::kOrange, 1.5f, false);
  dl->PushClipRect(a.min, a.max, true);
  for (size_t j = 0; j < px.size(); ++j)
    if (const float y = a.py(py[j]); !std::isnan(y))
      dl->AddCircle(ImVec2(a.px(px[j]), y), 4.0f, colors::kYellow, 12, 1.5f);
  dl->PopClipRect();
  legend(dl, a, font,
         {{"f", colors::kGrey},
          {"g(t; theta(h))", colors::kOrange},
          {"g(t; limit)", colors::kSkyBlue}});
  if (hovered && a.contains(ImGui::GetIO().MousePos)) {
    const double t = a.x_at(ImGui::GetIO().MousePos.x);
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
