#include "app/panels/geometry/geometry_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <random>
#include <utility>

#include "app/figures/catalog/figures.h"

namespace attn::gui {
namespace {

namespace g = geometry;

// Rounding in z is relative to the size of the coordinates.
double hull_tolerance(const g::Box& box) {
  return 1e-9 * std::max({1.0, std::abs(box.min.x), std::abs(box.max.x), std::abs(box.min.y),
                          std::abs(box.max.y)});
}

nlohmann::json point_json(g::Vec2 p) {
  return nlohmann::json::array({p.x, p.y});
}
nlohmann::json matrix_json(const g::Mat2& m) {
  return nlohmann::json::array({m.a, m.b, m.c, m.d});
}

}  // namespace

GeometryModel::GeometryModel() {
  scene = g::preset(g::preset_names().front());
  gaussian_params.mean = {0.4, 0.2};
  gaussian_params.cov = {0.8, 0.3, 0.3, 0.5};
}

g::Map GeometryModel::grid_map() const {
  return grid_mode == 1 ? g::Map::Residual : grid_mode == 2 ? g::Map::Linear : g::Map::Softmax;
}

g::Box GeometryModel::fit_box() const {
  g::Box box{{-1, -1}, {1, 1}};
  auto include = [&](g::Vec2 p) {
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) return;
    box.min.x = std::min(box.min.x, p.x), box.max.x = std::max(box.max.x, p.x);
    box.min.y = std::min(box.min.y, p.y), box.max.y = std::max(box.max.y, p.y);
  };
  const size_t n = std::min<size_t>(scene.tokens.size(), 4096);
  for (size_t j = 0; j < n; ++j) include(scene.tokens[j]);
  for (const g::Vec2& u : derived.values) include(u);
  include(query);
  if (views.circles || views.linear) include({radius, radius}), include({-radius, -radius});
  if (bench) include({grid_extent, grid_extent}), include({-grid_extent, -grid_extent});
  return box;
}

void GeometryModel::select_preset(int index) {
  const auto& names = g::preset_names();
  preset = index;
  scene = g::preset(names[static_cast<size_t>(index)]);
  gaussian = false;
  changed();
  update_derived();
}

void GeometryModel::set_gaussian(bool on) {
  gaussian = on;
  if (on) {
    points = scene.tokens;  // the user's own tokens come back when this is turned off
    views.circles = true;
  } else {
    scene.tokens = points;
  }
}

void GeometryModel::add_token(g::Vec2 p) {
  scene.tokens.push_back(p);
  ++edits.tokens_added;
  changed();
}

bool GeometryModel::delete_token(int index) {
  if (scene.tokens.size() <= 1 || index < 0 || index >= static_cast<int>(scene.tokens.size()))
    return false;
  scene.tokens.erase(scene.tokens.begin() + index);
  ++edits.tokens_deleted;
  changed();
  return true;
}

int GeometryModel::token_at(g::Vec2 at, double radius) const {
  if (gaussian) return -1;  // samples are not edited one by one
  int best = -1;
  double best_d = radius;
  for (size_t j = 0; j < scene.tokens.size(); ++j) {
    const double d = std::hypot(scene.tokens[j].x - at.x, scene.tokens[j].y - at.y);
    if (d <= best_d) best_d = d, best = static_cast<int>(j);
  }
  return best;
}

bool GeometryModel::move_token(int index, g::Vec2 to) {
  if (gaussian || index < 0 || index >= static_cast<int>(scene.tokens.size())) return false;
  g::Vec2& t = scene.tokens[static_cast<size_t>(index)];
  if (t.x == to.x && t.y == to.y) return false;
  t = to;
  changed();
  return true;
}

bool GeometryModel::move_mean(g::Vec2 to) {
  if (gaussian_params.mean.x == to.x && gaussian_params.mean.y == to.y) return false;
  gaussian_params.mean = to;
  changed();
  return true;
}

figures::GeometryFigureInput GeometryModel::figure_input() const {
  figures::GeometryFigureInput in;
  in.scene = scene;
  in.query = query;
  in.grid = {grid_lines, grid_extent, grid_samples};
  in.map = grid_map();
  in.alpha = alpha;
  in.circle_radius = radius;
  in.circle_count = circle_count;
  in.circle_samples = circle_samples;
  if (gaussian) in.gaussian = &gaussian_params;
  in.views.output = views.output;
  in.views.hull = views.hull;
  in.views.linear = views.linear;
  in.views.circles = views.circles;
  in.views.grid = views.grid;
  return in;
}

fig::Figure GeometryModel::figure() const {
  try {
    return figures::geometry_figure(figure_input());
  } catch (const std::exception& e) {  // a scene that does not validate
    fig::Figure empty;
    empty.name = "geometry";
    empty.title = std::string("cannot build the figure: ") + e.what();
    return empty;
  }
}

nlohmann::json GeometryModel::report() const {
  using nlohmann::json;
  json tokens = json::array(), weights = json::array(), hull = json::array();
  const size_t shown = std::min<size_t>(scene.tokens.size(), 4096);
  for (size_t j = 0; j < shown; ++j) tokens.push_back(point_json(scene.tokens[j]));
  for (size_t j = 0; j < std::min<size_t>(derived.weights.size(), 4096); ++j)
    weights.push_back(derived.weights[j]);
  for (const g::Vec2& p : derived.hull) hull.push_back(point_json(p));
  const char* maps[] = {"softmax", "residual", "linear"};
  const g::Ellipse& e = derived.outer_ellipse;
  return {
      {"error", derived.error},
      {"token_count", scene.tokens.size()},
      {"tokens", tokens},
      {"query", point_json(query)},
      {"output", point_json(derived.output)},
      {"weights", weights},
      {"inside_hull", derived.inside},
      {"hull", hull},
      {"box", {point_json(derived.box.min), point_json(derived.box.max)}},
      {"ellipse",
       {{"center", point_json(e.center)},
        {"axes", {point_json(e.axis1), point_json(e.axis2)}},
        {"radii", {e.radius1, e.radius2}}}},
      {"wq", matrix_json(scene.wq)},
      {"wk", matrix_json(scene.wk)},
      {"wv", matrix_json(scene.wv)},
      {"temperature", scene.temperature},
      {"gaussian", gaussian},
      {"views",
       {{"output", views.output},
        {"hull", views.hull},
        {"circles", views.circles},
        {"linear", views.linear},
        {"grid", views.grid},
        {"density", views.density}}},
      {"grid",
       {{"lines", grid_lines},
        {"samples", grid_samples},
        {"extent", grid_extent},
        {"map", maps[std::clamp(grid_mode, 0, 2)]},
        {"alpha", alpha},
        {"coarse_while_moving", coarse_while_moving}}},
      {"edits",
       {{"tokens_added", edits.tokens_added},
        {"tokens_deleted", edits.tokens_deleted},
        {"token_drags", edits.token_drags},
        {"query_drags", edits.query_drags}}},
      {"bench", bench},
      {"curves",
       {{"softmax_images", derived.softmax_images.size()},
        {"linear_images", derived.linear_images.size()},
        {"ellipses", derived.ellipses.size()},
        {"tilted_means", derived.tilted_means.size()}}},
      {"gaussian_gap", derived.gaussian_gap},
  };
}

GeometryModel GeometryModel::from_environment() {
  GeometryModel s;
  if (const char* views = std::getenv("ATTN_GEOMETRY_VIEWS"); views && *views)
    s.apply_view_setting(views);
  if (const char* bench = std::getenv("ATTN_GEOMETRY_BENCH"); bench && *bench)
    s.apply_bench_setting(bench);
  return s;
}

void GeometryModel::bench_step(int64_t frame) {
  if (!bench_moving || bench_base.empty()) return;
  const double t = 0.07 * static_cast<double>(frame);
  scene.tokens[0] = {bench_base[0].x + 0.25 * std::cos(t), bench_base[0].y + 0.25 * std::sin(t)};
  changed();
}

void GeometryModel::apply_view_setting(const char* spec) {
  views = Views{};
  views.output = views.hull = views.circles = views.grid = false;
  const std::pair<const char*, bool*> flags[] = {
      {"output", &views.output}, {"hull", &views.hull}, {"circles", &views.circles},
      {"linear", &views.linear}, {"grid", &views.grid}, {"density", &views.density},
      {"gaussian", &gaussian},   {"cpu", &cpu_grid}};
  const std::string list = spec;
  for (size_t start = 0; start <= list.size();) {
    const size_t end = std::min(list.find(',', start), list.size());
    const std::string name = list.substr(start, end - start);
    start = end + 1;
    const auto flag = std::find_if(std::begin(flags), std::end(flags),
                                   [&](const auto& f) { return name == f.first; });
    if (flag != std::end(flags)) {
      *flag->second = true;
    } else if (name == "density-image") {
      views.density = density_image = true;
    } else if (name == "residual" || name == "linear-map") {
      grid_mode = name == "residual" ? 1 : 2;
    } else if (name.rfind("preset=", 0) == 0) {
      const auto& names = g::preset_names();
      const auto it = std::find(names.begin(), names.end(), name.substr(7));
      if (it != names.end()) {
        preset = static_cast<int>(it - names.begin());
        scene = g::preset(*it);
      } else {
        std::fprintf(stderr, "attnlab: ATTN_GEOMETRY_VIEWS: unknown %s\n", name.c_str());
      }
    } else if (!name.empty()) {
      std::fprintf(stderr, "attnlab: ATTN_GEOMETRY_VIEWS: unknown view '%s'\n", name.c_str());
    }
  }
  if (gaussian) points = scene.tokens;  // what turning the Gaussian off brings back
}

void GeometryModel::apply_bench_setting(const char* spec) {
  int lines = 0, tokens = 0;
  char path[8] = {}, motion[16] = "drag";
  const int fields = std::sscanf(spec, "%d,%d,%7[a-z],%15s", &lines, &tokens, path, motion);
  const std::string p = path, m = motion;
  if (fields < 3 || lines < 0 || lines > kMaxGridLines || tokens < 1 || tokens > kMaxTokens ||
      (p != "gpu" && p != "cpu") || (m != "drag" && m != "drag-full" && m != "still")) {
    std::fprintf(stderr,
                 "attnlab: ATTN_GEOMETRY_BENCH must be LINES,TOKENS,gpu|cpu[,still|drag|drag-full]"
                 ", got '%s'\n",
                 spec);
    return;
  }
  bench = true;
  bench_moving = m != "still";
  coarse_while_moving = m != "drag-full";
  views = Views{};
  views.output = views.hull = views.circles = false;
  views.grid = lines > 0;
  grid_lines = std::max(2, lines);
  cpu_grid = p == "cpu";
  std::mt19937 rng(12345);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  scene.tokens.clear();
  for (int j = 0; j < tokens; ++j) scene.tokens.push_back({u(rng), u(rng)});
  bench_base = scene.tokens;
}

void GeometryModel::sync_gaussian_tokens() {
  if (!gaussian || gaussian_rev == rev) return;
  try {
    scene.tokens =
        g::sample_gaussian(gaussian_params, gaussian_n, static_cast<uint64_t>(gaussian_seed));
    gaussian_error.clear();
  } catch (const std::exception& e) {
    gaussian_error = e.what();  // shown under the Gaussian's inputs; the previous samples stay
  }
  gaussian_rev = ++rev;
}

void GeometryModel::update_derived() {
  Derived& last = derived;
  const bool want_circles = views.circles, want_linear = views.linear;
  const bool same_scene = last.rev == rev && last.radius == radius &&
                          last.circle_count == circle_count &&
                          last.circle_samples == circle_samples && last.circles == want_circles &&
                          last.linear == want_linear;
  const bool same_query = last.query.x == query.x && last.query.y == query.y;
  if (same_scene && same_query) return;
  if (same_scene && last.error.empty()) {  // only the query moved: the circles stay
    try {
      last.query = query;
      last.output = g::attend(scene, query, &last.weights);
      last.inside = g::inside_hull(last.hull, last.output, hull_tolerance(last.box));
    } catch (const std::exception& e) {
      last.error = e.what();
    }
    return;
  }
  Derived d;
  d.rev = rev;
  d.query = query;
  d.radius = radius;
  d.circle_count = circle_count;
  d.circle_samples = circle_samples;
  d.circles = want_circles;
  d.linear = want_linear;
  try {
    g::validate(scene);
    d.wv_identity = g::is_identity(scene.wv);
    d.values = g::value_points(scene);
    d.hull = g::convex_hull(d.values);
    d.box = g::bounding_box(d.values);
    d.output = g::attend(scene, query, &d.weights);
    d.inside = g::inside_hull(d.hull, d.output, hull_tolerance(d.box));
    for (int k = 1; k <= circle_count && (want_circles || want_linear); ++k) {
      const double r = radius * static_cast<double>(k) / circle_count;
      const std::vector<g::Vec2> circle = g::circle(r, circle_samples);
      if (want_circles) {
        d.softmax_images.push_back(g::map_points(scene, circle, g::Map::Softmax));
        if (gaussian) {
          std::vector<g::Vec2> tilted(circle.size());
          for (size_t i = 0; i < circle.size(); ++i)
            tilted[i] = g::gaussian_tilted_mean(gaussian_params, scene, circle[i]);
          const std::vector<g::Vec2>& sampled = d.softmax_images.back();
          for (size_t i = 0; i < circle.size(); ++i)
            d.gaussian_gap = std::max(
                d.gaussian_gap, std::hypot(sampled[i].x - tilted[i].x, sampled[i].y - tilted[i].y));
          d.tilted_means.push_back(std::move(tilted));
        }
      }
      if (want_linear) {
        d.linear_images.push_back(g::map_points(scene, circle, g::Map::Linear));
        const g::Ellipse e = g::predicted_linear_image(scene, r);
        std::vector<g::Vec2> curve(circle.size());
        for (size_t i = 0; i < circle.size(); ++i)
          curve[i] = e.point(2 * M_PI * static_cast<double>(i) / circle.size());
        d.ellipses.push_back(std::move(curve));
        d.outer_ellipse = e;
      }
    }
  } catch (const std::exception& e) {
    d.error = e.what();
  }
  last = std::move(d);
}

}  // namespace attn::gui
