// The view of a figure's attention maps on screen: zoom, pan, a crop and a single map shown alone.
// Plain data and maths (no GL, no ImGui, no torch); gui/plot/live_figure.h drives it from the
// mouse and draws what apply() returns, and the panels export that same figure, so an export
// holds exactly the cells on screen.
// Contract:
//  - A figure "has maps" when one of its heatmaps is an attention map (Heatmap::layer >= 0), or
//    with set_any_heatmap(true) any heatmap; the first such heatmap gives the maps' size (rows x
//    cols). set_size() with another size resets the whole view (zoom, pan, crop, selection).
//  - The visible part of every map is one range of whole cells [begin, end) per axis, the same
//    for every map of the figure (heads compared cell for cell). It always lies inside the crop,
//    which lies inside the map and holds at least one cell per axis.
//  - zoom_at() scales the visible spans by 1 / factor (at least kMinSpan cells, at most the
//    crop) about a point given in cell coordinates (the mouse's data coordinates): the cell
//    under that point stays under it, unless the range would leave the crop (then it is shifted
//    back inside). pan() moves by fractional cells, accumulated until a whole cell is reached,
//    and stops at the crop's edges. reset() shows the whole crop.
//  - A crop preset (a task's named region: core/data/task_regions.h) is a crop by name;
//    preset_shown() says which of a list the current crop is (after the same clamping as
//    set_crop), so a control can show "custom" once the crop is typed or dragged elsewhere.
//  - apply() returns the figure as shown: every heatmap of the maps' size cut to the visible
//    cells (its data coordinates kept, so tick positions and hover readouts still hold), the
//    panels' axes set to the visible range and their ticks to those inside it, and, with a
//    selected panel, that panel alone. With name_range (exports), the title also says which rows
//    and columns are shown when that is not the whole map; the screen leaves the title alone,
//    so that the layout (and the cell under the mouse) stays put while zooming.
#pragma once
#include <string>
#include <vector>

#include "render/plot/figure.h"

namespace attn::fig {

struct CellRange {
  int begin = 0, end = 0;  // [begin, end)
  int size() const { return end - begin; }
  bool operator==(const CellRange& o) const { return begin == o.begin && end == o.end; }
};

// A named crop: whole cells [begin, end) per axis (rows: queries, cols: keys).
struct CropPreset {
  std::string name;
  CellRange rows, cols;
};

class MapView {
 public:
  static constexpr int kMinSpan = 2;  // zooming in stops at this many cells per axis

  // The first attention map of `figure` (layer >= 0; with any_heatmap, the first heatmap), or
  // null.
  static const Heatmap* first_map(const Figure& figure, bool any_heatmap = false);
  static bool has_maps(const Figure& figure) { return first_map(figure) != nullptr; }
  // Every heatmap counts as a map, not only attention maps: a matrix (the Connection
  // Transformer's C) gets the same zoom, pan and crop. Off by default.
  void set_any_heatmap(bool on) { any_heatmap_ = on; }
  // The first heatmap this view treats as a map (first_map with this view's setting).
  const Heatmap* map_of(const Figure& figure) const { return first_map(figure, any_heatmap_); }

  // The maps' size; a different size than before resets the view.
  void set_size(int rows, int cols);
  int rows() const { return rows_; }
  int cols() const { return cols_; }

  const CellRange& visible_rows() const { return vis_rows_; }
  const CellRange& visible_cols() const { return vis_cols_; }
  const CellRange& crop_rows() const { return crop_rows_; }
  const CellRange& crop_cols() const { return crop_cols_; }
  // Whether anything but the whole map is shown.
  bool zoomed() const;

  // Limits the view to these cells (clamped into the map, at least one cell each) and shows
  // all of them.
  void set_crop(CellRange rows, CellRange cols);
  void clear_crop() { set_crop({0, rows_}, {0, cols_}); }
  void set_crop(const CropPreset& preset) { set_crop(preset.rows, preset.cols); }
  // The index of the first of `presets` whose crop (clamped as set_crop clamps) is the current
  // crop, or -1 (a custom crop).
  int preset_shown(const std::vector<CropPreset>& presets) const;
  // Zoom by `factor` (> 1: in) about the point (row, col) in cell coordinates.
  void zoom_at(double factor, double row, double col);
  // Moves the visible range by (drows, dcols) cells (fractions accumulate).
  void pan(double drows, double dcols);
  // The whole crop, no pan remainder.
  void reset();

  // The panel shown alone (an index into the source figure's panels), -1: all.
  int selected() const { return selected_; }
  void select(int panel) { selected_ = panel; }
  // The source panel index of panel `shown` of apply()'s figure, and back (-1: not shown).
  int source_panel(int shown) const { return selected_ >= 0 ? selected_ : shown; }
  int shown_panel(int source) const;

  // The figure as shown (see the contract). A figure without maps is returned unchanged.
  Figure apply(const Figure& figure, bool name_range = false) const;

 private:
  static CellRange clamp_into(CellRange r, const CellRange& limit);
  void cut_panel(Panel& p) const;

  int rows_ = 0, cols_ = 0;
  CellRange crop_rows_, crop_cols_, vis_rows_, vis_cols_;
  double pan_rows_ = 0, pan_cols_ = 0;  // fractional pan not yet applied
  int selected_ = -1;
  bool any_heatmap_ = false;
};

}  // namespace attn::fig
