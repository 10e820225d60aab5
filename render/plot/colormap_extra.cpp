// Magma and cividis (sampled LUTs, linearly interpolated) and the Okabe-Ito line palette.
#include <algorithm>
#include <cmath>

#include "core/base/enum_names.h"
#include "render/plot/colormap.h"

namespace attn::render {
namespace {

// Every 8th entry of matplotlib's 256-entry tables (entries 0, 8, ..., 248) plus entry 255.
// Linear interpolation between them stays within 0.004 of the full table.
// magma: CC0, Stefan van der Walt and Nathaniel Smith.
constexpr int kSampled = 33;
constexpr float kMagma[kSampled][3] = {
    {0.001462f, 0.000466f, 0.013866f}, {0.013708f, 0.011771f, 0.068667f},
    {0.039608f, 0.031090f, 0.133515f}, {0.074257f, 0.052017f, 0.202660f},
    {0.113094f, 0.065492f, 0.276784f}, {0.159018f, 0.068354f, 0.352688f},
    {0.211718f, 0.061992f, 0.418647f}, {0.265447f, 0.060237f, 0.461840f},
    {0.316654f, 0.071690f, 0.485380f}, {0.366012f, 0.090314f, 0.497960f},
    {0.414709f, 0.110431f, 0.504662f}, {0.463508f, 0.129893f, 0.507652f},
    {0.512831f, 0.148179f, 0.507648f}, {0.562866f, 0.165368f, 0.504692f},
    {0.613617f, 0.181811f, 0.498536f}, {0.664915f, 0.198075f, 0.488836f},
    {0.716387f, 0.214982f, 0.475290f}, {0.767398f, 0.233705f, 0.457755f},
    {0.816914f, 0.255895f, 0.436461f}, {0.863320f, 0.283729f, 0.412403f},
    {0.904281f, 0.319610f, 0.388137f}, {0.937221f, 0.364929f, 0.368567f},
    {0.960949f, 0.418323f, 0.359630f}, {0.976690f, 0.476226f, 0.364466f},
    {0.986700f, 0.535582f, 0.382210f}, {0.992785f, 0.594891f, 0.410283f},
    {0.996096f, 0.653659f, 0.446213f}, {0.997325f, 0.711848f, 0.488154f},
    {0.996898f, 0.769591f, 0.534892f}, {0.995131f, 0.827052f, 0.585701f},
    {0.992440f, 0.884330f, 0.640099f}, {0.989434f, 0.941470f, 0.697519f},
    {0.987053f, 0.991438f, 0.749504f}};
// cividis: Nunez, Anderton and Renslow (2018), as shipped by matplotlib. Readable with colour
// vision deficiency; luminance rises monotonically.
constexpr float kCividis[kSampled][3] = {
    {0.000000f, 0.135112f, 0.304751f}, {0.000000f, 0.157932f, 0.357521f},
    {0.000000f, 0.178802f, 0.414764f}, {0.017852f, 0.198528f, 0.441248f},
    {0.103401f, 0.220406f, 0.435790f}, {0.154261f, 0.242475f, 0.430120f},
    {0.195057f, 0.264372f, 0.425924f}, {0.230871f, 0.286134f, 0.423498f},
    {0.263738f, 0.307831f, 0.422789f}, {0.294669f, 0.329531f, 0.423716f},
    {0.324250f, 0.351289f, 0.426250f}, {0.352892f, 0.373153f, 0.430226f},
    {0.380830f, 0.395164f, 0.435653f}, {0.408226f, 0.417357f, 0.442570f},
    {0.435168f, 0.439763f, 0.451134f}, {0.461616f, 0.462405f, 0.461969f},
    {0.488697f, 0.485318f, 0.471008f}, {0.517920f, 0.508454f, 0.472707f},
    {0.547840f, 0.531895f, 0.471704f}, {0.578236f, 0.555673f, 0.468724f},
    {0.609105f, 0.579816f, 0.463638f}, {0.640352f, 0.604354f, 0.456791f},
    {0.671991f, 0.629316f, 0.448018f}, {0.704037f, 0.654731f, 0.437147f},
    {0.736488f, 0.680629f, 0.424028f}, {0.769353f, 0.707035f, 0.408516f},
    {0.802667f, 0.733978f, 0.390153f}, {0.836429f, 0.761483f, 0.368747f},
    {0.870717f, 0.789572f, 0.343333f}, {0.905589f, 0.818257f, 0.312889f},
    {0.941147f, 0.847530f, 0.275815f}, {0.977780f, 0.877281f, 0.227954f},
    {0.995737f, 0.909344f, 0.217772f}};

Rgba8 sample(const float (&table)[kSampled][3], float t) {
  if (!(t > 0.0f)) t = 0.0f;  // also catches NaN
  if (t > 1.0f) t = 1.0f;
  const float index = t * 255.0f;
  // Sample k holds entry 8k for k < 32; sample 32 holds entry 255.
  int k = std::min(static_cast<int>(index / 8.0f), kSampled - 2);
  const float lo = 8.0f * k, hi = k == kSampled - 2 ? 255.0f : 8.0f * (k + 1);
  const float f = std::clamp((index - lo) / (hi - lo), 0.0f, 1.0f);
  auto byte = [](float v) {
    return static_cast<uint8_t>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f));
  };
  return {byte(table[k][0] + (table[k + 1][0] - table[k][0]) * f),
          byte(table[k][1] + (table[k + 1][1] - table[k][1]) * f),
          byte(table[k][2] + (table[k + 1][2] - table[k][2]) * f), 255};
}

// Okabe & Ito (2008), "Color Universal Design"; Wong (2011), Nature Methods 8:441. Black is
// left out (it is the axis colour); the order puts the most distinct hues first.
constexpr Rgba8 kOkabeIto[] = {{0, 114, 178, 255},   {230, 159, 0, 255},  {0, 158, 115, 255},
                               {204, 121, 167, 255}, {86, 180, 233, 255}, {213, 94, 0, 255},
                               {240, 228, 66, 255}};

}  // namespace

Rgba8 magma(float t) {
  return sample(kMagma, t);
}
Rgba8 cividis(float t) {
  return sample(kCividis, t);
}

Rgba8 okabe_ito(int index) {
  constexpr int n = sizeof(kOkabeIto) / sizeof(kOkabeIto[0]);
  return kOkabeIto[((index % n) + n) % n];
}
int okabe_ito_count() {
  return sizeof(kOkabeIto) / sizeof(kOkabeIto[0]);
}

Rgba8 colormap_color(Colormap map, float t) {
  switch (map) {
    case Colormap::Viridis:
      return viridis(t);
    case Colormap::Magma:
      return magma(t);
    case Colormap::Cividis:
      return cividis(t);
    case Colormap::Gray:
      return gray(t);
    case Colormap::Hot:
      return hot(t);
    case Colormap::Diverging:
      return diverging(2.0f * t - 1.0f, 1.0f);
  }
  return viridis(t);
}

namespace {
constexpr EnumName<Colormap> kColormapNames[] = {
    {Colormap::Viridis, "viridis"}, {Colormap::Magma, "magma"}, {Colormap::Cividis, "cividis"},
    {Colormap::Gray, "gray"},       {Colormap::Hot, "hot"},     {Colormap::Diverging, "diverging"}};
}  // namespace

const char* to_string(Colormap map) {
  return enum_name(map, kColormapNames);
}

bool parse_colormap(const std::string& name, Colormap& out) {
  return find_enum(kColormapNames, name, &out);
}

}  // namespace attn::render
