#include "render/plot/map_view.h"

#include <algorithm>
#include <cmath>

namespace attn::fig {
namespace {

// The span after zooming by `factor`: always a change of at least one cell while one is possible.
int zoomed_span(int span, double factor, int min_span, int max_span) {
  int next = static_cast<int>(std::lround(span / factor));
  if (next == span && factor > 1) --next;
  if (next == span && factor < 1) ++next;
  return std::clamp(next, std::min(min_span, max_span), max_span);
}

// The new begin that keeps cell floor(at) at the same fraction of the range, clamped to `limit`.
CellRange zoom_range(const CellRange& r, int span, double at, const CellRange& limit) {
  const double f = std::clamp((at - r.begin) / r.size(), 0.0, 1.0 - 1e-9);
  const int cell = std::clamp(static_cast<int>(std::floor(at)), r.begin, r.end - 1);
  int begin = cell - static_cast<int>(std::floor(f * span));
  begin = std::clamp(begin, limit.begin, limit.end - span);
  return {begin, begin + span};
}

// Moves r by the whole cells of `*pending`, keeping the fraction, within `limit`.
CellRange pan_range(const CellRange& r, double* pending, const CellRange& limit) {
  const int whole = static_cast<int>(std::trunc(*pending));
  *pending -= whole;
  const int begin = std::clamp(r.begin + whole, limit.begin, limit.end - r.size());
  if (begin != r.begin + whole) *pending = 0;  // at an edge: no remainder to push further
  return {begin, begin + r.size()};
}

std::vector<Tick> ticks_inside(const std::vector<Tick>& ticks, const CellRange& r) {
  std::vector<Tick> kept;
  for (const Tick& t : ticks)
    if (t.value >= r.begin && t.value <= r.end) kept.push_back(t);
  return kept;
}

std::string range_text(const char* what, const CellRange& r) {
  return std::string(what) + " " + std::to_string(r.begin) + "-" + std::to_string(r.end - 1);
}

}  // namespace

const Heatmap* MapView::first_map(const Figure& figure, bool any_heatmap) {
  for (const Panel& p : figure.panels)
    for (const Heatmap& h : p.heatmaps)
      if ((any_heatmap || h.layer >= 0) && h.rows > 0 && h.cols > 0) return &h;
  return nullptr;
}

void MapView::set_size(int rows, int cols) {
  if (rows == rows_ && cols == cols_) return;
  rows_ = std::max(0, rows), cols_ = std::max(0, cols);
  selected_ = -1;
  clear_crop();
}

bool MapView::zoomed() const {
  return vis_rows_.begin != 0 || vis_rows_.end != rows_ || vis_cols_.begin != 0 ||
         vis_cols_.end != cols_;
}

CellRange MapView::clamp_into(CellRange r, const CellRange& limit) {
  r.begin = std::clamp(r.begin, limit.begin, std::max(limit.begin, limit.end - 1));
  r.end = std::clamp(r.end, r.begin + 1, std::max(r.begin + 1, limit.end));
  return r;
}

void MapView::set_crop(CellRange rows, CellRange cols) {
  crop_rows_ = clamp_into(rows, {0, rows_});
  crop_cols_ = clamp_into(cols, {0, cols_});
  reset();
}

int MapView::preset_shown(const std::vector<CropPreset>& presets) const {
  for (size_t i = 0; i < presets.size(); ++i)
    if (clamp_into(presets[i].rows, {0, rows_}) == crop_rows_ &&
        clamp_into(presets[i].cols, {0, cols_}) == crop_cols_)
      return static_cast<int>(i);
  return -1;
}

void MapView::reset() {
  vis_rows_ = crop_rows_, vis_cols_ = crop_cols_;
  pan_rows_ = pan_cols_ = 0;
}

void MapView::zoom_at(double factor, double row, double col) {
  if (!(factor > 0) || rows_ <= 0 || cols_ <= 0) return;
  const int rspan = zoomed_span(vis_rows_.size(), factor, kMinSpan, crop_rows_.size());
  const int cspan = zoomed_span(vis_cols_.size(), factor, kMinSpan, crop_cols_.size());
  vis_rows_ = zoom_range(vis_rows_, rspan, row, crop_rows_);
  vis_cols_ = zoom_range(vis_cols_, cspan, col, crop_cols_);
  pan_rows_ = pan_cols_ = 0;
}

void MapView::pan(double drows, double dcols) {
  if (!std::isfinite(drows) || !std::isfinite(dcols)) return;
  pan_rows_ += drows, pan_cols_ += dcols;
  vis_rows_ = pan_range(vis_rows_, &pan_rows_, crop_rows_);
  vis_cols_ = pan_range(vis_cols_, &pan_cols_, crop_cols_);
}

int MapView::shown_panel(int source) const {
  if (selected_ < 0) return source;
  return source == selected_ ? 0 : -1;
}

// One panel cut to the visible cells: its maps' values and extents, its axes and ticks.
void MapView::cut_panel(Panel& p) const {
  bool cut = false;
  for (Heatmap& h : p.heatmaps) {
    if (h.rows != rows_ || h.cols != cols_ || h.values.size() != size_t(rows_) * cols_) continue;
    const double cw = (h.x1 - h.x0) / cols_, ch = (h.y1 - h.y0) / rows_;
    std::vector<float> values;
    values.reserve(size_t(vis_rows_.size()) * vis_cols_.size());
    for (int r = vis_rows_.begin; r < vis_rows_.end; ++r)
      for (int c = vis_cols_.begin; c < vis_cols_.end; ++c)
        values.push_back(h.values[size_t(r) * cols_ + c]);
    h.values = std::move(values);
    h.rows = vis_rows_.size(), h.cols = vis_cols_.size();
    h.first_row += vis_rows_.begin, h.first_col += vis_cols_.begin;
    const double x0 = h.x0, y0 = h.y0;
    h.x0 = x0 + vis_cols_.begin * cw, h.x1 = x0 + vis_cols_.end * cw;
    h.y0 = y0 + vis_rows_.begin * ch, h.y1 = y0 + vis_rows_.end * ch;
    if (!cut) {
      p.x.min = std::min(h.x0, h.x1), p.x.max = std::max(h.x0, h.x1);
      p.y.min = std::min(h.y0, h.y1), p.y.max = std::max(h.y0, h.y1);
    }
    cut = true;
  }
  if (!cut) return;
  // Ticks sit at cell centres in the map's own coordinates (one unit per cell: token_ticks).
  p.x.ticks = ticks_inside(p.x.ticks, vis_cols_);
  p.y.ticks = ticks_inside(p.y.ticks, vis_rows_);
}

Figure MapView::apply(const Figure& figure, bool name_range) const {
  if (!map_of(figure) || rows_ <= 0 || cols_ <= 0) return figure;
  Figure f = figure;
  if (selected_ >= 0 && selected_ < static_cast<int>(f.panels.size())) {
    Panel alone = std::move(f.panels[static_cast<size_t>(selected_)]);
    f.panels.clear();
    f.panels.push_back(std::move(alone));
    f.rows = f.cols = 1;
    f.aspect = 0.9;
  }
  if (zoomed()) {
    for (Panel& p : f.panels) cut_panel(p);
    if (name_range)
      f.title += (f.title.empty() ? "" : "; ") + range_text("rows (queries)", vis_rows_) + ", " +
                 range_text("columns (keys)", vis_cols_);
  }
  return f;
}

}  // namespace attn::fig
