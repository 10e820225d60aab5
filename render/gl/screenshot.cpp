#include "render/gl/screenshot.h"

#include <epoxy/gl.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "render/plot/export/png.h"

namespace attn::render {

void flip_rows(uint8_t* pixels, int width, int height, int channels) {
  const size_t stride = static_cast<size_t>(width) * channels;
  for (int top = 0, bottom = height - 1; top < bottom; ++top, --bottom)
    std::swap_ranges(pixels + top * stride, pixels + (top + 1) * stride, pixels + bottom * stride);
}

bool save_framebuffer_png(const std::string& path, int width, int height, std::string* error) {
  if (width <= 0 || height <= 0) {
    if (error) *error = "cannot write " + path + ": the framebuffer is empty";
    return false;
  }
  std::vector<uint8_t> pixels(static_cast<size_t>(width) * height * 3);
  for (int i = 0; i < 16 && glGetError() != GL_NO_ERROR; ++i) {
  }  // drop stale errors so the check below is about this read only
  glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
  glReadBuffer(GL_BACK);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);  // rows of 3-byte pixels are tightly packed
  glReadPixels(0, 0, width, height, GL_RGB, GL_UNSIGNED_BYTE, pixels.data());
  if (glGetError() != GL_NO_ERROR) {
    if (error) *error = "cannot write " + path + ": glReadPixels failed";
    return false;
  }
  flip_rows(pixels.data(), width, height, 3);  // GL's origin is bottom-left, PNG's top-left
  try {  // crash-safe: a killed process never leaves a partial PNG at path
    write_png_file(path, pixels.data(), width, height, 3);
  } catch (const Error& e) {
    if (error) *error = e.what();
    return false;
  }
  return true;
}

}  // namespace attn::render
