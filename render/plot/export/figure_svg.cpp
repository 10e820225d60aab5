// SVG backend: written by hand so that text stays editable <text> (cairo's SVG surface turns
// glyphs into paths) and heatmaps are crisp embedded images.
#include <cmath>
#include <cstdio>
#include <sstream>

#include "render/plot/export/figure_export.h"
#include "render/plot/export/figure_render.h"

namespace attn::fig {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        // XML 1.0 forbids most control characters.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t') out += c;
    }
  }
  return out;
}

std::string base64(const std::string& in) {
  static const char* table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t v = (static_cast<uint8_t>(in[i]) << 16) |
                       (static_cast<uint8_t>(in[i + 1]) << 8) | static_cast<uint8_t>(in[i + 2]);
    out += table[v >> 18], out += table[(v >> 12) & 63], out += table[(v >> 6) & 63],
        out += table[v & 63];
  }
  if (i + 1 == in.size()) {
    const uint32_t v = static_cast<uint8_t>(in[i]) << 16;
    out += table[v >> 18], out += table[(v >> 12) & 63], out += "==";
  } else if (i + 2 == in.size()) {
    const uint32_t v = (static_cast<uint8_t>(in[i]) << 16) | (static_cast<uint8_t>(in[i + 1]) << 8);
    out += table[v >> 18], out += table[(v >> 12) & 63], out += table[(v >> 6) & 63], out += "=";
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  std::string s = buf;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

std::string rgb(Color c) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(std::lround(c.r * 255)),
                static_cast<int>(std::lround(c.g * 255)), static_cast<int>(std::lround(c.b * 255)));
  return buf;
}

std::string opacity(const char* attr, Color c) {
  return c.a < 1 ? std::string(" ") + attr + "=\"" + num(c.a) + "\"" : std::string();
}

class SvgPainter : public Painter {
 public:
  SvgPainter(std::ostringstream& os, const FigureFont& font) : os_(os), font_(font) {}

  void fill_rect(const Rect& r, Color c) override {
    if (c.a <= 0) return;
    os_ << "<rect x=\"" << num(r.x) << "\" y=\"" << num(r.y) << "\" width=\"" << num(r.w)
        << "\" height=\"" << num(r.h) << "\" fill=\"" << rgb(c) << "\""
        << opacity("fill-opacity", c) << "/>\n";
  }

  void polyline(const double* x, const double* y, int n, Color c, double width, LineStyle style,
                bool closed) override {
    if (n < 2 || c.a <= 0) return;
    os_ << (closed ? "<polygon" : "<polyline") << " points=\"";
    for (int i = 0; i < n; ++i) os_ << (i ? " " : "") << num(x[i]) << "," << num(y[i]);
    os_ << "\" fill=\"none\" stroke=\"" << rgb(c) << "\"" << opacity("stroke-opacity", c)
        << " stroke-width=\"" << num(width) << "\" stroke-linejoin=\"round\"";
    const std::vector<double> dashes = dash_pattern(style, width);
    if (!dashes.empty()) {
      os_ << " stroke-dasharray=\"";
      for (size_t i = 0; i < dashes.size(); ++i) os_ << (i ? "," : "") << num(dashes[i]);
      os_ << "\"";
      if (style == LineStyle::Dotted) os_ << " stroke-linecap=\"round\"";
    }
    os_ << "/>\n";
  }

  void fill_polygon(const double* x, const double* y, int n, Color c) override {
    if (n < 3 || c.a <= 0) return;
    os_ << "<polygon points=\"";
    for (int i = 0; i < n; ++i) os_ << (i ? " " : "") << num(x[i]) << "," << num(y[i]);
    os_ << "\" fill=\"" << rgb(c) << "\"" << opacity("fill-opacity", c) << " stroke=\"none\"/>\n";
  }

  void marker(double x, double y, double size, Marker m, Color c) override {
    const double r = size / 2;
    if (m == Marker::Circle) {
      os_ << "<circle cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"" << num(r)
          << "\" fill=\"" << rgb(c) << "\"" << opacity("fill-opacity", c) << "/>\n";
    } else if (m == Marker::Square) {
      fill_rect({x - r, y - r, size, size}, c);
    } else {
      os_ << "<path d=\"M" << num(x - r) << "," << num(y - r) << "L" << num(x + r) << ","
          << num(y + r) << "M" << num(x - r) << "," << num(y + r) << "L" << num(x + r) << ","
          << num(y - r) << "\" stroke=\"" << rgb(c) << "\" stroke-width=\""
          << num(std::max(0.5, size / 5)) << "\"/>\n";
    }
  }

  void text(double x, double y, const std::string& s, double size, Color c, Anchor anchor,
            bool vertical) override {
    if (s.empty()) return;
    const char* a = anchor == Anchor::Left ? "start" : anchor == Anchor::Center ? "middle" : "end";
    os_ << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" font-family=\""
        << escape(font_.family()) << "\" font-size=\"" << num(size) << "\" fill=\"" << rgb(c)
        << "\"" << opacity("fill-opacity", c) << " text-anchor=\"" << a << "\"";
    if (vertical) os_ << " transform=\"rotate(-90 " << num(x) << " " << num(y) << ")\"";
    os_ << ">" << escape(s) << "</text>\n";
  }

  void image(const Rect& r, int cols, int rows, const std::vector<render::Rgba8>& rgba,
             double alpha) override {
    if (cols <= 0 || rows <= 0) return;
    const std::string png = encode_png(rgba, cols, rows, 0);
    os_ << "<image x=\"" << num(r.x) << "\" y=\"" << num(r.y) << "\" width=\"" << num(r.w)
        << "\" height=\"" << num(r.h)
        << "\" preserveAspectRatio=\"none\" image-rendering=\"pixelated\" "
           "style=\"image-rendering:pixelated;image-rendering:crisp-edges\"";
    if (alpha < 1) os_ << " opacity=\"" << num(alpha) << "\"";
    // SVG 2's href and SVG 1.1's xlink:href: ImageMagick (rsvg) and older viewers read only
    // the latter, browsers prefer the former.
    const std::string data = "data:image/png;base64," + base64(png);
    os_ << " href=\"" << data << "\" xlink:href=\"" << data << "\"/>\n";
  }

  void push_clip(const Rect& r) override {
    const int id = next_clip_++;
    os_ << "<clipPath id=\"clip" << id << "\"><rect x=\"" << num(r.x) << "\" y=\"" << num(r.y)
        << "\" width=\"" << num(r.w) << "\" height=\"" << num(r.h) << "\"/></clipPath>\n"
        << "<g clip-path=\"url(#clip" << id << ")\">\n";
  }
  void pop_clip() override { os_ << "</g>\n"; }

 private:
  std::ostringstream& os_;
  const FigureFont& font_;
  int next_clip_ = 0;
};

}  // namespace

std::string render_svg(const Figure& figure, const Page& page, const FigureFont& font) {
  std::ostringstream os;
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
     << "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" "
        "version=\"1.1\" width=\""
     << num(page.width_pt) << "pt\" height=\"" << num(page.height_pt) << "pt\" viewBox=\"0 0 "
     << num(page.width_pt) << " " << num(page.height_pt) << "\">\n"
     << "<title>" << escape(figure.title.empty() ? figure.name : figure.title) << "</title>\n";
  SvgPainter painter(os, font);
  draw_figure(figure, page, font, painter);
  os << "</svg>\n";
  return os.str();
}

}  // namespace attn::fig
