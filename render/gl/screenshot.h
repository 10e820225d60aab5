// Screenshots of the default framebuffer as PNG (render/plot/export/png.h).
// Contract:
//  - save_framebuffer_png() reads the back buffer of the current context's default framebuffer
//    (call it after rendering a frame and before swapping), flips it to top-row-first and writes
//    an 8-bit RGB PNG crash-safely (core/base/atomic_file.h). Returns false and sets *error (names
//    the path) on failure.
//  - flip_rows() is the GL-free part: reverses row order of a tightly packed image in place.
#pragma once
#include <cstdint>
#include <string>

namespace attn::render {

void flip_rows(uint8_t* pixels, int width, int height, int channels);
bool save_framebuffer_png(const std::string& path, int width, int height, std::string* error);

}  // namespace attn::render
