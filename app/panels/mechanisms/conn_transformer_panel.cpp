#include "app/panels/mechanisms/conn_transformer_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <numeric>
#include <stdexcept>

#include "app/figures/figures.h"
#include "app/gui/plot/export_dialog.h"
#include "render/plot/colormap.h"

namespace attn::gui {
namespace {

constexpr float kGap = 12.0f;
constexpr ImU32 kMarker = IM_COL32(255, 255, 255, 220);

// Slots ordered by total |influence| in and out, strongest first (ties keep slot order).
std::vector<int> strength_order(const std::vector<float>& c, int n) {
  std::vector<int> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::vector<double> strength(static_cast<size_t>(n), 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double x = std::abs(c[static_cast<size_t>(i) * n + j]);
      if (!std::isfinite(x)) continue;
      strength[i] += x;
      strength[j] += x;
    }
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return strength[a] > strength[b]; });
  return order;
}

// The matrix figure with its slots in display order: the heatmap's rows and columns permuted by
// `order` (display position -> slot), the ticks of both axes at the cells labelled with the real
// slot indices (the layout thins them to fit), and the title saying so.
void reorder_matrix(fig::Figure& f, const std::vector<int>& order) {
  fig::Panel& p = f.panels.at(0);
  fig::Heatmap& h = p.heatmaps.at(0);
  const int n = h.rows;
  if (n != h.cols || static_cast<int>(order.size()) != n) return;
  std::vector<float> shown(h.values.size());
  for (int r = 0; r < n; ++r)
    for (int q = 0; q < n; ++q)
      shown[static_cast<size_t>(r) * n + q] =
          h.values[static_cast<size_t>(order[r]) * n + order[q]];
  h.values = std::move(shown);
  h.name = "C (slots reordered by total |C|)";
  std::vector<fig::Tick> ticks;
  for (int k = 0; k < n; ++k) ticks.push_back({k + 0.5, std::to_string(order[k])});
  p.x.ticks = p.y.ticks = ticks;
  f.title += " (slots reordered by total |C|)";
}

// The reasoning trace as a figure: every slot's state norm after compression (k = 0) and after
// each reasoning step, as one series broken by NaN between slots, and their mean.
fig::Figure trace_figure(const ConnView& v) {
  const int n = v.slots, rows = n > 0 ? static_cast<int>(v.trace.size()) / n : 0;
  fig::Figure f;
  f.name = "conn-trace";
  f.title = "Reasoning trace of the probe, step " + std::to_string(v.trace_step);
  fig::Panel p = fig::axes_panel("step k (0: after compression)", "slot-state norm", true);
  if (rows <= 12)
    for (int k = 0; k < rows; ++k) p.x.ticks.push_back({double(k), std::to_string(k)});
  if (rows == 1) p.x.min = -0.5, p.x.max = 0.5;  // else fitted: the end markers show whole
  fig::LineSeries slots{
      "slots", {}, {}, fig::Color::from(render::okabe_ito(4)), 0.5, fig::LineStyle::Solid};
  fig::LineSeries mean{"mean over slots",    {}, {}, fig::Color::from(render::okabe_ito(1)), 1.75,
                       fig::LineStyle::Solid};
  double top = 0;
  for (int s = 0; s < n; ++s) {
    for (int k = 0; k < rows; ++k) {
      const double x = v.trace[static_cast<size_t>(k) * n + s];
      slots.x.push_back(k), slots.y.push_back(x);
      if (std::isfinite(x)) top = std::max(top, x);
    }
    slots.x.push_back(NAN), slots.y.push_back(NAN);
  }
  for (int k = 0; k < rows; ++k) {
    double sum = 0;
    for (int s = 0; s < n; ++s) sum += v.trace[static_cast<size_t>(k) * n + s];
    mean.x.push_back(k), mean.y.push_back(sum / n);
  }
  p.y.min = 0;
  p.y.max = top > 0 ? top * 1.06 : 1;
  p.lines = {slots, mean};
  fig::ScatterSeries dots{"", mean.x, mean.y, {}, mean.color, 4.0, fig::Marker::Circle};
  p.scatters.push_back(dots);
  f.panels.push_back(p);
  return f;
}

// Moves to the next line unless an item `width` pixels wide still fits on this one.
void same_line_if_fits(float width) {
  ImGui::SameLine();
  if (ImGui::GetContentRegionAvail().x < width) ImGui::NewLine();
}

float button_width(const char* label) {
  return ImGui::CalcTextSize(label).x + ImGui::GetStyle().FramePadding.x * 2;
}

}  // namespace

void ConnTransformerPanel::rebuild(const Snapshot& snap) {
  const ConnView& v = *snap.conn;
  auto build = [](Plot& plot, auto&& make) {
    try {
      plot.figure = make();
      plot.ok = !plot.figure.panels.empty();
      plot.note.clear();
    } catch (const std::exception& e) {
      plot.figure = fig::Figure{};
      plot.ok = false;
      plot.note = e.what();
    }
  };
  build(matrix_, [&] {
    fig::Figure f = figures::conn_matrix_figure(snap);
    order_.resize(static_cast<size_t>(v.slots));
    std::iota(order_.begin(), order_.end(), 0);
    if (reorder_) {
      order_ = strength_order(*v.matrix, v.slots);
      reorder_matrix(f, order_);
    }
    return f;
  });
  build(eigen_, [&] { return figures::conn_eigenvalues_figure(snap); });
  build(spectral_, [&] {
    if (v.spectral_radius.empty())
      throw std::runtime_error("spectral tracking is off (model.conn.track)");
    return figures::conn_spectral_figure(snap);
  });
  build(trace_, [&] {
    if (v.slots <= 0 || v.trace.size() < static_cast<size_t>(v.slots))
      throw std::runtime_error("no probe yet");
    return trace_figure(v);
  });
  built_serial_ = snap.serial;
  built_reorder_ = reorder_;
}

bool ConnTransformerPanel::draw_plot(Plot& plot, ImFont* font, ImVec2 size, const char* id) {
  ImGui::PushID(id);
  if (plot.ok) {
    plot.live.draw(plot.figure, size, font);
  } else {
    const ImVec2 p0 = ImGui::GetCursorScreenPos();
    ImGui::Dummy(size);
    ImGui::GetWindowDrawList()->AddText(font, font->FontSize, ImVec2(p0.x + 8, p0.y + 8),
                                        ImGui::GetColorU32(ImGuiCol_TextDisabled),
                                        plot.note.c_str(), nullptr, std::max(1.0f, size.x - 16));
  }
  ImGui::PopID();
  return plot.ok;
}

void ConnTransformerPanel::draw_matrix(const ConnView& v, ImFont* font, ImVec2 size) {
  if (!draw_plot(matrix_, font, size, "matrix")) return;
  const auto c = matrix_.live.hover_cell(matrix_.figure);
  const int n = v.slots;
  if (!c || c->row >= n || c->col >= n || static_cast<int>(order_.size()) != n) return;
  ImGui::GetWindowDrawList()->AddRect(c->min, c->max, kMarker);
  // The cell's display position maps back to the real slots through the order shown.
  const int i = order_[c->row], j = order_[c->col];
  ImGui::SetTooltip("C[%d, %d] = %.4g\nslot %d -> slot %d", i, j, c->value, i, j);
}

void ConnTransformerPanel::draw_eigenvalues(ImFont* font, ImVec2 size) {
  if (!draw_plot(eigen_, font, size, "eigen")) return;
  // LiveFigure::hover looks at lines only: the eigenvalues are a scatter, looked up here.
  const fig::FigureLayout& layout = eigen_.live.layout();
  if (!ImGui::IsItemHovered() || layout.panels.empty()) return;
  const fig::PanelLayout& L = layout.panels[0];
  const ImVec2 a = eigen_.live.to_screen(0, L.xmin, L.ymin),
               b = eigen_.live.to_screen(0, L.xmax, L.ymax);
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (m.x < std::min(a.x, b.x) || m.x > std::max(a.x, b.x) || m.y < std::min(a.y, b.y) ||
      m.y > std::max(a.y, b.y))
    return;
  const fig::Panel& panel = eigen_.figure.panels[0];
  const fig::ScatterSeries* eig = nullptr;
  for (const fig::ScatterSeries& s : panel.scatters)
    if (s.name == "eigenvalues") eig = &s;
  if (!eig) return;
  float best_d2 = 10.0f * 10.0f;
  size_t best = eig->x.size();
  ImVec2 best_p;
  for (size_t k = 0; k < std::min(eig->x.size(), eig->y.size()); ++k) {
    const ImVec2 p = eigen_.live.to_screen(0, eig->x[k], eig->y[k]);
    const float d2 = (p.x - m.x) * (p.x - m.x) + (p.y - m.y) * (p.y - m.y);
    if (d2 < best_d2) best_d2 = d2, best = k, best_p = p;
  }
  if (best == eig->x.size()) return;
  ImGui::GetWindowDrawList()->AddCircle(best_p, 6.0f, kMarker, 0, 1.5f);
  ImGui::SetTooltip("lambda = %.4f %+.4fi\n|lambda| = %.4f", eig->x[best], eig->y[best],
                    std::hypot(eig->x[best], eig->y[best]));
}

void ConnTransformerPanel::draw_spectra(ImFont* font, ImVec2 size) {
  if (!draw_plot(spectral_, font, size, "spectral")) return;
  mark_timeline(spectral_.live, *ui_);
  if (const auto h = spectral_.live.hover(spectral_.figure)) {
    ImGui::GetWindowDrawList()->AddCircle(h->screen, 5.0f, kMarker, 0, 1.5f);
    ImGui::SetTooltip("%s = %.4f\nstep %.0f", h->name.c_str(), h->y, h->x);
  }
}

void ConnTransformerPanel::draw_trace(ImFont* font, ImVec2 size) {
  if (!draw_plot(trace_, font, size, "trace")) return;
  // The points lie on the steps k = 0..K only: the step under the mouse, and there the slot
  // nearest the mouse (within 12 px) and the mean.
  const fig::FigureLayout& layout = trace_.live.layout();
  const fig::Panel& panel = trace_.figure.panels[0];
  if (!ImGui::IsItemHovered() || layout.panels.empty() || panel.lines.size() < 2) return;
  const fig::LineSeries &slots = panel.lines[0], &mean = panel.lines[1];
  const fig::PanelLayout& L = layout.panels[0];
  const ImVec2 a = trace_.live.to_screen(0, L.xmin, L.ymax),
               b = trace_.live.to_screen(0, L.xmax, L.ymin);
  const ImVec2 m = ImGui::GetIO().MousePos;
  const int steps = static_cast<int>(mean.x.size());
  if (m.x < a.x || m.x > b.x || m.y < a.y || m.y > b.y || !(b.x > a.x) || steps == 0) return;
  const double x = L.xmin + (m.x - a.x) / (b.x - a.x) * (L.xmax - L.xmin);
  const int k = std::clamp(static_cast<int>(std::lround(x)), 0, steps - 1);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float sx = trace_.live.to_screen(0, k, L.ymin).x;
  dl->AddLine(ImVec2(sx, a.y), ImVec2(sx, b.y), IM_COL32(255, 255, 255, 90));
  // slots holds steps points per slot, then a NaN.
  int best = -1;
  float best_d = 12.0f;
  ImVec2 best_p;
  for (size_t i = static_cast<size_t>(k), s = 0; i < slots.y.size(); i += steps + 1, ++s) {
    if (!std::isfinite(slots.y[i])) continue;
    const ImVec2 p = trace_.live.to_screen(0, k, slots.y[i]);
    if (std::abs(p.y - m.y) < best_d)
      best_d = std::abs(p.y - m.y), best = static_cast<int>(s), best_p = p;
  }
  if (best >= 0) {
    dl->AddCircle(best_p, 5.0f, kMarker, 0, 1.5f);
    ImGui::SetTooltip("after step %d%s\nslot %d: norm %.4f\nmean over slots: %.4f", k,
                      k == 0 ? " (compression)" : "", best,
                      slots.y[static_cast<size_t>(best) * (steps + 1) + k], mean.y[k]);
  } else {
    ImGui::SetTooltip("after step %d%s\nmean over slots: %.4f", k, k == 0 ? " (compression)" : "",
                      mean.y[k]);
  }
}

void ConnTransformerPanel::draw_stats(const ConnView& v) {
  const ConnStats& s = v.stats;
  ImGui::TextWrapped(
      "||C||_F %.4g, max |C| %.4g; inhibitory (C < -%.2g): %d; sparsity (|C| < 0.01): %.1f%%",
      s.frobenius, s.max_abs, s.threshold, s.inhibitory, 100.0 * s.sparsity);
  ImGui::TextWrapped("graph C > %.2g: %d edges, %d self-loops, %d cyclic components over %d slots",
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

void ConnTransformerPanel::draw(FrameContext& frame) {
  ui_ = &frame.ui;
  const Snapshot& snap = frame.snap;
  ImFont* font = frame.small_font ? frame.small_font : ImGui::GetFont();
  if (!snap.conn || !snap.conn->matrix) {
    ImGui::TextWrapped(
        "This panel shows the Connection Transformer (model.architecture \"conn\"): C, the "
        "spectra of I + C and the reasoning trace. The current model is not one; try "
        "assets/configs/conn_recall.json.");
    return;
  }
  const ConnView& v = *snap.conn;
  ImGui::TextWrapped(
      "N %d slots, D %d, K %d steps, %d connection head%s, mixing %s, %s; control %s, "
      "r = %.3g (changed C after %lld steps)",
      v.slots, v.d_model, v.steps, v.heads, v.heads == 1 ? "" : "s", v.mixing.c_str(),
      v.variant.c_str(), v.control.c_str(), v.limit, static_cast<long long>(v.control_events));
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped(
      "parameters %lld (seed's formula N^2 + 8D^2 + SD + VD: %lld); estimates within %.1e of "
      "the exact values at eigen refreshes. rho and ||.||_2 are measurements: with LayerNorm "
      "after each step they guarantee no convergence.",
      static_cast<long long>(v.parameters), static_cast<long long>(v.spec_formula),
      v.estimate_error);
  ImGui::PopStyleColor();

  // Toolbar: the matrix figure's control, then one Export button per figure on screen.
  ImGui::Checkbox("reorder", &reorder_);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Order C's slots by total |C| in and out, strongest first");
  if (snap.serial != built_serial_ || reorder_ != built_reorder_) rebuild(snap);
  struct Button {
    const char* label;
    const Plot* plot;
  };
  const Button buttons[] = {{"Export C...", &matrix_},
                            {"Export eigenvalues...", &eigen_},
                            {"Export rho over training...", &spectral_},
                            {"Export trace...", &trace_}};
  for (const Button& b : buttons) {
    same_line_if_fits(button_width(b.label));
    ImGui::BeginDisabled(!b.plot->ok);
    if (ImGui::SmallButton(b.label)) request_figure_export(b.plot->figure);
    ImGui::EndDisabled();
    if (!b.plot->ok && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip("%s", b.plot->note.c_str());
  }

  // The four figures in a grid: four in a row when the tile is wide and short (1280x720), two
  // by two when there is height, one column when narrow; the statistics below.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImGuiStyle& style = ImGui::GetStyle();
  const float stats_h = 4.5f * ImGui::GetTextLineHeightWithSpacing();
  const float plots_h = avail.y - stats_h - style.ItemSpacing.y;
  int columns = 1;
  if (avail.x >= 4 * 200 + 3 * kGap && plots_h < 1.3f * (avail.x - 3 * kGap) / 4)
    columns = 4;
  else if (avail.x >= 2 * 240 + kGap)
    columns = 2;
  const float cell_w = std::floor((avail.x - (columns - 1) * kGap) / columns);
  const int grid_rows = 4 / columns;
  const float cell_h =
      columns == 1
          ? std::max(180.0f, cell_w * 0.7f)
          : std::max(columns == 4 ? 170.0f : 150.0f,
                     std::floor((plots_h - (grid_rows - 1) * style.ItemSpacing.y) / grid_rows));
  const ImVec2 cell(cell_w, cell_h);
  for (int k = 0; k < 4; ++k) {
    if (k % columns != 0) ImGui::SameLine(0, kGap);
    switch (k) {
      case 0:
        draw_matrix(v, font, cell);
        break;
      case 1:
        draw_eigenvalues(font, cell);
        break;
      case 2:
        draw_spectra(font, cell);
        break;
      default:
        draw_trace(font, cell);
        break;
    }
  }
  draw_stats(v);
}

std::vector<std::string> ConnTransformerPanel::figures(const Snapshot& snap) const {
  if (!snap.conn || !snap.conn->matrix) return {};
  return {"conn-matrix", "conn-eigenvalues", "conn-spectral"};
}

}  // namespace attn::gui
