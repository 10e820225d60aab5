#include "app/panels/geometry/geometry_controls.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <stdexcept>

#include "app/gui/plot/export_dialog.h"
#include "app/gui/window/palette.h"

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

}  // namespace

GeometryControls::GeometryControls(const GeometryModel& s) {
  show_tokens(s);
}

void GeometryControls::show_tokens(const GeometryModel& s) {
  const std::string text = format_points(s.gaussian ? s.points : s.scene.tokens);
  std::snprintf(tokens_text_, sizeof tokens_text_, "%s", text.c_str());
}

GeometryControls::Actions GeometryControls::draw(GeometryModel& s, const GeometryGlLayer& gl,
                                                 const CanvasView& view) {
  Actions actions;
  draw_export_button(s);
  ImGui::PushItemWidth(-90);
  draw_scene_controls(s, actions);
  if (ImGui::CollapsingHeader("Tokens", ImGuiTreeNodeFlags_DefaultOpen)) draw_token_table(s, view);
  if (ImGui::CollapsingHeader("Views", ImGuiTreeNodeFlags_DefaultOpen)) draw_view_controls(s, gl);
  if (ImGui::CollapsingHeader("Continuous tokens (Gaussian)")) draw_gaussian_controls(s, actions);
  ImGui::PopItemWidth();
  return actions;
}

void GeometryControls::draw_export_button(const GeometryModel& s) {
  if (ImGui::SmallButton("Export...")) gui::request_figure_export(s.figure(), false);
}

void GeometryControls::draw_gaussian_controls(GeometryModel& s, Actions& actions) {
  bool changed = false;
  bool on = s.gaussian;
  if (ImGui::Checkbox("tokens drawn from N(mu, Sigma)", &on)) {
    s.set_gaussian(on);
    actions.cancel_gesture = true;
    changed = true;
  }
  help_marker(
      "Many tokens from a Gaussian: the softmax image of a circle tends to the tilted mean "
      "W^V (mu + Sigma s), s = W^K^T W^Q v / tau (mu + Sigma v when W = I, tau = 1), drawn "
      "dashed white over the sampled tokens' circle images. Drag mu on the canvas.");
  changed |= ImGui::InputScalarN("mu", ImGuiDataType_Double, &s.gaussian_params.mean.x, 2, nullptr,
                                 nullptr, "%.3f");
  double cov[3] = {s.gaussian_params.cov.a, s.gaussian_params.cov.b, s.gaussian_params.cov.d};
  if (ImGui::InputScalarN("Sigma xx,xy,yy", ImGuiDataType_Double, cov, 3, nullptr, nullptr,
                          "%.3f")) {
    s.gaussian_params.cov = {cov[0], cov[1], cov[1], cov[2]};
    changed = true;
  }
  changed |=
      ImGui::SliderInt("samples", &s.gaussian_n, 10, 20000, "%d", ImGuiSliderFlags_Logarithmic);
  changed |= ImGui::InputInt("seed", &s.gaussian_seed);
  s.gaussian_n = std::clamp(s.gaussian_n, 1, 20000);
  if (!s.gaussian_error.empty()) ImGui::TextColored(kRed, "%s", s.gaussian_error.c_str());
  if (changed) {
    s.gaussian_rev = 0;  // resample
    s.changed();
  }
}

void GeometryControls::draw_scene_controls(GeometryModel& s, Actions& actions) {
  const auto& names = g::preset_names();
  ImGui::SetNextItemWidth(110);
  if (ImGui::BeginCombo("##preset", names[s.preset].c_str())) {
    for (size_t i = 0; i < names.size(); ++i) {
      if (ImGui::Selectable(names[i].c_str(), static_cast<int>(i) == s.preset)) {
        s.select_preset(static_cast<int>(i));
        actions.cancel_gesture = actions.fit_view = true;
        show_tokens(s);
      }
    }
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("The seed's scenes (tokens, matrices, temperature)");
  ImGui::SameLine();
  if (ImGui::Button("Fit view")) actions.fit_view = true;
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Canvas: drag empty space to pan (any button), wheel to zoom,\n"
        "click to add a token, drag a token or v, right-click a token to delete");

  double q[2] = {s.query.x, s.query.y};
  if (ImGui::InputScalarN("query v", ImGuiDataType_Double, q, 2, nullptr, nullptr, "%.4g"))
    s.query = {q[0], q[1]};
  if (ImGui::TreeNode("W^Q, W^K, W^V, temperature")) {
    bool changed = matrix_input("W^Q", s.scene.wq);
    changed |= matrix_input("W^K", s.scene.wk);
    changed |= matrix_input("W^V", s.scene.wv);
    changed |= log_slider("temperature", &s.scene.temperature, 0.01, 100.0, "%.3f");
    if (changed) s.changed();
    ImGui::TreePop();
  }
}

void GeometryControls::draw_token_table(GeometryModel& s, const CanvasView& view) {
  const int n = static_cast<int>(s.scene.tokens.size());
  if (s.gaussian) {
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
        if (ImGui::InputDouble("##x", &s.scene.tokens[j].x, 0, 0, "%.4g")) s.changed();
        ImGui::TableSetColumnIndex(2);
        ImGui::SetNextItemWidth(-1);
        if (ImGui::InputDouble("##y", &s.scene.tokens[j].y, 0, 0, "%.4g")) s.changed();
        ImGui::TableSetColumnIndex(3);
        if (j < static_cast<int>(s.derived.weights.size()))
          ImGui::Text("%.3f", s.derived.weights[j]);
        ImGui::TableSetColumnIndex(4);
        if (n > 1 && ImGui::SmallButton("x")) erase = j;
        ImGui::PopID();
      }
    }
    ImGui::EndTable();
  }
  if (n > kMaxTableRows) ImGui::TextColored(kDim, "(first %d of %d shown)", kMaxTableRows, n);
  if (erase >= 0) s.delete_token(erase);
  if (ImGui::Button("+ token")) {
    // At the view's centre, nudged so repeated clicks do not stack.
    s.add_token({view.center_x + 0.1 * (n % 5), view.center_y - 0.1 * (n % 3)});
  }
  ImGui::SameLine();
  if (ImGui::Button("Copy")) show_tokens(s);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Put the current tokens in the field below");
  ImGui::SetNextItemWidth(-60);
  const bool enter = ImGui::InputText("##tokens", tokens_text_, sizeof tokens_text_,
                                      ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if (ImGui::Button("Set") || enter) {
    try {
      std::vector<g::Vec2> points = g::parse_points(tokens_text_, "tokens");
      if (points.size() > static_cast<size_t>(GeometryModel::kMaxTokens))
        throw std::runtime_error("at most " + std::to_string(GeometryModel::kMaxTokens) +
                                 " tokens here");
      s.scene.tokens = std::move(points);
      tokens_text_error_.clear();
      s.changed();
    } catch (const std::exception& e) {
      tokens_text_error_ = e.what();
    }
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Tokens as x1,y1;x2,y2;...");
  if (!tokens_text_error_.empty()) ImGui::TextColored(kRed, "%s", tokens_text_error_.c_str());
}

void GeometryControls::draw_view_controls(GeometryModel& s, const GeometryGlLayer& gl) {
  ImGui::Checkbox("output z, weights p_j as widths", &s.views.output);
  ImGui::Checkbox("convex hull + bounding box", &s.views.hull);
  ImGui::Checkbox("softmax: images of circles", &s.views.circles);
  ImGui::Checkbox("no softmax: circles -> ellipse", &s.views.linear);
  help_marker(
      "Solid green: the circle's image under z = sum_j l_j W^V t_j (no softmax). Dashed white: "
      "the predicted ellipse, semi-axes r * singular values of M = W^V T T^T W^K^T W^Q / tau "
      "(the eigenvectors of T T^T when every W = I). A segment when the tokens are collinear.");
  if (s.views.circles || s.views.linear) {
    ImGui::Indent();
    log_slider("radius r", &s.radius, 0.05f, 100.0f, "%.3g");
    ImGui::SliderInt("circles", &s.circle_count, 1, 8);
    ImGui::SliderInt("samples##circle", &s.circle_samples, 16, 4096, "%d",
                     ImGuiSliderFlags_Logarithmic);
    s.circle_count = std::clamp(s.circle_count, 1, 8);
    s.circle_samples = std::clamp(s.circle_samples, 16, 4096);
    ImGui::Unindent();
  }
  ImGui::Checkbox("warped grid", &s.views.grid);
  ImGui::SameLine();
  ImGui::Checkbox("density", &s.views.density);
  if (s.views.grid || s.views.density) {
    ImGui::Indent();
    ImGui::SetNextItemWidth(-1);
    ImGui::Combo("##map", &s.grid_mode,
                 "softmax F(v)\0residual v + alpha F(v)\0linear (no softmax)\0");
    if (s.grid_mode == 1) ImGui::SliderFloat("alpha", &s.alpha, 0.0f, 1.0f, "%.2f");
    log_slider("extent", &s.grid_extent, 0.1f, 1000.0f, "%.3g");
    if (s.views.grid) {
      ImGui::SliderInt("lines", &s.grid_lines, 2, 1024, "%d", ImGuiSliderFlags_Logarithmic);
      ImGui::SliderInt("samples", &s.grid_samples, 2, 2049, "%d", ImGuiSliderFlags_Logarithmic);
      s.grid_lines = std::clamp(s.grid_lines, 2, 1024);
      s.grid_samples = std::clamp(s.grid_samples, 2, 2049);
      ImGui::Checkbox("CPU path (warp_grid)", &s.cpu_grid);
      ImGui::Checkbox("coarser lines while moving", &s.coarse_while_moving);
      help_marker(
          "The grid is mapped per vertex on the GPU (shaders/warp.vert.glsl). The CPU path maps "
          "it with core's geometry::warp_grid (double precision) on every change and uploads "
          "the result: the reference, and the timing to compare with. Either way the lines are "
          "drawn into an offscreen image only when something changes. Coarse while moving: "
          "while the grid changes on consecutive frames (a drag), at most 32768 vertices in all, "
          "redrawn in full when it stops.");
      if (gl.cpu_updates() > 0)
        ImGui::TextColored(kDim, "CPU warp: %.2f ms last, %.2f ms mean", gl.cpu_ms_last(),
                           gl.cpu_ms_mean());
    }
    if (s.views.density) {
      ImGui::SliderInt("points/axis", &s.density_n, 16, 1024, "%d", ImGuiSliderFlags_Logarithmic);
      s.density_n = std::clamp(s.density_n, 16, 1024);
      int kind = s.density_image ? 1 : 0;
      ImGui::RadioButton("point cloud (GPU)", &kind, 0);
      ImGui::SameLine();
      ImGui::RadioButton("image (CPU)", &kind, 1);
      s.density_image = kind == 1;
    }
    ImGui::Unindent();
  }
  if (!gl.gpu_error().empty())
    ImGui::TextColored(kRed, "GPU warp unavailable: %s", gl.gpu_error().c_str());
  else if (s.views.grid && !s.cpu_grid && gl.cpu_used())
    ImGui::TextColored(kDim, "CPU path: more than %d tokens", GeometryModel::kMaxTokens);
}

void GeometryControls::draw_readout(ImFont* font, const GeometryModel& s, const GeometryGlLayer& gl,
                                    const CanvasView& view) {
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
  if (!s.derived.error.empty()) {
    std::snprintf(add(IM_COL32(242, 90, 76, 255)), sizeof lines[0].text, "%s",
                  s.derived.error.c_str());
  } else {
    std::snprintf(add(IM_COL32(230, 230, 230, 255)), sizeof lines[0].text,
                  "v = (%.4g, %.4g)   z = (%.4g, %.4g)   z in hull: %s", s.query.x, s.query.y,
                  s.derived.output.x, s.derived.output.y, s.derived.inside ? "yes" : "NO");
    std::snprintf(add(IM_COL32(170, 170, 170, 255)), sizeof lines[0].text,
                  "%zu tokens   grid %s: %d x %d lines, %d samples   %.1f ms/frame",
                  s.scene.tokens.size(),
                  gl.gpu_used()   ? "GPU"
                  : gl.cpu_used() ? "CPU"
                                  : "off",
                  s.grid_lines, s.grid_lines, s.grid_samples,
                  1000.0f / std::max(1.0f, ImGui::GetIO().Framerate));
    if (s.views.linear && !s.derived.linear_images.empty()) {
      const g::Ellipse& e = s.derived.outer_ellipse;
      std::snprintf(add(colors::kGreen), sizeof lines[0].text,
                    "ellipse (r = %.3g): semi-axes %.4g, %.4g along (%.3f, %.3f), (%.3f, %.3f)",
                    s.radius, e.radius1, e.radius2, e.axis1.x, e.axis1.y, e.axis2.x, e.axis2.y);
    }
    if (s.gaussian && s.views.circles)
      std::snprintf(add(IM_COL32(230, 230, 230, 255)), sizeof lines[0].text,
                    "dashed white: tilted mean W^V (mu + Sigma s); largest gap to the sampled "
                    "image: %.3g",
                    s.derived.gaussian_gap);
  }
  // A dark plate under the text: tick labels and curves pass beneath the readout.
  const float fs = font->FontSize, step = fs + 3;
  float width = 0;
  for (int i = 0; i < n; ++i)
    width = std::max(width, font->CalcTextSizeA(fs, FLT_MAX, 0, lines[i].text).x);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 pos(view.min.x + 8, view.min.y + 6);
  dl->AddRectFilled(ImVec2(pos.x - 4, pos.y - 3), ImVec2(pos.x + width + 4, pos.y + n * step),
                    IM_COL32(18, 19, 22, 200), 3.0f);
  for (int i = 0; i < n; ++i)
    dl->AddText(font, fs, ImVec2(pos.x, pos.y + i * step), lines[i].color, lines[i].text);
}

}  // namespace attn::gui
