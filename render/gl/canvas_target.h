// CanvasTarget: an offscreen RGBA8 framebuffer the size of a canvas, drawn into only when its
// content changes and shown every frame as one textured quad (ImGui AddImage). Under Mesa's
// software rasteriser, drawing 2 x 256 lines of 257 samples costs tens of milliseconds while
// showing the cached texture costs almost nothing, so a still warped grid is nearly free.
// Contract:
//  - Needs the GL context current (the destructor too). begin() binds the framebuffer (resized
//    to width x height, created on first use), sets the viewport to it, clears it to transparent
//    and sets blending for premultiplied alpha: colour += src.rgb * src.a, alpha += src.a. It
//    saves the framebuffer binding, viewport, blend and scissor state, program, vertex array and
//    buffer bindings; end() restores them, so it may run between ImGui::NewFrame and Render.
//  - The texture therefore holds premultiplied colour: composite it with
//    glBlendFunc(GL_ONE, GL_ONE_MINUS_SRC_ALPHA) (premultiplied_blend_callback for ImGui).
//  - Texture row 0 is the bottom row (GL convention): ImGui shows it with uv (0,1)-(1,0).
//  - read_rgba() returns the pixels (row 0 = bottom), for tests.
#pragma once
#include <cstdint>
#include <vector>

struct ImDrawList;
struct ImDrawCmd;

namespace attn::render {

class CanvasTarget {
 public:
  CanvasTarget() = default;
  ~CanvasTarget();
  CanvasTarget(const CanvasTarget&) = delete;
  CanvasTarget& operator=(const CanvasTarget&) = delete;

  // False when the framebuffer is incomplete (nothing bound then; end() is still safe).
  bool begin(int width, int height);
  void end();
  void release();

  std::vector<uint8_t> read_rgba();  // the whole target; call outside begin/end
  unsigned texture() const { return texture_; }
  int width() const { return width_; }
  int height() const { return height_; }
  bool valid() const { return texture_ != 0 && width_ > 0; }

 private:
  unsigned fbo_ = 0, texture_ = 0;
  int width_ = 0, height_ = 0;
  bool active_ = false;
  // Saved by begin(), restored by end().
  int saved_fbo_ = 0, saved_viewport_[4] = {0, 0, 0, 0};
  int saved_program_ = 0, saved_vao_ = 0, saved_vbo_ = 0;
  int saved_blend_src_rgb_ = 0, saved_blend_dst_rgb_ = 0, saved_blend_src_a_ = 0,
      saved_blend_dst_a_ = 0;
  bool saved_blend_ = false, saved_scissor_ = false;
};

// An ImDrawList callback (UserCallbackData unused) that switches the blend function to
// premultiplied alpha for the draw commands after it; add ImDrawCallback_ResetRenderState after
// the image to return to ImGui's own state.
void premultiplied_blend_callback(const ImDrawList* list, const ImDrawCmd* cmd);

}  // namespace attn::render
