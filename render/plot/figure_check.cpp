#include "render/plot/figure_check.h"

#include <algorithm>
#include <cstdio>

namespace attn::fig {
namespace {

// How far two rectangles overlap along each axis (negative: apart).
bool overlaps(const Rect& a, const Rect& b) {
  const double ox = std::min(a.x + a.w, b.x + b.w) - std::max(a.x, b.x);
  const double oy = std::min(a.y + a.h, b.y + b.h) - std::max(a.y, b.y);
  return ox > kTolerancePt && oy > kTolerancePt;
}

bool inside(const Rect& inner, const Rect& outer) {
  return inner.x >= outer.x - kTolerancePt && inner.y >= outer.y - kTolerancePt &&
         inner.x + inner.w <= outer.x + outer.w + kTolerancePt &&
         inner.y + inner.h <= outer.y + outer.h + kTolerancePt;
}

std::string describe(const TextBox& t) {
  char where[96];
  std::snprintf(where, sizeof where, " (%s, at %.1f,%.1f size %.1fx%.1f pt)",
                t.panel < 0 ? "figure" : ("panel " + std::to_string(t.panel)).c_str(), t.box.x,
                t.box.y, t.box.w, t.box.h);
  return "'" + t.text + "'" + where;
}

}  // namespace

Rect text_box(double x, double y, const std::string& s, double size, Anchor anchor, bool vertical,
              const TextMetrics& m) {
  const double w = m.width(s, size), asc = m.ascent(size), desc = m.descent(size);
  // Offset of the text's start from the anchor, along the baseline.
  const double start = anchor == Anchor::Left ? 0 : anchor == Anchor::Center ? -w / 2 : -w;
  if (!vertical) return {x + start, y - asc, w, asc + desc};
  // Reads bottom to top: the baseline runs upwards from y - start, the ascender faces left.
  return {x - asc, y - start - w, asc + desc, w};
}

void TextRecorder::text(double x, double y, const std::string& s, double size, Color, Anchor anchor,
                        bool vertical) {
  if (s.empty()) return;
  TextBox t{s, text_box(x, y, s, size, anchor, vertical, metrics_), panel_, false};
  for (const Rect& c : clips_) t.clipped = t.clipped || !inside(t.box, c);
  boxes_.push_back(std::move(t));
}

std::vector<std::string> layout_problems(const Figure& figure, const Page& page,
                                         const TextMetrics& metrics) {
  TextRecorder rec(metrics);
  const FigureLayout layout = draw_figure(figure, page, metrics, rec);
  const auto& boxes = rec.boxes();
  std::vector<std::string> out;
  const Rect sheet{0, 0, page.width_pt, page.height_pt};
  std::vector<Rect> colorbars;
  for (const auto& p : layout.panels)
    if (p.colorbar.bar.w > 0) colorbars.push_back(p.colorbar.bar);
  if (layout.colorbar.bar.w > 0) colorbars.push_back(layout.colorbar.bar);
  for (size_t i = 0; i < boxes.size(); ++i) {
    const TextBox& t = boxes[i];
    if (!inside(t.box, sheet)) out.push_back(describe(t) + " leaves the page");
    if (t.clipped) out.push_back(describe(t) + " is cut off by a clip");
    for (size_t k = 0; k < layout.panels.size(); ++k) {
      const Rect& plot = layout.panels[k].plot;
      if (!overlaps(t.box, plot)) continue;
      if (static_cast<int>(k) != t.panel)
        out.push_back(describe(t) + " overlaps the plot area of panel " + std::to_string(k));
      else if (!inside(t.box, plot))
        out.push_back(describe(t) + " straddles the frame of its plot");
    }
    for (const Rect& c : colorbars)
      if (overlaps(t.box, c)) out.push_back(describe(t) + " overlaps a colorbar");
    for (size_t j = i + 1; j < boxes.size(); ++j)
      if (overlaps(t.box, boxes[j].box))
        out.push_back(describe(t) + " overlaps " + describe(boxes[j]));
  }
  return out;
}

}  // namespace attn::fig
