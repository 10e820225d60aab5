#include "app/panels/geometry/geometry_scene.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <iterator>
#include <random>
#include <utility>

#include "render/gl/warp_renderer.h"

namespace attn::gui {
namespace {

namespace g = geometry;

static_assert(GeometryScene::kMaxTokens == render::WarpRenderer::kMaxTokens,
              "the scene's token limit is the warp shader's");

// Rounding in z is relative to the size of the coordinates.
double hull_tolerance(const g::Box& box) {
  return 1e-9 * std::max({1.0, std::abs(box.min.x), std::abs(box.max.x), std::abs(box.min.y),
                          std::abs(box.max.y)});
}

}  // namespace

GeometryScene::GeometryScene() {
  scene = g::preset(g::preset_names().front());
  gaussian_params.mean = {0.4, 0.2};
  gaussian_params.cov = {0.8, 0.3, 0.3, 0.5};
}

g::Map GeometryScene::grid_map() const {
  return grid_mode == 1 ? g::Map::Residual : grid_mode == 2 ? g::Map::Linear : g::Map::Softmax;
}

g::Box GeometryScene::fit_box() const {
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

void GeometryScene::select_preset(int index) {
  const auto& names = g::preset_names();
  preset = index;
  scene = g::preset(names[static_cast<size_t>(index)]);
  gaussian = false;
  changed();
  update_derived();
}

void GeometryScene::set_gaussian(bool on) {
  gaussian = on;
  if (on) {
    points = scene.tokens;  // the user's own tokens come back when this is turned off
    views.circles = true;
  } else {
    scene.tokens = points;
  }
}

void GeometryScene::add_token(g::Vec2 p) {
  scene.tokens.push_back(p);
  ++edits.tokens_added;
  changed();
}

bool GeometryScene::delete_token(int index) {
  if (scene.tokens.size() <= 1 || index < 0 || index >= static_cast<int>(scene.tokens.size()))
    return false;
  scene.tokens.erase(scene.tokens.begin() + index);
  ++edits.tokens_deleted;
  changed();
  return true;
}

void GeometryScene::bench_step(int64_t frame) {
  if (!bench_moving || bench_base.empty()) return;
  const double t = 0.07 * static_cast<double>(frame);
  scene.tokens[0] = {bench_base[0].x + 0.25 * std::cos(t), bench_base[0].y + 0.25 * std::sin(t)};
  changed();
}

void GeometryScene::apply_view_setting(const char* spec) {
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

void GeometryScene::apply_bench_setting(const char* spec) {
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

void GeometryScene::sync_gaussian_tokens() {
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

void GeometryScene::update_derived() {
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
