// The window's one palette: series colours (Okabe-Ito, colour-blind safe) and the chrome of
// every panel (text, grid, frame, cursor, hover), tuned for the dark theme. Panels name these
// roles instead of spelling colours, so they look alike and change together.
#pragma once
#include <imgui.h>

namespace attn::gui {

// The colour with its alpha replaced by a (0..255), at compile time.
constexpr ImU32 with_alpha8(ImU32 c, unsigned a) {
  return (c & ~IM_COL32_A_MASK) | (static_cast<ImU32>(a & 255u) << IM_COL32_A_SHIFT);
}

// Okabe-Ito colours (colour-blind safe), tuned for the dark theme.
namespace colors {
constexpr ImU32 kBlue = IM_COL32(0, 114, 178, 255);
constexpr ImU32 kReddishPurple = IM_COL32(204, 121, 167, 255);
constexpr ImU32 kSkyBlue = IM_COL32(86, 180, 233, 255);
constexpr ImU32 kOrange = IM_COL32(230, 159, 0, 255);
constexpr ImU32 kGreen = IM_COL32(0, 158, 115, 255);
constexpr ImU32 kVermillion = IM_COL32(213, 94, 0, 255);
constexpr ImU32 kYellow = IM_COL32(240, 228, 66, 255);
constexpr ImU32 kGrey = IM_COL32(160, 160, 160, 255);

// Chrome.
constexpr ImU32 kText = IM_COL32(210, 210, 210, 255);       // labels, readouts
constexpr ImU32 kDimText = IM_COL32(150, 150, 150, 255);    // secondary labels, tick text
constexpr ImU32 kGridLine = IM_COL32(255, 255, 255, 22);    // plot grid
constexpr ImU32 kFrame = IM_COL32(255, 255, 255, 70);       // plot frames, guides
constexpr ImU32 kAxisLine = IM_COL32(255, 255, 255, 90);    // axes through zero
constexpr ImU32 kCursor = IM_COL32(255, 255, 255, 70);      // hover cursor lines
constexpr ImU32 kHover = IM_COL32(255, 80, 80, 255);        // the hovered cell or item
constexpr ImU32 kErrorText = IM_COL32(255, 110, 110, 255);  // messages that need action
constexpr ImU32 kCanvas = IM_COL32(18, 19, 22, 255);        // plot backgrounds
}  // namespace colors

// The colour with its alpha replaced by `alpha` in [0, 1].
inline ImU32 with_alpha(ImU32 c, float alpha) {
  alpha = alpha < 0 ? 0 : alpha > 1 ? 1 : alpha;
  return with_alpha8(c, static_cast<unsigned>(alpha * 255.0f + 0.5f));
}

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
