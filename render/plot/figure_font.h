// The figure font: one TrueType file, measured with FreeType, used by the screen (ImGui loads
// the same file) and by every export (cairo embeds it; SVG names its family).
// Contract:
//  - FigureFont::load(path) throws FigureError naming the file when it cannot be opened or is
//    not a scalable font. default_font_path() is DejaVu Sans (Debian's fonts-dejavu-core), or
//    $ATTNLAB_FONT when set; there is no silent substitution: a missing file is an error.
//  - width() sums unhinted advance widths (font units scaled to points), so the layout does not
//    depend on the output resolution.
#pragma once
#include <memory>
#include <stdexcept>
#include <string>

#include "render/plot/figure_draw.h"

namespace attn::fig {

struct FigureError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string default_font_path();

class FigureFont : public TextMetrics {
 public:
  static std::shared_ptr<FigureFont> load(const std::string& path);
  ~FigureFont() override;

  const std::string& path() const { return path_; }
  const std::string& family() const { return family_; }  // "DejaVu Sans"
  void* ft_face() const { return face_; }                 // FT_Face, for cairo

  double width(const std::string& utf8, double size_pt) const override;
  double ascent(double size_pt) const override;
  double descent(double size_pt) const override;

 private:
  FigureFont() = default;
  std::string path_, family_;
  void* library_ = nullptr;  // FT_Library
  void* face_ = nullptr;     // FT_Face
  double units_per_em_ = 1000, ascender_ = 0, descender_ = 0;
};

// Decodes UTF-8 (invalid bytes become U+FFFD), for glyph lookup.
std::u32string decode_utf8(const std::string& s);

}  // namespace attn::fig
