// The figure model's layout and drawing, checked through a recording painter, and the colormaps
// it adds (magma, cividis, Okabe-Ito).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "figure_helpers.h"
#include "render/plot/figure_draw.h"
#include "render/plot/figure_font.h"

using namespace attn::fig;
using namespace attn::fig::testing;
namespace render = attn::render;

namespace {

struct Recorder : Painter {
  std::vector<std::string> texts;
  std::vector<Rect> images;
  int polylines = 0, markers = 0, clips = 0, max_clip_depth = 0, depth = 0;
  void fill_rect(const Rect&, Color) override {}
  void polyline(const double*, const double*, int, Color, double, LineStyle, bool) override {
    ++polylines;
  }
  void fill_polygon(const double*, const double*, int, Color) override {}
  void marker(double, double, double, Marker, Color) override { ++markers; }
  void text(double, double, const std::string& s, double, Color, Anchor, bool) override {
    texts.push_back(s);
  }
  void image(const Rect& r, int, int, const std::vector<render::Rgba8>&, double) override {
    images.push_back(r);
  }
  void push_clip(const Rect&) override {
    ++clips;
    max_clip_depth = std::max(max_clip_depth, ++depth);
  }
  void pop_clip() override { --depth; }
};

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST_CASE("figure layout: panels fit the page, data maps to the plot and back") {
  auto font = FigureFont::load(default_font_path());
  const Figure f = sample_figure();
  Page page;
  page.width_pt = 504, page.height_pt = 200;
  const FigureLayout L = layout_figure(f, page, *font);
  REQUIRE(L.panels.size() == 2);
  for (const auto& p : L.panels) {
    CHECK(p.plot.x > 0);
    CHECK(p.plot.y > 0);
    CHECK(p.plot.x + p.plot.w < page.width_pt);
    CHECK(p.plot.y + p.plot.h < page.height_pt);
    for (double x : {p.xmin, 0.5 * (p.xmin + p.xmax), p.xmax})
      CHECK(p.data_x(p.page_x(x)) == doctest::Approx(x).epsilon(1e-9));
  }
  // Log y: the loss panel spans its data (0.207 .. 3.15, padded) and maps decades evenly.
  const auto& loss = L.panels[0];
  CHECK(loss.ylog);
  CHECK(loss.ymin < 0.207);
  CHECK(loss.ymin > 0.15);
  CHECK(loss.ymax > 3.1);
  CHECK(loss.page_y(0.1) - loss.page_y(1.0) ==
        doctest::Approx(loss.page_y(1.0) - loss.page_y(10.0)));
  // The matrix panel: heatmap extents exactly (no padding), row 0 at the top, a colorbar.
  const auto& mat = L.panels[1];
  CHECK(mat.xmin == 0);
  CHECK(mat.xmax == 4);
  CHECK(mat.page_y(0) < mat.page_y(3));
  CHECK(mat.colorbar.bar.w > 0);
  CHECK(mat.colorbar.bar.x > mat.plot.x + mat.plot.w);
  CHECK(mat.colorbar.vmin == -1.0);
  CHECK(mat.colorbar.vmax == 1.0);
  // Panels do not overlap.
  CHECK(loss.plot.x + loss.plot.w < mat.plot.x);
}

TEST_CASE("figure drawing: every label, legend entry and image reaches the painter") {
  auto font = FigureFont::load(default_font_path());
  Recorder rec;
  Page page;
  page.width_pt = 504, page.height_pt = 200;
  draw_figure(sample_figure(), page, *font, rec);
  for (const char* s :
       {"Sample figure", "loss", "C", "step", "loss (nats)", "slot", "C_ij", "train", "eval", "1"})
    CHECK_MESSAGE(has(rec.texts, s), s);
  CHECK(rec.images.size() == 2);  // the heatmap and its colorbar
  CHECK(rec.clips == 2);
  CHECK(rec.depth == 0);
  CHECK(rec.max_clip_depth == 1);
}

TEST_CASE("figure legend: a polygon with in_legend false is drawn but not listed") {
  auto font = FigureFont::load(default_font_path());
  Figure f;
  for (bool shared : {false, true}) {
    f.shared_legend = shared;
    f.panels.clear();
    Panel p;
    p.lines.push_back({"group mean", {0, 1, 2}, {1, 2, 1.5}, {}, 1.0, LineStyle::Solid});
    Polygon band;
    band.name = "group mean 95% CI";
    band.x = {0, 1, 2, 2, 1, 0};
    band.y = {0.8, 1.7, 1.2, 1.8, 2.3, 1.2};
    band.fill = Color::rgb(0.2, 0.4, 0.8, 0.2);
    band.in_legend = false;
    p.polygons.push_back(band);
    Polygon hull = band;
    hull.name = "hull";
    hull.in_legend = true;
    p.polygons.push_back(hull);
    f.panels.push_back(p);
    Recorder rec;
    Page page;
    page.width_pt = 400, page.height_pt = 240;
    draw_figure(f, page, *font, rec);
    CHECK_MESSAGE(has(rec.texts, "group mean"), shared);
    CHECK_MESSAGE(has(rec.texts, "hull"), shared);
    CHECK_MESSAGE(!has(rec.texts, "group mean 95% CI"), shared);
  }
}

TEST_CASE("figure layout: small multiples with shared axes get equal plot areas") {
  auto font = FigureFont::load(default_font_path());
  Figure f;
  f.rows = 2, f.cols = 3;
  f.share_x = f.share_y = true;
  for (int i = 0; i < 6; ++i) {
    Panel p;
    p.title = "head " + std::to_string(i);
    p.y.label = "g(t)";
    p.x.label = "t";
    p.lines.push_back({"", {0, 1}, {double(i), double(-i)}, {}, 1.0, LineStyle::Solid});
    f.panels.push_back(p);
  }
  Page page;
  page.width_pt = 504, page.height_pt = 300;
  const FigureLayout L = layout_figure(f, page, *font);
  for (const auto& p : L.panels) {
    CHECK(p.plot.w == doctest::Approx(L.panels[0].plot.w));
    CHECK(p.plot.h == doctest::Approx(L.panels[0].plot.h));
    CHECK(p.ymin == L.panels[0].ymin);  // shared: the union of every panel's data
    CHECK(p.ymax == L.panels[0].ymax);
  }
  CHECK(L.panels[0].ymin < -5.0);
  CHECK(L.panels[0].ymax > 5.0);
  // Axis labels that every panel shares are drawn once for the grid.
  Recorder rec;
  draw_figure(f, page, *font, rec);
  CHECK(std::count(rec.texts.begin(), rec.texts.end(), "g(t)") == 1);
  CHECK(std::count(rec.texts.begin(), rec.texts.end(), "t") == 1);
}

TEST_CASE("figure font: DejaVu Sans, measured in points, UTF-8 aware") {
  auto font = FigureFont::load(default_font_path());
  CHECK(font->family() == "DejaVu Sans");
  // Widths scale linearly with size and add up over concatenation.
  CHECK(font->width("rho", 16) == doctest::Approx(2 * font->width("rho", 8)));
  CHECK(font->width("ab", 8) == doctest::Approx(font->width("a", 8) + font->width("b", 8)));
  // A Greek letter is one glyph, not two bytes' worth of replacement glyphs.
  CHECK(font->width("\xcf\x81", 8) == doctest::Approx(font->width("p", 8)).epsilon(0.2));
  CHECK(decode_utf8("a\xcf\x81\xe2\x89\xa4").size() == 3);
  CHECK(decode_utf8("\xff").front() == U'\xFFFD');
  CHECK(font->ascent(10) > 6);
  CHECK(font->descent(10) > 1);
  CHECK_THROWS_WITH_AS(FigureFont::load("/no/such/font.ttf"),
                       doctest::Contains("/no/such/font.ttf cannot be read"), FigureError);
}

TEST_CASE("colormaps: magma and cividis follow matplotlib's tables, luminance rises") {
  // Endpoints and the midpoint (entry 128 is sampled exactly).
  const auto m0 = render::magma(0.0f), m1 = render::magma(1.0f);
  CHECK(int(m0.r) == 0);
  CHECK(int(m1.r) == 252);  // 0.987053 * 255
  CHECK(int(m1.g) == 253);  // 0.991438
  const auto c0 = render::cividis(0.0f), c1 = render::cividis(1.0f);
  CHECK(int(c0.g) == 34);   // 0.135112
  CHECK(int(c0.b) == 78);   // 0.304751
  CHECK(int(c1.r) == 254);  // 0.995737
  for (auto map : {render::Colormap::Magma, render::Colormap::Cividis, render::Colormap::Viridis}) {
    double last = -1;
    for (int i = 0; i <= 64; ++i) {
      const double lum = render::relative_luminance(render::colormap_color(map, i / 64.0f));
      CHECK(lum >= last - 1e-3);
      last = lum;
    }
  }
  // Okabe-Ito: the published sRGB values, wrapping around.
  CHECK(int(render::okabe_ito(0).r) == 0);
  CHECK(int(render::okabe_ito(0).g) == 114);
  CHECK(int(render::okabe_ito(1).r) == 230);
  CHECK(int(render::okabe_ito(render::okabe_ito_count()).b) == int(render::okabe_ito(0).b));
  render::Colormap parsed;
  CHECK(render::parse_colormap("cividis", parsed));
  CHECK(parsed == render::Colormap::Cividis);
  CHECK_FALSE(render::parse_colormap("jet", parsed));
}

TEST_CASE("figure drawing: a line's lone points are drawn as dots, runs as polylines") {
  auto font = FigureFont::load(default_font_path());
  Figure f;
  Panel p;
  p.lines.push_back({"one eval", {100}, {0.5}, {}, 1.25, LineStyle::Solid});
  p.lines.push_back({"gapped", {1, 2, 3, 4}, {1.0, NAN, 2.0, 3.0}, {}, 1.0, LineStyle::Solid});
  f.panels.push_back(p);
  Page page;
  page.width_pt = 300, page.height_pt = 200;
  Recorder r;
  draw_figure(f, page, *font, r);
  CHECK(r.markers == 2);  // the single evaluation, and the point cut off by the NaN
  Recorder none;
  f.panels[0].lines.resize(1);
  f.panels[0].lines[0].x = {100, 200};
  f.panels[0].lines[0].y = {0.5, 0.4};
  draw_figure(f, page, *font, none);
  CHECK(none.markers == 0);  // two points: a line, no dot
}
