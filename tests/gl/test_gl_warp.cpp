// GPU warp against the CPU reference: the vertex shader (shaders/warp.vert.glsl, through
// render::WarpRenderer) maps grids and scattered points, captured with transform feedback, and
// every point must equal attn::geometry::warp_point() (core/analysis/geometry.h, double precision) to
// 1e-4 of the extent in play (float32). Also renders the GPU grid and the CPU grid
// (geometry::warp_grid uploaded as pre-mapped lines) into an offscreen canvas
// (render::CanvasTarget) and compares the pixels they light.
// Needs a display: run under xvfb-run (tests/gl/run_xvfb.sh); a hidden GLFW window provides
// the GL 3.3 core context (Mesa llvmpipe under Xvfb).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <epoxy/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/analysis/geometry.h"
#include "render/gl/canvas_target.h"
#include "render/gl/warp_renderer.h"
#include "render/gl/warp_scene.h"

namespace g = attn::geometry;
using attn::render::WarpMode;
using attn::render::WarpRenderer;

namespace {

// One hidden window for the whole run (GLFW allows one init per process here).
GLFWwindow* context() {
  static GLFWwindow* window = [] {
    if (!glfwInit()) return static_cast<GLFWwindow*>(nullptr);
    glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    GLFWwindow* w = glfwCreateWindow(64, 64, "test_gl_warp", nullptr, nullptr);
    if (w) {
      glfwMakeContextCurrent(w);
      std::printf("GL: %s / %s\n", reinterpret_cast<const char*>(glGetString(GL_VERSION)),
                  reinterpret_cast<const char*>(glGetString(GL_RENDERER)));
    }
    return w;
  }();
  return window;
}

struct Ctx {
  Ctx() { REQUIRE_MESSAGE(context() != nullptr, "no GL 3.3 core context (run under xvfb-run)"); }
};

g::Map to_core(WarpMode m) {
  return m == WarpMode::Linear     ? g::Map::Linear
         : m == WarpMode::Residual ? g::Map::Residual
                                   : g::Map::Softmax;
}

attn::render::PreparedWarp prepare(const g::Scene& s) {
  std::vector<double> xy;
  for (const g::Vec2& t : s.tokens) xy.push_back(t.x), xy.push_back(t.y);
  attn::render::WarpInput in;
  in.tokens_xy = xy.data();
  in.count = static_cast<int>(s.tokens.size());
  const g::Mat2* m[3] = {&s.wq, &s.wk, &s.wv};
  double* out[3] = {in.wq, in.wk, in.wv};
  for (int i = 0; i < 3; ++i) {
    out[i][0] = m[i]->a, out[i][1] = m[i]->b, out[i][2] = m[i]->c, out[i][3] = m[i]->d;
  }
  in.temperature = s.temperature;
  attn::render::PreparedWarp p;
  attn::render::prepare_warp(in, &p);
  return p;
}

// Largest error of the GPU points against warp_point() on the inputs, and the tolerance: 1e-4 of
// the extent in play (inputs, value points, outputs; for the linear map the size of its sums,
// sigma_max(M) |v|, which its rounding is relative to).
struct Comparison {
  double max_error = 0, tolerance = 0;
  size_t worst = 0;
};
double g_worst_ratio = 0;  // largest max_error / tolerance seen, printed by the last test
Comparison compare(const g::Scene& s, const std::vector<g::Vec2>& inputs,
                   const std::vector<float>& gpu, WarpMode mode, double alpha) {
  REQUIRE(gpu.size() == 2 * inputs.size());
  double extent = 1;
  for (const g::Vec2& u : g::value_points(s))
    extent = std::max({extent, std::abs(u.x), std::abs(u.y)});
  const g::Mat2 m = g::linear_map(s);
  const double m_norm = std::abs(m.a) + std::abs(m.b) + std::abs(m.c) + std::abs(m.d);
  std::vector<g::Vec2> expected(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const g::Vec2 v = inputs[i];
    expected[i] = g::warp_point(s, v, to_core(mode), alpha);
    extent = std::max(
        {extent, std::abs(v.x), std::abs(v.y), std::abs(expected[i].x), std::abs(expected[i].y)});
    if (mode == WarpMode::Linear)
      extent = std::max(extent, m_norm * std::max(std::abs(v.x), std::abs(v.y)));
  }
  Comparison c;
  c.tolerance = 1e-4 * extent;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const double e =
        std::max(std::abs(gpu[2 * i] - expected[i].x), std::abs(gpu[2 * i + 1] - expected[i].y));
    if (!(e <= c.max_error)) c.max_error = e, c.worst = i;  // NaN counts as the worst
  }
  g_worst_ratio = std::max(g_worst_ratio, c.max_error / c.tolerance);
  return c;
}

std::vector<g::Vec2> flatten(const std::vector<std::vector<g::Vec2>>& lines) {
  std::vector<g::Vec2> out;
  for (const auto& l : lines) out.insert(out.end(), l.begin(), l.end());
  return out;
}

g::Scene random_scene(std::mt19937& rng, int n, double offset, bool identity) {
  std::uniform_real_distribution<double> u(-2, 2);
  g::Scene s;
  for (int j = 0; j < n; ++j) s.tokens.push_back({offset + u(rng), -0.5 * offset + u(rng)});
  if (!identity) {
    for (g::Mat2* m : {&s.wq, &s.wk, &s.wv}) *m = {u(rng), u(rng), u(rng), u(rng)};
    s.temperature = 0.3 + std::abs(u(rng));
  }
  return s;
}

constexpr WarpMode kModes[] = {WarpMode::Softmax, WarpMode::Linear, WarpMode::Residual};

std::string label(const std::string& scene, WarpMode m) {
  return scene + " / " + g::map_name(to_core(m));
}

void check_grid(WarpRenderer& r, const g::Scene& s, const std::string& name, int lines, int samples,
                double extent) {
  REQUIRE(r.set_scene(prepare(s)));
  r.set_grid(lines, samples);
  g::GridSpec spec;
  spec.lines = lines;
  spec.samples = samples;
  spec.extent = extent;
  const std::vector<g::Vec2> inputs = flatten(g::grid_lines(spec));
  for (WarpMode mode : kModes) {
    const double alpha = 0.35;
    const std::vector<float> gpu = r.capture_grid(mode, static_cast<float>(alpha), extent);
    const Comparison c = compare(s, inputs, gpu, mode, alpha);
    INFO(label(name, mode), ": max error ", c.max_error, " at input (", inputs[c.worst].x, ", ",
         inputs[c.worst].y, "), tolerance ", c.tolerance);
    CHECK(c.max_error <= c.tolerance);
  }
}

}  // namespace

TEST_CASE("the warp shader compiles and links (GL 3.3 core)") {
  Ctx ctx;
  WarpRenderer r;
  std::string error;
  CHECK_MESSAGE(r.ready(&error), error);
}

TEST_CASE("GPU grid warp equals warp_point() for the presets, every map") {
  Ctx ctx;
  WarpRenderer r;
  REQUIRE(r.ready());
  for (const std::string& name : g::preset_names())
    check_grid(r, g::preset(name), name, 33, 129, 3.0);
  // Larger extents reach the saturated (one-hot) regions of the softmax.
  check_grid(r, g::preset("five"), "five, extent 40", 17, 65, 40.0);
}

TEST_CASE("GPU grid warp equals warp_point() for random scenes with non-identity matrices") {
  Ctx ctx;
  WarpRenderer r;
  REQUIRE(r.ready());
  std::mt19937 rng(2024);
  for (int k = 0; k < 12; ++k) {
    const int n = 1 + (k * 7) % 20;
    const g::Scene s = random_scene(rng, n, 0.0, k % 3 == 0);
    check_grid(r, s, "random " + std::to_string(k) + " (" + std::to_string(n) + " tokens)", 21, 41,
               1.0 + k);
  }
}

TEST_CASE("far-away tokens and far-away queries keep float32 accuracy") {
  Ctx ctx;
  WarpRenderer r;
  REQUIRE(r.ready());
  std::mt19937 rng(99);
  std::uniform_real_distribution<double> u(-1, 1);
  for (double offset : {1000.0, 1e5}) {
    for (bool identity : {true, false}) {
      const g::Scene s = random_scene(rng, 6, offset, identity);
      check_grid(r, s, "cluster at " + std::to_string(offset), 9, 33, 3.0);
      // Scattered queries from near the origin out to 1e4 (saturated softmax).
      std::vector<g::Vec2> inputs;
      std::vector<float> xy;
      for (int i = 0; i < 400; ++i) {
        const double radius = std::pow(10.0, 4.0 * i / 400);
        inputs.push_back({radius * u(rng), radius * u(rng)});
        xy.push_back(static_cast<float>(inputs.back().x));
        xy.push_back(static_cast<float>(inputs.back().y));
      }
      // The inputs as the GPU sees them (float32), so only the map's error is measured.
      for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = {xy[2 * i], xy[2 * i + 1]};
      REQUIRE(r.set_scene(prepare(s)));
      for (WarpMode mode : kModes) {
        const Comparison c = compare(s, inputs, r.capture_points(xy, mode, 0.8f), mode, 0.8f);
        INFO(label("scattered, cluster at " + std::to_string(offset), mode), ": max error ",
             c.max_error, ", tolerance ", c.tolerance);
        CHECK(c.max_error <= c.tolerance);
      }
    }
  }
}

TEST_CASE("64 and 1024 tokens (the shader's maximum); more are refused") {
  Ctx ctx;
  WarpRenderer r;
  REQUIRE(r.ready());
  std::mt19937 rng(5);
  for (int n : {64, WarpRenderer::kMaxTokens}) {
    g::Scene s = random_scene(rng, n, 0.0, false);
    check_grid(r, s, std::to_string(n) + " tokens", 9, 33, 2.0);
  }
  g::Scene too_many = random_scene(rng, WarpRenderer::kMaxTokens + 1, 0.0, true);
  CHECK_FALSE(r.set_scene(prepare(too_many)));
}

TEST_CASE("the grid buffer is rebuilt only when the resolution changes") {
  Ctx ctx;
  WarpRenderer r;
  REQUIRE(r.ready());
  REQUIRE(r.set_scene(prepare(g::preset("three"))));
  r.set_grid(256, 257);
  CHECK(r.grid_lines() == 256);
  CHECK(r.grid_samples() == 257);
  CHECK(r.capture_grid(WarpMode::Softmax, 1, 3).size() == size_t(2) * 256 * 257 * 2);
  r.set_grid(2, 2);
  CHECK(r.capture_grid(WarpMode::Softmax, 1, 3).size() == size_t(2) * 2 * 2 * 2);
}

TEST_CASE("the GPU-drawn grid and the CPU-drawn grid light the same pixels") {
  Ctx ctx;
  WarpRenderer r;
  REQUIRE(r.ready());
  constexpr int kSize = 256;
  attn::render::CanvasTarget target;
  WarpRenderer::Style style;
  style.vertical = style.horizontal = {1, 1, 1, 1};
  for (const std::string& name : {std::string("three"), std::string("far")}) {
    g::Scene s = g::preset(name);
    s.wk = {1.2, 0.3, -0.2, 0.9};
    REQUIRE(r.set_scene(prepare(s)));
    // Centred on the value points' box, which the softmax grid collapses into.
    const g::Box box = g::bounding_box(g::value_points(s));
    const double cx = 0.5 * (box.min.x + box.max.x), cy = 0.5 * (box.min.y + box.max.y);
    for (WarpMode mode : kModes) {
      g::GridSpec spec;
      spec.lines = 24;
      spec.samples = 97;
      spec.extent = 3.0;
      // The residual and linear maps reach further out than the hull.
      const double span = mode == WarpMode::Softmax
                              ? 1.5 * std::max(box.max.x - box.min.x, box.max.y - box.min.y)
                              : 0.0;
      double reach = span;
      std::vector<float> xy;
      for (const auto& line : g::warp_grid(s, spec, to_core(mode), 0.5))
        for (const g::Vec2& p : line) {
          xy.push_back(float(p.x)), xy.push_back(float(p.y));
          if (mode != WarpMode::Softmax)
            reach = std::max({reach, 2 * std::abs(p.x - cx), 2 * std::abs(p.y - cy)});
        }
      const auto clip = attn::render::canvas_clip_transform(
          0, 0, kSize, kSize, cx, cy, kSize / std::max(reach, 1e-3), kSize, kSize);
      r.set_grid(spec.lines, spec.samples);
      REQUIRE(target.begin(kSize, kSize));
      r.draw_grid(mode, 0.5f, spec.extent, clip, style);
      target.end();
      const std::vector<uint8_t> gpu = target.read_rgba();

      r.set_premapped_lines(xy.data(), 2 * spec.lines, spec.samples);
      REQUIRE(target.begin(kSize, kSize));
      r.draw_premapped(clip, style);
      target.end();
      const std::vector<uint8_t> cpu = target.read_rgba();

      size_t lit_gpu = 0, lit_cpu = 0, differ = 0;
      for (size_t i = 3; i < gpu.size(); i += 4) {  // alpha: coverage
        lit_gpu += gpu[i] > 0;
        lit_cpu += cpu[i] > 0;
        differ += (gpu[i] > 0) != (cpu[i] > 0);
      }
      INFO(label(name, mode), ": lit ", lit_gpu, " (GPU) vs ", lit_cpu, " (CPU), ", differ,
           " pixels differ");
      CHECK(lit_gpu > 500);
      // The same segments up to float rounding: a few pixels on the edges may flip.
      CHECK(differ <= std::max<size_t>(4, lit_cpu / 100));
    }
  }
}

TEST_CASE("summary: the largest GPU error as a fraction of its tolerance") {
  std::printf(
      "largest GPU-vs-CPU error over every comparison: %.3g of the tolerance "
      "(1e-4 of the extent)\n",
      g_worst_ratio);
  CHECK(g_worst_ratio <= 1.0);
}
