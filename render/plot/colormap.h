// Colormaps as plain functions (no GL), shared by the on-screen heatmaps and figure export.
// Contract:
//  - viridis(t): t in [0, 1] (clamped; NaN -> 0) -> the 256-entry viridis LUT (van der Walt &
//    Smith, CC0), nearest entry. Perceptually uniform: luminance increases monotonically.
//  - diverging(v, vmax): blue-white-red, pure white at v == 0, saturated blue at -vmax and red
//    at +vmax (clamped). For signed matrices; symmetric so that 0 always means "no effect".
//  - gray(t): black (0) to white (1), for pictures under an overlay.
//  - hot(t): black-red-yellow-white (each channel a ramp over a third of [0, 1]); luminance
//    increases monotonically. An overlay colour that stands apart from a grey picture.
//  - magma(t), cividis(t): matplotlib's tables (sampled every 8th entry, interpolated); both
//    perceptually uniform, cividis also readable with colour vision deficiency.
//  - colormap_color(map, t): any map at t in [0, 1] (Diverging: t = 0.5 is the white centre).
//  - okabe_ito(i): the i-th colour-blind-safe line colour (wraps around), black left out.
//  - colorize(): a whole matrix to RGBA8, row-major, alpha 255; a cell with no value (NaN) is
//    kMissingColor, outside every map, never the map's low end.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attn::render {

struct Rgba8 {
  uint8_t r = 0, g = 0, b = 0, a = 255;
};

enum class Colormap { Viridis, Diverging, Gray, Hot, Magma, Cividis };

constexpr int kViridisSize = 256;
// The float LUT itself (sRGB components in [0, 1]); exposed for tests and exporters.
const std::array<std::array<float, 3>, kViridisSize>& viridis_table();

Rgba8 viridis(float t);
Rgba8 diverging(float v, float vmax);
Rgba8 gray(float t);
Rgba8 hot(float t);
Rgba8 magma(float t);
Rgba8 cividis(float t);
Rgba8 colormap_color(Colormap map, float t);
const char* to_string(Colormap map);                          // "viridis", "magma", ...
bool parse_colormap(const std::string& name, Colormap& out);  // false for unknown names

Rgba8 okabe_ito(int index);
int okabe_ito_count();

// A cell without a value: a mid gray that no map's low end resembles (viridis starts dark purple,
// so NaN drawn as 0 read as "0%").
constexpr Rgba8 kMissingColor = {176, 176, 176, 255};

// Maps values to colours. Viridis, Gray, Hot: [vmin, vmax] -> [0, 1] (vmax <= vmin maps everything
// to 0). Diverging: centred on 0 with scale max(|vmin|, |vmax|). Non-finite values: kMissingColor.
void colorize(const float* values, size_t count, Colormap map, float vmin, float vmax,
              std::vector<Rgba8>& out);

// Relative luminance (Rec. 709 weights on linearised sRGB), for tests and contrast choices.
double relative_luminance(float r, float g, float b);
double relative_luminance(Rgba8 c);

}  // namespace attn::render
