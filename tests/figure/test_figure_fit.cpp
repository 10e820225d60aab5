// Every figure the builders can produce fits a single-column (3.5 in) and a full-width (7 in)
// page at the default font size, on the page `attnlab export` gives it: no two texts overlap,
// none leaves the page, is cut off by a clip, or lies over another panel's plot area or a
// colorbar (render/plot/figure_check.h). Set ATTNLAB_FIGURE_DUMP to a directory to also write
// each checked figure there as PNG, for looking at.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "app/figures/models/ky_lab_figures.h"
#include "figure_fixtures.h"
#include "figure_helpers.h"
#include "render/plot/export/figure_export.h"
#include "render/plot/export/figure_render.h"
#include "render/plot/figure_check.h"

using namespace attn;
using namespace attn::fig::testing;
namespace fs = std::filesystem;

namespace {

void dump(const fig::Figure& f, const fig::Page& page, const std::string& tag) {
  const char* dir = std::getenv("ATTNLAB_FIGURE_DUMP");
  if (!dir || !*dir) return;
  fs::create_directories(dir);
  std::ofstream(fs::path(dir) / (tag + ".png"), std::ios::binary)
      << fig::render_png(f, page, font(), 150);
}

void check_fits(const fig::Figure& f, const std::string& what) {
  for (double w : {3.5, 7.0}) {
    const fig::Page page = page_at(f, w);
    const auto problems = fig::layout_problems(f, page, font());
    std::string list;
    for (size_t i = 0; i < problems.size() && i < 12; ++i) list += "\n  " + problems[i];
    INFO(what << " (" << f.name << ") at " << w << " in, " << page.width_pt << " x "
              << page.height_pt << " pt: " << problems.size() << " problems" << list);
    CHECK(problems.empty());
    // Every panel keeps a plot area one can read (about five font sizes at least).
    for (const auto& p : fig::layout_figure(f, page, font()).panels) {
      CHECK(p.plot.w >= 4 * page.font_pt);
      CHECK(p.plot.h >= 4 * page.font_pt);
    }
    dump(f, page, what + "_" + f.name + (w < 5 ? "_3.5in" : "_7in"));
  }
}

void check_every_figure(const Snapshot& s, const std::string& what,
                        const figures::FigureOptions& o = {}) {
  for (const auto& spec : figures::figures_for(s))
    check_fits(figures::build_figure(spec.name, s, o), what);
}

}  // namespace

TEST_CASE("figure fit: the check reports texts that overlap") {
  // Two annotations at one point: the layout keeps annotations where they are asked to be, so
  // this is an overlap the check must report (it is not blind).
  fig::Figure f;
  fig::Panel p;
  p.lines.push_back({"", {0, 1}, {0, 1}, {}, 1.0, fig::LineStyle::Solid});
  p.annotations.push_back({0.5, 0.5, "first note", fig::Anchor::Left, {}});
  p.annotations.push_back({0.5, 0.5, "second note", fig::Anchor::Left, {}});
  f.panels.push_back(p);
  const auto problems = fig::layout_problems(f, fig::Page{}, font());
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].find("'first note'") != std::string::npos);
  CHECK(problems[0].find("overlaps 'second note'") != std::string::npos);

  // Boxes follow the Painter contract: vertical text reads upwards from its anchor.
  const fig::Rect h = fig::text_box(10, 20, "key", 8, fig::Anchor::Center, false, font());
  CHECK(h.x == doctest::Approx(10 - font().width("key", 8) / 2));
  CHECK(h.y == doctest::Approx(20 - font().ascent(8)));
  const fig::Rect v = fig::text_box(10, 20, "key", 8, fig::Anchor::Left, true, font());
  CHECK(v.x == doctest::Approx(10 - font().ascent(8)));
  CHECK(v.y + v.h == doctest::Approx(20));
  CHECK(v.h == doctest::Approx(font().width("key", 8)));
}

TEST_CASE("figure fit: dot model on the copy task (tokens, accuracy at 1.0)") {
  const Snapshot s = copy_snapshot();
  check_every_figure(s, "copy");
  figures::FigureOptions o;
  o.smoothing = 0.9, o.log_y = false, o.show_accuracy = true;
  check_fits(figures::build_figure("loss", s, o), "copy_smooth_linear");
  o.show_accuracy = false;
  check_fits(figures::build_figure("loss", s, o), "copy_no_accuracy");
  for (auto scale : {figures::AttentionScale::PerMap, figures::AttentionScale::Fixed}) {
    o.scale = scale;
    check_fits(figures::build_figure("attention", s, o), "copy_scale" + std::to_string(int(scale)));
  }
  o.layer = 1;
  check_fits(figures::build_figure("attention", s, o), "copy_layer1");
}

TEST_CASE("figure fit: dot model on a character task (48 tokens, baseline)") {
  const Snapshot s = text_snapshot();
  check_every_figure(s, "text");
  figures::FigureOptions o;
  o.smoothing = 0.6;
  check_fits(figures::build_figure("loss", s, o), "text_smooth");
}

TEST_CASE("figure fit: ky model with connection curves") {
  check_every_figure(ky_snapshot(), "ky");
  figures::FigureOptions o;
  o.step = 3000;
  check_fits(figures::build_figure("connections", ky_snapshot(), o), "ky_step");
}

TEST_CASE("figure fit: the connections figure's title is one line of a single-column page") {
  // Measured with the figure font at the title's size (font + 1 pt) against the page width less
  // its padding (0.4 font each side), and drawn whole as one FigureTitle text: every layer or
  // one, with and without the beta row, at a four-digit step.
  for (int layer : {-1, 0})
    for (bool beta : {false, true}) {
      figures::FigureOptions o;
      o.layer = layer;
      o.connections_beta = beta;
      o.step = 6000;
      const fig::Figure f = figures::build_figure("connections", ky_snapshot(), o);
      const fig::Page page = page_at(f, 3.5);
      INFO("layer " << layer << ", beta " << beta << ": " << f.title);
      CHECK(font().width(f.title, page.font_pt + 1) <= page.width_pt - 0.8 * page.font_pt);
      int lines = 0;
      bool whole = false;
      for (const fig::PlacedText& t : fig::layout_figure(f, page, font()).texts)
        if (t.role == fig::TextRole::FigureTitle) ++lines, whole |= t.text == f.title;
      CHECK(lines == 1);
      CHECK(whole);
    }
}

TEST_CASE("figure fit: Connection Transformer") {
  check_every_figure(conn_snapshot(), "conn");
}

TEST_CASE("figure fit: neural layer with d' = 2") {
  check_every_figure(neural_snapshot(), "neural");
}

TEST_CASE("figure fit: image task") {
  const Snapshot s = image_snapshot();
  check_every_figure(s, "image");
  figures::FigureOptions o;
  o.layer = figures::kAllLayers;
  check_fits(figures::build_figure("image-attention", s, o), "image_all");
  o.scale = figures::AttentionScale::PerMap;
  o.show_mean = false;
  o.overlay_colormap = render::Colormap::Viridis;
  check_fits(figures::build_figure("image-attention", s, o), "image_permap");
}

TEST_CASE("figure fit: geometry and the KY transform's convergence") {
  figures::GeometryFigureInput in = geometry_input();
  check_fits(figures::geometry_figure(in), "geometry");
  in.map = geometry::Map::Residual;
  in.circle_radius = 0;
  check_fits(figures::geometry_figure(in), "geometry_residual");

  const KyFunction f{[](double x) { return std::sin(x) + 0.1 * x * x; }, "sin(x) + 0.1 x^2"};
  KySettings settings;
  const KyResult r = ky_transform(f, 0.5, settings);
  REQUIRE(!r.history.empty());
  check_fits(figures::ky_convergence_figure(r, f, 0.5, -0.5, 1.5), "ky_lab");
}

TEST_CASE("figure fit: comparison figures") {
  std::vector<RunDirectory> runs = {
      compared_run("dot-seed1", "copy", 1.0), compared_run("ky-window8", "copy", 0.7),
      compared_run("conn-norm-bound", "recall", 1.3), compared_run("neural-d2", "copy", 0.9)};
  std::vector<figures::CompareCurve> curves;
  for (size_t i = 0; i < runs.size(); ++i)
    curves.push_back({&runs[i], runs[i].id, figures::compare_color(static_cast<int>(i)), true});
  check_fits(figures::loss_overlay(curves, "Comparison of four runs"), "compare");
  figures::CompareOptions linear;
  linear.y_scale = figures::YScale::Linear;
  check_fits(figures::loss_overlay(curves, "Comparison", linear), "compare_linear");
  curves.resize(1);
  runs[0].config.task.name = "text";  // no accuracy panel: two panels
  check_fits(figures::loss_overlay(curves, ""), "compare_one");

  // Connection curves and spectral radii come from the run directory's JSON files.
  const auto dir = fresh_dir("fit_compare");
  std::ofstream(dir / kMechanismViewsFile)
      << mechanism_frames_to_json(ky_snapshot().mechanism_history()).dump();
  nlohmann::json conn = {{"control", "norm-bound"}, {"limit", 0.95}};
  for (int i = 1; i <= 40; ++i)
    conn["spectral_radius_estimate"].push_back({i * 50, 0.3 + i * 0.016});
  std::ofstream(dir / "conn.json") << conn.dump();
  RunDirectory run = compared_run("conn-run", "recall", 1.0);
  run.dir = dir.string();
  check_fits(figures::connection_curves_figure(run, ""), "compare_connections");
  check_fits(figures::spectral_radius_figure({{&run, "conn-run", figures::compare_color(0), true}},
                                             "Spectral radius"),
             "compare_spectral");

  std::vector<figures::ScatterPoint> points;
  for (int i = 0; i < 6; ++i)
    points.push_back(
        {"run " + std::to_string(i), 1e4 * (1 + i), 0.5 + 0.08 * i, figures::compare_color(i)});
  points.push_back({"run 6 (close to run 5)", 6.1e4, 0.905, figures::compare_color(6)});
  check_fits(figures::scatter_figure("params", "Accuracy against size", "parameters",
                                     "eval accuracy", points),
             "compare_scatter");
}

TEST_CASE("figure fit: other widths and font sizes") {
  // Beyond the two paper widths at 8 pt: narrower, wider and in between, 6 to 12 pt fonts.
  std::vector<fig::Figure> all;
  for (const Snapshot& s : {copy_snapshot(), text_snapshot(), ky_snapshot(), conn_snapshot(),
                            neural_snapshot(), image_snapshot()})
    for (const auto& spec : figures::figures_for(s))
      all.push_back(figures::build_figure(spec.name, s));
  all.push_back(figures::geometry_figure(geometry_input()));
  std::vector<RunDirectory> runs = {compared_run("dot-seed1", "copy", 1.0),
                                    compared_run("ky-window8", "copy", 0.7)};
  all.push_back(figures::loss_overlay({{&runs[0], runs[0].id, figures::compare_color(0), true},
                                       {&runs[1], runs[1].id, figures::compare_color(1), true}},
                                      "Comparison"));
  for (double font_pt : {6.0, 7.0, 9.0, 10.0, 12.0})
    for (double width_in : {2.5, 3.5, 5.0, 7.0, 10.0})
      for (const fig::Figure& f : all) {
        fig::ExportRequest r;
        r.width_in = width_in;
        r.font_pt = font_pt;
        const fig::Page page = fig::page_for(f, r, font());
        const auto problems = fig::layout_problems(f, page, font());
        INFO(f.name << " at " << width_in << " in, " << font_pt
                    << " pt: " << (problems.empty() ? "" : problems[0]));
        CHECK(problems.empty());
      }
}
