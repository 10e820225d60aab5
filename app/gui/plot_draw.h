// ImGui draw-list helpers for 2-D plots: an axis frame with nice ticks and labels, series as
// polylines (decimated to the pixel width), markers and dashed reference lines.
// Contract:
//  - draw_plot_frame() lays out margins for the tick labels inside [outer_min, outer_max], draws
//    background, grid, ticks and labels, and returns the inner data area. Ranges must be
//    non-empty (pad them with render::padded first); on a log axis they must be positive.
//  - Series skip non-finite points (and y <= 0 on a log axis) by breaking the line there.
//  - Drawing is clipped to the data area; nothing here keeps state between frames.
#pragma once
#include <imgui.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gui/palette.h"
#include "render/gl/gl_texture.h"
#include "render/plot/plot_math.h"

namespace attn::gui {

struct PlotArea {
  ImVec2 min, max;        // data area, screen pixels
  double x0 = 0, x1 = 1;  // x range (data units)
  double y0 = 0, y1 = 1;  // y range (data units; log10 applied inside when log_y)
  bool log_y = false;

  float px(double x) const;
  float py(double y) const;  // NaN where y has no place on the axis (y <= 0 on log)
  double x_at(float screen_x) const;
  double y_at(float screen_y) const;
  bool contains(ImVec2 p) const {
    return p.x >= min.x && p.x <= max.x && p.y >= min.y && p.y <= max.y;
  }
};

PlotArea draw_plot_frame(ImDrawList* dl, ImVec2 outer_min, ImVec2 outer_max, render::Range x,
                         render::Range y, bool log_y, ImFont* font, const char* x_label);

void draw_series(ImDrawList* dl, const PlotArea& area, const int64_t* xs, const float* ys, size_t n,
                 ImU32 color, float thickness);
// The same for real-valued x (e.g. t in [0, 1]); xs must be increasing for the decimation.
void draw_series(ImDrawList* dl, const PlotArea& area, const float* xs, const float* ys, size_t n,
                 ImU32 color, float thickness);
void draw_markers(ImDrawList* dl, const PlotArea& area, const int64_t* xs, const float* ys,
                  size_t n, ImU32 color, float radius);
void draw_markers(ImDrawList* dl, const PlotArea& area, const float* xs, const float* ys, size_t n,
                  ImU32 color, float radius);
// A vertical colorbar: the texture (a colormap strip, bottom = 0) stretched over [b0, b1], with
// ticks and labels for 0..vmax on its right. Used beside every heatmap grid.
void draw_colorbar(ImDrawList* dl, ImVec2 b0, ImVec2 b1, unsigned texture, double vmax,
                   int max_ticks, ImFont* font, ImU32 text_color);
// The same over [vmin, vmax] (vmin < vmax; may be negative), for fields that are not weights.
void draw_colorbar_range(ImDrawList* dl, ImVec2 b0, ImVec2 b1, unsigned texture, double vmin,
                         double vmax, int max_ticks, ImFont* font, ImU32 text_color);
// Fills `texture` with the colorbar strip draw_colorbar stretches: 256 x 1 texels of `map` over
// [vmin, vmax], top row = vmax. The one colorbar upload every panel uses.
void upload_colorbar(render::Texture2D& texture, render::Colormap map, float vmin = 0.0f,
                     float vmax = 1.0f);
// Token labels of an n x n attention map whose top-left cell is at p0 (square cells of `cell`
// pixels), each clipped to its cell so long tokens never run into their neighbours: with
// `rows`, the query tokens right-aligned to the map's left (at most label_w wide); with `cols`,
// the key tokens above its first row. Missing tokens read "?".
void draw_token_labels(ImDrawList* dl, ImFont* font, ImVec2 p0, float cell, int n, float label_w,
                       bool rows, bool cols, const std::vector<std::string>& tokens, ImU32 color);
void draw_dashed_hline(ImDrawList* dl, const PlotArea& area, double y, ImU32 color, float thickness,
                       const char* label, ImFont* font);

// The colour with its alpha replaced by `alpha` in [0, 1].
ImU32 with_alpha(ImU32 c, float alpha);

// The i-th of seven Okabe-Ito colours (black left out: it vanishes on the dark theme), cycling,
// for series that are told apart by colour alone (one per head).
inline ImU32 categorical_color(int i) {
  constexpr ImU32 kCycle[] = {colors::kSkyBlue, colors::kOrange,        colors::kGreen,
                              colors::kYellow,  colors::kReddishPurple, colors::kVermillion,
                              colors::kBlue};
  constexpr int n = static_cast<int>(sizeof kCycle / sizeof kCycle[0]);
  return kCycle[((i % n) + n) % n];
}

}  // namespace attn::gui
