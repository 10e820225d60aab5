// Texture2D: a move-only owner of one OpenGL texture, for heatmaps and colorbars.
// Contract:
//  - Every method except the accessors needs the GL context that created the texture to be
//    current on the calling thread, including the destructor: destroy textures before the
//    window/context (the window owns the panels for that reason).
//  - Images are RGBA8, row-major, top row first; sampling is GL_NEAREST with clamp-to-edge, so
//    each matrix cell stays a crisp block at any zoom.
//  - Re-uploading the same size reuses the storage (glTexSubImage2D).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "render/plot/colormap.h"

namespace attn::render {

class Texture2D {
 public:
  Texture2D() = default;
  ~Texture2D();
  Texture2D(Texture2D&& other) noexcept;
  Texture2D& operator=(Texture2D&& other) noexcept;
  Texture2D(const Texture2D&) = delete;
  Texture2D& operator=(const Texture2D&) = delete;

  void upload_rgba8(const Rgba8* pixels, int width, int height);
  // rows x cols floats (row-major) through a colormap; see colorize() for vmin/vmax.
  void upload_matrix(const float* values, int rows, int cols, Colormap map, float vmin, float vmax);
  void release();  // deletes the GL texture (no-op when empty)

  unsigned id() const { return id_; }
  int width() const { return width_; }
  int height() const { return height_; }
  bool valid() const { return id_ != 0; }

 private:
  unsigned id_ = 0;
  int width_ = 0, height_ = 0;
  std::vector<Rgba8> scratch_;  // reused between uploads
};

// What both backends share: ownership and colouring. Each backend defines release() and
// upload_rgba8(): OpenGL in gl_texture.cpp, fake ids without GL in gl/null/null_gl.cpp.

inline Texture2D::~Texture2D() {
  release();
}

inline Texture2D::Texture2D(Texture2D&& other) noexcept
    : id_(std::exchange(other.id_, 0u)),
      width_(std::exchange(other.width_, 0)),
      height_(std::exchange(other.height_, 0)),
      scratch_(std::move(other.scratch_)) {}

inline Texture2D& Texture2D::operator=(Texture2D&& other) noexcept {
  if (this != &other) {
    release();
    id_ = std::exchange(other.id_, 0u);
    width_ = std::exchange(other.width_, 0);
    height_ = std::exchange(other.height_, 0);
    scratch_ = std::move(other.scratch_);
  }
  return *this;
}

inline void Texture2D::upload_matrix(const float* values, int rows, int cols, Colormap map,
                                     float vmin, float vmax) {
  if (rows <= 0 || cols <= 0) return;
  colorize(values, static_cast<size_t>(rows) * cols, map, vmin, vmax, scratch_);
  upload_rgba8(scratch_.data(), cols, rows);
}

}  // namespace attn::render
