// Issue 48 item 6: colour scales a reader can trust. A heatmap whose values span less than the
// stated minimum (render/plot/figure_draw.h: kFlatSpanAbsolute, kFlatSpanRelative) is drawn in
// one colour and its colorbar says so, instead of stretching float noise over the colormap; the
// Heads grid (figures::heads_at_step_figure) can keep one colour scale over every step. The
// Interventions heatmaps' cells and ticks carry enough digits to tell a tiny range apart (every
// cell read "0.00").
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "app/figures/catalog/figures.h"
#include "app/figures/runs/intervention_figures.h"
#include "app/figures/runs/leaderboard_figures.h"
#include "figure_helpers.h"
#include "render/plot/figure_draw.h"
#include "render/plot/figure_font.h"

using namespace attn;
using namespace attn::fig;
using namespace attn::fig::testing;

namespace {

Heatmap heatmap(std::vector<float> values, render::Colormap map = render::Colormap::Viridis) {
  Heatmap h;
  h.rows = 1;
  h.cols = static_cast<int>(values.size());
  h.values = std::move(values);
  h.colormap = map;
  h.colorbar_label = "entropy (nats)";
  return h;
}

bool one_colour(const std::vector<render::Rgba8>& px) {
  for (const auto& p : px)
    if (p.r != px[0].r || p.g != px[0].g || p.b != px[0].b) return false;
  return true;
}

struct Texts : Painter {
  std::vector<std::string> texts;
  void fill_rect(const Rect&, Color) override {}
  void polyline(const double*, const double*, int, Color, double, LineStyle, bool) override {}
  void fill_polygon(const double*, const double*, int, Color) override {}
  void marker(double, double, double, Marker, Color) override {}
  void text(double, double, const std::string& s, double, Color, Anchor, bool) override {
    texts.push_back(s);
  }
  void image(const Rect&, int, int, const std::vector<render::Rgba8>&, double) override {}
  void push_clip(const Rect&) override {}
  void pop_clip() override {}
};

std::vector<std::string> cell_texts(const Figure& f) {
  std::vector<std::string> out;
  for (const Panel& p : f.panels)
    for (const Annotation& a : p.annotations) out.push_back(a.text);
  return out;
}

size_t distinct(const std::vector<std::string>& v) {
  return std::set<std::string>(v.begin(), v.end()).size();
}

std::vector<std::string> page_texts(const Figure& f) {
  auto font = FigureFont::load(default_font_path());
  Texts rec;
  Page page;
  page.width_pt = 400, page.height_pt = 240;
  draw_figure(f, page, *font, rec);
  return rec.texts;
}

PatchTable patch_of(std::vector<float> restored) {
  PatchTable t;
  t.step = 100;
  t.metric = "logit_diff";
  t.layers = 2, t.heads = 2;
  t.restored = std::move(restored);
  return t;
}

}  // namespace

TEST_CASE("a heatmap spanning less than the minimum is drawn in one colour and says so") {
  // Four identical heads up to float noise: entropy 1.38629 +- 5e-6 (3.6e-6 relative).
  const Heatmap flat = heatmap({1.386290f, 1.386295f, 1.386285f, 1.386292f});
  double lo = 0, hi = 0;
  CHECK(heatmap_flat(flat));
  CHECK(one_colour(heatmap_pixels(flat, lo, hi)));
  CHECK(hi - lo == doctest::Approx(1.0));
  CHECK(colorbar_text(flat) == "equal within 1e-05 (one colour): entropy (nats)");
  // Just above the relative minimum (2e-5 of 1): stretched as before, the label unchanged.
  const Heatmap wide = heatmap({1.0f, 1.00002f});
  CHECK_FALSE(heatmap_flat(wide));
  CHECK_FALSE(one_colour(heatmap_pixels(wide, lo, hi)));
  CHECK(colorbar_text(wide) == "entropy (nats)");
  // Near zero the absolute minimum decides: 3e-7 apart is flat, 3e-6 is not.
  CHECK(heatmap_flat(heatmap({-1e-7f, 2e-7f}, render::Colormap::Diverging)));
  CHECK(one_colour(heatmap_pixels(heatmap({-1e-7f, 2e-7f}, render::Colormap::Diverging), lo, hi)));
  CHECK_FALSE(heatmap_flat(heatmap({-1e-6f, 2e-6f}, render::Colormap::Diverging)));
  // One value, or limits the builder set, are never "flat".
  CHECK_FALSE(heatmap_flat(heatmap({2.0f})));
  Heatmap fixed = flat;
  fixed.vmin = 0, fixed.vmax = 2;
  CHECK_FALSE(heatmap_flat(fixed));
  // The note reaches the page.
  Figure f;
  Panel p = matrix_panel("head", "layer");
  p.heatmaps.push_back(flat);
  p.heatmaps.back().rows = 2, p.heatmaps.back().cols = 2;
  f.panels.push_back(p);
  bool said = false;
  for (const auto& t : page_texts(f)) said = said || t.find("one colour") != std::string::npos;
  CHECK(said);
}

TEST_CASE("the Heads grid can share one colour scale over every recorded step") {
  std::vector<HeadMetric> rows;
  for (int h = 0; h < 2; ++h) {
    rows.push_back({0, 0, h, "entropy", h == 0 ? 0.0 : 1.0});    // step 0: 0 and 1
    rows.push_back({100, 0, h, "entropy", h == 0 ? 1.0 : 2.0});  // step 100: 1 and 2
  }
  auto pixels = [&](int64_t step, bool shared) {
    const Figure f = figures::heads_at_step_figure(rows, step, "entropy", shared);
    double lo, hi;
    return heatmap_pixels(f.panels.at(0).heatmaps.at(0), lo, hi);
  };
  // Shared: the value 1 has one colour at both steps (head 1 at step 0, head 0 at step 100).
  const auto a = pixels(0, true), b = pixels(100, true);
  CHECK((a[1].r == b[0].r && a[1].g == b[0].g && a[1].b == b[0].b));
  const Figure shared = figures::heads_at_step_figure(rows, 100, "entropy", true);
  CHECK(shared.panels[0].heatmaps[0].vmin == 0.0);
  CHECK(shared.panels[0].heatmaps[0].vmax == 2.0);
  // Per step (the default): each step stretches its own range, so 1 changes colour.
  const auto c = pixels(0, false), d = pixels(100, false);
  CHECK_FALSE((c[1].r == d[0].r && c[1].g == d[0].g && c[1].b == d[0].b));
}

TEST_CASE("importance cells and colorbar ticks tell a 1e-4 range apart") {
  ImportanceTable t;
  t.step = 400;
  t.layers = 2, t.heads = 2, t.batches = 1;
  t.baseline = {1.0, 0.5};
  t.loss = {1.00012f, 1.00034f, 0.99979f, 1.00005f};  // changes 1.2e-4, 3.4e-4, -2.1e-4, 5e-5
  t.accuracy = {0.5f, 0.5f, 0.5f, 0.5f};
  const Figure f = figures::importance_figure(t);
  const std::vector<std::string> cells = cell_texts(f);
  REQUIRE(cells.size() == 4);
  CHECK(distinct(cells) == 4);
  for (const std::string& c : cells) CHECK(c.find("e-0") != std::string::npos);  // 1.2e-04 ...
  // The page: no cell or colorbar tick reads a zero with decimals.
  for (const std::string& s : page_texts(f)) {
    CAPTURE(s);
    CHECK(s != "0.00");
    CHECK(s !=
          "\xe2\x88\x92"
          "0.00");
  }
}

TEST_CASE("patching cells tell values apart that differ in the fourth decimal") {
  const Figure f = figures::patch_figure(patch_of({0.50112f, 0.50135f, 0.50121f, 0.50148f}), false);
  const std::vector<std::string> cells = cell_texts(f);
  REQUIRE(cells.size() == 4);
  CHECK(distinct(cells) == 4);  // all four read "0.50" before
  // A usual range keeps two decimals.
  const Figure usual = figures::patch_figure(patch_of({0.1f, 0.9f, -0.25f, 0.5f}), false);
  CHECK(cell_texts(usual) == std::vector<std::string>{"0.10", "0.90", "-0.25", "0.50"});
}

TEST_CASE("a heatmap below the minimum span says it shows the values as equal, cells too") {
  const Figure f = figures::patch_figure(patch_of({0.5f, 0.5000001f, 0.4999999f, 0.5f}), false);
  const std::vector<std::string> cells = cell_texts(f);
  CHECK(distinct(cells) == 1);
  CHECK(heatmap_flat(f.panels.at(0).heatmaps.at(0)));
  bool said = false;
  for (const std::string& s : page_texts(f)) said = said || s.find("equal within") == 0;
  CHECK(said);
}

// Issue 49: the leaderboard's gated cells (the reference did not learn the task, so nothing else
// trained) have no value: gray with "-" on them (the title says what that means), never viridis'
// dark end, which read as 0%; a trained cell keeps its number.
TEST_CASE("the leaderboard draws a cell with no value gray and says why") {
  const nlohmann::json board = {
      {"tasks", {{{"name", "parity"}}}},
      {"mechanisms", {{{"name", "dot"}}, {{"name", "dot-rope"}}, {{"name", "ky"}}}},
      {"cells",
       {{{"task", "parity"}, {"mechanism", "dot"}, {"status", "not_trained"}, {"mean", nullptr}},
        {{"task", "parity"}, {"mechanism", "dot-rope"}, {"status", "done"}, {"mean", 0.484}},
        {{"task", "parity"}, {"mechanism", "ky"}, {"status", "pending"}, {"mean", nullptr}}}}};
  const Figure f = figures::leaderboard_figure(board);
  REQUIRE(f.panels.size() == 1);
  const Panel& p = f.panels[0];
  std::vector<std::string> texts;
  for (const auto& a : p.annotations) texts.push_back(a.text);
  CHECK(texts == std::vector<std::string>{"-", "48", "pending"});
  CHECK(f.title.find("gray -: not trained") != std::string::npos);
  REQUIRE(p.heatmaps.size() == 1);
  double vmin = 0, vmax = 0;
  const auto px = heatmap_pixels(p.heatmaps[0], vmin, vmax);
  REQUIRE(px.size() == 3);
  CHECK(int(px[0].r) == int(render::kMissingColor.r));
  CHECK(int(px[2].g) == int(render::kMissingColor.g));
  CHECK(int(px[1].r) != int(render::kMissingColor.r));
}

// Issue 49: the extrapolation figure draws only seeds that solved the task at the training length,
// at every length alike (its square was the mean over every seed while the longer lengths were
// over the solved ones), and a task no model solved says so instead of an empty frame.
TEST_CASE("the extrapolation figure rests on the seeds that solved the task") {
  const nlohmann::json board = {
      {"threshold", 0.9},
      {"tasks",
       {{{"name", "parity"}, {"key", "task.length"}, {"trained_length", 16}, {"extrapolate", {32}}},
        {{"name", "reverse"},
         {"key", "task.length"},
         {"trained_length", 16},
         {"extrapolate", {32}}}}},
      {"mechanisms", {{{"name", "dot-rope"}}}},
      {"cells",
       {{{"task", "parity"},
         {"mechanism", "dot-rope"},
         {"values", {0.5, 0.95, 0.6}},
         {"mean", 0.6833},
         {"length_eval", {{{"length", 32}, {"mean", 0.52}}}}},
        {{"task", "reverse"},
         {"mechanism", "dot-rope"},
         {"values", {0.7, 0.72}},
         {"mean", 0.71},
         {"length_eval", {{{"length", 32}, {"mean", nullptr}}}}}}}};
  const Figure f = figures::extrapolation_figure(board);
  REQUIRE(f.panels.size() == 2);
  REQUIRE(f.panels[0].lines.size() == 1);
  CHECK(f.panels[0].lines[0].y == std::vector<double>{0.95, 0.52});
  REQUIRE(f.panels[0].scatters.size() == 1);
  CHECK(f.panels[0].scatters[0].y == std::vector<double>{0.95});
  CHECK(f.panels[1].lines.empty());
  REQUIRE(f.panels[1].annotations.size() == 1);
  CHECK(f.panels[1].annotations[0].text == "no model solved it at length 16");
}
