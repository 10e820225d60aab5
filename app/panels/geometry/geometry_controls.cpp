// The Geometry panel's left column (scene, tokens, views, continuous tokens), the readout over
// the canvas and the exit report. The canvas itself is in geometry_panel.cpp.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>

#include "gui/plot_draw.h"
#include "panels/geometry/geometry_panel.h"

namespace attn::gui {
namespace {

namespace g = geometry;

const ImVec4 kRed(0.95f, 0.35f, 0.30f, 1.0f);
const ImVec4 kDim(0.62f, 0.62f, 0.62f, 1.0f);
const ImVec4 kGood(0.40f, 0.80f, 0.55f, 1.0f);
constexpr int kMaxTableRows = 256;  // more tokens (Gaussian samples): a count instead

// Slider over doubles on a log scale; Ctrl+click types an exact value.
bool log_slider(const char* label, double* v, double lo, double hi, const char* format) {
  return ImGui::SliderScalar(label, ImGuiDataType_Double, v, &lo, &hi, format,
                             ImGuiSliderFlags_Logarithmic);
}

bool log_slider(const char* label, float* v, float lo, float hi, const char* format) {
  return ImGui::SliderFloat(label, v, lo, hi, format, ImGuiSliderFlags_Logarithmic);
}

void help_marker(const char* text) {
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 26.0f);
    ImGui::TextUnformatted(text);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

// A 2x2 matrix as two rows of exact inputs and an identity button; true when edited.
bool matrix_input(const char* label, g::Mat2& m) {
  bool changed = false;
  ImGui::PushID(label);
  double row0[2] = {m.a, m.b}, row1[2] = {m.c, m.d};
  const float x0 = ImGui::GetCursorPosX();
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(label);
  ImGui::SameLine(x0 + 40);
  ImGui::SetNextItemWidth(-30);
  if (ImGui::InputScalarN("##r0", ImGuiDataType_Double, row0, 2, nullptr, nullptr, "%.3f"))
    m.a = row0[0], m.b = row0[1], changed = true;
  ImGui::SameLine();
  if (ImGui::SmallButton("I")) m = g::Mat2{}, changed = true;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Reset %s to the identity", label);
  ImGui::SetCursorPosX(x0 + 40);
  ImGui::SetNextItemWidth(-30);
  if (ImGui::InputScalarN("##r1", ImGuiDataType_Double, row1, 2, nullptr, nullptr, "%.3f"))
    m.c = row1[0], m.d = row1[1], changed = true;
  ImGui::PopID();
  return changed;
}

nlohmann::json point_json(g::Vec2 p) {
  return nlohmann::json::array({p.x, p.y});
}
nlohmann::json screen_json(ImVec2 p) {
  return nlohmann::json::array({p.x, p.y});
}
nlohmann::json matrix_json(const g::Mat2& m) {
  return nlohmann::json::array({m.a, m.b, m.c, m.d});
}

}  // namespace

void GeometryPanel::draw_controls(ImFont* font) {
  ImGui::PushItemWidth(-90);
  draw_scene_controls();
  if (ImGui::CollapsingHeader("Tokens", ImGuiTreeNodeFlags_DefaultOpen)) draw_token_table();
  if (ImGui::CollapsingHeader("Views", ImGuiTreeNodeFlags_DefaultOpen)) draw_view_controls();
  if (ImGui::CollapsingHeader("Continuous tokens (Gaussian)")) {
    bool changed = false;
    if (ImGui::Checkbox("tokens drawn from N(mu, Sigma)", &gaussian_)) {
      if (gaussian_) {
        points_ = scene_.tokens;  // the user's own tokens come back when this is turned off
        views_.circles = true;
      } else {
        scene_.tokens = points_;
      }
      gesture_ = Gesture{};
      changed = true;
    }
    help_marker(
        "Many tokens from a Gaussian: the softmax image of a circle tends to the tilted mean "
        "W^V (mu + Sigma s), s = W^K^T W^Q v / tau (mu + Sigma v when W = I, tau = 1), drawn "
        "dashed white over the sampled tokens' circle images. Drag mu on the canvas.");
    changed |= ImGui::InputScalarN("mu", ImGuiDataType_Double, &gaussian_params_.mean.x, 2, nullptr,
                                   nullptr, "%.3f");
    double cov[3] = {gaussian_params_.cov.a, gaussian_params_.cov.b, gaussian_params_.cov.d};
    if (ImGui::InputScalarN("Sigma xx,xy,yy", ImGuiDataType_Double, cov, 3, nullptr, nullptr,
                            "%.3f")) {
      gaussian_params_.cov = {cov[0], cov[1], cov[1], cov[2]};
      changed = true;
    }
    changed |=
        ImGui::SliderInt("samples", &gaussian_n_, 10, 20000, "%d", ImGuiSliderFlags_Logarithmic);
    changed |= ImGui::InputInt("seed", &gaussian_seed_);
    gaussian_n_ = std::clamp(gaussian_n_, 1, 20000);
    if (!gaussian_error_.empty()) ImGui::TextColored(kRed, "%s", gaussian_error_.c_str());
    if (changed) {
      gaussian_rev_ = 0;  // resample
      scene_changed();
    }
  }
  ImGui::PopItemWidth();
  (void)font;
}

void GeometryPanel::draw_scene_controls() {
  const auto& names = g::preset_names();
  ImGui::SetNextItemWidth(110);
  if (ImGui::BeginCombo("##preset", names[preset_].c_str())) {
    for (size_t i = 0; i < names.size(); ++i) {
      if (ImGui::Selectable(names[i].c_str(), static_cast<int>(i) == preset_)) {
        preset_ = static_cast<int>(i);
        scene_ = g::preset(names[i]);
        gaussian_ = false;
        gesture_ = Gesture{};
        scene_changed();
        update_derived();
        fit_view();
        const std::string text = format_points(scene_.tokens);
        std::snprintf(tokens_text_, sizeof tokens_text_, "%s", text.c_str());
      }
    }
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("The seed's scenes (tokens, matrices, temperature)");
  ImGui::SameLine();
  if (ImGui::Button("Fit view")) fit_view();
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Canvas: drag empty space to pan (any button), wheel to zoom,\n"
        "click to add a token, drag a token or v, right-click a token to delete");

  double q[2] = {query_.x, query_.y};
  if (ImGui::InputScalarN("query v", ImGuiDataType_Double, q, 2, nullptr, nullptr, "%.4g"))
    query_ = {q[0], q[1]};
  if (ImGui::TreeNode("W^Q, W^K, W^V, temperature")) {
    bool changed = matrix_input("W^Q", scene_.wq);
    changed |= matrix_input("W^K", scene_.wk);
    changed |= matrix_input("W^V", scene_.wv);
    changed |= log_slider("temperature", &scene_.temperature, 0.01, 100.0, "%.3f");
    if (changed) scene_changed();
    ImGui::TreePop();
  }
}

void GeometryPanel::draw_token_table() {
  const int n = static_cast<int>(scene_.tokens.size());
  if (gaussian_) {
    ImGui::TextColored(kDim, "%d tokens sampled from the Gaussian (below)", n);
    return;
  }
  const float row_h = ImGui::GetFrameHeight();
  const float height = std::min(8, n + 1) * (row_h + 2) + 4;
  constexpr ImGuiTableFlags kFlags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                     ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingStretchProp;
  int erase = -1;
  if (ImGui::BeginTable("tokens", 5, kFlags, ImVec2(0, height))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, 24);
    ImGui::TableSetupColumn("x");
    ImGui::TableSetupColumn("y");
    ImGui::TableSetupColumn("p", ImGuiTableColumnFlags_WidthFixed, 42);
    ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, 18);
    ImGui::TableHeadersRow();
    ImGuiListClipper clipper;
    clipper.Begin(std::min(n, kMaxTableRows));
    while (clipper.Step()) {
      for (int j = clipper.DisplayStart; j < clipper.DisplayEnd; ++j) {
        ImGui::PushID(j);
        ImGui::TableNextRow();
        ImGui::TableSetColumnIndex(0);
        ImGui::AlignTextToFramePadding();
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(categorical_color(j)), "t%d", j + 1);
        ImGui::TableSetColumnIndex(1);
        ImGui::SetNextItemWidth(-1);
        if (ImGui::InputDouble("##x", &scene_.tokens[j].x, 0, 0, "%.4g")) scene_changed();
        ImGui::TableSetColumnIndex(2);
        ImGui::SetNextItemWidth(-1);
        if (ImGui::InputDouble("##y", &scene_.tokens[j].y, 0, 0, "%.4g")) scene_changed();
        ImGui::TableSetColumnIndex(3);
        if (j < static_cast<int>(d_.weights.size())) ImGui::Text("%.3f", d_.weights[j]);
        ImGui::TableSetColumnIndex(4);
        if (n > 1 && ImGui::SmallButton("x")) erase = j;
        ImGui::PopID();
      }
    }
    ImGui::EndTable();
  }
  if (n > kMaxTableRows) ImGui::TextColored(kDim, "(first %d of %d shown)", kMaxTableRows, n);
  if (erase >= 0) {
    scene_.tokens.erase(scene_.tokens.begin() + erase);
    ++tokens_deleted_;
    scene_changed();
  }
  if (ImGui::Button("+ token")) {
    // At the view's centre, nudged so repeated clicks do not stack.
    scene_.tokens.push_back({view_.center_x + 0.1 * (n % 5), view_.center_y - 0.1 * (n % 3)});
    ++tokens_added_;
    scene_changed();
  }
  ImGui::SameLine();
  if (ImGui::Button("Copy")) {
    const std::string text = format_points(scene_.tokens);
    std::snprintf(tokens_text_, sizeof tokens_text_, "%s", text.c_str());
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Put the current tokens in the field below");
  ImGui::SetNextItemWidth(-60);
  const bool enter = ImGui::InputText("##tokens", tokens_text_, sizeof tokens_text_,
                                      ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if (ImGui::Button("Set") || enter) {
    try {
      std::vector<g::Vec2> points = g::parse_points(tokens_text_, "tokens");
      if (points.size() > static_cast<size_t>(render::WarpRenderer::kMaxTokens))
        throw std::runtime_error("at most " + std::to_string(render::WarpRenderer::kMaxTokens) +
                                 " tokens here");
      scene_.tokens = std::move(points);
      tokens_text_error_.clear();
      scene_changed();
    } catch (const std::exception& e) {
      tokens_text_error_ = e.what();
    }
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Tokens as x1,y1;x2,y2;...");
  if (!tokens_text_error_.empty()) ImGui::TextColored(kRed, "%s", tokens_text_error_.c_str());
}

void GeometryPanel::draw_view_controls() {
  ImGui::Checkbox("output z, weights p_j as widths", &views_.output);
  ImGui::Checkbox("convex hull + bounding box", &views_.hull);
  ImGui::Checkbox("softmax: images of circles", &views_.circles);
  ImGui::Checkbox("no softmax: circles -> ellipse", &views_.linear);
  help_marker(
      "Solid green: the circle's image under z = sum_j l_j W^V t_j (no softmax). Dashed white: "
      "the predicted ellipse, semi-axes r * singular values of M = W^V T T^T W^K^T W^Q / tau "
      "(the eigenvectors of T T^T when every W = I). A segment when the tokens are collinear.");
  if (views_.circles || views_.linear) {
    ImGui::Indent();
    log_slider("radius r", &radius_, 0.05f, 100.0f, "%.3g");
    ImGui::SliderInt("circles", &circle_count_, 1, 8);
    ImGui::SliderInt("samples##circle", &circle_samples_, 16, 4096, "%d",
                     ImGuiSliderFlags_Logarithmic);
    circle_count_ = std::clamp(circle_count_, 1, 8);
    circle_samples_ = std::clamp(circle_samples_, 16, 4096);
    ImGui::Unindent();
  }
  ImGui::Checkbox("warped grid", &views_.grid);
  ImGui::SameLine();
  ImGui::Checkbox("density", &views_.density);
  if (views_.grid || views_.density) {
    ImGui::Indent();
    ImGui::SetNextItemWidth(-1);
    ImGui::Combo("##map", &grid_mode_,
                 "softmax F(v)\0residual v + alpha F(v)\0linear (no softmax)\0");
    if (grid_mode_ == 1) ImGui::SliderFloat("alpha", &alpha_, 0.0f, 1.0f, "%.2f");
    log_slider("extent", &grid_extent_, 0.1f, 1000.0f, "%.3g");
    if (views_.grid) {
      ImGui::SliderInt("lines", &grid_lines_, 2, 1024, "%d", ImGuiSliderFlags_Logarithmic);
      ImGui::SliderInt("samples", &grid_samples_, 2, 2049, "%d", ImGuiSliderFlags_Logarithmic);
      grid_lines_ = std::clamp(grid_lines_, 2, 1024);
      grid_samples_ = std::clamp(grid_samples_, 2, 2049);
      ImGui::Checkbox("CPU path (warp_grid)", &cpu_grid_);
      ImGui::Checkbox("coarser lines while moving", &coarse_while_moving_);
      help_marker(
          "The grid is mapped per vertex on the GPU (shaders/warp.vert.glsl). The CPU path maps "
          "it with core's geometry::warp_grid (double precision) on every change and uploads "
          "the result: the reference, and the timing to compare with. Either way the lines are "
          "drawn into an offscreen image only when something changes. Coarse while moving: "
          "while the grid changes on consecutive frames (a drag), at most 32768 vertices in all, "
          "redrawn in full when it stops.");
      if (cpu_updates_ > 0)
        ImGui::TextColored(kDim, "CPU warp: %.2f ms last, %.2f ms mean", cpu_ms_last_,
                           cpu_ms_total_ / cpu_updates_);
    }
    if (views_.density) {
      ImGui::SliderInt("points/axis", &density_n_, 16, 1024, "%d", ImGuiSliderFlags_Logarithmic);
      density_n_ = std::clamp(density_n_, 16, 1024);
      int kind = density_image_ ? 1 : 0;
      ImGui::RadioButton("point cloud (GPU)", &kind, 0);
      ImGui::SameLine();
      ImGui::RadioButton("image (CPU)", &kind, 1);
      density_image_ = kind == 1;
    }
    ImGui::Unindent();
  }
  if (!gpu_error_.empty())
    ImGui::TextColored(kRed, "GPU warp unavailable: %s", gpu_error_.c_str());
  else if (views_.grid && !cpu_grid_ && cpu_used_)
    ImGui::TextColored(kDim, "CPU path: more than %d tokens", render::WarpRenderer::kMaxTokens);
}

void GeometryPanel::draw_readout(ImFont* font) {
  struct Line {
    char text[256];
    ImU32 color;
  };
  Line lines[4];
  int n = 0;
  auto add = [&](ImU32 color) -> char* {
    lines[n].color = color;
    return lines[n++].text;
  };
  if (!d_.error.empty()) {
    std::snprintf(add(IM_COL32(242, 90, 76, 255)), sizeof lines[0].text, "%s", d_.error.c_str());
  } else {
    std::snprintf(add(IM_COL32(230, 230, 230, 255)), sizeof lines[0].text,
                  "v = (%.4g, %.4g)   z = (%.4g, %.4g)   z in hull: %s", query_.x, query_.y,
                  d_.output.x, d_.output.y, d_.inside ? "yes" : "NO");
    std::snprintf(add(IM_COL32(170, 170, 170, 255)), sizeof lines[0].text,
                  "%zu tokens   grid %s: %d x %d lines, %d samples   %.1f ms/frame",
                  scene_.tokens.size(),
                  gpu_used_   ? "GPU"
                  : cpu_used_ ? "CPU"
                              : "off",
                  grid_lines_, grid_lines_, grid_samples_,
                  1000.0f / std::max(1.0f, ImGui::GetIO().Framerate));
    if (views_.linear && !d_.linear_images.empty()) {
      const g::Ellipse& e = d_.outer_ellipse;
      std::snprintf(add(colors::kGreen), sizeof lines[0].text,
                    "ellipse (r = %.3g): semi-axes %.4g, %.4g along (%.3f, %.3f), (%.3f, %.3f)",
                    radius_, e.radius1, e.radius2, e.axis1.x, e.axis1.y, e.axis2.x, e.axis2.y);
    }
    if (gaussian_ && views_.circles)
      std::snprintf(add(IM_COL32(230, 230, 230, 255)), sizeof lines[0].text,
                    "dashed white: tilted mean W^V (mu + Sigma s); largest gap to the sampled "
                    "image: %.3g",
                    d_.gaussian_gap);
  }
  // A dark plate under the text: tick labels and curves pass beneath the readout.
  const float fs = font->FontSize, step = fs + 3;
  float width = 0;
  for (int i = 0; i < n; ++i)
    width = std::max(width, font->CalcTextSizeA(fs, FLT_MAX, 0, lines[i].text).x);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 pos(view_.min.x + 8, view_.min.y + 6);
  dl->AddRectFilled(ImVec2(pos.x - 4, pos.y - 3), ImVec2(pos.x + width + 4, pos.y + n * step),
                    IM_COL32(18, 19, 22, 200), 3.0f);
  for (int i = 0; i < n; ++i)
    dl->AddText(font, fs, ImVec2(pos.x, pos.y + i * step), lines[i].color, lines[i].text);
}

nlohmann::json GeometryPanel::report() const {
  using nlohmann::json;
  json tokens = json::array(), screen = json::array(), weights = json::array(),
       hull = json::array();
  const size_t shown = std::min<size_t>(scene_.tokens.size(), 4096);
  for (size_t j = 0; j < shown; ++j) {
    tokens.push_back(point_json(scene_.tokens[j]));
    screen.push_back(screen_json(view_.to_screen(scene_.tokens[j])));
  }
  for (size_t j = 0; j < std::min<size_t>(d_.weights.size(), 4096); ++j)
    weights.push_back(d_.weights[j]);
  for (const g::Vec2& p : d_.hull) hull.push_back(point_json(p));
  const char* maps[] = {"softmax", "residual", "linear"};
  return {
      {"drawn", drawn_},
      {"frames_drawn", frames_drawn_},
      {"error", d_.error},
      {"token_count", scene_.tokens.size()},
      {"tokens", tokens},
      {"query", point_json(query_)},
      {"output", point_json(d_.output)},
      {"weights", weights},
      {"inside_hull", d_.inside},
      {"hull", hull},
      {"wq", matrix_json(scene_.wq)},
      {"wk", matrix_json(scene_.wk)},
      {"wv", matrix_json(scene_.wv)},
      {"temperature", scene_.temperature},
      {"gaussian", gaussian_},
      {"views",
       {{"output", views_.output},
        {"hull", views_.hull},
        {"circles", views_.circles},
        {"linear", views_.linear},
        {"grid", views_.grid},
        {"density", views_.density}}},
      {"canvas",
       {{"min", screen_json(view_.min)},
        {"max", screen_json(view_.max)},
        {"center", json::array({view_.center_x, view_.center_y})},
        {"pixels_per_unit", view_.pixels_per_unit}}},
      {"tokens_screen", screen},
      {"query_screen", screen_json(view_.to_screen(query_))},
      {"output_screen", screen_json(view_.to_screen(d_.output))},
      {"grid",
       {{"lines", grid_lines_},
        {"samples", grid_samples_},
        {"extent", grid_extent_},
        {"map", maps[std::clamp(grid_mode_, 0, 2)]},
        {"alpha", alpha_},
        {"path", gpu_used_   ? "gpu"
                 : cpu_used_ ? "cpu"
                             : "none"},
        {"lines_drawn", grid_lines_drawn_},
        {"samples_drawn", layer_samples_},
        {"coarse_while_moving", coarse_while_moving_},
        {"layer_renders", layer_renders_},
        {"cpu_updates", cpu_updates_},
        {"cpu_warp_ms_mean", cpu_updates_ > 0 ? cpu_ms_total_ / cpu_updates_ : 0.0}}},
      {"gpu", {{"available", gpu_checked_ && gpu_error_.empty()}, {"error", gpu_error_}}},
      {"edits",
       {{"tokens_added", tokens_added_},
        {"tokens_deleted", tokens_deleted_},
        {"token_drags", token_drags_},
        {"query_drags", query_drags_}}},
      {"bench", bench_},
      {"curves",
       {{"softmax_images", d_.softmax_images.size()},
        {"linear_images", d_.linear_images.size()},
        {"ellipses", d_.ellipses.size()},
        {"tilted_means", d_.tilted_means.size()}}},
      {"gaussian_gap", d_.gaussian_gap},
      {"density",
       {{"path", !views_.density                     ? "none"
                 : density_texture_.valid()          ? "cpu-image"
                 : layer_key_.points && layer_valid_ ? "gpu-points"
                                                     : "none"}}},
  };
}

}  // namespace attn::gui
