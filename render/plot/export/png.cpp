#include "render/plot/export/png.h"

#include <png.h>

#include <cmath>

#include "core/base/atomic_file.h"
#include "core/base/error.h"

namespace attn::render {
namespace {

void png_append(png_structp png, png_bytep data, png_size_t size) {
  auto* out = static_cast<std::string*>(png_get_io_ptr(png));
  out->append(reinterpret_cast<const char*>(data), size);
}

}  // namespace

std::string encode_png(const uint8_t* pixels, int width, int height, int channels, int dpi) {
  if (width <= 0 || height <= 0 || !pixels || (channels != 3 && channels != 4))
    throw Error("PNG encoder: image size does not match its pixels");
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info) {
    png_destroy_write_struct(&png, &info);
    throw Error("PNG encoder: out of memory");
  }
  std::string out;
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw Error("PNG encoder failed");
  }
  png_set_write_fn(png, &out, png_append, nullptr);
  png_set_IHDR(png, info, width, height, 8,
               channels == 4 ? PNG_COLOR_TYPE_RGBA : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (dpi > 0) {
    const auto ppm = static_cast<png_uint_32>(std::lround(dpi / 0.0254));
    png_set_pHYs(png, info, ppm, ppm, PNG_RESOLUTION_METER);
  }
  png_write_info(png, info);
  const size_t stride = static_cast<size_t>(width) * channels;
  for (int y = 0; y < height; ++y) png_write_row(png, pixels + static_cast<size_t>(y) * stride);
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
  return out;
}

void write_png_file(const std::string& path, const uint8_t* pixels, int width, int height,
                    int channels, int dpi) {
  write_file_atomic(path, encode_png(pixels, width, height, channels, dpi));
}

}  // namespace attn::render
