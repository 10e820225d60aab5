// The file backends of the figure model, each returning the file's bytes:
//  - render_pdf(): cairo PDF surface, the figure font set from its FreeType face (embedded as a
//    TrueType/CID subset, never Type 3), heatmaps as images with nearest-neighbour sampling.
//  - render_png(): the same drawing on a cairo image surface at dpi / 72 pixels per point,
//    encoded with a pHYs chunk recording the dpi.
//  - render_svg(): written directly: text as <text> elements in the font's family, heatmaps as
//    embedded PNG <image>s with pixelated rendering, lines as <polyline>s.
//  - render_rgba(): the cairo raster itself (for tests that compare layouts).
// Throw FigureError when cairo fails.
#pragma once
#include <string>
#include <vector>

#include "render/plot/figure_draw.h"
#include "render/plot/figure_font.h"

namespace attn::fig {

std::string render_pdf(const Figure& figure, const Page& page, const FigureFont& font);
std::string render_png(const Figure& figure, const Page& page, const FigureFont& font, int dpi);
std::string render_svg(const Figure& figure, const Page& page, const FigureFont& font);
std::vector<render::Rgba8> render_rgba(const Figure& figure, const Page& page,
                                       const FigureFont& font, int dpi, int& width, int& height);

}  // namespace attn::fig
