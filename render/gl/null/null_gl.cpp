// A GL-free implementation of render/gl's GL classes (Texture2D, CanvasTarget, WarpRenderer), for
// drawing the window's panels where there is no GL context: the headless panel harness
// (tests/app/panel_harness.cpp) links this library, attnlab_render_null, instead of
// attnlab_render; the headers are the same, so the panels compile unchanged (a link seam, after
// Polyscope's mock backend).
// Behaviour, chosen so every panel still takes a real drawing path:
//  - Texture2D holds a fake, never-zero id per texture and the size of the last upload: the
//    panels' ImGui::Image and AddImage calls run as with GL (no renderer ever samples the id).
//  - CanvasTarget::begin() fails ("framebuffer incomplete"), as its contract allows: callers then
//    skip the offscreen pass (figure_view.cpp paints the figure into its own draw list first, so
//    the figure is still laid out and painted every frame) and valid() stays false.
//  - WarpRenderer::ready() is false with an error, so the geometry panel draws its CPU grid with
//    ImGui polylines, the path of a driver without the warp shader.
#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "render/gl/canvas_target.h"
#include "render/gl/gl_texture.h"
#include "render/gl/warp_renderer.h"

namespace attn::render {
namespace {

std::atomic<unsigned> g_next_id{1};

}  // namespace

// --- Texture2D ---

void Texture2D::release() {
  id_ = 0;
  width_ = height_ = 0;
}

void Texture2D::upload_rgba8(const Rgba8* pixels, int width, int height) {
  if (width <= 0 || height <= 0 || pixels == nullptr) return;
  if (id_ == 0) id_ = g_next_id.fetch_add(1);
  width_ = width;
  height_ = height;
}

// --- CanvasTarget ---

CanvasTarget::~CanvasTarget() {
  release();
}

void CanvasTarget::release() {
  fbo_ = texture_ = 0;
  width_ = height_ = 0;
  active_ = false;
}

bool CanvasTarget::begin(int, int) {
  return false;  // no framebuffer without GL: nothing bound, end() is still safe
}

void CanvasTarget::end() {
  active_ = false;
}

std::vector<uint8_t> CanvasTarget::read_rgba() {
  return {};
}

void premultiplied_blend_callback(const ImDrawList*, const ImDrawCmd*) {}

// --- WarpRenderer ---

WarpRenderer::~WarpRenderer() = default;

void WarpRenderer::release() {}

bool WarpRenderer::ready(std::string* error) {
  if (error) *error = "no GL context (GL-free render backend)";
  return false;
}

bool WarpRenderer::set_scene(const PreparedWarp&) {
  return false;
}

void WarpRenderer::set_grid(int lines, int samples) {
  lines_ = lines;
  samples_ = samples;
}

void WarpRenderer::set_point_grid(int n) {
  points_n_ = n;
}

void WarpRenderer::set_premapped_lines(const float*, int count, int samples) {
  premapped_count_ = count;
  premapped_samples_ = samples;
}

void WarpRenderer::draw_grid(WarpMode, float, double, const ClipTransform&, const Style&) {}
void WarpRenderer::draw_premapped(const ClipTransform&, const Style&) {}
void WarpRenderer::draw_points(WarpMode, float, double, const ClipTransform&, Rgba) {}

std::vector<float> WarpRenderer::capture_grid(WarpMode, float, double) {
  return {};
}

std::vector<float> WarpRenderer::capture_points(const std::vector<float>&, WarpMode, float) {
  return {};
}

}  // namespace attn::render
