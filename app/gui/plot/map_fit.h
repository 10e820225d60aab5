// MapFit: the height to draw a figure of heatmaps at so that its smallest map is at least a
// given side on screen; the tile scrolls instead (at UI scale 2 a short tile left attention maps
// of about 15 px, and the panel's controls above them took the rest).
// Contract: plain arithmetic, no ImGui. Each frame: height() before the draw, measured() after
// it with the smallest map's side in pixels (LiveFigure::smallest_map_px). A short map grows the
// next height by what each of the figure's map rows lacks; growth stops when it no longer widens
// the maps (they are as wide as the tile allows), and an overshoot past 1.25 times the least is
// given back. A new tile size or font starts over.
#pragma once
#include <algorithm>

namespace attn::gui {

class MapFit {
 public:
  // The height for a tile `avail_w` x `avail_h` (what is left of it under the controls), never
  // below `least`.
  float height(float avail_w, float avail_h, float least, float font_px) {
    if (avail_w != w_ || avail_h != h_ || font_px != font_) {
      w_ = avail_w, h_ = avail_h, font_ = font_px;
      extra_ = 0, side_ = 0, growing_ = true, grew_ = false;
    }
    return std::max(least, avail_h) + extra_;
  }
  // After the draw: `side` the smallest map's side (0: none drawn), `min_side` the least wanted,
  // `rows` the map rows stacked in the figure.
  void measured(float side, float min_side, int rows) {
    if (side <= 0) return;
    if (grew_ && side <= side_ + 0.5f) growing_ = false;  // height no longer widens the maps
    grew_ = false;
    const float n = static_cast<float>(std::max(1, rows));
    if (growing_ && side < min_side - 0.5f) {
      extra_ += n * (min_side - side);
      grew_ = true;
    } else if (extra_ > 0 && side > 1.25f * min_side) {  // overshot: give back what is not needed
      extra_ = std::max(0.0f, extra_ - n * (side - min_side));
    }
    side_ = side;
  }
  float side() const { return side_; }    // the last measured side
  float extra() const { return extra_; }  // added to the tile's height

 private:
  float w_ = -1, h_ = -1, font_ = -1;
  float extra_ = 0, side_ = 0;
  bool growing_ = true, grew_ = false;
};

}  // namespace attn::gui
