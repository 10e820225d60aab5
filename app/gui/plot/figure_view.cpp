#include "app/gui/plot/figure_view.h"

#include <backends/imgui_impl_opengl3.h>
#include <imgui_internal.h>  // ImTextCharFromUtf8

#include <algorithm>
#include <cmath>

#include "app/gui/plot/imgui_texture.h"

namespace attn::gui {
namespace {
// Points per AddPolyline call: 4 vertices each when anti-aliased, well under 65536.
constexpr int kMaxPolylinePoints = 8192;
}  // namespace

// Painter on an ImDrawList: page points -> pixels (origin + scale).
class ImGuiPainter : public fig::Painter {
 public:
  ImGuiPainter(FigureView& view, ImDrawList* dl, ImFont* font, const fig::FigureFont& metrics)
      : view_(view), dl_(dl), font_(font), metrics_(metrics) {}

  void fill_rect(const fig::Rect& r, fig::Color c) override {
    if (c.a <= 0) return;
    dl_->AddRectFilled(px(r.x, r.y), px(r.x + r.w, r.y + r.h), col(c));
  }

  void polyline(const double* x, const double* y, int n, fig::Color c, double width,
                fig::LineStyle style, bool closed) override {
    if (n < 2 || c.a <= 0) return;
    const float w = std::max(1.0f, static_cast<float>(width) * view_.scale_);
    const std::vector<double> dashes = fig::dash_pattern(style, width);
    if (dashes.empty()) {
      points_.clear();
      for (int i = 0; i < n; ++i) points_.push_back(px(x[i], y[i]));
      if (n <= kMaxPolylinePoints) {
        dl_->AddPolyline(points_.data(), n, col(c), closed ? ImDrawFlags_Closed : 0, w);
        return;
      }
      // ImGui 1.86 indexes vertices with 16 bits: one polyline of more than ~16k points (four
      // vertices each, anti-aliased) overflows them. Long ones go in pieces that share their
      // end points (the figure model already reduces lines; polygons and custom painters may
      // still send long ones).
      if (closed) points_.push_back(points_.front());
      const int total = static_cast<int>(points_.size());
      for (int first = 0; first < total - 1; first += kMaxPolylinePoints - 1) {
        const int count = std::min(kMaxPolylinePoints, total - first);
        dl_->AddPolyline(points_.data() + first, count, col(c), 0, w);
      }
      return;
    }
    // Dashes walked along the polyline, in points.
    double on = dashes[0], off = dashes.size() > 1 ? dashes[1] : dashes[0];
    double phase = 0;
    bool drawing = true;
    const int segments = closed ? n : n - 1;
    for (int i = 0; i < segments; ++i) {
      const int j = (i + 1) % n;
      double ax = x[i], ay = y[i];
      const double dx = x[j] - ax, dy = y[j] - ay;
      double remaining = std::hypot(dx, dy);
      const double ux = remaining > 0 ? dx / remaining : 0, uy = remaining > 0 ? dy / remaining : 0;
      while (remaining > 1e-9) {
        const double left = (drawing ? on : off) - phase;
        const double step = std::min(left, remaining);
        if (drawing) dl_->AddLine(px(ax, ay), px(ax + ux * step, ay + uy * step), col(c), w);
        ax += ux * step, ay += uy * step;
        remaining -= step, phase += step;
        if (phase >= (drawing ? on : off) - 1e-9) phase = 0, drawing = !drawing;
      }
    }
  }

  void fill_polygon(const double* x, const double* y, int n, fig::Color c) override {
    if (n < 3 || c.a <= 0) return;
    points_.clear();
    for (int i = 0; i < n; ++i) points_.push_back(px(x[i], y[i]));
    // ImGui fills convex polygons; the hulls and ellipses drawn filled are convex.
    dl_->AddConvexPolyFilled(points_.data(), n, col(c));
  }

  void marker(double x, double y, double size, fig::Marker m, fig::Color c) override {
    const ImVec2 p = px(x, y);
    const float r = std::max(1.5f, static_cast<float>(size / 2) * view_.scale_);
    if (m == fig::Marker::Circle) {
      dl_->AddCircleFilled(p, r, col(c), 12);
    } else if (m == fig::Marker::Square) {
      dl_->AddRectFilled(ImVec2(p.x - r, p.y - r), ImVec2(p.x + r, p.y + r), col(c));
    } else {
      const float w = std::max(1.0f, r / 2.5f);
      dl_->AddLine(ImVec2(p.x - r, p.y - r), ImVec2(p.x + r, p.y + r), col(c), w);
      dl_->AddLine(ImVec2(p.x - r, p.y + r), ImVec2(p.x + r, p.y - r), col(c), w);
    }
  }

  void text(double x, double y, const std::string& s, double size, fig::Color c, fig::Anchor anchor,
            bool vertical) override {
    if (s.empty() || !font_) return;
    const double w = metrics_.width(s, size);
    const double dx = anchor == fig::Anchor::Left ? 0 : anchor == fig::Anchor::Center ? -w / 2 : -w;
    const float size_px = static_cast<float>(size) * view_.scale_;
    const float ascent_px = font_->Ascent * size_px / font_->FontSize;
    if (!vertical) {
      const ImVec2 p = px(x + dx, y);
      dl_->AddText(font_, size_px, ImVec2(p.x, p.y - ascent_px), col(c), s.c_str());
      return;
    }
    // Rotated text: each glyph's quad rotated by 90 degrees about the baseline point (x, y).
    // AddText() would cull glyphs by their unrotated positions, cutting off labels near the
    // window's left edge (the y label of a preview that starts there).
    const ImVec2 pivot = px(x, y);
    const float scale = size_px / font_->FontSize;
    const ImU32 colour = col(c);
    auto turn = [&](float rx, float ry) { return ImVec2(pivot.x + ry, pivot.y - rx); };
    float pen = static_cast<float>(dx) * view_.scale_;
    dl_->PushTextureID(font_->ContainerAtlas->TexID);
    for (const char* p = s.c_str(); *p;) {
      unsigned int ch = 0;
      p += ImTextCharFromUtf8(&ch, p, nullptr);
      if (ch == 0) break;
      const ImFontGlyph* g = font_->FindGlyph(static_cast<ImWchar>(ch));
      if (!g) continue;
      if (g->Visible) {
        const float x0 = pen + g->X0 * scale, x1 = pen + g->X1 * scale;
        const float y0 = g->Y0 * scale - ascent_px, y1 = g->Y1 * scale - ascent_px;
        dl_->PrimReserve(6, 4);
        dl_->PrimQuadUV(turn(x0, y0), turn(x1, y0), turn(x1, y1), turn(x0, y1),
                        ImVec2(g->U0, g->V0), ImVec2(g->U1, g->V0), ImVec2(g->U1, g->V1),
                        ImVec2(g->U0, g->V1), colour);
      }
      pen += g->AdvanceX * scale;
    }
    dl_->PopTextureID();
  }

  void image(const fig::Rect& r, int cols, int rows, const std::vector<render::Rgba8>& rgba,
             double alpha) override {
    if (cols <= 0 || rows <= 0) return;
    if (view_.textures_used_ == view_.textures_.size()) view_.textures_.emplace_back();
    render::Texture2D& tex = view_.textures_[view_.textures_used_++];
    tex.upload_rgba8(rgba.data(), cols, rows);
    const ImU32 tint = IM_COL32(255, 255, 255, static_cast<int>(std::lround(255 * alpha)));
    dl_->AddImage(imgui_texture(tex.id()), px(r.x, r.y), px(r.x + r.w, r.y + r.h), ImVec2(0, 0),
                  ImVec2(1, 1), tint);
  }

  void push_clip(const fig::Rect& r) override {
    dl_->PushClipRect(px(r.x, r.y), px(r.x + r.w, r.y + r.h), true);
  }
  void pop_clip() override { dl_->PopClipRect(); }

 private:
  ImVec2 px(double x, double y) const {
    return ImVec2(view_.origin_.x + static_cast<float>(x) * view_.scale_,
                  view_.origin_.y + static_cast<float>(y) * view_.scale_);
  }
  static ImU32 col(fig::Color c) {
    auto b = [](float v) { return static_cast<int>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255)); };
    return IM_COL32(b(c.r), b(c.g), b(c.b), b(c.a));
  }
  FigureView& view_;
  ImDrawList* dl_;
  ImFont* font_;
  const fig::FigureFont& metrics_;
  std::vector<ImVec2> points_;
};

const fig::FigureFont* FigureView::metrics() {
  if (!font_tried_) {
    font_tried_ = true;
    try {
      font_ = fig::FigureFont::load(fig::default_font_path());
    } catch (const fig::FigureError& e) {
      font_error_ = e.what();
    }
  }
  return font_.get();
}

fig::FigureLayout FigureView::draw(const fig::Figure& figure, const fig::Page& page, ImVec2 size,
                                   ImFont* font) {
  const fig::FigureFont* m = metrics();
  origin_ = ImGui::GetCursorScreenPos();
  scale_ = static_cast<float>(std::min(size.x / page.width_pt, size.y / page.height_pt));
  ImGui::InvisibleButton("##figure", ImVec2(static_cast<float>(page.width_pt) * scale_,
                                            static_cast<float>(page.height_pt) * scale_));
  if (!m) {
    ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", font_error_.c_str());
    return {};
  }
  textures_used_ = 0;
  ImGuiPainter painter(*this, ImGui::GetWindowDrawList(), font ? font : ImGui::GetFont(), *m);
  return fig::draw_figure(figure, page, *m, painter);
}

fig::FigureLayout FigureView::draw_cached(const fig::Figure& figure, const fig::Page& page,
                                          ImVec2 size, ImFont* font, uint64_t key) {
  const fig::FigureFont* m = metrics();
  origin_ = ImGui::GetCursorScreenPos();
  scale_ = static_cast<float>(std::min(size.x / page.width_pt, size.y / page.height_pt));
  const ImVec2 extent(static_cast<float>(page.width_pt) * scale_,
                      static_cast<float>(page.height_pt) * scale_);
  ImGui::InvisibleButton("##figure", extent);
  if (!m) {
    ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", font_error_.c_str());
    return {};
  }
  ImFont* f = font ? font : ImGui::GetFont();
  const int w = std::max(1, static_cast<int>(std::ceil(extent.x)));
  const int h = std::max(1, static_cast<int>(std::ceil(extent.y)));
  if (key == 0 || key != cache_key_ || f != cache_font_ || !canvas_.valid() ||
      w != canvas_.width() || h != canvas_.height()) {
    // Painted at the origin of a draw list of its own, rendered by ImGui's GL backend into the
    // canvas (its blending leaves premultiplied colour on the transparent target).
    ImDrawList list(ImGui::GetDrawListSharedData());
    list._ResetForNewFrame();
    list.PushTextureID(ImGui::GetIO().Fonts->TexID);
    list.PushClipRect(ImVec2(0, 0), ImVec2(static_cast<float>(w), static_cast<float>(h)));
    const ImVec2 screen_origin = origin_;
    origin_ = ImVec2(0, 0);
    textures_used_ = 0;
    ImGuiPainter painter(*this, &list, f, *m);
    cache_layout_ = fig::draw_figure(figure, page, *m, painter);
    origin_ = screen_origin;
    if (canvas_.begin(w, h)) {
      ImDrawList* lists[] = {&list};
      ImDrawData data;
      data.Valid = true;
      data.CmdLists = lists;
      data.CmdListsCount = 1;
      data.TotalVtxCount = list.VtxBuffer.Size;
      data.TotalIdxCount = list.IdxBuffer.Size;
      data.DisplayPos = ImVec2(0, 0);
      data.DisplaySize = ImVec2(static_cast<float>(w), static_cast<float>(h));
      data.FramebufferScale = ImVec2(1, 1);
      ImGui_ImplOpenGL3_RenderDrawData(&data);
    }
    canvas_.end();
    cache_key_ = key;
    cache_font_ = f;
  }
  if (canvas_.valid()) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddCallback(render::premultiplied_blend_callback, nullptr);
    dl->AddImage(imgui_texture(canvas_.texture()), origin_,
                 ImVec2(origin_.x + static_cast<float>(w), origin_.y + static_cast<float>(h)),
                 ImVec2(0, 1), ImVec2(1, 0));
    dl->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
  }
  return cache_layout_;
}

std::optional<HoverHit> FigureView::hover(const fig::Figure& figure,
                                          const fig::FigureLayout& layout, ImVec2 mouse,
                                          float radius_px) const {
  if (scale_ <= 0) return std::nullopt;
  const double px = (mouse.x - origin_.x) / scale_, py = (mouse.y - origin_.y) / scale_;
  const fig::PointHit hit = fig::nearest_point(figure, layout, px, py, radius_px / scale_);
  if (hit.panel < 0) return std::nullopt;
  HoverHit h;
  h.panel = hit.panel;
  h.on_point = hit.series >= 0;
  h.series = hit.series, h.index = hit.index;
  h.name = hit.name;
  h.x = hit.x, h.y = hit.y;
  const fig::PanelLayout& L = layout.panels[hit.panel];
  h.mouse_x = L.data_x(px), h.mouse_y = L.data_y(py);
  return h;
}

}  // namespace attn::gui
