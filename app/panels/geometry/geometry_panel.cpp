#include "app/panels/geometry/geometry_panel.h"

#include <imgui.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "app/figures/catalog/figures.h"
#include "app/gui/window/palette.h"
#include "render/plot/colormap.h"

namespace attn::gui {
namespace {

namespace g = geometry;

// The export's limits (app/figures/catalog/figures.h), so the file labels what the screen labels.
constexpr int kMaxWeightLines = figures::kGeometryMaxWeightLines;
constexpr int kMaxLabelledTokens = figures::kGeometryMaxLabelledTokens;
constexpr ImU32 kHullFill = with_alpha8(colors::kSkyBlue, 38);
constexpr ImU32 kHullEdge = with_alpha8(colors::kSkyBlue, 200);
constexpr ImU32 kBoxEdge = with_alpha8(IM_COL32(200, 200, 200, 0), 150);
constexpr ImU32 kInputCircle = with_alpha8(IM_COL32_WHITE, 60);
constexpr ImU32 kPredicted = with_alpha8(IM_COL32_WHITE, 230);
constexpr ImU32 kQuery = IM_COL32_WHITE;
constexpr ImU32 kOutput = colors::kYellow;
constexpr ImU32 kSampledToken = IM_COL32(150, 190, 230, 150);

// The i-th of `count` circle colours, dark to bright along viridis (readable on the dark theme).
ImU32 circle_color(int i, int count) {
  const float t = count > 1 ? 0.35f + 0.65f * static_cast<float>(i) / (count - 1) : 0.8f;
  const render::Rgba8 c = render::viridis(t);
  return IM_COL32(c.r, c.g, c.b, 255);
}

nlohmann::json screen_json(ImVec2 p) {
  return nlohmann::json::array({p.x, p.y});
}

}  // namespace

GeometryPanel::GeometryPanel() : model_(GeometryModel::from_environment()), controls_(model_) {}

void GeometryPanel::fit_view() {
  view_.fit(model_.fit_box(), 0.12);
  view_fitted_ = true;
  gl_.invalidate_density();
}

void GeometryPanel::update(FrameContext&) {
  if (!drawn_) input_.cancel();  // a press seen before it was hidden must not act on return
  drawn_ = false;
  gl_.begin_frame();
}

void GeometryPanel::draw(FrameContext& frame) {
  ImFont* small_font = frame.small_font;
  ImFont* font = small_font ? small_font : ImGui::GetFont();
  model_.bench_step(frames_drawn_);
  const float controls_w = std::clamp(ImGui::GetContentRegionAvail().x * 0.34f, 250.0f, 330.0f);
  ImGui::BeginChild("controls", ImVec2(controls_w, 0), true);
  const GeometryControls::Actions actions = controls_.draw(model_, gl_, view_);
  if (actions.cancel_gesture) input_.cancel();
  if (actions.fit_view) {
    model_.update_derived();
    fit_view();
  }
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild(
      "canvas", ImVec2(0, 0), false,
      ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_NoMove);
  draw_canvas(font);
  ImGui::EndChild();
}

void GeometryPanel::draw_canvas(ImFont* font) {
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImVec2 size = ImGui::GetContentRegionAvail();
  size.x = std::max(size.x, 60.0f), size.y = std::max(size.y, 60.0f);
  const ImVec2 old_size(view_.max.x - view_.min.x, view_.max.y - view_.min.y);
  view_.min = p0;
  view_.max = ImVec2(p0.x + size.x, p0.y + size.y);
  if (old_size.x != size.x || old_size.y != size.y) gl_.invalidate_density();
  ImGui::InvisibleButton("##canvas", size,
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight |
                             ImGuiButtonFlags_MouseButtonMiddle);
  model_.sync_gaussian_tokens();
  model_.update_derived();
  if (!view_fitted_) fit_view();
  input_.handle(model_, view_);
  model_.sync_gaussian_tokens();
  model_.update_derived();  // after the input, so this frame draws (and reports) what it edited

  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(view_.min, view_.max, true);
  draw_axes(dl, view_, font);
  gl_.draw_density(dl, model_, view_);
  gl_.draw(dl, model_, view_);
  draw_overlays(dl, font);
  draw_tokens(dl, font);
  GeometryControls::draw_readout(font, model_, gl_, view_);
  dl->PopClipRect();
  ++frames_drawn_;
  drawn_ = true;
}

void GeometryPanel::draw_overlays(ImDrawList* dl, ImFont* font) {
  const GeometryModel::Derived& d = model_.derived;
  if (!d.error.empty()) return;
  const ImVec2 origin = view_.to_screen({0, 0});
  if (model_.views.hull && !d.hull.empty()) {
    scratch_.clear();
    for (const g::Vec2& p : d.hull) scratch_.push_back(view_.to_screen(p));
    if (scratch_.size() >= 3) {
      dl->AddConvexPolyFilled(scratch_.data(), static_cast<int>(scratch_.size()), kHullFill);
      dl->AddPolyline(scratch_.data(), static_cast<int>(scratch_.size()), kHullEdge,
                      ImDrawFlags_Closed, 1.5f);
    } else if (scratch_.size() == 2) {
      dl->AddLine(scratch_[0], scratch_[1], kHullEdge, 2.0f);
    }
    const ImVec2 a = view_.to_screen(d.box.min), b = view_.to_screen(d.box.max);
    draw_dashed_line(dl, ImVec2(a.x, a.y), ImVec2(b.x, a.y), kBoxEdge, 1.0f, 5, 4);
    draw_dashed_line(dl, ImVec2(b.x, a.y), ImVec2(b.x, b.y), kBoxEdge, 1.0f, 5, 4);
    draw_dashed_line(dl, ImVec2(b.x, b.y), ImVec2(a.x, b.y), kBoxEdge, 1.0f, 5, 4);
    draw_dashed_line(dl, ImVec2(a.x, b.y), ImVec2(a.x, a.y), kBoxEdge, 1.0f, 5, 4);
    draw_label(dl, font, ImVec2(a.x + 2, a.y + 2), kBoxEdge, "bounding box");
  }
  if (model_.views.circles || model_.views.linear) {  // the query circles themselves, faint
    for (int k = 1; k <= model_.circle_count; ++k) {
      const float r =
          static_cast<float>(model_.radius * k / model_.circle_count * view_.pixels_per_unit);
      if (r < 1e5f) dl->AddCircle(origin, r, kInputCircle, 0, 1.0f);
    }
  }
  if (model_.views.linear) {
    for (size_t k = 0; k < d.linear_images.size(); ++k) {
      const auto& img = d.linear_images[k];
      draw_data_polyline(dl, view_, img.data(), img.size(), true, colors::kGreen, 2.5f, scratch_);
      const auto& e = d.ellipses[k];
      draw_dashed_polyline(dl, view_, e.data(), e.size(), true, kPredicted, 1.2f, 6, 5);
    }
  }
  if (model_.views.circles) {
    const int n = static_cast<int>(d.softmax_images.size());
    for (int k = 0; k < n; ++k) {
      const auto& img = d.softmax_images[k];
      draw_data_polyline(dl, view_, img.data(), img.size(), true, circle_color(k, n), 2.0f,
                         scratch_);
    }
    for (const auto& curve : d.tilted_means)
      draw_dashed_polyline(dl, view_, curve.data(), curve.size(), true, kPredicted, 1.2f, 6, 5);
  }
  if (model_.views.output && !d.weights.empty()) {
    const ImVec2 z = view_.to_screen(d.output);
    const int n = static_cast<int>(d.values.size());
    if (n <= kMaxWeightLines) {
      for (int j = 0; j < n; ++j) {
        const float p = static_cast<float>(d.weights[j]);
        const ImVec2 u = view_.to_screen(d.values[j]);
        dl->AddLine(z, u, with_alpha(categorical_color(j), 0.3f + 0.7f * p), 1.0f + 9.0f * p);
        if (n <= kMaxLabelledTokens && p >= 0.02f) {
          char label[16];
          std::snprintf(label, sizeof label, "%.2f", p);
          draw_label(dl, font, ImVec2(z.x + 0.55f * (u.x - z.x) + 3, z.y + 0.55f * (u.y - z.y)),
                     categorical_color(j), label);
        }
      }
    }
  }
}

void GeometryPanel::draw_tokens(ImDrawList* dl, ImFont* font) {
  const GeometryModel::Derived& d = model_.derived;
  const size_t n = model_.scene.tokens.size();
  if (model_.gaussian) {
    for (const g::Vec2& t : model_.scene.tokens) {
      const ImVec2 s = view_.to_screen(t);
      dl->AddRectFilled(ImVec2(s.x - 1, s.y - 1), ImVec2(s.x + 1, s.y + 1), kSampledToken);
    }
    // The Gaussian's 1- and 2-sigma ellipses, and its mean (draggable).
    const g::Mat2& c = model_.gaussian_params.cov;
    const double tr = 0.5 * (c.a + c.d), det = c.a * c.d - c.b * c.b;
    const double disc = std::sqrt(std::max(0.0, tr * tr - det));
    const double l1 = std::max(0.0, tr + disc), l2 = std::max(0.0, tr - disc);
    const double angle = 0.5 * std::atan2(2 * c.b, c.a - c.d);
    for (double sigma : {1.0, 2.0}) {
      std::array<g::Vec2, 96> ring;
      for (size_t i = 0; i < ring.size(); ++i) {
        const double a = 2 * M_PI * i / ring.size();
        const double x = sigma * std::sqrt(l1) * std::cos(a),
                     y = sigma * std::sqrt(l2) * std::sin(a);
        ring[i] = {model_.gaussian_params.mean.x + x * std::cos(angle) - y * std::sin(angle),
                   model_.gaussian_params.mean.y + x * std::sin(angle) + y * std::cos(angle)};
      }
      draw_dashed_polyline(dl, view_, ring.data(), ring.size(), true,
                           with_alpha(colors::kOrange, 0.8f), 1.0f, 4, 4);
    }
    const ImVec2 m = view_.to_screen(model_.gaussian_params.mean);
    dl->AddCircle(m, 6.0f, colors::kOrange, 0, 2.0f);
    draw_label(dl, font, ImVec2(m.x + 8, m.y - font->FontSize - 2), colors::kOrange, "mu");
  } else {
    for (size_t j = 0; j < n; ++j) {
      const ImVec2 s = view_.to_screen(model_.scene.tokens[j]);
      const ImU32 col = categorical_color(static_cast<int>(j));
      if (!d.wv_identity && j < d.values.size()) {  // the value point W^V t_j it stands for
        const ImVec2 u = view_.to_screen(d.values[j]);
        draw_dashed_line(dl, s, u, with_alpha(col, 0.6f), 1.0f, 3, 3);
        dl->AddRect(ImVec2(u.x - 4, u.y - 4), ImVec2(u.x + 4, u.y + 4), col, 0, 0, 1.5f);
      }
      const bool hot = input_.is_hot(static_cast<int>(j));
      dl->AddCircleFilled(s, hot ? 8.0f : 6.0f, col);
      dl->AddCircle(s, hot ? 8.0f : 6.0f, IM_COL32(0, 0, 0, 200), 0, 1.5f);
      if (n <= static_cast<size_t>(kMaxLabelledTokens) || hot) {
        char label[24];
        std::snprintf(label, sizeof label, "t%zu", j + 1);
        draw_label(dl, font, ImVec2(s.x + 8, s.y - font->FontSize - 2), col, label);
      }
    }
  }
  if (!d.error.empty()) return;
  const ImVec2 q = view_.to_screen(model_.query);
  dl->AddCircle(q, 7.0f, kQuery, 0, 2.0f);
  dl->AddLine(ImVec2(q.x - 4, q.y), ImVec2(q.x + 4, q.y), kQuery, 1.5f);
  dl->AddLine(ImVec2(q.x, q.y - 4), ImVec2(q.x, q.y + 4), kQuery, 1.5f);
  draw_label(dl, font, ImVec2(q.x + 9, q.y + 2), kQuery, "v");
  if (model_.views.output) {
    const ImVec2 z = view_.to_screen(d.output);
    const ImVec2 diamond[4] = {ImVec2(z.x, z.y - 7), ImVec2(z.x + 7, z.y), ImVec2(z.x, z.y + 7),
                               ImVec2(z.x - 7, z.y)};
    dl->AddConvexPolyFilled(diamond, 4, kOutput);
    dl->AddPolyline(diamond, 4, IM_COL32(0, 0, 0, 220), ImDrawFlags_Closed, 1.5f);
    draw_label(dl, font, ImVec2(z.x + 9, z.y + 2), kOutput, "z");
  }
}

// The model's report with what only the view knows: whether and how often it was drawn, the
// canvas and the screen positions of the tokens, v and z, and how the GL layer drew the grid.
nlohmann::json GeometryPanel::report() const {
  using nlohmann::json;
  json r = model_.report();
  json screen = json::array();
  const size_t shown = std::min<size_t>(model_.scene.tokens.size(), 4096);
  for (size_t j = 0; j < shown; ++j)
    screen.push_back(screen_json(view_.to_screen(model_.scene.tokens[j])));
  r["drawn"] = drawn_;
  r["frames_drawn"] = frames_drawn_;
  r["canvas"] = {{"min", screen_json(view_.min)},
                 {"max", screen_json(view_.max)},
                 {"center", json::array({view_.center_x, view_.center_y})},
                 {"pixels_per_unit", view_.pixels_per_unit}};
  r["tokens_screen"] = screen;
  r["query_screen"] = screen_json(view_.to_screen(model_.query));
  r["output_screen"] = screen_json(view_.to_screen(model_.derived.output));
  json& grid = r["grid"];
  grid["path"] = gl_.gpu_used() ? "gpu" : gl_.cpu_used() ? "cpu" : "none";
  grid["lines_drawn"] = gl_.lines_drawn();
  grid["samples_drawn"] = gl_.samples_drawn();
  grid["layer_renders"] = gl_.renders();
  grid["cpu_updates"] = gl_.cpu_updates();
  grid["cpu_warp_ms_mean"] = gl_.cpu_ms_mean();
  r["gpu"] = {{"available", gl_.gpu_available()}, {"error", gl_.gpu_error()}};
  r["density"] = {{"path", model_.views.density ? gl_.density_path() : "none"}};
  return r;
}

}  // namespace attn::gui
