#include "app/panels/mechanisms/ky_lab_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "app/gui/plot/export_dialog.h"
#include "app/gui/window/palette.h"
#include "app/gui/window/widgets.h"
#include "app/panels/mechanism_panels.h"
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

}  // namespace

void KyLabPanel::draw_error() {
  ImGui::PushStyleColor(ImGuiCol_Text, kRed);
  ImGui::TextWrapped("%s", model_.error().c_str());
  if (model_.error_position() >= 0) {  // the expression again, with a caret under the position
    const std::string& f = model_.computed().f;
    ImGui::TextUnformatted(f.c_str());
    const size_t pos = std::min<size_t>(model_.error_position(), f.size());
    const float x = ImGui::CalcTextSize(f.substr(0, pos).c_str()).x;
    ImGui::SetCursorPosX(ImGui::GetCursorPosX() + x);
    ImGui::TextUnformatted("^");
  }
  ImGui::PopStyleColor();
}

void KyLabPanel::draw(FrameContext& frame) {
  ImFont* font = frame.small_font ? frame.small_font : ImGui::GetFont();
  draw_inputs();
  model_.update();
  constexpr ImGuiTreeNodeFlags kOpen = ImGuiTreeNodeFlags_DefaultOpen;
  if (!model_.error().empty()) {
    draw_error();
  } else if (const auto& r = model_.result()) {
    ImGui::PushStyleColor(ImGuiCol_Text, r->converged ? kGood : kRed);
    ImGui::TextWrapped("%s", r->message.c_str());
    ImGui::PopStyleColor();
    if (model_.steps() > 0 && ImGui::SmallButton("Export..."))
      request_figure_export(model_.convergence_figure(), false);
    if (ImGui::CollapsingHeader("theta(h) against h", kOpen)) draw_theta_plot(font);
    if (ImGui::CollapsingHeader("Parameters and limits", kOpen)) draw_parameter_table();
    if (ImGui::CollapsingHeader("f and the connection function g(t; theta)", kOpen))
      draw_fit_plot(font);
  }
  if (ImGui::CollapsingHeader("Linear-linear chain rule (seed eq. 32)", kOpen))
    draw_chain_section();
  if (ImGui::CollapsingHeader("The seed's Example 3.1 (x^3 at 1, degree 2)", kOpen))
    draw_seed_note();
}

void KyLabPanel::draw_inputs() {
  KyLabModel::Inputs& in = model_.inputs();
  ImGui::SetNextItemWidth(-80);
  if (ImGui::InputText("f(x)", model_.f_field(), KyLabModel::kTextCapacity))
    model_.set_f(model_.f_field());
  ImGui::SetNextItemWidth(110);
  ImGui::InputDouble("x0", &in.x0, 0, 0, "%g");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(130);
  const auto& kinds = all_ky_kinds();
  if (ImGui::BeginCombo("kind", ky_kind_name(model_.kind()))) {
    for (size_t i = 0; i < kinds.size(); ++i)
      if (ImGui::Selectable(ky_kind_name(kinds[i]), static_cast<int>(i) == in.kind))
        in.kind = static_cast<int>(i);
    ImGui::EndCombo();
  }
  KySettings& s = in.settings;
  ImGui::SameLine();
  if (model_.kind() == KyKind::poly || model_.kind() == KyKind::poly_literal) {
    ImGui::SetNextItemWidth(110);
    ImGui::SliderInt("degree", &s.degree, 1, kKyMaxDegree);
  } else if (model_.kind() != KyKind::linear) {
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
  const KyResult& r = *model_.result();
  const int component = model_.component();
  ImGui::SetNextItemWidth(140);
  const char* shown = component < 0 ? "all" : r.names[component].c_str();
  if (ImGui::BeginCombo("component", shown)) {
    if (ImGui::Selectable("all", component < 0)) model_.set_component(-1);
    for (size_t i = 0; i < r.names.size(); ++i)
      if (ImGui::Selectable(r.names[i].c_str(), component == static_cast<int>(i)))
        model_.set_component(static_cast<int>(i));
    ImGui::EndCombo();
  }
  // The figure on screen is the one "Export" writes.
  const fig::Figure figure = model_.theta_figure();
  ImGui::SameLine();
  if (ImGui::SmallButton("Export...##theta")) request_figure_export(figure, false);
  if (const auto& other = model_.other_reading()) {
    ImGui::SameLine();
    ImGui::TextDisabled("solid: %s, faded: %s", ky_kind_name(r.kind), ky_kind_name(other->kind));
  }
  theta_plot_.draw(figure, ImVec2(std::max(100.0f, ImGui::GetContentRegionAvail().x), 230), font);
  // Hover: the raw theta at the nearest h; click: show that h in the fit plot.
  const auto hit = theta_plot_.hover(figure, 12.0f, true);
  if (!hit || r.history.empty()) return;
  const size_t best = std::min(hit->point, r.history.size() - 1);
  if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) model_.set_fit_step(static_cast<int>(best));
  ImGui::BeginTooltip();
  ImGui::Text("h = %.4g (k = %d), click to show it below", r.history[best].h,
              static_cast<int>(best));
  for (size_t i = 0; i < r.names.size(); ++i)
    if (component < 0 || component == static_cast<int>(i))
      ImGui::TextColored(ImColor(component_color(i)), "%s = %.10g", r.names[i].c_str(),
                         r.history[best].theta[i]);
  ImGui::EndTooltip();
}

void KyLabPanel::draw_poly_table() {
  const KyResult& r = *model_.result();
  const KyResult* other = model_.other_reading() ? &*model_.other_reading() : nullptr;
  constexpr ImGuiTableFlags kFlags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp;
  ImGui::TextUnformatted("Both polynomial readings:");
  const KyResult* poly = r.kind == KyKind::poly ? &r : other;
  const KyResult* literal = r.kind == KyKind::poly_literal ? &r : other;
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
}

void KyLabPanel::draw_parameter_table() {
  if (model_.polynomial()) {
    draw_poly_table();
    return;
  }
  const KyResult& r = *model_.result();
  const std::vector<double>& reference = model_.reference();
  constexpr ImGuiTableFlags kFlags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp;
  if (ImGui::BeginTable("##params", 4, kFlags)) {
    ImGui::TableSetupColumn("parameter");
    ImGui::TableSetupColumn("limit");
    ImGui::TableSetupColumn(model_.reference_label().empty() ? "expected"
                                                             : model_.reference_label().c_str());
    ImGui::TableSetupColumn("difference");
    ImGui::TableHeadersRow();
    for (size_t i = 0; i < r.theta.size(); ++i) {
      table_row_label(r.names[i].c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%.12g", r.theta[i]);
      ImGui::TableNextColumn();
      if (i < reference.size()) ImGui::Text("%.12g", reference[i]);
      ImGui::TableNextColumn();
      if (i < reference.size()) ImGui::Text("%.2g", r.theta[i] - reference[i]);
    }
    ImGui::EndTable();
  }
  ImGui::TextColored(r.converged ? kGood : kRed, "converged: %s (error %.2g, %d values of h)",
                     r.converged ? "yes" : "no", r.error, r.iterations);
}

void KyLabPanel::draw_fit_plot(ImFont* font) {
  const KyResult& r = *model_.result();
  if (model_.steps() == 0) return;
  ImGui::SetNextItemWidth(200);
  int k = model_.fit_step();
  if (ImGui::SliderInt("k", &k, 0, model_.steps() - 1)) model_.set_fit_step(k);
  const KyStep& step = r.history[model_.fit_step()];
  ImGui::SameLine();
  ImGui::Text("h = %.4g", step.h);
  const fig::Figure figure = model_.fit_figure();
  ImGui::SameLine();
  if (ImGui::SmallButton("Export...##fit")) request_figure_export(figure, false);
  fit_plot_.draw(figure, ImVec2(std::max(100.0f, ImGui::GetContentRegionAvail().x), 220), font);
  if (const auto hit = fit_plot_.hover(figure, 1e6f)) {  // any point: the nearest t
    const double t = hit->x, x0 = model_.computed().x0;
    ImGui::SetTooltip("t = %.6g\nf = %.10g\ng(h) = %.10g\ng(limit) = %.10g", t, model_.f_at(t),
                      ky_connection(r.kind, step.theta, x0, t),
                      ky_connection(r.kind, r.theta, x0, t));
  }
}

void KyLabPanel::draw_chain_section() {
  ImGui::SetNextItemWidth(-80);
  if (ImGui::InputText("g(x)", model_.g_field(), KyLabModel::kTextCapacity))
    model_.set_g(model_.g_field());
  ImGui::TextDisabled("f o g at x0 = %g, all three with the linear kind", model_.computed().x0);
  if (!model_.error().empty()) {
    ImGui::TextDisabled("(fix f first)");
    return;
  }
  if (!model_.chain_error().empty()) {
    ImGui::TextColored(kRed, "%s", model_.chain_error().c_str());
    return;
  }
  if (!model_.chain()) return;
  const KyChainCheck& c = *model_.chain();
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
    for (const KySeedExample& e : model_.seed_examples()) {
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
  const std::vector<KySeedExample>& seed = model_.seed_examples();
  if (!seed.empty()) {
    const auto& l = seed.front().literal_limit.theta;
    const auto& p = seed.front().three_point_limit.theta;
    ImGui::Text(
        "limits (a0, a1, a2): literal min-norm (%.6g, %.6g, %.3g); 3-point (%.6g, %.6g, %.6g)",
        l[0], l[1], std::fabs(l[2]) < 1e-9 ? 0.0 : l[2], p[0], p[1], p[2]);
    ImGui::TextWrapped(
        "So the seed's (a2, a1, a0) = (3, 3, 1) is the 3-point (Taylor) answer; "
        "its own two-constraint system gives (0, 3, 1).");
  }
}

// The panel table's row (app/panels/mechanism_panels.h).
// The lab shows the KY transform, not a run: never opened at start.
const bool kRegistered = register_mechanism_panel<KyLabPanel>("ky", "ky-lab", "KY Transform lab",
                                                              TilePlace::Right, PanelOpens::Never);

}  // namespace attn::gui
