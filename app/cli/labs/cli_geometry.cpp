// `attnlab geometry`: the 2-D geometry of softmax attention (seed 004) without a window. One
// query, one circle or one grid, mapped by the scene's attention, printed as JSON (--json) or
// as plain "x y" rows that gnuplot reads (grid lines separated by blank lines).
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli/cli.h"
#include "core/analysis/geometry.h"
#include "core/base/error.h"
#include "core/base/memory.h"

namespace attn {
namespace {

using nlohmann::json;
namespace geo = geometry;

constexpr const char* kGeometryFooter =
    R"(Scene: tokens t_j (default: preset "three"), q = W^Q v, k_j = W^K t_j,
u_j = W^V t_j, p = softmax(q.k_j / T). Modes (exactly one):
  --query x,y    {"output": F(v) = sum p_j u_j, "weights": p, "hull": hull of the u_j
                 (counter-clockwise from the lowest point), "inside_hull": true,
                 "linear_output": M v}; with --gaussian "mx,my;sxx,sxy,syy" also
                 "tilted_mean": W^V (mu + Sigma W^K^T W^Q v / T), the many-token limit
  --circle R     {"points": the circle of radius R (--samples, default 256) mapped}; with
                 --mode linear also "ellipse": {"center", "axes", "radii"}, its predicted image
  --grid N       {"lines": N vertical lines (left to right), then N horizontal (bottom to top)
                 on [-E, E]^2 (--extent, default 3), each --samples points (default 129), mapped}
--mode (circle, grid): softmax F(v) (default), linear M v = sum_j l_j u_j (no softmax),
residual v + alpha F(v) (--alpha in [0, 1], default 1).
Without --json: "x y" rows (blank line between grid lines); nothing on stdout on an error.)";

json point_json(geo::Vec2 p) {
  return json::array({p.x, p.y});
}

json points_json(const std::vector<geo::Vec2>& points) {
  json out = json::array();
  for (const auto& p : points) out.push_back(point_json(p));
  return out;
}

// An integer count in [lo, hi], named by its option.
int parse_count(const std::string& text, const std::string& option, int lo, int hi) {
  const double v = geo::parse_number(text, option);
  if (v != std::floor(v)) throw Error(option + " must be an integer, got " + text);
  if (v < lo || v > hi)
    throw Error(option + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                "], got " + text);
  return static_cast<int>(v);
}

geo::Map parse_map(const std::string& text) {
  for (geo::Map m : {geo::Map::Softmax, geo::Map::Linear, geo::Map::Residual}) {
    if (text == geo::map_name(m)) return m;
  }
  throw Error("--mode must be softmax, linear or residual, got '" + text + "'");
}

geo::Scene build_scene(const GeometryArgs& a) {
  geo::Scene scene;
  if (a.preset) {
    try {
      scene = geo::preset(*a.preset);
    } catch (const Error& e) {
      throw Error(std::string("--preset: ") + e.what());
    }
  } else {
    scene = geo::preset("three");
  }
  if (a.tokens) scene.tokens = geo::parse_points(*a.tokens, "--tokens");
  if (a.wq) scene.wq = geo::parse_matrix(*a.wq, "--wq");
  if (a.wk) scene.wk = geo::parse_matrix(*a.wk, "--wk");
  if (a.wv) scene.wv = geo::parse_matrix(*a.wv, "--wv");
  if (a.temperature) {
    scene.temperature = geo::parse_number(*a.temperature, "--temperature");
    if (!(scene.temperature > 0)) throw Error("--temperature must be > 0, got " + *a.temperature);
  }
  geo::validate(scene);
  return scene;
}

// Options that only some modes read: refused elsewhere so that a typo'd script fails loudly.
void check_applies(const std::optional<std::string>& option, const char* name, bool applies,
                   const char* where) {
  if (option && !applies) throw Error(std::string(name) + " applies only to " + where);
}

json run_query(const GeometryArgs& a, const geo::Scene& scene) {
  const geo::Vec2 v = geo::parse_point(*a.query, "--query");
  std::vector<double> weights;
  const geo::Vec2 z = geo::attend(scene, v, &weights);
  const auto hull = geo::convex_hull(geo::value_points(scene));
  json out = {{"query", point_json(v)},
              {"output", point_json(z)},
              {"weights", weights},
              {"hull", points_json(hull)},
              {"inside_hull", geo::inside_hull(hull, z)},
              {"linear_output", point_json(geo::attend_linear(scene, v))}};
  if (a.gaussian) {
    const geo::Gaussian g = geo::parse_gaussian(*a.gaussian, "--gaussian");
    out["tilted_mean"] = point_json(geo::gaussian_tilted_mean(g, scene, v));
  }
  return out;
}

json run_circle(const GeometryArgs& a, const geo::Scene& scene, geo::Map map, double alpha) {
  const double r = geo::parse_number(*a.circle, "--circle");
  if (r < 0) throw Error("--circle (the radius) must be >= 0, got " + *a.circle);
  const int samples = a.samples ? parse_count(*a.samples, "--samples", geo::kMinCircleSamples,
                                              geo::kMaxCircleSamples)
                                : 256;
  json out = {{"mode", geo::map_name(map)},
              {"radius", r},
              {"samples", samples},
              {"points", points_json(geo::map_points(scene, geo::circle(r, samples), map, alpha))},
              {"hull", points_json(geo::convex_hull(geo::value_points(scene)))}};
  if (map == geo::Map::Residual) out["alpha"] = alpha;
  if (map == geo::Map::Linear) {
    const geo::Ellipse e = geo::predicted_linear_image(scene, r);
    out["ellipse"] = {{"center", point_json(e.center)},
                      {"axes", json::array({point_json(e.axis1), point_json(e.axis2)})},
                      {"radii", json::array({e.radius1, e.radius2})}};
  }
  return out;
}

json run_grid(const GeometryArgs& a, const geo::Scene& scene, geo::Map map, double alpha) {
  geo::GridSpec spec;
  spec.lines = parse_count(*a.grid, "--grid", geo::kMinGridLines, geo::kMaxGridLines);
  if (a.samples)
    spec.samples = parse_count(*a.samples, "--samples", geo::kMinGridSamples, geo::kMaxGridSamples);
  if (a.extent) {
    spec.extent = geo::parse_number(*a.extent, "--extent");
    if (!(spec.extent > 0)) throw Error("--extent must be > 0, got " + *a.extent);
  }
  const long long points = 2LL * spec.lines * spec.samples;
  if (points > geo::kMaxGridPoints)
    throw Error("--grid " + std::to_string(spec.lines) + " with --samples " +
                std::to_string(spec.samples) + " makes " + std::to_string(points) +
                " points (2 x lines x samples), at most " + std::to_string(geo::kMaxGridPoints));
  // Measured: 416 MB peak for 1.06 M points with --json (doubles, JSON values, the text).
  require_memory(static_cast<uint64_t>(points) * 400,
                 "--grid " + std::to_string(spec.lines) + " with --samples " +
                     std::to_string(spec.samples) + " (" + std::to_string(points) + " points)",
                 "lower --grid or --samples");
  json lines = json::array();
  for (const auto& line : geo::warp_grid(scene, spec, map, alpha))
    lines.push_back(points_json(line));
  json out = {{"mode", geo::map_name(map)},
              {"lines_per_axis", spec.lines},
              {"extent", spec.extent},
              {"samples", spec.samples},
              {"lines", lines}};
  if (map == geo::Map::Residual) out["alpha"] = alpha;
  return out;
}

// Numbers as JSON writes them: the shortest text that reads back to the same double.
std::string number(const json& v) {
  return v.dump();
}
std::string row(const json& p) {
  return number(p[0]) + " " + number(p[1]);
}

void print_rows(const json& points) {
  for (const auto& p : points) std::cout << row(p) << "\n";
}

void print_text(const json& out) {
  if (out.contains("output")) {
    std::cout << "# query " << row(out["query"]) << "\n"
              << "output " << row(out["output"]) << "\n"
              << "inside_hull " << (out["inside_hull"].get<bool>() ? "true" : "false") << "\n"
              << "weights";
    for (const auto& w : out["weights"]) std::cout << " " << number(w);
    std::cout << "\nlinear_output " << row(out["linear_output"]) << "\n";
    if (out.contains("tilted_mean")) std::cout << "tilted_mean " << row(out["tilted_mean"]) << "\n";
    std::cout << "# hull (counter-clockwise)\n";
    print_rows(out["hull"]);
  } else if (out.contains("points")) {
    std::cout << "# " << out["mode"].get<std::string>() << " image of the circle of radius "
              << number(out["radius"]) << ", " << out["samples"] << " points\n";
    print_rows(out["points"]);
  } else {
    std::cout << "# " << out["mode"].get<std::string>() << " grid: " << out["lines_per_axis"]
              << " lines per axis on [-E, E]^2, E = " << number(out["extent"]) << ", "
              << out["samples"] << " points per line\n";
    bool first = true;
    for (const auto& line : out["lines"]) {
      if (!first) std::cout << "\n";
      first = false;
      print_rows(line);
    }
  }
}

}  // namespace

CLI::App* add_command(CLI::App& app, GeometryArgs& a) {
  auto* cmd = app.add_subcommand(
      "geometry",
      "The geometry of softmax attention in 2-D (seed 004): a query's output and the hull, "
      "the image of a circle, a warped grid");
  // Kept as text: parsed later so that every message names its option.
  auto text = [cmd](const char* name, std::optional<std::string>& field, std::string help) {
    cmd->add_option_function<std::string>(
        name, [&field](const std::string& s) { field = s; }, help);
  };
  text("--tokens", a.tokens, "Tokens \"x1,y1;x2,y2;...\" (replaces the preset's)");
  std::string presets;
  for (const auto& n : geometry::preset_names()) presets += (presets.empty() ? "" : ", ") + n;
  text("--preset", a.preset, "Start from a preset scene: " + presets + " (default three)");
  text("--wq", a.wq, "W^Q as \"a,b,c,d\" (row-major; default identity)");
  text("--wk", a.wk, "W^K as \"a,b,c,d\" (default identity)");
  text("--wv", a.wv, "W^V as \"a,b,c,d\" (default identity)");
  text("--temperature", a.temperature, "Logits are divided by T > 0 (default 1)");
  text("--query", a.query, "Mode: one query point \"x,y\"");
  text("--circle", a.circle, "Mode: the circle of radius R >= 0");
  text("--grid", a.grid, "Mode: N grid lines per axis, N in [2, 4096]");
  text("--samples", a.samples,
       "Points per circle [3, 1000000] (default 256) or per grid line [2, 65536] (default 129)");
  text("--extent", a.extent, "The grid covers [-E, E]^2 (default 3)");
  text("--mode", a.mode, "softmax (default), linear or residual (--circle, --grid)");
  text("--alpha", a.alpha, "Residual weight in [0, 1] (--mode residual; default 1)");
  text("--gaussian", a.gaussian,
       "With --query: also the tilted mean for tokens ~ N(mu, Sigma), \"mx,my;sxx,sxy,syy\"");
  cmd->add_flag("--json", a.json, "Print one JSON object instead of \"x y\" rows");
  return with_footer(cmd, kGeometryFooter);
}

int run_command(const GeometryArgs& a) {
  json out;
  try {
    const int modes = int(bool(a.query)) + int(bool(a.circle)) + int(bool(a.grid));
    if (modes != 1)
      throw Error(std::string("give exactly one of --query, --circle, --grid (got ") +
                  (modes == 0 ? "none" : std::to_string(modes)) + ")");
    const geo::Scene scene = build_scene(a);
    check_applies(a.mode, "--mode", !a.query, "--circle and --grid");
    check_applies(a.samples, "--samples", !a.query, "--circle and --grid");
    check_applies(a.extent, "--extent", bool(a.grid), "--grid");
    check_applies(a.gaussian, "--gaussian", bool(a.query), "--query");
    const geo::Map map = a.mode ? parse_map(*a.mode) : geo::Map::Softmax;
    check_applies(a.alpha, "--alpha", map == geo::Map::Residual, "--mode residual");
    double alpha = 1.0;
    if (a.alpha) {
      alpha = geo::parse_number(*a.alpha, "--alpha");
      if (alpha < 0 || alpha > 1) throw Error("--alpha must be in [0, 1], got " + *a.alpha);
    }
    if (a.query) out = run_query(a, scene);
    if (a.circle) out = run_circle(a, scene, map, alpha);
    if (a.grid) out = run_grid(a, scene, map, alpha);
  } catch (const std::exception& e) {
    std::cerr << "attnlab geometry: " << e.what() << "\n";
    return kExitUsage;
  }
  // nlohmann writes NaN/Inf as null: a result must never carry one.
  if (!all_finite(out)) {
    std::cerr << "attnlab geometry: the result is not finite (tokens, matrices or temperature "
                 "too extreme); refusing to print NaN\n";
    return kExitUsage;
  }
  if (a.json)
    std::cout << out.dump() << "\n";
  else
    print_text(out);
  return kExitOk;
}

}  // namespace attn
