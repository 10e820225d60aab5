// How the layout adapts a figure to its page (wrapping, shared colorbars and axis labels, short
// titles, thinned token labels) and the builders' options that panels use so that an export is
// what the screen shows (smoothing, log y, accuracy, scale modes, compare legends and log y),
// plus hit testing on a laid-out figure.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "core/base/error.h"
#include "figure_fixtures.h"
#include "render/plot/export/figure_export.h"
#include "render/plot/plot_math.h"

using namespace attn;
using namespace attn::fig::testing;

namespace {

std::vector<std::string> texts(const fig::FigureLayout& L, fig::TextRole role, int panel) {
  std::vector<std::string> out;
  for (const auto& t : L.texts)
    if (t.role == role && t.panel == panel) out.push_back(t.text);
  return out;
}

const fig::LineSeries* line_named(const fig::Panel& p, const std::string& name) {
  for (const auto& l : p.lines)
    if (l.name == name) return &l;
  return nullptr;
}

}  // namespace

TEST_CASE("figure adapt: the attention grid wraps on a narrow page, one colorbar, one label") {
  const fig::Figure f = figures::build_figure("attention", copy_snapshot());
  REQUIRE(f.panels.size() == 8);
  const fig::Page narrow = page_at(f, 3.5), wide = page_at(f, 7);
  const fig::FigureLayout n = fig::layout_figure(f, narrow, font());
  const fig::FigureLayout w = fig::layout_figure(f, wide, font());
  // 3.5 in: each layer's four heads in two rows of two; 7 in: the 2 x 4 grid as built.
  CHECK(n.cols == 2);
  CHECK(n.rows == 4);
  CHECK(w.cols == 4);
  CHECK(w.rows == 2);
  CHECK(fig::grid_columns(f, narrow.width_pt, narrow.font_pt, font()) == 2);
  CHECK(n.panels[1].row == 0);
  CHECK(n.panels[2].row == 1);  // layer 0, head 2 starts the second row
  CHECK(n.panels[4].row == 2);  // layer 1 starts on a row of its own
  // The page grows to keep the maps square and readable.
  CHECK(narrow.height_pt > narrow.width_pt * f.aspect);
  CHECK(wide.height_pt == doctest::Approx(wide.width_pt * f.aspect));
  for (const auto& p : n.panels) {
    CHECK(p.plot.w > 70);
    CHECK(p.plot.w == doctest::Approx(p.plot.h));
    CHECK(p.colorbar.bar.w == 0);  // no colorbar of its own ...
  }
  CHECK(n.colorbar.bar.w > 0);  // ... one for the grid, as tall as the maps
  CHECK(n.colorbar.bar.y == doctest::Approx(n.panels.front().plot.y));
  CHECK(n.colorbar.bar.y + n.colorbar.bar.h ==
        doctest::Approx(n.panels.back().plot.y + n.panels.back().plot.h));
  // "key" and "query" once each, for the whole grid; full titles where they fit.
  CHECK(texts(n, fig::TextRole::AxisLabel, -1) == std::vector<std::string>{"key", "query"});
  for (int i = 0; i < 8; ++i) CHECK(texts(n, fig::TextRole::AxisLabel, i).empty());
  CHECK(texts(w, fig::TextRole::PanelTitle, 1) == std::vector<std::string>{"layer 0, head 1"});
  CHECK(texts(w, fig::TextRole::ColorbarLabel, -1) ==
        std::vector<std::string>{"weight (shared scale)"});
}

TEST_CASE("figure adapt: titles fall back to the short title, then to an ellipsis") {
  fig::Figure f;
  f.cols = 4;
  for (int i = 0; i < 4; ++i) {
    fig::Panel p;
    p.title = "a long title for panel number " + std::to_string(i);
    if (i % 2 == 0) p.short_title = "P" + std::to_string(i);
    p.lines.push_back({"", {0, 1}, {0, 1}, {}, 1.0, fig::LineStyle::Solid});
    f.panels.push_back(p);
  }
  fig::Page page;
  page.width_pt = 504;
  const fig::FigureLayout L = fig::layout_figure(f, page, font());
  REQUIRE(L.cols == 4);
  CHECK(L.panels[0].title == "P0");
  CHECK(L.panels[2].title == "P2");
  const std::string& cut = L.panels[1].title;
  REQUIRE(cut.size() > 3);
  CHECK(cut.compare(cut.size() - 3, 3, "\xe2\x80\xa6") == 0);  // "…"
  CHECK(f.panels[1].title.compare(0, cut.size() - 3, cut, 0, cut.size() - 3) == 0);
  CHECK(font().width(cut, page.font_pt + 1) < L.panels[1].plot.w + 2 * page.font_pt);
}

TEST_CASE("figure adapt: token labels on attention axes, thinned to fit or left out") {
  auto bottom_labels = [](const Snapshot& s, double width_in) {
    const fig::Figure f = figures::build_figure("attention", s);
    const fig::FigureLayout L = fig::layout_figure(f, page_at(f, width_in), font());
    // The bottom-left map carries the key labels (the axes are shared).
    int panel = 0;
    for (size_t i = 0; i < L.panels.size(); ++i)
      if (L.panels[i].col == 0 && L.panels[i].row == L.rows - 1) panel = static_cast<int>(i);
    std::vector<std::string> out;
    for (const auto& t : L.texts)
      if (t.role == fig::TextRole::TickLabel && t.panel == panel && !t.vertical &&
          t.anchor == fig::Anchor::Center)
        out.push_back(t.text);
    return std::make_pair(out, L.panels[panel].xticks.size());
  };
  // 13 tokens fit under a 7 in map: every one, in order.
  const Snapshot copy = copy_snapshot();
  CHECK(bottom_labels(copy, 7).first == copy.probe_tokens);
  // 48 characters do not: every k-th token from the first, a tick mark only under those.
  const Snapshot text = text_snapshot();
  const auto [labels, marks] = bottom_labels(text, 3.5);
  REQUIRE(labels.size() >= 2);
  REQUIRE(labels.size() < text.probe_tokens.size());
  CHECK(marks == labels.size());
  const size_t k = (text.probe_tokens.size() + labels.size() - 1) / labels.size();
  for (size_t i = 0; i < labels.size(); ++i) CHECK(labels[i] == text.probe_tokens[i * k]);
  // Long tokens on a 1.5 in page, where not even two fit: no labels and no marks rather
  // than a smear.
  Snapshot many = copy_snapshot();
  many.heads = 1, many.layers = 1;
  many.probe_tokens.assign(400, "a rather long token");
  many.attention = std::make_shared<std::vector<AttentionMap>>(attention_maps(1, 1, 400, true));
  const fig::Figure f = figures::build_figure("attention", many);
  fig::Page tiny;
  tiny.width_pt = 108, tiny.height_pt = 120;
  const fig::FigureLayout L = fig::layout_figure(f, tiny, font());
  CHECK(L.panels[0].xticks.empty());
  CHECK(L.panels[0].yticks.empty());
  CHECK(texts(L, fig::TextRole::TickLabel, 0).empty());
  // Without tokens the axes get numbers.
  Snapshot plain = copy_snapshot();
  plain.probe_tokens.clear();
  CHECK(bottom_labels(plain, 7).first.front() == "0");
}

TEST_CASE("figure adapt: an accuracy of exactly 1.0 is drawn inside the frame") {
  const fig::Figure f = figures::build_figure("loss", copy_snapshot());
  REQUIRE(f.panels.size() == 2);
  const fig::PanelLayout acc = fig::layout_figure(f, page_at(f, 3.5), font()).panels[1];
  CHECK(acc.ymax > 1.0);
  CHECK(acc.ymin < 0.0);
  CHECK(acc.page_y(1.0) - acc.plot.y > 1.5);  // clear of the frame line at the top
  // The comparison's accuracy panel too.
  RunDirectory run = compared_run("a", "copy", 1.0);
  const fig::Figure c = figures::loss_overlay({{&run, "a", figures::compare_color(0), true}}, "");
  REQUIRE(c.panels.size() == 3);
  CHECK(c.panels[2].y.max > 1.0);
}

TEST_CASE("figure adapt: loss options (smoothing, log y, accuracy) as the Loss panel shows") {
  const Snapshot s = copy_snapshot();
  const fig::Figure plain = figures::build_figure("loss", s);
  CHECK(plain.panels[0].y.log);  // the export default
  CHECK(line_named(plain.panels[0], "train (EMA)") == nullptr);
  figures::FigureOptions o;
  o.smoothing = 0.9;
  o.log_y = false;
  o.show_accuracy = false;
  const fig::Figure f = figures::build_figure("loss", s, o);
  REQUIRE(f.panels.size() == 1);
  CHECK_FALSE(f.panels[0].y.log);
  const fig::LineSeries* raw = line_named(f.panels[0], "train");
  const fig::LineSeries* ema = line_named(f.panels[0], "train (EMA)");
  REQUIRE(raw);
  REQUIRE(ema);
  CHECK(raw->color.a < 0.5f);  // faded under the smoothed curve
  CHECK(ema->color.a == 1.0f);
  CHECK(raw->y.size() == s.train_loss.values.size());
  CHECK(raw->y.back() == doctest::Approx(s.train_loss.values.back()));
  const auto want = render::ema_debiased(s.train_loss.values, 0.9);
  REQUIRE(ema->y.size() == want.size());
  for (size_t i = 0; i < want.size(); i += 17) CHECK(ema->y[i] == doctest::Approx(want[i]));
  CHECK(line_named(f.panels[0], "eval"));
  o.smoothing = 1.0;
  CHECK_THROWS_WITH_AS(figures::build_figure("loss", s, o), doctest::Contains("smoothing 1"),
                       Error);
}

TEST_CASE("figure adapt: attention scale modes, each stated by the colorbar") {
  const Snapshot s = copy_snapshot();
  float overall = 0;
  for (const auto& m : s.attention_maps())
    for (float w : m.weights) overall = std::max(overall, w);
  figures::FigureOptions o;
  for (auto scale : {figures::AttentionScale::Shared, figures::AttentionScale::PerMap,
                     figures::AttentionScale::Fixed}) {
    o.scale = scale;
    const fig::Figure f = figures::build_figure("attention", s, o);
    const fig::FigureLayout L = fig::layout_figure(f, page_at(f, 7), font());
    CHECK(L.colorbar.bar.w > 0);  // one colorbar whatever the mode
    const auto ticks = texts(L, fig::TextRole::ColorbarTick, -1);
    const auto label = texts(L, fig::TextRole::ColorbarLabel, -1);
    REQUIRE(label.size() == 1);
    for (const auto& p : f.panels) {
      const fig::Heatmap& h = p.heatmaps.at(0);
      const float own = *std::max_element(h.values.begin(), h.values.end());
      CHECK(h.vmin == 0);
      if (scale == figures::AttentionScale::Shared) CHECK(h.vmax == doctest::Approx(overall));
      if (scale == figures::AttentionScale::PerMap) CHECK(h.vmax == doctest::Approx(own));
      if (scale == figures::AttentionScale::Fixed) CHECK(h.vmax == 1.0);
    }
    if (scale == figures::AttentionScale::PerMap) {
      CHECK(ticks == std::vector<std::string>{"0", "max"});
      CHECK(label[0] == "weight (per map)");
    } else {
      CHECK(std::find(ticks.begin(), ticks.end(), "max") == ticks.end());
      CHECK(label[0] ==
            (scale == figures::AttentionScale::Shared ? "weight (shared scale)" : "weight"));
    }
  }
}

TEST_CASE("figure adapt: image attention shares one scale, one colormap, one colorbar") {
  const Snapshot s = image_snapshot();
  const fig::Figure f = figures::build_figure("image-attention", s);
  REQUIRE(f.cols == s.heads + 2);                           // picture, heads, mean
  REQUIRE(f.panels.size() == static_cast<size_t>(f.cols));  // the last layer only
  double vmax = -1;
  for (const auto& p : f.panels)
    for (const auto& h : p.heatmaps) {
      if (h.name == "image") continue;
      CHECK(h.colormap == render::Colormap::Hot);
      CHECK(h.alpha == doctest::Approx(0.6));
      if (vmax < 0) vmax = h.vmax;
      CHECK(h.vmax == vmax);
    }
  const fig::FigureLayout L = fig::layout_figure(f, page_at(f, 7), font());
  CHECK(L.colorbar.bar.w > 0);
  for (const auto& p : L.panels) CHECK(p.colorbar.bar.w == 0);
  // Every layer, no mean column, another colormap: as the panel's toolbar asks.
  figures::FigureOptions o;
  o.layer = figures::kAllLayers;
  o.show_mean = false;
  o.overlay_colormap = render::Colormap::Viridis;
  o.overlay_alpha = 0.8;
  const fig::Figure all = figures::build_figure("image-attention", s, o);
  CHECK(all.cols == s.heads + 1);
  CHECK(all.panels.size() == static_cast<size_t>(s.layers * (s.heads + 1)));
  CHECK(all.panels.back().heatmaps.back().colormap == render::Colormap::Viridis);
  CHECK(all.panels.back().heatmaps.back().alpha == doctest::Approx(0.8));
  o.overlay_alpha = 1.5;
  CHECK_THROWS_AS(figures::build_figure("image-attention", s, o), Error);
}

TEST_CASE("figure adapt: comparisons always have a legend; log y when losses span a decade") {
  std::vector<RunDirectory> runs = {compared_run("wide-a", "copy", 1.0),
                                    compared_run("wide-b", "copy", 0.5)};
  std::vector<figures::CompareCurve> curves;
  for (size_t i = 0; i < runs.size(); ++i)
    curves.push_back({&runs[i], runs[i].id, figures::compare_color(static_cast<int>(i)), true});
  // The fixture's losses fall from about 2.5 to 0.03: more than a decade.
  fig::Figure f = figures::loss_overlay(curves, "");
  CHECK(f.panels[0].y.log);
  CHECK(f.panels[1].y.log);
  const fig::FigureLayout L = fig::layout_figure(f, page_at(f, 3.5), font());
  std::vector<std::string> names;
  for (const auto& e : L.legend.entries) names.push_back(e.name);
  CHECK(names == std::vector<std::string>{"wide-a", "wide-b"});
  CHECK(L.legend.box.y > L.panels.back().plot.y + L.panels.back().plot.h);  // below the grid
  figures::CompareOptions linear;
  linear.y_scale = figures::YScale::Linear;
  CHECK_FALSE(figures::loss_overlay(curves, "", linear).panels[0].y.log);
  // Curves within a decade: linear, unless log is asked for.
  for (auto& r : runs) {
    for (float& v : r.train_loss.values) v = 1.0f + 0.1f * v;
    for (float& v : r.eval_loss.values) v = 1.0f + 0.1f * v;
  }
  CHECK_FALSE(figures::loss_overlay(curves, "").panels[0].y.log);
  figures::CompareOptions log;
  log.y_scale = figures::YScale::Log;
  CHECK(figures::loss_overlay(curves, "", log).panels[0].y.log);
}

TEST_CASE("figure adapt: the page height stays width x aspect unless the grid wraps") {
  const fig::Figure loss = figures::build_figure("loss", copy_snapshot());
  for (double w : {252.0, 504.0})
    CHECK(fig::natural_height(loss, w, 8, font()) == doctest::Approx(w * loss.aspect));
  const fig::Figure att = figures::build_figure("image-attention", image_snapshot());
  CHECK(fig::grid_columns(att, 252, 8, font()) < att.cols);
  CHECK(fig::natural_height(att, 252, 8, font()) > 252 * att.aspect);
}

TEST_CASE("figure adapt: hit testing finds the panel and the nearest line point") {
  const fig::Figure f = figures::build_figure("loss", copy_snapshot());
  fig::Page page;
  page.width_pt = 504, page.height_pt = 220;
  const fig::FigureLayout L = fig::layout_figure(f, page, font());
  const fig::PanelLayout& p = L.panels[0];
  const fig::LineSeries& eval = *line_named(f.panels[0], "eval");
  const double px = p.page_x(eval.x[5]), py = p.page_y(eval.y[5]);
  const fig::PointHit hit = fig::nearest_point(f, L, px + 1, py - 1, 4);
  CHECK(hit.panel == 0);
  CHECK(hit.name == "eval");
  CHECK(hit.index == 5);
  CHECK(hit.x == eval.x[5]);
  CHECK(hit.y == eval.y[5]);
  CHECK(hit.distance_pt == doctest::Approx(std::sqrt(2.0)));
  // In the plot but far from every curve: the panel, no point.
  const fig::PointHit none =
      fig::nearest_point(f, L, p.plot.x + p.plot.w - 2, p.plot.y + p.plot.h - 2, 1);
  CHECK(none.panel == 0);
  CHECK(none.series == -1);
  // The accuracy panel, and outside every plot.
  const fig::PanelLayout& acc = L.panels[1];
  CHECK(fig::panel_at(L, acc.plot.x + 3, acc.plot.y + 3) == 1);
  CHECK(fig::panel_at(L, 1, 1) == -1);
  CHECK(fig::nearest_point(f, L, 1, 1, 10).panel == -1);
}
