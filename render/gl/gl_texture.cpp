#include "render/gl/gl_texture.h"

#include <epoxy/gl.h>

#include <utility>

namespace attn::render {

void Texture2D::release() {
  if (id_ != 0) {
    GLuint id = id_;
    glDeleteTextures(1, &id);
  }
  id_ = 0;
  width_ = height_ = 0;
}

void Texture2D::upload_rgba8(const Rgba8* pixels, int width, int height) {
  if (width <= 0 || height <= 0) return;
  GLint previous = 0;  // leave the binding as found: ImGui's backend tracks its own state
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &previous);
  if (id_ == 0) {
    GLuint id = 0;
    glGenTextures(1, &id);
    id_ = id;
    width_ = height_ = 0;
  }
  glBindTexture(GL_TEXTURE_2D, id_);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);  // RGBA8 rows are always 4-byte aligned
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  if (width != width_ || height != height_) {
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAX_LEVEL, 0);  // no mipmaps: complete at level 0
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, width, height, 0, GL_RGBA, GL_UNSIGNED_BYTE, pixels);
    width_ = width;
    height_ = height;
  } else {
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels);
  }
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(previous));
}

}  // namespace attn::render
