// PNG encoding: the project's one encoder (libpng), for figure exports, the heatmaps embedded in
// SVG files and the window's screenshots.
// Contract:
//  - encode_png() takes 8-bit pixels, rows top first and tightly packed, `channels` 3 (RGB) or
//    4 (RGBA), and returns the PNG file's bytes; dpi > 0 adds a pHYs chunk (pixels per metre).
//  - Throws attn::Error (core/base/error.h) when the size does not match or libpng fails.
//  - write_png_file() encodes and writes the file crash-safely (core/base/atomic_file.h).
#pragma once
#include <cstdint>
#include <string>

namespace attn::render {

std::string encode_png(const uint8_t* pixels, int width, int height, int channels, int dpi = 0);
void write_png_file(const std::string& path, const uint8_t* pixels, int width, int height,
                    int channels, int dpi = 0);

}  // namespace attn::render
