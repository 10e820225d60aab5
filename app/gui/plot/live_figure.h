// LiveFigure: a panel's plot area as a figure of the figure model (render/plot/figure.h), drawn
// by the screen painter (gui/plot/figure_view.h). The panel builds the figure from the snapshot
// with its controls as builder options, and its Export button sends that same figure to the Export
// dialog: what is on screen is what gets exported.
// Contract:
//  - draw() lays the figure out on a page of size / pixels_per_point points, where pixels per
//    point make the figure's font (fig::Page::font_pt) as large as the window's small font, in
//    the dark theme; the figure fills `size` exactly.
//  - hover() finds, for the mouse position of this frame, the line-series point nearest to it
//    (within radius_px, measured on screen) in the panel under the mouse; series without a name
//    are skipped when named_only.
//  - A figure with attention maps (render/plot/map_view.h) is drawn through this view's map
//    view: a line of crop fields above it (a combo of named crops when set_crop_presets() gave
//    some, rows and columns, first and last cell, a Help button), the mouse
//    wheel zooms about the cursor, a left drag pans, a double-click shows the whole crop again, a
//    click shows the clicked map alone at the full size (a click or Esc goes back). hover_cell()
//    and to_screen() take the caller's figure and panel indices and answer in them (cells of the
//    whole map); on_screen() is the figure as drawn, crop included: what Export should write.
//  - UI thread only, GL context current (heatmaps are textures); destroy before the window.
#pragma once
#include <imgui.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/gui/plot/figure_view.h"
#include "render/plot/figure.h"
#include "render/plot/figure_draw.h"
#include "render/plot/map_view.h"

namespace attn::gui {

struct FigureHover {
  int panel = -1;
  int series = -1;  // index into figure.panels[panel].lines
  size_t point = 0;
  std::string name;
  double x = 0, y = 0;
  ImVec2 screen{0, 0};
};

// What a draw() showed, kept for the screen/export agreement test (ATTN_GUI_FIGURES_DIR, see
// gui/gui.h): the figure, the page it was laid out on, and its rectangle in window pixels.
struct CapturedFigure {
  fig::Figure figure;
  fig::Page page;
  float x = 0, y = 0, w = 0, h = 0;
};

// A heatmap cell under the mouse: figure.panels[panel].heatmaps[heatmap], cell (row, col).
struct CellHover {
  int panel = -1, heatmap = -1, row = 0, col = 0;
  float value = 0;
  ImVec2 min{0, 0}, max{0, 0};  // the cell on screen
};

class LiveFigure;
struct UiState;

// For figures over training steps: the timeline's cursor at UiState::timeline_step, and a left
// click in a panel asks the timeline to move to the step under it (UiState::timeline_request).
void mark_timeline(const LiveFigure& plot, UiState& ui);

class LiveFigure {
 public:
  // Test hook: while on, every draw() appends a copy of what it drew; the frame loop clears the
  // list at the start of each frame.
  static void set_capture(bool on);
  static std::vector<CapturedFigure>& captured();

  // Returns false (and draws a note) when the figure font cannot be loaded.
  // cache_key != 0: the figure is drawn once into a texture and that texture is shown until the
  // key, the size or the font change (FigureView::draw_cached): for figures of many lines.
  bool draw(const fig::Figure& figure, ImVec2 size, ImFont* font, uint64_t cache_key = 0);
  std::optional<FigureHover> hover(const fig::Figure& figure, float radius_px = 10.0f,
                                   bool named_only = false) const;
  // The heatmap cell under the mouse (the topmost heatmap of the panel under it), if any.
  std::optional<CellHover> hover_cell(const fig::Figure& figure) const;
  // The page the last draw used (the Export dialog's "as on screen" size).
  const fig::Page& page() const { return page_; }
  const fig::FigureLayout& layout() const { return layout_; }
  // Screen position of a point of panel `panel` in data coordinates (for a figure with maps:
  // clamped to the visible cells; far off screen when that panel is not shown).
  ImVec2 to_screen(int panel, double x, double y) const;
  // The side in pixels (the shorter of width and height) of the smallest heatmap of `figure` the
  // last draw showed; 0 when none is on screen.
  float smallest_map_px(const fig::Figure& figure) const;
  // The least height `figure` needs for each colorbar's label to run whole along its bar (as
  // tall as the plots of its row): per row of plots the longest label's width in `font` and four
  // font sizes (the panel's title, ticks and axis label), plus three for the figure's title (at
  // 1920x1080 a short tile cut "attribution (metric units)" to "attribution (metri...").
  static float colorbar_label_height(const fig::Figure& figure, ImFont* font);
  // `figure` as the last draw() showed it: through the map view (zoom, crop, one head) when it
  // has attention maps, else unchanged. The figure to export.
  fig::Figure on_screen(const fig::Figure& figure) const;
  const fig::MapView& map_view() const { return map_view_; }
  fig::MapView& map_view() { return map_view_; }
  // Named crops offered by a "Crop" combo at the start of the crop line (a task's regions), with
  // "custom" shown when the crop is none of them. Empty (the default): no combo.
  void set_crop_presets(std::vector<fig::CropPreset> presets) { presets_ = std::move(presets); }
  // The timeline's cursor (gui/timeline.h): a vertical line at x = step across every panel of
  // the last draw whose x range holds it (figures over training steps). Not part of the figure.
  void draw_step_cursor(int64_t step) const;
  // The x (a step) under a left click in a panel of the last draw, if this frame has one.
  std::optional<double> clicked_x() const;

 private:
  // The map view's crop fields (one line, taken off `size`) and mouse/keyboard handling.
  void map_controls(ImVec2* size);
  void preset_combo();
  void map_input();
  // The shown panel under the mouse and the mouse there in data coordinates (-1: none).
  int panel_under_mouse(double* x, double* y) const;

  FigureView view_;
  fig::MapView map_view_;
  fig::Figure shown_;     // the last figure with maps as drawn
  bool maps_ = false;     // the last draw() went through the map view
  bool cut_ = false;      // ... and drew shown_ (zoomed, cropped or one head), not the source
  int shown_alone_ = -1;  // the source panel shown_ shows alone, -1: none
  int crop_edit_[4] = {0, 0, 0, 0};  // the crop fields: first and last row, first and last column
  std::vector<fig::CropPreset> presets_;
  fig::FigureLayout layout_;
  fig::Page page_;
  bool hovered_ = false;
};

}  // namespace attn::gui
