// The screen backend of the figure model: draws a fig::Figure into the current ImGui window with
// ImGui draw lists, heatmaps as GL textures (nearest sampling), text in the window's font, which
// is loaded from the same TrueType file the exports embed. The layout is the exporters' own
// (render/plot/figure_draw.h, measured with the same FreeType metrics), scaled from points to pixels,
// so the screen and the PDF agree.
// Contract: UI thread only, with the window's GL context current. Textures are pooled per view
// and reused from frame to frame; destroy views before the window.
#pragma once
#include <imgui.h>

#include <memory>
#include <vector>

#include "render/plot/figure_draw.h"
#include "render/plot/figure_font.h"
#include "render/gl/gl_texture.h"

namespace attn::gui {

class FigureView {
 public:
  // Draws `figure` as a page of page.width_pt x page.height_pt scaled to `size` pixels at the
  // cursor (an invisible button covers it, so hovering works). Returns the layout in points;
  // pixels_per_point() converts. font: ImGui font loaded from font_file (null: the current one).
  fig::FigureLayout draw(const fig::Figure& figure, const fig::Page& page, ImVec2 size,
                         ImFont* font);
  float pixels_per_point() const { return scale_; }
  ImVec2 origin() const { return origin_; }  // screen position of the page's top-left corner
  // The figure font's metrics (loaded once; null with a message when the file is missing).
  const fig::FigureFont* metrics();
  const std::string& font_error() const { return font_error_; }

 private:
  friend class ImGuiPainter;
  std::vector<render::Texture2D> textures_;
  size_t textures_used_ = 0;
  float scale_ = 1;
  ImVec2 origin_{0, 0};
  std::shared_ptr<fig::FigureFont> font_;
  std::string font_error_;
  bool font_tried_ = false;
};

}  // namespace attn::gui
