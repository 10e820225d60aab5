// Benchmark (prints figures; not a test): the Geometry panel's warped grid, GPU shader against
// the CPU reference, outside the GUI. Needs a display: run under xvfb-run (Mesa llvmpipe), e.g.
//   xvfb-run -a -s "-screen 0 1280x800x24" build/bench/bench_geometry
// For each grid (L lines per axis, `samples` points per line) and token count n, one "frame" is
// what dragging a token costs: token 0 moves, then
//   gpu:  prepare_warp + uniform upload + draw_grid (the vertex shader maps every vertex),
//   cpu:  geometry::warp_grid (double) + float conversion + vertex upload + the same line draw,
// each into an offscreen canvas-sized framebuffer, finished with glFinish. Also the map alone:
//   gpu map: the vertex shader through transform feedback (rasteriser discarded),
//   cpu map: warp_grid alone,
// and the line drawing alone (pre-mapped lines, no map). Median of the timed frames after
// warm-up; speed-up = cpu / gpu.
// usage: bench_geometry [--lines 64,128,256] [--tokens 5,16,64] [--samples 257] [--frames 30]
//                       [--size 860x740]
#include <epoxy/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/analysis/geometry.h"
#include "render/gl/warp_renderer.h"
#include "render/gl/warp_scene.h"

namespace g = attn::geometry;
using attn::render::WarpMode;
using attn::render::WarpRenderer;
using Clock = std::chrono::steady_clock;

namespace {

std::vector<int> parse_list(const char* text) {
  std::vector<int> out;
  std::stringstream s(text);
  std::string item;
  while (std::getline(s, item, ',')) out.push_back(std::atoi(item.c_str()));
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

attn::render::PreparedWarp prepare(const g::Scene& s) {
  std::vector<double> xy;
  for (const g::Vec2& t : s.tokens) xy.push_back(t.x), xy.push_back(t.y);
  attn::render::WarpInput in;
  in.tokens_xy = xy.data();
  in.count = static_cast<int>(s.tokens.size());
  in.temperature = s.temperature;
  attn::render::PreparedWarp p;
  attn::render::prepare_warp(in, &p);
  return p;
}

// Median milliseconds of `frames` calls of f (after 3 untimed warm-up calls).
template <class F>
double time_ms(int frames, F&& f) {
  for (int i = 0; i < 3; ++i) f(i);
  std::vector<double> ms;
  for (int i = 0; i < frames; ++i) {
    const auto start = Clock::now();
    f(i + 3);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  return median(ms);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> lines_list = {64, 128, 256}, token_list = {5, 16, 64};
  int samples = 257, frames = 30, width = 860, height = 740;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--lines"))
      lines_list = parse_list(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--tokens"))
      token_list = parse_list(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--samples"))
      samples = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--frames"))
      frames = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--size"))
      std::sscanf(argv[i + 1], "%dx%d", &width, &height);
    else {
      std::fprintf(stderr, "bench_geometry: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (!glfwInit()) {
    std::fprintf(stderr, "bench_geometry: no display (run under xvfb-run)\n");
    return 1;
  }
  glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  GLFWwindow* window = glfwCreateWindow(64, 64, "bench_geometry", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "bench_geometry: no GL 3.3 core context\n");
    return 1;
  }
  glfwMakeContextCurrent(window);

  // A canvas-sized offscreen target, blended like the panel's lines.
  GLuint fbo = 0, tex = 0;
  glGenFramebuffers(1, &fbo);
  glGenTextures(1, &tex);
  glBindTexture(GL_TEXTURE_2D, tex);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, width, height, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
  glBindFramebuffer(GL_FRAMEBUFFER, fbo);
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, tex, 0);
  glViewport(0, 0, width, height);
  glEnable(GL_BLEND);
  glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);

  WarpRenderer r;
  std::string error;
  if (!r.ready(&error)) {
    std::fprintf(stderr, "bench_geometry: %s\n", error.c_str());
    return 1;
  }
  const double extent = 3.0;
  // The grid's extent fills the canvas's height, as in the panel after "Fit view".
  const auto clip = attn::render::canvas_clip_transform(
      0, 0, static_cast<float>(width), static_cast<float>(height), 0, 0, height / (2.3 * extent),
      static_cast<float>(width), static_cast<float>(height));
  WarpRenderer::Style style;

  std::printf("GL: %s / %s; canvas %dx%d, %d samples per line, %d timed frames, median ms\n",
              reinterpret_cast<const char*>(glGetString(GL_VERSION)),
              reinterpret_cast<const char*>(glGetString(GL_RENDERER)), width, height, samples,
              frames);
  std::printf("%6s %6s %9s | %9s %9s %8s | %9s %9s %8s | %9s\n", "lines", "tokens", "vertices",
              "gpu frame", "cpu frame", "speed-up", "gpu map", "cpu map", "speed-up", "draw only");
  for (int lines : lines_list) {
    for (int n : token_list) {
      std::mt19937 rng(12345);
      std::uniform_real_distribution<double> u(-2.0, 2.0);
      g::Scene scene;
      for (int j = 0; j < n; ++j) scene.tokens.push_back({u(rng), u(rng)});
      const g::Vec2 base = scene.tokens[0];
      auto move_token = [&](int frame) {  // token 0 circles, as if dragged
        scene.tokens[0] = {base.x + 0.25 * std::cos(0.07 * frame),
                           base.y + 0.25 * std::sin(0.07 * frame)};
      };
      g::GridSpec spec;
      spec.lines = lines;
      spec.samples = samples;
      spec.extent = extent;
      r.set_grid(lines, samples);
      std::vector<float> xy(static_cast<size_t>(2) * lines * samples * 2);

      const double gpu_frame = time_ms(frames, [&](int f) {
        move_token(f);
        r.set_scene(prepare(scene));
        glClear(GL_COLOR_BUFFER_BIT);
        r.draw_grid(WarpMode::Softmax, 1.0f, extent, clip, style);
        glFinish();
      });
      auto cpu_map = [&](int f) {
        move_token(f);
        size_t k = 0;
        for (const auto& line : g::warp_grid(scene, spec, g::Map::Softmax))
          for (const g::Vec2& p : line) xy[k++] = float(p.x), xy[k++] = float(p.y);
      };
      const double cpu_frame = time_ms(frames, [&](int f) {
        cpu_map(f);
        r.set_premapped_lines(xy.data(), 2 * lines, samples);
        glClear(GL_COLOR_BUFFER_BIT);
        r.draw_premapped(clip, style);
        glFinish();
      });
      const double draw_only = time_ms(frames, [&](int) {
        glClear(GL_COLOR_BUFFER_BIT);
        r.draw_premapped(clip, style);
        glFinish();
      });
      const double gpu_map = time_ms(frames, [&](int f) {
        move_token(f);
        r.set_scene(prepare(scene));
        r.capture_grid(WarpMode::Softmax, 1.0f, extent);  // reads back: waits for the GPU
      });
      const double cpu_map_ms = time_ms(frames, cpu_map);
      std::printf("%6d %6d %9d | %9.2f %9.2f %7.1fx | %9.2f %9.2f %7.1fx | %9.2f\n", lines, n,
                  2 * lines * samples, gpu_frame, cpu_frame, cpu_frame / gpu_frame, gpu_map,
                  cpu_map_ms, cpu_map_ms / gpu_map, draw_only);
      std::fflush(stdout);
    }
  }
  r.release();
  glDeleteFramebuffers(1, &fbo);
  glDeleteTextures(1, &tex);
  glfwDestroyWindow(window);
  glfwTerminate();
  return 0;
}
