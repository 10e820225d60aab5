// Checking what draw_figure() draws: every text it paints, measured with the figure font's
// metrics, for overlaps, text leaving the page, text over another panel's plot area or a
// colorbar, and text cut off by a clip. Used by the figure tests (every builder's figure at
// 3.5 in and 7 in) and usable anywhere a figure is laid out.
// Contract:
//  - A text's box is its advance width by the font's ascender + descender (the line box), placed
//    as the Painter contract says (baseline at y; vertical text reads bottom to top, so its
//    ascender side faces left). Boxes that touch (overlap < kTolerancePt) do not count.
//  - Text a panel draws fully inside its own plot area (legend entries, annotations, point
//    labels) is allowed there; the plot areas and colorbars of every other panel are not, and
//    neither is straddling the frame of its own plot.
//  - layout_problems() returns one sentence per problem (empty: the figure fits its page).
#pragma once
#include <string>
#include <vector>

#include "render/plot/figure_draw.h"

namespace attn::fig {

constexpr double kTolerancePt = 0.05;

struct TextBox {
  std::string text;
  Rect box;
  int panel = -1;        // the panel being drawn (Painter::begin_panel); -1: figure-level
  bool clipped = false;  // drawn under a clip that does not contain the whole box
};

// The page rectangle a text occupies (see the contract).
Rect text_box(double x, double y, const std::string& utf8, double size_pt, Anchor anchor,
              bool vertical, const TextMetrics& metrics);

// A painter that records the box of every text and ignores everything else.
class TextRecorder : public Painter {
 public:
  explicit TextRecorder(const TextMetrics& metrics) : metrics_(metrics) {}
  const std::vector<TextBox>& boxes() const { return boxes_; }

  void begin_panel(int index) override { panel_ = index; }
  void fill_rect(const Rect&, Color) override {}
  void polyline(const double*, const double*, int, Color, double, LineStyle, bool) override {}
  void fill_polygon(const double*, const double*, int, Color) override {}
  void marker(double, double, double, Marker, Color) override {}
  void text(double x, double y, const std::string& utf8, double size_pt, Color c, Anchor anchor,
            bool vertical) override;
  void image(const Rect&, int, int, const std::vector<render::Rgba8>&, double) override {}
  void push_clip(const Rect& r) override { clips_.push_back(r); }
  void pop_clip() override {
    if (!clips_.empty()) clips_.pop_back();
  }

 private:
  const TextMetrics& metrics_;
  std::vector<TextBox> boxes_;
  std::vector<Rect> clips_;
  int panel_ = -1;
};

// Draws the figure through a TextRecorder and lists what does not fit (see the contract).
std::vector<std::string> layout_problems(const Figure& figure, const Page& page,
                                         const TextMetrics& metrics);

}  // namespace attn::fig
