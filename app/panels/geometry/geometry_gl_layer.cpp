#include "app/panels/geometry/geometry_gl_layer.h"

#include <epoxy/gl.h>  // the warped grid is drawn with GL from inside ImGui's rendering

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>

#include "app/gui/plot/imgui_texture.h"
#include "app/gui/window/palette.h"
#include "render/plot/colormap.h"

namespace attn::gui {

static_assert(GeometryModel::kMaxTokens == render::WarpRenderer::kMaxTokens,
              "the model's token limit is the warp shader's");
namespace {

namespace g = geometry;

// While the grid changes every frame, lines get at most this many vertices in all: under Mesa's
// llvmpipe each line segment costs about 0.25 us to set up, so 2 x 256 lines x 257 samples
// would take ~35 ms a frame; 32768 vertices take ~10 ms.
constexpr long long kCoarseVertices = 32768;

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
      .count();
}

}  // namespace

bool GeometryGlLayer::GlKey::operator==(const GlKey& o) const {
  return rev == o.rev && gpu_path == o.gpu_path && grid == o.grid && points == o.points &&
         lines == o.lines && samples == o.samples && mode == o.mode && density_n == o.density_n &&
         width == o.width && height == o.height && extent == o.extent && alpha == o.alpha &&
         center_x == o.center_x && center_y == o.center_y && pixels_per_unit == o.pixels_per_unit;
}

bool GeometryGlLayer::CpuGridKey::operator==(const CpuGridKey& o) const {
  return rev == o.rev && lines == o.lines && samples == o.samples && mode == o.mode &&
         extent == o.extent && alpha == o.alpha;
}

void GeometryGlLayer::begin_frame() {
  gpu_used_ = cpu_used_ = false;
  lines_drawn_ = 0;
}

const char* GeometryGlLayer::density_path() const {
  return density_texture_.valid()            ? "cpu-image"
         : layer_key_.points && layer_valid_ ? "gpu-points"
                                             : "none";
}

void GeometryGlLayer::update_gpu(const GeometryModel& s) {
  if (!gpu_checked_) {
    gpu_checked_ = true;
    gpu_.ready(&gpu_error_);
  }
  if (gpu_rev_ == s.rev) return;
  gpu_rev_ = s.rev;
  gpu_scene_ok_ = false;
  const int n = static_cast<int>(s.scene.tokens.size());
  if (!gpu_.ready() || !s.derived.error.empty() || n > render::WarpRenderer::kMaxTokens) return;
  token_xy_.resize(2 * static_cast<size_t>(n));
  for (int j = 0; j < n; ++j)
    token_xy_[2 * j] = s.scene.tokens[j].x, token_xy_[2 * j + 1] = s.scene.tokens[j].y;
  render::WarpInput in;
  in.tokens_xy = token_xy_.data();
  in.count = n;
  const g::Mat2* m[3] = {&s.scene.wq, &s.scene.wk, &s.scene.wv};
  double* out[3] = {in.wq, in.wk, in.wv};
  for (int i = 0; i < 3; ++i)
    out[i][0] = m[i]->a, out[i][1] = m[i]->b, out[i][2] = m[i]->c, out[i][3] = m[i]->d;
  in.temperature = s.scene.temperature;
  render::prepare_warp(in, &prepared_);
  gpu_scene_ok_ = gpu_.set_scene(prepared_);
}

void GeometryGlLayer::update_cpu_grid(GeometryModel& s, int samples) {
  const CpuGridKey key{s.rev, s.grid_lines, samples, s.grid_mode, s.grid_extent, s.alpha};
  if (key == cpu_key_) return;
  cpu_key_ = key;
  if (!s.derived.error.empty()) {
    cpu_xy_.clear();
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  g::GridSpec spec;
  spec.lines = s.grid_lines;
  spec.samples = samples;
  spec.extent = s.grid_extent;
  try {
    const auto lines = g::warp_grid(s.scene, spec, s.grid_map(), s.alpha);
    cpu_xy_.resize(static_cast<size_t>(2) * s.grid_lines * samples * 2);
    size_t k = 0;
    for (const auto& line : lines)
      for (const g::Vec2& p : line)
        cpu_xy_[k++] = static_cast<float>(p.x), cpu_xy_[k++] = static_cast<float>(p.y);
  } catch (const std::exception& e) {
    cpu_xy_.clear();
    s.derived.error = e.what();
    return;
  }
  if (gpu_.ready()) gpu_.set_premapped_lines(cpu_xy_.data(), 2 * s.grid_lines, samples);
  cpu_ms_last_ = elapsed_ms(start);
  cpu_ms_total_ += cpu_ms_last_;
  ++cpu_updates_;
}

void GeometryGlLayer::update_density_image(GeometryModel& s, const CanvasView& view) {
  const CpuGridKey key{s.rev, s.density_n, 0, s.grid_mode, s.grid_extent, s.alpha};
  if (!(key == density_key_)) {
    density_key_ = key;
    density_dirty_ = true;
    density_points_.clear();
    if (s.derived.error.empty()) {
      try {
        density_points_ =
            g::warp_grid_points(s.scene, s.density_n, s.grid_extent, s.grid_map(), s.alpha);
      } catch (const std::exception& e) {
        s.derived.error = e.what();
      }
    }
  }
  // Binned over what the canvas shows, about one bin per 4 pixels, but no finer than half the
  // grid's spacing: finer bins alias with the regular grid into stripes of empty bins.
  const g::Box window = view.visible();
  const int bins = std::clamp(
      std::min(static_cast<int>((view.max.x - view.min.x) / 4), s.density_n / 2), 16, 512);
  const bool same_window = window.min.x == density_window_.min.x &&
                           window.min.y == density_window_.min.y &&
                           window.max.x == density_window_.max.x &&
                           window.max.y == density_window_.max.y && bins == density_bins_;
  if (!density_dirty_ && same_window) return;
  density_dirty_ = false;
  density_window_ = window;
  density_bins_ = bins;
  if (density_points_.empty() || !(window.max.x > window.min.x) || !(window.max.y > window.min.y)) {
    density_texture_.release();
    return;
  }
  const std::vector<float> image = g::density_image(density_points_, window, bins);
  density_pixels_.resize(image.size());
  // Log scale: the hull interior holds orders of magnitude fewer points than its vertices.
  constexpr float kContrast = 300.0f;
  const float norm = 1.0f / std::log1p(kContrast);
  for (int row = 0; row < bins; ++row) {
    for (int col = 0; col < bins; ++col) {
      const float v = image[static_cast<size_t>(row) * bins + col];
      render::Rgba8 c = render::viridis(std::log1p(kContrast * v) * norm);
      c.a = v > 0 ? 230 : 0;  // empty bins stay transparent: the axes show through
      // Texture rows are top first; density rows bottom first.
      density_pixels_[static_cast<size_t>(bins - 1 - row) * bins + col] = c;
    }
  }
  density_texture_.upload_rgba8(density_pixels_.data(), bins, bins);
}

void GeometryGlLayer::draw_density(ImDrawList* dl, GeometryModel& s, const CanvasView& view) {
  if (!s.views.density || !s.derived.error.empty()) return;
  update_gpu(s);
  // The point cloud needs the shader; past its token limit the CPU image stands in.
  const bool points_on_gpu = !s.density_image && gpu_.ready() && gpu_scene_ok_;
  if (points_on_gpu) return;
  update_density_image(s, view);
  if (density_texture_.valid())
    dl->AddImage(imgui_texture(density_texture_.id()), view.min, view.max);
}

void GeometryGlLayer::draw(ImDrawList* dl, GeometryModel& s, const CanvasView& view) {
  const bool ok = s.derived.error.empty();
  const bool want_grid = s.views.grid && ok;
  const bool want_points = s.views.density && !s.density_image && ok && gpu_scene_ok_;
  if (!want_grid && !want_points) {
    layer_valid_ = changed_last_frame_ = false;
    return;
  }
  update_gpu(s);
  if (!gpu_.ready()) {  // no GL program at all: the CPU grid as ImGui polylines (slow, but drawn)
    if (want_grid) draw_cpu_grid_with_imgui(dl, s, view);
    return;
  }
  const ImVec2 fb_scale = ImGui::GetIO().DisplayFramebufferScale;
  GlKey key;
  key.rev = s.rev;
  key.gpu_path = gpu_scene_ok_ && !s.cpu_grid;
  key.grid = want_grid;
  key.points = want_points && gpu_scene_ok_;
  key.lines = s.grid_lines;
  key.samples = s.grid_samples;
  key.mode = s.grid_mode;
  key.density_n = s.density_n;
  key.width = static_cast<int>(std::lround((view.max.x - view.min.x) * fb_scale.x));
  key.height = static_cast<int>(std::lround((view.max.y - view.min.y) * fb_scale.y));
  key.extent = s.grid_extent;
  key.alpha = s.alpha;
  key.center_x = view.center_x;
  key.center_y = view.center_y;
  key.pixels_per_unit = view.pixels_per_unit;
  const bool changed = !layer_valid_ || !(key == layer_key_);
  // Changing on consecutive frames (a drag, a slider held): coarser lines keep it responsive;
  // the first still frame redraws them in full.
  const bool moving = changed && changed_last_frame_;
  changed_last_frame_ = changed;
  int samples = s.grid_samples;
  if (s.coarse_while_moving && moving && 2LL * s.grid_lines * samples > kCoarseVertices)
    samples = std::max(9, static_cast<int>(kCoarseVertices / (2 * s.grid_lines)));
  if (changed || (layer_coarse_ && !moving)) render(s, view, key, samples);
  if (!layer_.valid()) return;
  dl->AddCallback(render::premultiplied_blend_callback, nullptr);
  dl->AddImage(imgui_texture(layer_.texture()), view.min, view.max, ImVec2(0, 1), ImVec2(1, 0));
  dl->AddCallback(ImDrawCallback_ResetRenderState, nullptr);  // ImGui's own blending again
  if (want_grid) {
    lines_drawn_ = 2 * s.grid_lines;
    (key.gpu_path ? gpu_used_ : cpu_used_) = true;
  }
}

void GeometryGlLayer::render(GeometryModel& s, const CanvasView& view, const GlKey& key,
                             int samples) {
  if (key.grid) {
    if (key.gpu_path)
      gpu_.set_grid(s.grid_lines, samples);  // rebuilds the vertex buffer only on a new size
    else
      update_cpu_grid(s, samples);
  }
  if (key.points) gpu_.set_point_grid(s.density_n);
  if (!layer_.begin(key.width, key.height)) {
    layer_.end();
    return;
  }
  // The canvas fills the target: data -> target pixels -> clip space.
  const auto clip = render::canvas_clip_transform(
      0, 0, static_cast<float>(key.width), static_cast<float>(key.height), view.center_x,
      view.center_y, view.pixels_per_unit * key.width / std::max(1.0f, view.max.x - view.min.x),
      static_cast<float>(key.width), static_cast<float>(key.height));
  const auto mode = s.grid_mode == 1   ? render::WarpMode::Residual
                    : s.grid_mode == 2 ? render::WarpMode::Linear
                                       : render::WarpMode::Softmax;
  if (key.points) {  // additive: overlapping points add up to a density
    glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE, GL_ONE, GL_ONE);
    const float a = std::clamp(6000.0f / (s.density_n * s.density_n), 0.04f, 0.6f);
    gpu_.draw_points(mode, s.alpha, s.grid_extent, clip, {0.45f, 0.75f, 1.0f, a});
    glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
  }
  if (key.grid) {
    // Denser grids get fainter lines, so 256 x 256 reads as shading rather than a solid block.
    render::WarpRenderer::Style style;
    style.vertical.a = style.horizontal.a = std::clamp(20.0f / s.grid_lines, 0.10f, 0.65f);
    if (key.gpu_path)
      gpu_.draw_grid(mode, s.alpha, s.grid_extent, clip, style);
    else if (!cpu_xy_.empty())
      gpu_.draw_premapped(clip, style);
  }
  layer_.end();
  layer_key_ = key;
  layer_valid_ = true;
  layer_coarse_ = samples != s.grid_samples;
  layer_samples_ = samples;
  ++layer_renders_;
}

void GeometryGlLayer::draw_cpu_grid_with_imgui(ImDrawList* dl, GeometryModel& s,
                                               const CanvasView& view) {
  update_cpu_grid(s, s.grid_samples);
  const ImU32 col = with_alpha(colors::kSkyBlue, 0.5f);
  for (int line = 0; line < 2 * s.grid_lines && !cpu_xy_.empty(); ++line) {
    scratch_.clear();
    for (int i = 0; i < s.grid_samples; ++i) {
      const size_t k = 2 * (static_cast<size_t>(line) * s.grid_samples + i);
      scratch_.push_back(view.to_screen({cpu_xy_[k], cpu_xy_[k + 1]}));
    }
    dl->AddPolyline(scratch_.data(), static_cast<int>(scratch_.size()), col, 0, 1.0f);
  }
  cpu_used_ = !cpu_xy_.empty();
  if (cpu_used_) lines_drawn_ = 2 * s.grid_lines;
  layer_samples_ = s.grid_samples;
}

}  // namespace attn::gui
