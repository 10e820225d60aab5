// The screen backend of the figure model: draws a fig::Figure into the current ImGui window with
// ImGui draw lists, heatmaps as GL textures (nearest sampling), text in the window's font, which
// is loaded from the same TrueType file the exports embed. The layout is the exporters' own
// (render/plot/figure_draw.h, measured with the same FreeType metrics), scaled from points to
// pixels, so the screen and the PDF agree.
// Contract:
//  - UI thread only, with the window's GL context current. Textures are pooled per view and
//    reused from frame to frame; destroy views before the window.
//  - Any number of points can be drawn: polylines longer than ImGui's 16-bit vertex indices
//    allow in one call are drawn in pieces.
//  - Vertical text is drawn as rotated glyph quads: the window clips it like everything else,
//    never where its unrotated glyphs would have left the clip rectangle.
//  - hover(): after draw(), the panel whose plot area is under the mouse and the nearest
//    line-series point within a few pixels (fig::nearest_point, pixels converted to points
//    with pixels_per_point()); nullopt when the mouse is over no plot area.
#pragma once
#include <imgui.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "render/gl/canvas_target.h"
#include "render/gl/gl_texture.h"
#include "render/plot/figure_draw.h"
#include "render/plot/figure_font.h"

namespace attn::gui {

struct HoverHit {
  int panel = -1;                   // index into Figure::panels (and FigureLayout::panels)
  bool on_point = false;            // a line point lies within the radius; then:
  int series = -1;                  // its index in Panel::lines
  int index = -1;                   // its index in the series
  std::string name;                 // the series name
  double x = 0, y = 0;              // the point, in data coordinates
  double mouse_x = 0, mouse_y = 0;  // the mouse, in the panel's data coordinates
};

class FigureView {
 public:
  // Draws `figure` as a page of page.width_pt x page.height_pt scaled to `size` pixels at the
  // cursor (an invisible button covers it, so hovering works). Returns the layout in points;
  // pixels_per_point() converts. font: ImGui font loaded from font_file (null: the current one).
  fig::FigureLayout draw(const fig::Figure& figure, const fig::Page& page, ImVec2 size,
                         ImFont* font);
  // Like draw(), but the page is painted into an offscreen texture (render::CanvasTarget) only
  // when `key` (the caller's name for the figure's content; 0: always), the size or the font
  // changed since the last call, and otherwise only that texture is shown: a figure of
  // thousands of lines costs one textured quad per frame on a software rasteriser.
  fig::FigureLayout draw_cached(const fig::Figure& figure, const fig::Page& page, ImVec2 size,
                                ImFont* font, uint64_t key);
  // What the mouse (screen pixels) is over in `layout`, the value the last draw() of `figure`
  // returned. radius_px: how near a line point must be.
  std::optional<HoverHit> hover(const fig::Figure& figure, const fig::FigureLayout& layout,
                                ImVec2 mouse, float radius_px = 6) const;
  float pixels_per_point() const { return scale_; }
  ImVec2 origin() const { return origin_; }  // screen position of the page's top-left corner
  // The figure font's metrics (loaded once; null with a message when the file is missing).
  const fig::FigureFont* metrics();
  const std::string& font_error() const { return font_error_; }

 private:
  friend class ImGuiPainter;
  std::vector<render::Texture2D> textures_;
  render::CanvasTarget canvas_;  // draw_cached's page
  uint64_t cache_key_ = 0;
  ImFont* cache_font_ = nullptr;
  fig::FigureLayout cache_layout_;
  size_t textures_used_ = 0;
  float scale_ = 1;
  ImVec2 origin_{0, 0};
  std::shared_ptr<fig::FigureFont> font_;
  std::string font_error_;
  bool font_tried_ = false;
};

}  // namespace attn::gui
