#include "render/plot/figure_font.h"

#include <ft2build.h>
#include FT_FREETYPE_H

#ifdef ATTN_HAVE_FONTCONFIG
#include <fontconfig/fontconfig.h>
#endif

#include <cstdlib>
#include <fstream>

namespace attn::fig {
namespace {

constexpr const char* kDebianDejaVu = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

// The file fontconfig picks for "DejaVu Sans" (its closest sans-serif when DejaVu is missing),
// or "" without fontconfig or a match.
std::string fontconfig_match() {
#ifdef ATTN_HAVE_FONTCONFIG
  std::string out;
  FcConfig* config = FcInitLoadConfigAndFonts();
  if (!config) return out;
  FcPattern* pattern = FcNameParse(reinterpret_cast<const FcChar8*>("DejaVu Sans:style=Book"));
  if (pattern) {
    FcConfigSubstitute(config, pattern, FcMatchPattern);
    FcDefaultSubstitute(pattern);
    FcResult result = FcResultNoMatch;
    if (FcPattern* match = FcFontMatch(config, pattern, &result)) {
      FcChar8* file = nullptr;
      if (FcPatternGetString(match, FC_FILE, 0, &file) == FcResultMatch && file)
        out = reinterpret_cast<const char*>(file);
      FcPatternDestroy(match);
    }
    FcPatternDestroy(pattern);
  }
  FcConfigDestroy(config);
  return out;
#else
  return "";
#endif
}

}  // namespace

std::string default_font_path() {
  if (const char* env = std::getenv("ATTNLAB_FONT"); env && *env) return env;
  // Debian's path first: exports look the same on every machine that has it.
  if (std::ifstream(kDebianDejaVu).good()) return kDebianDejaVu;
  static const std::string matched = fontconfig_match();
  return matched.empty() ? kDebianDejaVu : matched;
}

std::u32string decode_utf8(const std::string& s) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    int extra = 0;
    char32_t cp = c;
    if (c >= 0x80) {
      if ((c >> 5) == 6) extra = 1, cp = c & 0x1F;
      else if ((c >> 4) == 14) extra = 2, cp = c & 0x0F;
      else if ((c >> 3) == 30) extra = 3, cp = c & 0x07;
      else extra = -1;
    }
    bool ok = extra >= 0 && i + extra < s.size();
    for (int k = 1; ok && k <= extra; ++k) {
      const unsigned char d = s[i + k];
      ok = (d & 0xC0) == 0x80;
      cp = (cp << 6) | (d & 0x3F);
    }
    if (!ok) {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += extra + 1;
  }
  return out;
}

std::shared_ptr<FigureFont> FigureFont::load(const std::string& path) {
  if (!std::ifstream(path).good())
    throw FigureError("font file " + path +
                      " cannot be read (DejaVu Sans comes with Debian's fonts-dejavu-core; "
                      "set ATTNLAB_FONT or --font to another .ttf)");
  std::shared_ptr<FigureFont> f(new FigureFont());
  f->path_ = path;
  FT_Library lib = nullptr;
  if (FT_Init_FreeType(&lib)) throw FigureError("FreeType could not be initialised");
  f->library_ = lib;
  FT_Face face = nullptr;
  if (FT_New_Face(lib, path.c_str(), 0, &face) || !FT_IS_SCALABLE(face))
    throw FigureError("font file " + path + " is not a scalable TrueType/OpenType font");
  f->face_ = face;
  f->family_ = face->family_name ? face->family_name : "sans-serif";
  if (face->style_name && std::string(face->style_name) != "Book" &&
      std::string(face->style_name) != "Regular")
    f->family_ += std::string(" ") + face->style_name;
  f->units_per_em_ = face->units_per_EM > 0 ? face->units_per_EM : 1000;
  f->ascender_ = face->ascender;
  f->descender_ = -face->descender;
  return f;
}

FigureFont::~FigureFont() {
  if (face_) FT_Done_Face(static_cast<FT_Face>(face_));
  if (library_) FT_Done_FreeType(static_cast<FT_Library>(library_));
}

double FigureFont::width(const std::string& utf8, double size_pt) const {
  FT_Face face = static_cast<FT_Face>(face_);
  double units = 0;
  for (char32_t cp : decode_utf8(utf8)) {
    const FT_UInt glyph = FT_Get_Char_Index(face, cp);
    if (FT_Load_Glyph(face, glyph, FT_LOAD_NO_SCALE | FT_LOAD_NO_HINTING) == 0)
      units += face->glyph->metrics.horiAdvance;
  }
  return units * size_pt / units_per_em_;
}

double FigureFont::ascent(double size_pt) const { return ascender_ * size_pt / units_per_em_; }
double FigureFont::descent(double size_pt) const { return descender_ * size_pt / units_per_em_; }

}  // namespace attn::fig
