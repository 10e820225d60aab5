// Figures of very long series (a followed run of a million metrics rows) and very many series
// (two thousand runs overlaid): lines are drawn reduced to their extremes per column, legends
// fold, and both stay the same for every backend (they are decided by draw_figure/layout).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "render/plot/figure_draw.h"
#include "render/plot/figure_font.h"
#include "render/plot/plot_math.h"

using namespace attn::fig;
namespace render = attn::render;

namespace {

// Records every polyline drawn in a given colour (the series under test), but for the legend's
// two-point sample.
struct LineRecorder : Painter {
  Color want;
  std::vector<std::vector<std::pair<double, double>>> lines;
  std::vector<std::string> texts;
  void fill_rect(const Rect&, Color) override {}
  void polyline(const double* x, const double* y, int n, Color c, double, LineStyle,
                bool) override {
    if (c.r != want.r || c.g != want.g || c.b != want.b || c.a != want.a) return;
    if (n == 2) return;  // the legend's sample
    lines.emplace_back();
    for (int i = 0; i < n; ++i) lines.back().push_back({x[i], y[i]});
  }
  void fill_polygon(const double*, const double*, int, Color) override {}
  void marker(double, double, double, Marker, Color) override {}
  void text(double, double, const std::string& s, double, Color, Anchor, bool) override {
    texts.push_back(s);
  }
  void image(const Rect&, int, int, const std::vector<render::Rgba8>&, double) override {}
  void push_clip(const Rect&) override {}
  void pop_clip() override {}
};

Figure line_figure(std::vector<double> x, std::vector<double> y, Color c) {
  Panel p = axes_panel("step", "loss");
  LineSeries l;
  l.name = "run";
  l.color = c;
  l.x = std::move(x);
  l.y = std::move(y);
  p.lines.push_back(std::move(l));
  return single_panel_figure("loss", "", std::move(p));
}

}  // namespace

TEST_CASE("a line of a million points is drawn bounded, keeping every column's extremes") {
  auto font = FigureFont::load(default_font_path());
  const size_t n = 1000000;
  std::vector<double> x(n), y(n);
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0, 0.05);
  for (size_t i = 0; i < n; ++i) {
    x[i] = static_cast<double>(i);
    y[i] = 2.0 * std::exp(-1e-5 * i) + noise(rng);
    if (i % 9973 == 0) y[i] += 3;  // rare spikes: each must survive
  }
  const Color red = Color::rgb(1, 0, 0);
  const Figure f = line_figure(x, y, red);
  for (double width : {252.0, 504.0}) {
    Page page;
    page.width_pt = width, page.height_pt = 0.75 * width;
    LineRecorder rec;
    rec.want = red;
    const FigureLayout L = draw_figure(f, page, *font, rec);
    REQUIRE(L.panels.size() == 1);
    const PanelLayout& P = L.panels[0];
    REQUIRE(rec.lines.size() == 1);
    const auto& drawn = rec.lines[0];
    const long columns = static_cast<long>(std::ceil(P.plot.w / kLineColumnPt));
    CHECK(drawn.size() <= static_cast<size_t>(4 * (columns + 2)));
    CHECK(drawn.size() >= static_cast<size_t>(columns));  // not thinned to nothing
    // Brute force: the lowest and highest page y of every column, from every point.
    auto column_of = [&](double px) {
      return std::clamp<long>(static_cast<long>(std::floor((px - P.plot.x) / kLineColumnPt)), -1,
                              columns);
    };
    std::map<long, std::pair<double, double>> want, got;
    for (size_t i = 0; i < n; ++i) {
      const double px = P.page_x(x[i]), py = P.page_y(y[i]);
      auto [it, fresh] = want.try_emplace(column_of(px), py, py);
      if (!fresh) it->second = {std::min(it->second.first, py), std::max(it->second.second, py)};
    }
    for (const auto& [px, py] : drawn) {
      auto [it, fresh] = got.try_emplace(column_of(px), py, py);
      if (!fresh) it->second = {std::min(it->second.first, py), std::max(it->second.second, py)};
    }
    CHECK(got.size() == want.size());
    size_t mismatched = 0;
    for (const auto& [c, range] : want) {
      const auto it = got.find(c);
      if (it == got.end() || it->second != range) ++mismatched;
    }
    CHECK(mismatched == 0);
    // The line still starts and ends where the data does.
    CHECK(drawn.front().first == P.page_x(x.front()));
    CHECK(drawn.back().first == P.page_x(x.back()));
    CHECK(drawn.back().second == P.page_y(y.back()));
  }
}

TEST_CASE("a short line is drawn point for point") {
  auto font = FigureFont::load(default_font_path());
  std::vector<double> x, y;
  for (int i = 0; i < 300; ++i) x.push_back(i * 10), y.push_back(std::sin(i * 0.7));
  const Color blue = Color::rgb(0, 0, 1);
  const Figure f = line_figure(x, y, blue);
  Page page;
  LineRecorder rec;
  rec.want = blue;
  const FigureLayout L = draw_figure(f, page, *font, rec);
  REQUIRE(rec.lines.size() == 1);
  REQUIRE(rec.lines[0].size() == x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    CHECK(rec.lines[0][i].first == L.panels[0].page_x(x[i]));
    CHECK(rec.lines[0][i].second == L.panels[0].page_y(y[i]));
  }
}

TEST_CASE("decimate_polyline keeps order and few-point columns as they are") {
  std::vector<double> ox, oy;
  const double x[] = {0.1, 0.2, 1.5, 1.6, 1.7, 1.8, 1.9, 2.5};
  const double y[] = {5, 6, 3, 9, 1, 4, 2, 7};
  render::decimate_polyline(x, y, 8, 0, 1, 10, ox, oy);
  // Column 1 holds five points: first (3), highest (9), lowest (1), last (2), in line order.
  CHECK(ox == std::vector<double>{0.1, 0.2, 1.5, 1.6, 1.7, 1.9, 2.5});
  CHECK(oy == std::vector<double>{5, 6, 3, 9, 1, 2, 7});
  render::decimate_polyline(x, y, 2, 0, 1, 10, ox, oy);
  CHECK(ox == std::vector<double>{0.1, 0.2});
}

TEST_CASE("a legend of two thousand runs folds to a dozen entries and says how many more") {
  auto font = FigureFont::load(default_font_path());
  Figure f;
  f.name = "loss";
  f.shared_legend = true;
  f.cols = 2;
  for (int k = 0; k < 2; ++k) {
    Panel p = axes_panel("step", "loss");
    for (int r = 0; r < 2000; ++r) {
      LineSeries l;
      l.name = "run-" + std::to_string(r);
      l.x = {0, 1, 2};
      l.y = {1.0 + r * 1e-3, 0.5, 0.25};
      p.lines.push_back(std::move(l));
    }
    f.panels.push_back(std::move(p));
  }
  Page page;
  page.width_pt = 504, page.height_pt = 300;
  LineRecorder rec;
  const FigureLayout L = draw_figure(f, page, *font, rec);
  CHECK(L.legend.entries.size() <= static_cast<size_t>(kMaxLegendEntries));
  CHECK(std::count(rec.texts.begin(), rec.texts.end(), "run-0") == 1);
  CHECK(std::count(rec.texts.begin(), rec.texts.end(), "run-1999") == 0);
  const int shown = kMaxLegendEntries - 1;
  CHECK(std::count(rec.texts.begin(), rec.texts.end(),
                   "+" + std::to_string(2000 - shown) + " more") == 1);
  // A panel's own legend folds the same way.
  f.shared_legend = false;
  f.panels.resize(1);
  f.cols = 1;
  LineRecorder rec1;
  const FigureLayout L1 = draw_figure(f, page, *font, rec1);
  const size_t entries = L1.panels[0].legend.entries.size() + L1.legend.entries.size();
  CHECK(entries <= static_cast<size_t>(kMaxLegendEntries));
  CHECK(std::count(rec1.texts.begin(), rec1.texts.end(),
                   "+" + std::to_string(2000 - shown) + " more") == 1);
}
