#include "panels/loss_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gui/export_dialog.h"
#include "gui/plot_draw.h"
#include "render/plot/plot_math.h"

namespace attn::gui {
namespace {

constexpr ImU32 kRaw = IM_COL32(86, 180, 233, 90);  // sky blue, faint

// Index of the point whose step is nearest to `step` (series steps are increasing).
int nearest(const Series& s, double step) {
  if (s.empty()) return -1;
  const auto it = std::lower_bound(s.steps.begin(), s.steps.end(), static_cast<int64_t>(step));
  size_t i = static_cast<size_t>(it - s.steps.begin());
  if (i == s.steps.size()) return static_cast<int>(i - 1);
  if (i > 0 && step - s.steps[i - 1] < s.steps[i] - step) --i;
  return static_cast<int>(i);
}

render::Range step_range(const Snapshot& snap) {
  render::Range r;
  for (const Series* s : {&snap.train_loss, &snap.eval_loss, &snap.eval_accuracy})
    if (!s->empty()) r.include(s->steps.front()), r.include(s->steps.back());
  if (r.empty()) return {0.0, 1.0};
  if (r.hi - r.lo < 10) r.hi = r.lo + 10;  // integer-looking ticks for the first few steps
  return r;
}

void legend(ImDrawList* dl, const PlotArea& a, ImFont* font,
            std::initializer_list<std::pair<const char*, ImU32>> entries) {
  const float fs = font->FontSize;
  float y = a.min.y + 4;
  for (const auto& [label, color] : entries) {
    const ImVec2 sz = font->CalcTextSizeA(fs, FLT_MAX, 0, label);
    const float x = a.max.x - sz.x - 6;
    dl->AddLine(ImVec2(x - 18, y + fs * 0.5f), ImVec2(x - 4, y + fs * 0.5f), color, 2.0f);
    dl->AddText(font, fs, ImVec2(x, y), IM_COL32(210, 210, 210, 255), label);
    y += fs + 2;
  }
}

}  // namespace

void LossPanel::draw(FrameContext& frame) {
  const Snapshot& snap = frame.snap;
  ImFont* small_font = frame.small_font;
  ImFont* font = small_font ? small_font : ImGui::GetFont();
  ImGui::SetNextItemWidth(160);
  ImGui::SliderFloat("smoothing", &smoothing_, 0.0f, 0.995f, "%.3f");
  ImGui::SameLine();
  ImGui::Checkbox("log y", &log_y_);
  ImGui::SameLine();
  ImGui::Checkbox("accuracy", &show_accuracy_);
  ImGui::SameLine();
  gui::export_button("loss", snap);
  ImGui::SameLine();
  if (!snap.train_loss.empty())
    ImGui::TextDisabled("  step %lld  loss %.4f", static_cast<long long>(snap.step),
                        snap.train_loss.values.back());

  if (snap.serial != ema_serial_ || smoothing_ != ema_smoothing_) {
    ema_ = render::ema_debiased(snap.train_loss.values, smoothing_);
    ema_serial_ = snap.serial;
    ema_smoothing_ = smoothing_;
  }

  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (snap.train_loss.empty() && snap.eval_loss.empty()) {
    ImGui::Dummy(ImVec2(0, avail.y * 0.4f));
    ImGui::TextDisabled("No training steps yet: press Start (Space) or Step (S).");
    return;
  }
  const bool accuracy = show_accuracy_ && !snap.eval_accuracy.empty();
  const float spacing = ImGui::GetStyle().ItemSpacing.y;
  const float acc_h = accuracy ? std::max(70.0f, avail.y * 0.3f) : 0.0f;
  const float loss_h = std::max(80.0f, avail.y - acc_h - (accuracy ? spacing : 0.0f));

  // A child region of its own: plots clip to it and never scroll the window.
  constexpr ImGuiWindowFlags kPlotFlags =
      ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse;
  if (ImGui::BeginChild("##plots", ImVec2(0, 0), false, kPlotFlags)) {
    hover_x_ = -1;  // shared by both plots: the cursor line shows in each
    draw_loss_plot(snap, font, loss_h);
    if (accuracy) draw_accuracy_plot(snap, font, acc_h);
  }
  ImGui::EndChild();
}

void LossPanel::draw_loss_plot(const Snapshot& snap, ImFont* font, float height) {
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const ImVec2 size(ImGui::GetContentRegionAvail().x, height);
  ImGui::InvisibleButton("##lossplot", size);
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();

  const Series& tl = snap.train_loss;
  const Series& el = snap.eval_loss;
  render::Range y = render::value_range(tl.values.data(), tl.values.size(), log_y_);
  y = render::merge(y, render::value_range(el.values.data(), el.values.size(), log_y_));
  if (snap.baseline_loss > 0) y.include(snap.baseline_loss);
  y = render::padded(y, 0.05, log_y_);
  const PlotArea a = draw_plot_frame(dl, p0, ImVec2(p0.x + size.x, p0.y + size.y), step_range(snap),
                                     y, log_y_, font, "step");

  draw_series(dl, a, tl.steps.data(), tl.values.data(), tl.values.size(), kRaw, 1.0f);
  if (ema_.size() == tl.steps.size())
    draw_series(dl, a, tl.steps.data(), ema_.data(), ema_.size(), colors::kSkyBlue, 2.0f);
  draw_series(dl, a, el.steps.data(), el.values.data(), el.values.size(), colors::kOrange, 1.5f);
  draw_markers(dl, a, el.steps.data(), el.values.data(), el.values.size(), colors::kOrange, 3.0f);
  if (snap.baseline_loss > 0)
    draw_dashed_hline(dl, a, snap.baseline_loss, colors::kGrey, 1.0f, "unigram baseline", font);
  legend(dl, a, font, {{"train (EMA)", colors::kSkyBlue}, {"eval", colors::kOrange}});

  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (hovered && a.contains(mouse)) hover_x_ = mouse.x;
  if (hover_x_ < 0) return;
  dl->AddLine(ImVec2(hover_x_, a.min.y), ImVec2(hover_x_, a.max.y), colors::kCursor);
  const double step = a.x_at(hover_x_);
  ImGui::BeginTooltip();
  if (const int i = nearest(tl, step); i >= 0) {
    ImGui::Text("step %lld", static_cast<long long>(tl.steps[i]));
    ImGui::TextColored(ImColor(colors::kSkyBlue), "train %.4f (EMA %.4f)", tl.values[i],
                       i < static_cast<int>(ema_.size()) ? ema_[i] : NAN);
  }
  if (const int j = nearest(el, step); j >= 0)
    ImGui::TextColored(ImColor(colors::kOrange), "eval %.4f at step %lld", el.values[j],
                       static_cast<long long>(el.steps[j]));
  if (snap.baseline_loss > 0) ImGui::TextDisabled("unigram baseline %.4f", snap.baseline_loss);
  ImGui::EndTooltip();
}

void LossPanel::draw_accuracy_plot(const Snapshot& snap, ImFont* font, float height) {
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const ImVec2 size(ImGui::GetContentRegionAvail().x, height);
  ImGui::InvisibleButton("##accplot", size);
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const Series& acc = snap.eval_accuracy;
  const PlotArea a = draw_plot_frame(dl, p0, ImVec2(p0.x + size.x, p0.y + size.y), step_range(snap),
                                     {-0.03, 1.06}, false, font, "step");
  draw_series(dl, a, acc.steps.data(), acc.values.data(), acc.values.size(), colors::kGreen, 1.5f);
  draw_markers(dl, a, acc.steps.data(), acc.values.data(), acc.values.size(), colors::kGreen, 3);
  legend(dl, a, font, {{"eval accuracy", colors::kGreen}});

  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const bool own_hover = hovered && a.contains(mouse);
  const float x = own_hover ? mouse.x : hover_x_;
  if (x < 0) return;
  dl->AddLine(ImVec2(x, a.min.y), ImVec2(x, a.max.y), colors::kCursor);
  if (!own_hover) return;  // the loss plot's tooltip is already showing
  if (const int i = nearest(acc, a.x_at(x)); i >= 0)
    ImGui::SetTooltip("step %lld\naccuracy %.3f", static_cast<long long>(acc.steps[i]),
                      acc.values[i]);
}

}  // namespace attn::gui
