#include "app/panels/geometry/geometry_canvas.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/gui/window/palette.h"
#include "render/plot/plot_math.h"

namespace attn::gui {
namespace {

bool finite(geometry::Vec2 p) {
  return std::isfinite(p.x) && std::isfinite(p.y);
}

// Screen coordinates far outside the canvas are clamped: ImGui's float vertices lose all
// precision beyond ~1e7 and huge quads cost rasteriser time for nothing.
ImVec2 clamp_screen(ImVec2 p) {
  constexpr float kFar = 1e6f;
  return ImVec2(std::clamp(p.x, -kFar, kFar), std::clamp(p.y, -kFar, kFar));
}

}  // namespace

std::string format_points(const std::vector<geometry::Vec2>& points) {
  std::string s;
  char buf[64];
  for (const geometry::Vec2& p : points) {
    std::snprintf(buf, sizeof buf, "%s%.6g,%.6g", s.empty() ? "" : ";", p.x, p.y);
    s += buf;
  }
  return s;
}

ImVec2 CanvasView::to_screen(geometry::Vec2 p) const {
  const double cx = 0.5 * (min.x + max.x), cy = 0.5 * (min.y + max.y);
  return clamp_screen(ImVec2(static_cast<float>(cx + (p.x - center_x) * pixels_per_unit),
                             static_cast<float>(cy - (p.y - center_y) * pixels_per_unit)));
}

geometry::Vec2 CanvasView::to_data(ImVec2 s) const {
  const double cx = 0.5 * (min.x + max.x), cy = 0.5 * (min.y + max.y);
  return {center_x + (s.x - cx) / pixels_per_unit, center_y - (s.y - cy) / pixels_per_unit};
}

geometry::Box CanvasView::visible() const {
  const geometry::Vec2 a = to_data(min), b = to_data(max);
  return {{a.x, b.y}, {b.x, a.y}};
}

void CanvasView::zoom_about(ImVec2 screen, double factor) {
  const geometry::Vec2 before = to_data(screen);
  pixels_per_unit = std::clamp(pixels_per_unit * factor, 1e-6, 1e9);
  const geometry::Vec2 after = to_data(screen);
  center_x += before.x - after.x;
  center_y += before.y - after.y;
}

void CanvasView::fit(const geometry::Box& box, double margin) {
  const double w = std::max(box.max.x - box.min.x, 1e-9);
  const double h = std::max(box.max.y - box.min.y, 1e-9);
  center_x = 0.5 * (box.min.x + box.max.x);
  center_y = 0.5 * (box.min.y + box.max.y);
  const double pw = std::max(1.0f, max.x - min.x), ph = std::max(1.0f, max.y - min.y);
  pixels_per_unit =
      std::clamp(std::min(pw / (w * (1 + 2 * margin)), ph / (h * (1 + 2 * margin))), 1e-6, 1e9);
}

void draw_axes(ImDrawList* dl, const CanvasView& view, ImFont* font) {
  dl->AddRectFilled(view.min, view.max, colors::kCanvas);
  const geometry::Box box = view.visible();
  const float width = view.max.x - view.min.x, height = view.max.y - view.min.y;
  // About one grid line per 90 pixels; the same step on both axes keeps squares square.
  const int target = std::max(2, static_cast<int>(std::max(width, height) / 90.0f));
  const bool wide = width >= height;
  const render::Ticks ticks = wide ? render::linear_ticks(box.min.x, box.max.x, target)
                                   : render::linear_ticks(box.min.y, box.max.y, target);
  const double step = ticks.step;
  if (!(step > 0)) return;
  const float fs = font->FontSize;
  // Vertical lines (constant x) with labels at the bottom.
  for (double x = std::ceil(box.min.x / step) * step; x <= box.max.x; x += step) {
    const float sx = view.to_screen({x, 0}).x;
    dl->AddLine(ImVec2(sx, view.min.y), ImVec2(sx, view.max.y), colors::kGridLine);
    dl->AddText(font, fs, ImVec2(sx + 2, view.max.y - fs - 2), colors::kDimText,
                render::format_tick(x, ticks).c_str());
  }
  for (double y = std::ceil(box.min.y / step) * step; y <= box.max.y; y += step) {
    const float sy = view.to_screen({0, y}).y;
    dl->AddLine(ImVec2(view.min.x, sy), ImVec2(view.max.x, sy), colors::kGridLine);
    dl->AddText(font, fs, ImVec2(view.min.x + 3, sy - fs - 1), colors::kDimText,
                render::format_tick(y, ticks).c_str());
  }
  const ImVec2 origin = view.to_screen({0, 0});
  if (origin.y >= view.min.y && origin.y <= view.max.y)
    dl->AddLine(ImVec2(view.min.x, origin.y), ImVec2(view.max.x, origin.y), colors::kAxisLine);
  if (origin.x >= view.min.x && origin.x <= view.max.x)
    dl->AddLine(ImVec2(origin.x, view.min.y), ImVec2(origin.x, view.max.y), colors::kAxisLine);
}

void draw_data_polyline(ImDrawList* dl, const CanvasView& view, const geometry::Vec2* points,
                        size_t n, bool closed, ImU32 color, float thickness,
                        std::vector<ImVec2>& scratch) {
  scratch.clear();
  bool all_finite = true;
  for (size_t i = 0; i < n; ++i) {
    if (!finite(points[i])) {  // break the line here
      all_finite = false;
      if (scratch.size() >= 2)
        dl->AddPolyline(scratch.data(), static_cast<int>(scratch.size()), color, ImDrawFlags_None,
                        thickness);
      scratch.clear();
      continue;
    }
    scratch.push_back(view.to_screen(points[i]));
  }
  if (scratch.size() >= 2)
    dl->AddPolyline(scratch.data(), static_cast<int>(scratch.size()), color,
                    closed && all_finite ? ImDrawFlags_Closed : ImDrawFlags_None, thickness);
}

void draw_dashed_line(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 color, float thickness, float dash,
                      float gap) {
  const float dx = b.x - a.x, dy = b.y - a.y;
  const float length = std::sqrt(dx * dx + dy * dy);
  if (!(length > 0) || length > 1e5f) return;
  const float period = std::max(1.0f, dash + gap);
  for (float s = 0; s < length; s += period) {
    const float e = std::min(length, s + dash);
    dl->AddLine(ImVec2(a.x + dx * s / length, a.y + dy * s / length),
                ImVec2(a.x + dx * e / length, a.y + dy * e / length), color, thickness);
  }
}

void draw_dashed_polyline(ImDrawList* dl, const CanvasView& view, const geometry::Vec2* points,
                          size_t n, bool closed, ImU32 color, float thickness, float dash,
                          float gap) {
  if (n < 2) return;
  // The dash pattern runs on along the path, so short segments (many samples) still dash.
  const float period = std::max(1.0f, dash + gap);
  float phase = 0;  // distance into the current period
  const size_t segments = closed ? n : n - 1;
  for (size_t i = 0; i < segments; ++i) {
    const geometry::Vec2 p = points[i], q = points[(i + 1) % n];
    if (!finite(p) || !finite(q)) continue;
    const ImVec2 a = view.to_screen(p), b = view.to_screen(q);
    const float dx = b.x - a.x, dy = b.y - a.y;
    const float length = std::sqrt(dx * dx + dy * dy);
    if (!(length > 0) || length > 1e5f) continue;
    float s = 0;
    while (s < length) {
      const float left = (phase < dash ? dash : period) - phase;  // to the end of this part
      const float e = std::min(length, s + left);
      if (e <= s) break;  // below float resolution at this length: nothing left to draw
      if (phase < dash)
        dl->AddLine(ImVec2(a.x + dx * s / length, a.y + dy * s / length),
                    ImVec2(a.x + dx * e / length, a.y + dy * e / length), color, thickness);
      phase += e - s;
      if (phase >= period) phase -= period;
      s = e;
    }
  }
}

void draw_label(ImDrawList* dl, ImFont* font, ImVec2 pos, ImU32 color, const char* text) {
  const ImU32 halo = IM_COL32(0, 0, 0, 200);
  for (const ImVec2 d : {ImVec2(-1, 0), ImVec2(1, 0), ImVec2(0, -1), ImVec2(0, 1)})
    dl->AddText(font, font->FontSize, ImVec2(pos.x + d.x, pos.y + d.y), halo, text);
  dl->AddText(font, font->FontSize, pos, color, text);
}

}  // namespace attn::gui
