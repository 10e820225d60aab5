// Cairo backend: PDF and raster (PNG) output of a laid-out figure.
#include <cairo-ft.h>
#include <cairo-pdf.h>
#include <cairo.h>

#include <cmath>
#include <memory>

#include "render/plot/export/figure_export.h"
#include "render/plot/export/figure_render.h"

namespace attn::fig {
namespace {

class CairoPainter : public Painter {
 public:
  CairoPainter(cairo_t* cr, const FigureFont& font) : cr_(cr), font_(font) {
    face_ = cairo_ft_font_face_create_for_ft_face(static_cast<FT_Face>(font.ft_face()), 0);
    cairo_set_font_face(cr_, face_);
    // Unhinted metrics, so glyph positions match the layout's FreeType advances.
    cairo_font_options_t* options = cairo_font_options_create();
    cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF);
    cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE);
    cairo_set_font_options(cr_, options);
    cairo_font_options_destroy(options);
  }
  ~CairoPainter() override { cairo_font_face_destroy(face_); }

  void fill_rect(const Rect& r, Color c) override {
    if (c.a <= 0) return;
    set(c);
    cairo_rectangle(cr_, r.x, r.y, r.w, r.h);
    cairo_fill(cr_);
  }

  void polyline(const double* x, const double* y, int n, Color c, double width, LineStyle style,
                bool closed) override {
    if (n < 2 || c.a <= 0) return;
    set(c);
    cairo_new_path(cr_);
    cairo_move_to(cr_, x[0], y[0]);
    for (int i = 1; i < n; ++i) cairo_line_to(cr_, x[i], y[i]);
    if (closed) cairo_close_path(cr_);
    cairo_set_line_width(cr_, width);
    cairo_set_line_join(cr_, CAIRO_LINE_JOIN_ROUND);
    cairo_set_line_cap(cr_, style == LineStyle::Dotted ? CAIRO_LINE_CAP_ROUND : CAIRO_LINE_CAP_BUTT);
    const std::vector<double> dashes = dash_pattern(style, width);
    cairo_set_dash(cr_, dashes.data(), static_cast<int>(dashes.size()), 0);
    cairo_stroke(cr_);
    cairo_set_dash(cr_, nullptr, 0, 0);
  }

  void fill_polygon(const double* x, const double* y, int n, Color c) override {
    if (n < 3 || c.a <= 0) return;
    set(c);
    cairo_new_path(cr_);
    cairo_move_to(cr_, x[0], y[0]);
    for (int i = 1; i < n; ++i) cairo_line_to(cr_, x[i], y[i]);
    cairo_close_path(cr_);
    cairo_fill(cr_);
  }

  void marker(double x, double y, double size, Marker m, Color c) override {
    set(c);
    const double r = size / 2;
    cairo_new_path(cr_);
    if (m == Marker::Circle) {
      cairo_arc(cr_, x, y, r, 0, 2 * M_PI);
      cairo_fill(cr_);
    } else if (m == Marker::Square) {
      cairo_rectangle(cr_, x - r, y - r, size, size);
      cairo_fill(cr_);
    } else {
      cairo_move_to(cr_, x - r, y - r), cairo_line_to(cr_, x + r, y + r);
      cairo_move_to(cr_, x - r, y + r), cairo_line_to(cr_, x + r, y - r);
      cairo_set_line_width(cr_, std::max(0.5, size / 5));
      cairo_stroke(cr_);
    }
  }

  void text(double x, double y, const std::string& s, double size, Color c, Anchor anchor,
            bool vertical) override {
    if (s.empty()) return;
    set(c);
    cairo_save(cr_);
    cairo_set_font_size(cr_, size);
    cairo_translate(cr_, x, y);
    if (vertical) cairo_rotate(cr_, -M_PI / 2);
    const double w = font_.width(s, size);
    const double dx = anchor == Anchor::Left ? 0 : anchor == Anchor::Center ? -w / 2 : -w;
    cairo_move_to(cr_, dx, 0);
    cairo_show_text(cr_, s.c_str());
    cairo_new_path(cr_);
    cairo_restore(cr_);
  }

  void image(const Rect& r, int cols, int rows, const std::vector<render::Rgba8>& rgba,
             double alpha) override {
    if (cols <= 0 || rows <= 0 || r.w <= 0 || r.h <= 0) return;
    cairo_surface_t* img = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, cols, rows);
    cairo_surface_flush(img);
    unsigned char* data = cairo_image_surface_get_data(img);
    const int stride = cairo_image_surface_get_stride(img);
    for (int y = 0; y < rows; ++y) {
      auto* row = reinterpret_cast<uint32_t*>(data + static_cast<size_t>(y) * stride);
      for (int x = 0; x < cols; ++x) {
        const render::Rgba8 p = rgba[static_cast<size_t>(y) * cols + x];
        // Premultiplied ARGB in native byte order.
        const uint32_t a = p.a;
        row[x] = (a << 24) | ((p.r * a / 255) << 16) | ((p.g * a / 255) << 8) | (p.b * a / 255);
      }
    }
    cairo_surface_mark_dirty(img);
    cairo_save(cr_);
    cairo_rectangle(cr_, r.x, r.y, r.w, r.h);
    cairo_clip(cr_);
    cairo_translate(cr_, r.x, r.y);
    cairo_scale(cr_, r.w / cols, r.h / rows);
    cairo_set_source_surface(cr_, img, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(cr_), CAIRO_FILTER_NEAREST);
    cairo_pattern_set_extend(cairo_get_source(cr_), CAIRO_EXTEND_PAD);
    cairo_paint_with_alpha(cr_, alpha);
    cairo_restore(cr_);
    cairo_surface_destroy(img);
  }

  void push_clip(const Rect& r) override {
    cairo_save(cr_);
    cairo_rectangle(cr_, r.x, r.y, r.w, r.h);
    cairo_clip(cr_);
    cairo_new_path(cr_);
  }
  void pop_clip() override { cairo_restore(cr_); }

 private:
  void set(Color c) { cairo_set_source_rgba(cr_, c.r, c.g, c.b, c.a); }
  cairo_t* cr_;
  const FigureFont& font_;
  cairo_font_face_t* face_ = nullptr;
};

cairo_status_t append(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

void check(cairo_status_t status, const char* what) {
  if (status != CAIRO_STATUS_SUCCESS)
    throw FigureError(std::string("cairo failed drawing the ") + what + ": " +
                      cairo_status_to_string(status));
}

}  // namespace

std::string render_pdf(const Figure& figure, const Page& page, const FigureFont& font) {
  std::string out;
  cairo_surface_t* surface =
      cairo_pdf_surface_create_for_stream(append, &out, page.width_pt, page.height_pt);
  cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_TITLE,
                                 (figure.title.empty() ? figure.name : figure.title).c_str());
  cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATOR, "attnlab");
  cairo_t* cr = cairo_create(surface);
  {
    CairoPainter painter(cr, font);
    draw_figure(figure, page, font, painter);
  }
  const cairo_status_t status = cairo_status(cr);
  cairo_destroy(cr);
  cairo_surface_finish(surface);
  const cairo_status_t finish = cairo_surface_status(surface);
  cairo_surface_destroy(surface);
  check(status, "PDF");
  check(finish, "PDF");
  return out;
}

std::vector<render::Rgba8> render_rgba(const Figure& figure, const Page& page,
                                       const FigureFont& font, int dpi, int& width, int& height) {
  const double scale = dpi / 72.0;
  width = std::max(1, static_cast<int>(std::lround(page.width_pt * scale)));
  height = std::max(1, static_cast<int>(std::lround(page.height_pt * scale)));
  cairo_surface_t* surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
  check(cairo_surface_status(surface), "PNG (is the image too large for memory?)");
  cairo_t* cr = cairo_create(surface);
  cairo_scale(cr, scale, scale);
  {
    CairoPainter painter(cr, font);
    draw_figure(figure, page, font, painter);
  }
  const cairo_status_t status = cairo_status(cr);
  cairo_destroy(cr);
  cairo_surface_flush(surface);
  std::vector<render::Rgba8> rgba(static_cast<size_t>(width) * height);
  const unsigned char* data = cairo_image_surface_get_data(surface);
  const int stride = cairo_image_surface_get_stride(surface);
  for (int y = 0; y < height; ++y) {
    const auto* row = reinterpret_cast<const uint32_t*>(data + static_cast<size_t>(y) * stride);
    for (int x = 0; x < width; ++x) {
      const uint32_t p = row[x];
      const uint32_t a = p >> 24;
      auto un = [a](uint32_t v) { return static_cast<uint8_t>(a ? std::min<uint32_t>(255, v * 255 / a) : 0); };
      rgba[static_cast<size_t>(y) * width + x] = {un((p >> 16) & 255), un((p >> 8) & 255),
                                                  un(p & 255), static_cast<uint8_t>(a)};
    }
  }
  cairo_surface_destroy(surface);
  check(status, "PNG");
  return rgba;
}

std::string render_png(const Figure& figure, const Page& page, const FigureFont& font, int dpi) {
  int w = 0, h = 0;
  const auto rgba = render_rgba(figure, page, font, dpi, w, h);
  return encode_png(rgba, w, h, dpi);
}

}  // namespace attn::fig
