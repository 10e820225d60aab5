// Drawing helpers of the Geometry panel's 2-D canvas (app/panels/geometry_panel.*): the view
// (pan and zoom with equal scale on both axes, y up), the axes and background grid, and the
// primitives the views are made of, all on an ImDrawList in screen pixels.
// Contract:
//  - CanvasView maps data units to screen pixels and back; pixels_per_unit > 0 always
//    (zoom_about() clamps it to [1e-6, 1e9]). It never allocates.
//  - The draw_* functions keep no state and only append to the draw list; polylines go through
//    a caller-owned scratch vector, so a frame allocates nothing once the scratch is large enough.
//  - Everything is clipped by the caller (PushClipRect over the canvas).
#pragma once
#include <imgui.h>

#include <string>
#include <vector>

#include "core/analysis/geometry.h"

namespace attn::gui {

struct CanvasView {
  ImVec2 min, max;  // the canvas, screen pixels
  double center_x = 0, center_y = 0;
  double pixels_per_unit = 100;

  ImVec2 to_screen(geometry::Vec2 p) const;
  geometry::Vec2 to_data(ImVec2 s) const;
  geometry::Box visible() const;  // the data rectangle the canvas shows
  // Zoom by `factor` keeping the data point under `screen` fixed (wheel zoom about the cursor).
  void zoom_about(ImVec2 screen, double factor);
  // Centre on `box` and scale it to fill the canvas, leaving `margin` (a fraction) around it.
  void fit(const geometry::Box& box, double margin);
};

// Background, a grid at nice steps (render::linear_ticks), the axes x = 0 and y = 0 and tick
// labels along the left and bottom edges.
void draw_axes(ImDrawList* dl, const CanvasView& view, ImFont* font);

// A polyline through data points (closed: back to the first). Non-finite points break it.
void draw_data_polyline(ImDrawList* dl, const CanvasView& view, const geometry::Vec2* points,
                        size_t n, bool closed, ImU32 color, float thickness,
                        std::vector<ImVec2>& scratch);
// The same, dashed (dash and gap in pixels along the screen path).
void draw_dashed_polyline(ImDrawList* dl, const CanvasView& view, const geometry::Vec2* points,
                          size_t n, bool closed, ImU32 color, float thickness, float dash,
                          float gap);
void draw_dashed_line(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 color, float thickness, float dash,
                      float gap);

// Text with a dark halo, readable over lines and images.
void draw_label(ImDrawList* dl, ImFont* font, ImVec2 pos, ImU32 color, const char* text);

// Points as "x1,y1;x2,y2;..." (the format geometry::parse_points reads), 6 significant digits.
std::string format_points(const std::vector<geometry::Vec2>& points);

}  // namespace attn::gui
