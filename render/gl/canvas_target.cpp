#include "render/gl/canvas_target.h"

#include <epoxy/gl.h>

#include <algorithm>

namespace attn::render {

CanvasTarget::~CanvasTarget() {
  release();
}

void CanvasTarget::release() {
  if (fbo_) glDeleteFramebuffers(1, &fbo_);
  if (texture_) glDeleteTextures(1, &texture_);
  fbo_ = texture_ = 0;
  width_ = height_ = 0;
}

bool CanvasTarget::begin(int width, int height) {
  width = std::max(1, width);
  height = std::max(1, height);
  glGetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &saved_fbo_);
  glGetIntegerv(GL_VIEWPORT, saved_viewport_);
  glGetIntegerv(GL_CURRENT_PROGRAM, &saved_program_);
  glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &saved_vao_);
  glGetIntegerv(GL_ARRAY_BUFFER_BINDING, &saved_vbo_);
  glGetIntegerv(GL_BLEND_SRC_RGB, &saved_blend_src_rgb_);
  glGetIntegerv(GL_BLEND_DST_RGB, &saved_blend_dst_rgb_);
  glGetIntegerv(GL_BLEND_SRC_ALPHA, &saved_blend_src_a_);
  glGetIntegerv(GL_BLEND_DST_ALPHA, &saved_blend_dst_a_);
  saved_blend_ = glIsEnabled(GL_BLEND);
  saved_scissor_ = glIsEnabled(GL_SCISSOR_TEST);
  active_ = true;

  GLint previous_texture = 0;
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &previous_texture);
  if (!texture_) glGenTextures(1, &texture_);
  if (width != width_ || height != height_) {
    glBindTexture(GL_TEXTURE_2D, texture_);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, width, height, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
    // Shown 1:1 on the canvas: nearest keeps one-pixel lines sharp.
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAX_LEVEL, 0);
    width_ = width;
    height_ = height;
  }
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(previous_texture));
  if (!fbo_) {
    glGenFramebuffers(1, &fbo_);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, texture_, 0);
  }
  glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
  if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE) {
    glBindFramebuffer(GL_FRAMEBUFFER, static_cast<GLuint>(saved_fbo_));
    return false;
  }
  glViewport(0, 0, width_, height_);
  glDisable(GL_SCISSOR_TEST);
  glClearColor(0, 0, 0, 0);
  glClear(GL_COLOR_BUFFER_BIT);
  glEnable(GL_BLEND);
  glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
  return true;
}

void CanvasTarget::end() {
  if (!active_) return;
  active_ = false;
  glBindFramebuffer(GL_FRAMEBUFFER, static_cast<GLuint>(saved_fbo_));
  glViewport(saved_viewport_[0], saved_viewport_[1], saved_viewport_[2], saved_viewport_[3]);
  glUseProgram(static_cast<GLuint>(saved_program_));
  glBindVertexArray(static_cast<GLuint>(saved_vao_));
  glBindBuffer(GL_ARRAY_BUFFER, static_cast<GLuint>(saved_vbo_));
  glBlendFuncSeparate(saved_blend_src_rgb_, saved_blend_dst_rgb_, saved_blend_src_a_,
                      saved_blend_dst_a_);
  if (saved_blend_)
    glEnable(GL_BLEND);
  else
    glDisable(GL_BLEND);
  if (saved_scissor_)
    glEnable(GL_SCISSOR_TEST);
  else
    glDisable(GL_SCISSOR_TEST);
}

std::vector<uint8_t> CanvasTarget::read_rgba() {
  std::vector<uint8_t> pixels(static_cast<size_t>(width_) * height_ * 4);
  if (!fbo_ || pixels.empty()) return pixels;
  GLint previous = 0;
  glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &previous);
  glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo_);
  glPixelStorei(GL_PACK_ALIGNMENT, 4);
  glReadPixels(0, 0, width_, height_, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  glBindFramebuffer(GL_READ_FRAMEBUFFER, static_cast<GLuint>(previous));
  return pixels;
}

void premultiplied_blend_callback(const ImDrawList*, const ImDrawCmd*) {
  glBlendFuncSeparate(GL_ONE, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
}

}  // namespace attn::render
