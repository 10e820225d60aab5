#include "panels/conn_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "gui/export_dialog.h"
#include "gui/plot_draw.h"
#include "render/plot/colormap.h"

namespace attn::gui {
namespace {

constexpr float kGap = 12.0f;
constexpr float kColorbarWidth = 14.0f;
constexpr float kColorbarRoom = kColorbarWidth + 56.0f;
constexpr ImU32 kLimit = colors::kVermillion;
constexpr ImU32 kUnit = colors::kGrey;
constexpr ImU32 kRho = colors::kOrange;
constexpr ImU32 kNorm = colors::kSkyBlue;

ImTextureID texture_id(const render::Texture2D& t) {
  return reinterpret_cast<ImTextureID>(static_cast<intptr_t>(t.id()));
}

// A circle of radius r about the origin in data coordinates (the axes need not be square).
void draw_circle(ImDrawList* dl, const PlotArea& a, double r, ImU32 color, float thickness) {
  constexpr int kSegments = 128;
  ImVec2 points[kSegments];
  for (int k = 0; k < kSegments; ++k) {
    const double t = 2 * M_PI * k / kSegments;
    points[k] = ImVec2(a.px(r * std::cos(t)), a.py(r * std::sin(t)));
  }
  dl->AddPolyline(points, kSegments, color, ImDrawFlags_Closed, thickness);
}

}  // namespace

void ConnPanel::update_texture(const ConnView& v, uint64_t generation) {
  const uint64_t key =
      (generation << 40) ^ (static_cast<uint64_t>(v.matrix_step) << 1) ^ (reorder_ ? 1u : 0u);
  if (key == texture_key_ && matrix_.valid()) return;
  texture_key_ = key;
  const int n = v.slots;
  const std::vector<float>& c = *v.matrix;
  order_.resize(n);
  std::iota(order_.begin(), order_.end(), 0);
  if (reorder_) {  // by total |influence| in and out, strongest first
    std::vector<double> strength(n, 0.0);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const double x = std::abs(c[static_cast<size_t>(i) * n + j]);
        strength[i] += x;
        strength[j] += x;
      }
    std::stable_sort(order_.begin(), order_.end(),
                     [&](int a, int b) { return strength[a] > strength[b]; });
  }
  std::vector<float> shown(static_cast<size_t>(n) * n);
  vmax_ = 0;
  for (int r = 0; r < n; ++r)
    for (int q = 0; q < n; ++q) {
      const float x = c[static_cast<size_t>(order_[r]) * n + order_[q]];
      shown[static_cast<size_t>(r) * n + q] = x;
      if (std::isfinite(x)) vmax_ = std::max(vmax_, std::abs(x));
    }
  if (!(vmax_ > 0)) vmax_ = 1;
  matrix_.upload_matrix(shown.data(), n, n, render::Colormap::Diverging, -vmax_, vmax_);
  if (!colorbar_.valid()) upload_colorbar(colorbar_, render::Colormap::Diverging, -1, 1);
}

void ConnPanel::draw_matrix(const ConnView& v, ImFont* font, float width, float height) {
  ImGui::BeginGroup();
  ImGui::Text("C (step %lld): C[i,j] = how much slot i influences slot j",
              static_cast<long long>(v.matrix_step));
  ImGui::SameLine();
  ImGui::Checkbox("reorder", &reorder_);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Order slots by total |C| in and out");
  const float side = std::max(40.0f, std::min(width - kColorbarRoom, height - 24));
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##cmatrix", ImVec2(side + kColorbarRoom, side));
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p1(p0.x + side, p0.y + side);
  dl->AddImage(texture_id(matrix_), p0, p1);
  dl->AddRect(p0, p1, kUnit);
  draw_colorbar_range(dl, ImVec2(p1.x + 8, p0.y), ImVec2(p1.x + 8 + kColorbarWidth, p1.y),
                      colorbar_.id(), -vmax_, vmax_, 7, font, colors::kText);
  const ImVec2 m = ImGui::GetIO().MousePos;
  const int n = v.slots;
  if (hovered && m.x >= p0.x && m.x < p1.x && m.y >= p0.y && m.y < p1.y && n > 0) {
    const int r = std::clamp(static_cast<int>((m.y - p0.y) / side * n), 0, n - 1);
    const int q = std::clamp(static_cast<int>((m.x - p0.x) / side * n), 0, n - 1);
    const int i = order_[r], j = order_[q];
    ImGui::SetTooltip("C[%d, %d] = %.4g\nslot %d -> slot %d", i, j,
                      (*v.matrix)[static_cast<size_t>(i) * n + j], i, j);
  }
  ImGui::EndGroup();
}

void ConnPanel::draw_spectra(const ConnView& v, ImFont* font, float width, float height) {
  ImGui::BeginGroup();
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kRho), "rho(I+C)");
  ImGui::SameLine();
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kNorm), "||I+C||_2");
  ImGui::SameLine();
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kLimit), "limit r = %.3g (%s)", v.limit,
                     v.control.c_str());
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::Dummy(ImVec2(width, height));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  if (v.spectral_radius.empty()) {
    dl->AddText(ImVec2(p0.x + 8, p0.y + 8), colors::kText, "tracking is off (model.conn.track)");
    ImGui::EndGroup();
    return;
  }
  render::Range xr, yr;
  for (int64_t s : v.spectral_radius.steps) xr.include(static_cast<double>(s));
  yr = render::merge(
      render::value_range(v.spectral_radius.values.data(), v.spectral_radius.values.size()),
      render::value_range(v.spectral_norm.values.data(), v.spectral_norm.values.size()));
  yr.include(v.limit);
  yr.include(1.0);
  const PlotArea a =
      draw_plot_frame(dl, p0, ImVec2(p0.x + width, p0.y + height), render::padded(xr, 0.02, false),
                      render::padded(yr, 0.08, false), false, font, "step");
  draw_dashed_hline(dl, a, 1.0, kUnit, 1.0f, "1", font);
  draw_dashed_hline(dl, a, v.limit, kLimit, 1.5f, "r", font);
  draw_series(dl, a, v.spectral_norm.steps.data(), v.spectral_norm.values.data(),
              v.spectral_norm.values.size(), kNorm, 1.5f);
  draw_series(dl, a, v.spectral_radius.steps.data(), v.spectral_radius.values.data(),
              v.spectral_radius.values.size(), kRho, 2.0f);
  ImGui::EndGroup();
}

void ConnPanel::draw_eigenvalues(const ConnView& v, ImFont* font, float width, float height) {
  ImGui::BeginGroup();
  ImGui::Text("eigenvalues of I+C (step %lld): rho %.4f, ||.||_2 %.4f",
              static_cast<long long>(v.eigen_step), v.exact_radius, v.exact_norm);
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##eig", ImVec2(width, height));
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  double reach = std::max({1.0, v.limit, v.exact_radius}) * 1.1;
  render::Range xr, yr;
  xr.lo = yr.lo = -reach;
  xr.hi = yr.hi = reach;
  const PlotArea a =
      draw_plot_frame(dl, p0, ImVec2(p0.x + width, p0.y + height), xr, yr, false, font, "Re");
  dl->PushClipRect(a.min, a.max, true);
  draw_circle(dl, a, 1.0, kUnit, 1.0f);
  draw_circle(dl, a, v.limit, kLimit, 1.5f);
  draw_markers(dl, a, v.eigen_re.data(), v.eigen_im.data(), v.eigen_re.size(), kRho, 2.5f);
  dl->PopClipRect();
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (hovered && a.contains(m)) {
    size_t best = 0;
    double best_d = 1e300;
    for (size_t k = 0; k < v.eigen_re.size(); ++k) {
      const double dx = a.px(v.eigen_re[k]) - m.x, dy = a.py(v.eigen_im[k]) - m.y;
      if (dx * dx + dy * dy < best_d) best_d = dx * dx + dy * dy, best = k;
    }
    if (best_d < 100)
      ImGui::SetTooltip("%.4f %+.4fi  |lambda| = %.4f", v.eigen_re[best], v.eigen_im[best],
                        std::hypot(v.eigen_re[best], v.eigen_im[best]));
  }
  ImGui::EndGroup();
}

void ConnPanel::draw_trace(const ConnView& v, ImFont* font, float width, float height) {
  ImGui::BeginGroup();
  ImGui::Text(
      "reasoning trace (probe, step %lld): slot-state norms after compression and each step",
      static_cast<long long>(v.trace_step));
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::Dummy(ImVec2(width, height));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const int n = v.slots, rows = n > 0 ? static_cast<int>(v.trace.size()) / n : 0;
  if (rows == 0) {
    dl->AddText(ImVec2(p0.x + 8, p0.y + 8), colors::kText, "no probe yet");
    ImGui::EndGroup();
    return;
  }
  render::Range xr, yr = render::value_range(v.trace.data(), v.trace.size());
  xr.lo = 0, xr.hi = std::max(1, rows - 1);
  yr.include(0.0);
  const PlotArea a = draw_plot_frame(dl, p0, ImVec2(p0.x + width, p0.y + height), xr,
                                     render::padded(yr, 0.05, false), false, font, "step k");
  std::vector<float> xs(rows), ys(rows), mean(rows, 0.0f);
  for (int k = 0; k < rows; ++k) xs[k] = static_cast<float>(k);
  for (int s = 0; s < n; ++s) {
    for (int k = 0; k < rows; ++k) {
      ys[k] = v.trace[static_cast<size_t>(k) * n + s];
      mean[k] += ys[k] / n;
    }
    draw_series(dl, a, xs.data(), ys.data(), rows, IM_COL32(86, 180, 233, 70), 1.0f);
  }
  draw_series(dl, a, xs.data(), mean.data(), rows, kRho, 2.5f);
  draw_markers(dl, a, xs.data(), mean.data(), rows, kRho, 3.0f);
  ImGui::EndGroup();
}

void ConnPanel::draw_stats(const ConnView& v) {
  const ConnStats& s = v.stats;
  ImGui::Text(
      "||C||_F %.4g, max |C| %.4g; inhibitory (C < -%.2g): %d; sparsity (|C| < 0.01): %.1f%%",
      s.frobenius, s.max_abs, s.threshold, s.inhibitory, 100.0 * s.sparsity);
  ImGui::Text("graph C > %.2g: %d edges, %d self-loops, %d cyclic components over %d slots",
              s.threshold, s.edges, s.self_loops, s.cyclic_components, s.nodes_on_cycles);
  std::string cycles;
  for (const auto& c : s.cycles) {
    cycles += cycles.empty() ? "" : ";  ";
    for (size_t k = 0; k < c.size(); ++k) cycles += std::to_string(c[k]) + " -> ";
    cycles += std::to_string(c.front());
  }
  ImGui::TextWrapped("shortest cycles: %s", cycles.empty() ? "none" : cycles.c_str());
  std::string links;
  for (const auto& l : s.strongest) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s%d->%d %.3g", links.empty() ? "" : ", ", l.from, l.to,
                  l.value);
    links += buf;
  }
  ImGui::TextWrapped("strongest links: %s", links.c_str());
}

void ConnPanel::draw(FrameContext& frame) {
  const Snapshot& snap = frame.snap;
  ImFont* small_font = frame.small_font;
  if (!snap.conn || !snap.conn->matrix) {
    ImGui::TextWrapped(
        "This panel shows the Connection Transformer (model.architecture \"conn\"): C, the "
        "spectra of I + C and the reasoning trace. The current model is not one; try "
        "assets/configs/conn_recall.json.");
    return;
  }
  const ConnView& v = *snap.conn;
  update_texture(v, snap.generation);
  ImGui::Text(
      "N %d slots, D %d, K %d steps, %d connection head%s, mixing %s, %s; control %s, "
      "r = %.3g (changed C after %lld steps)",
      v.slots, v.d_model, v.steps, v.heads, v.heads == 1 ? "" : "s", v.mixing.c_str(),
      v.variant.c_str(), v.control.c_str(), v.limit, static_cast<long long>(v.control_events));
  ImGui::TextDisabled(
      "parameters %lld (seed's formula N^2 + 8D^2 + SD + VD: %lld); estimates within %.1e of "
      "the exact values at eigen refreshes. rho and ||.||_2 are measurements: with LayerNorm "
      "after each step they guarantee no convergence.",
      static_cast<long long>(v.parameters), static_cast<long long>(v.spec_formula),
      v.estimate_error);
  gui::export_button("conn-matrix", snap, {}, "Export C...");
  ImGui::SameLine();
  gui::export_button("conn-eigenvalues", snap, {}, "Export eigenvalues...");
  ImGui::SameLine();
  gui::export_button("conn-spectral", snap, {}, "Export rho over training...");
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float top_h = std::max(160.0f, avail.y * 0.55f - 30);
  const float bottom_h = std::max(120.0f, avail.y - top_h - 130);
  const float col_w = std::max(160.0f, (avail.x - kGap) / 2);
  draw_matrix(v, small_font, col_w, top_h);
  ImGui::SameLine(0, kGap);
  draw_eigenvalues(v, small_font, std::min(col_w, top_h), top_h - 20);
  draw_spectra(v, small_font, col_w, bottom_h);
  ImGui::SameLine(0, kGap);
  draw_trace(v, small_font, col_w, bottom_h);
  draw_stats(v);
}

std::vector<std::string> ConnPanel::figures(const Snapshot& snap) const {
  if (!snap.conn || !snap.conn->matrix) return {};
  return {"conn-matrix", "conn-eigenvalues", "conn-spectral"};
}

}  // namespace attn::gui
