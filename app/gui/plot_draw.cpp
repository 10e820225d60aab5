#include "gui/plot_draw.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace attn::gui {
namespace {

double to_axis(double y, bool log_y) {
  return log_y ? std::log10(y) : y;
}

}  // namespace

ImU32 with_alpha(ImU32 c, float alpha) {
  const auto a = static_cast<ImU32>(std::clamp(alpha, 0.0f, 1.0f) * 255.0f + 0.5f);
  return (c & ~IM_COL32_A_MASK) | (a << IM_COL32_A_SHIFT);
}

void upload_colorbar(render::Texture2D& texture, render::Colormap map, float vmin, float vmax) {
  constexpr int n = render::kViridisSize;  // 256 x 1
  float ramp[n];
  for (int i = 0; i < n; ++i) ramp[i] = vmax - (vmax - vmin) * i / (n - 1);
  texture.upload_matrix(ramp, n, 1, map, vmin, vmax);
}

void draw_token_labels(ImDrawList* dl, ImFont* font, ImVec2 p0, float cell, int n, float label_w,
                       bool rows, bool cols, const std::vector<std::string>& tokens, ImU32 color) {
  const float fs = font->FontSize;
  auto token = [&](int i) {
    return i >= 0 && i < static_cast<int>(tokens.size()) ? tokens[i].c_str() : "?";
  };
  auto clipped_text = [&](ImVec2 pos, ImVec2 clip_max, const char* text) {
    const ImVec4 clip(pos.x, pos.y, clip_max.x, clip_max.y);
    dl->AddText(font, fs, pos, color, text, nullptr, 0.0f, &clip);
  };
  for (int i = 0; rows && i < n; ++i) {  // query tokens, one per row
    const char* t = token(i);
    const float tw = std::min(font->CalcTextSizeA(fs, FLT_MAX, 0, t).x, label_w - 4);
    const ImVec2 pos(p0.x - 4 - tw, p0.y + i * cell + (cell - fs) * 0.5f);
    clipped_text(pos, ImVec2(p0.x - 2, pos.y + fs), t);
  }
  for (int j = 0; cols && j < n; ++j) {  // key tokens, one per column
    const char* t = token(j);
    const float tw = font->CalcTextSizeA(fs, FLT_MAX, 0, t).x;
    const ImVec2 pos(p0.x + j * cell + std::max(0.0f, (cell - tw) * 0.5f), p0.y - fs - 1);
    clipped_text(pos, ImVec2(p0.x + (j + 1) * cell, p0.y), t);
  }
}

float PlotArea::px(double x) const {
  const double t = x1 > x0 ? (x - x0) / (x1 - x0) : 0.5;
  return static_cast<float>(min.x + t * (max.x - min.x));
}

float PlotArea::py(double y) const {
  if (!std::isfinite(y) || (log_y && y <= 0)) return std::numeric_limits<float>::quiet_NaN();
  const double a = to_axis(y0, log_y), b = to_axis(y1, log_y);
  const double t = b > a ? (to_axis(y, log_y) - a) / (b - a) : 0.5;
  return static_cast<float>(max.y - t * (max.y - min.y));
}

double PlotArea::x_at(float screen_x) const {
  const float w = max.x - min.x;
  return x0 + (w > 0 ? (screen_x - min.x) / w : 0.0) * (x1 - x0);
}

double PlotArea::y_at(float screen_y) const {
  const float h = max.y - min.y;
  const double t = h > 0 ? (max.y - screen_y) / h : 0.0;
  const double a = to_axis(y0, log_y), b = to_axis(y1, log_y);
  const double v = a + t * (b - a);
  return log_y ? std::pow(10.0, v) : v;
}

PlotArea draw_plot_frame(ImDrawList* dl, ImVec2 outer_min, ImVec2 outer_max, render::Range x,
                         render::Range y, bool log_y, ImFont* font, const char* x_label) {
  if (!font) font = ImGui::GetFont();
  const float fs = font->FontSize;
  const float height = outer_max.y - outer_min.y;
  const float width = outer_max.x - outer_min.x;

  const int y_target = std::clamp(static_cast<int>(height / 45.0f), 2, 8);
  const render::Ticks yt = log_y ? render::log_ticks(y.lo, y.hi, y_target + 2)
                                 : render::linear_ticks(y.lo, y.hi, y_target);
  std::vector<std::string> y_labels;
  float label_w = 0;
  for (double v : yt.values) {
    y_labels.push_back(render::format_tick(v, yt));
    label_w = std::max(label_w, font->CalcTextSizeA(fs, FLT_MAX, 0, y_labels.back().c_str()).x);
  }

  PlotArea a;
  a.min = ImVec2(outer_min.x + label_w + 8, outer_min.y + fs * 0.5f);
  a.max = ImVec2(outer_max.x - 10, outer_max.y - fs - 8);
  a.x0 = x.lo, a.x1 = x.hi, a.y0 = y.lo, a.y1 = y.hi, a.log_y = log_y;
  if (a.max.x - a.min.x < 10 || a.max.y - a.min.y < 10) return a;  // too small to label

  // No background fill: the window's shows through. On software GL every covered pixel costs.
  for (size_t i = 0; i < yt.values.size(); ++i) {
    const float py = a.py(yt.values[i]);
    if (std::isnan(py)) continue;
    dl->AddLine(ImVec2(a.min.x, py), ImVec2(a.max.x, py), colors::kGridLine);
    const ImVec2 sz = font->CalcTextSizeA(fs, FLT_MAX, 0, y_labels[i].c_str());
    dl->AddText(font, fs, ImVec2(a.min.x - 5 - sz.x, py - sz.y * 0.5f), colors::kText,
                y_labels[i].c_str());
  }

  // The axis title sits under the right end of the axis; tick labels that would touch it are
  // skipped rather than drawn over each other.
  float title_x = outer_max.x;
  if (x_label && *x_label) {
    const ImVec2 sz = font->CalcTextSizeA(fs, FLT_MAX, 0, x_label);
    title_x = outer_max.x - sz.x;
    dl->AddText(font, fs, ImVec2(title_x, a.max.y + 4), colors::kDimText, x_label);
  }
  const int x_target = std::clamp(static_cast<int>(width / 90.0f), 2, 10);
  const render::Ticks xt = render::linear_ticks(x.lo, x.hi, x_target);
  for (double v : xt.values) {
    const float px = a.px(v);
    dl->AddLine(ImVec2(px, a.min.y), ImVec2(px, a.max.y), colors::kGridLine);
    dl->AddLine(ImVec2(px, a.max.y), ImVec2(px, a.max.y + 3), colors::kFrame);
    const std::string s = render::format_tick(v, xt);
    const ImVec2 sz = font->CalcTextSizeA(fs, FLT_MAX, 0, s.c_str());
    const float tx = std::clamp(px - sz.x * 0.5f, outer_min.x, outer_max.x - sz.x);
    if (tx + sz.x + 6 > title_x) continue;
    dl->AddText(font, fs, ImVec2(tx, a.max.y + 4), colors::kText, s.c_str());
  }
  dl->AddRect(a.min, a.max, colors::kFrame);
  return a;
}

namespace {

template <typename X>
void draw_series_impl(ImDrawList* dl, const PlotArea& area, const X* xs, const float* ys, size_t n,
                      ImU32 color, float thickness) {
  if (n == 0) return;
  dl->PushClipRect(area.min, area.max, true);
  std::vector<ImVec2> run;
  run.reserve(std::min<size_t>(n, 4096));
  auto flush = [&] {
    if (run.size() >= 2)
      dl->AddPolyline(run.data(), static_cast<int>(run.size()), color, ImDrawFlags_None, thickness);
    else if (run.size() == 1)
      dl->AddCircleFilled(run[0], thickness, color);
    run.clear();
  };
  // More points than pixels: keep the first, min and max of each pixel column (in order), so
  // spikes stay visible and the vertex count is bounded by the plot width.
  const float width = area.max.x - area.min.x;
  const bool decimate = n > static_cast<size_t>(3 * std::max(1.0f, width));
  int column = std::numeric_limits<int>::min();
  ImVec2 lo, hi;
  bool have_extremes = false;
  auto emit_extremes = [&] {
    if (!have_extremes) return;
    if (lo.x <= hi.x) {  // keep time order
      run.push_back(lo);
      if (hi.y != lo.y) run.push_back(hi);
    } else {
      run.push_back(hi);
      if (hi.y != lo.y) run.push_back(lo);
    }
    have_extremes = false;
  };
  for (size_t i = 0; i < n; ++i) {
    const float py = area.py(ys[i]);
    if (std::isnan(py)) {
      emit_extremes();
      flush();
      continue;
    }
    const ImVec2 p(area.px(static_cast<double>(xs[i])), py);
    if (!decimate) {
      run.push_back(p);
      continue;
    }
    const int c = static_cast<int>(std::floor(p.x));
    if (c != column) {
      emit_extremes();
      column = c;
      lo = hi = p;
      have_extremes = true;
    } else {
      if (p.y < lo.y) lo = p;  // screen y: smaller is higher
      if (p.y > hi.y) hi = p;
    }
  }
  emit_extremes();
  flush();
  dl->PopClipRect();
}

template <typename X>
void draw_markers_impl(ImDrawList* dl, const PlotArea& area, const X* xs, const float* ys, size_t n,
                       ImU32 color, float radius) {
  dl->PushClipRect(area.min, area.max, true);
  for (size_t i = 0; i < n; ++i) {
    const float py = area.py(ys[i]);
    if (!std::isnan(py))
      dl->AddCircleFilled(ImVec2(area.px(static_cast<double>(xs[i])), py), radius, color, 8);
  }
  dl->PopClipRect();
}

}  // namespace

void draw_series(ImDrawList* dl, const PlotArea& area, const int64_t* xs, const float* ys, size_t n,
                 ImU32 color, float thickness) {
  draw_series_impl(dl, area, xs, ys, n, color, thickness);
}

void draw_series(ImDrawList* dl, const PlotArea& area, const float* xs, const float* ys, size_t n,
                 ImU32 color, float thickness) {
  draw_series_impl(dl, area, xs, ys, n, color, thickness);
}

void draw_markers(ImDrawList* dl, const PlotArea& area, const int64_t* xs, const float* ys,
                  size_t n, ImU32 color, float radius) {
  draw_markers_impl(dl, area, xs, ys, n, color, radius);
}

void draw_markers(ImDrawList* dl, const PlotArea& area, const float* xs, const float* ys, size_t n,
                  ImU32 color, float radius) {
  draw_markers_impl(dl, area, xs, ys, n, color, radius);
}

void draw_dashed_hline(ImDrawList* dl, const PlotArea& area, double y, ImU32 color, float thickness,
                       const char* label, ImFont* font) {
  const float py = area.py(y);
  if (std::isnan(py) || py < area.min.y || py > area.max.y) return;
  constexpr float kDash = 6, kGap = 4;
  for (float x = area.min.x; x < area.max.x; x += kDash + kGap)
    dl->AddLine(ImVec2(x, py), ImVec2(std::min(x + kDash, area.max.x), py), color, thickness);
  if (label && *label) {
    if (!font) font = ImGui::GetFont();
    const ImVec2 sz = font->CalcTextSizeA(font->FontSize, FLT_MAX, 0, label);
    const float ty = py - sz.y - 2 < area.min.y ? py + 2 : py - sz.y - 2;
    dl->AddText(font, font->FontSize, ImVec2(area.min.x + 6, ty), color, label);
  }
}

void draw_colorbar(ImDrawList* dl, ImVec2 b0, ImVec2 b1, unsigned texture, double vmax,
                   int max_ticks, ImFont* font, ImU32 text_color) {
  draw_colorbar_range(dl, b0, b1, texture, 0.0, vmax, max_ticks, font, text_color);
}

void draw_colorbar_range(ImDrawList* dl, ImVec2 b0, ImVec2 b1, unsigned texture, double vmin,
                         double vmax, int max_ticks, ImFont* font, ImU32 text_color) {
  const float fs = font->FontSize;
  const float height = b1.y - b0.y;
  dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(texture)), b0, b1);
  dl->AddRect(b0, b1, IM_COL32(255, 255, 255, 70));
  if (!(vmax > vmin)) return;
  const render::Ticks ticks =
      render::linear_ticks(vmin, vmax, std::clamp(static_cast<int>(height / 40), 2, max_ticks));
  for (double v : ticks.values) {
    const float y = b1.y - static_cast<float>((v - vmin) / (vmax - vmin)) * height;
    dl->AddLine(ImVec2(b1.x, y), ImVec2(b1.x + 3, y), text_color);
    const std::string s = render::format_tick(v, ticks);
    dl->AddText(font, fs, ImVec2(b1.x + 5, y - fs * 0.5f), text_color, s.c_str());
  }
}

}  // namespace attn::gui
