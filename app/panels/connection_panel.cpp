#include "panels/connection_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>

#include "core/analysis/connections.h"
#include "gui/export_dialog.h"
#include "gui/palette.h"
#include "render/plot/colormap.h"
#include "render/plot/plot_math.h"

namespace attn::gui {
namespace {

constexpr int kMaxFaded = 8;  // earlier frames drawn behind the chosen one
constexpr float kGap = 10.0f;
constexpr float kMinLabelCell = 9.0f;  // smaller heatmap cells get no token labels
constexpr float kColorbarWidth = 12.0f;
constexpr ImU32 kQueryGuide = IM_COL32(255, 255, 255, 40);
constexpr ImU32 kHighlight = IM_COL32(255, 255, 255, 110);

uint64_t mix(uint64_t h, uint64_t v) {  // order-sensitive hash combine (splitmix-style)
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

const char* token(const Snapshot& s, int i) {
  return i >= 0 && i < static_cast<int>(s.probe_tokens.size()) ? s.probe_tokens[i].c_str() : "?";
}

// g at t by linear interpolation between the fine samples (t increasing).
float interpolate(const std::vector<float>& t, const float* g, double x) {
  const size_t n = t.size();
  if (n == 0) return NAN;
  if (x <= t.front()) return g[0];
  if (x >= t.back()) return g[n - 1];
  const size_t k = static_cast<size_t>(std::upper_bound(t.begin(), t.end(), x) - t.begin());
  const double span = t[k] - t[k - 1];
  const double u = span > 0 ? (x - t[k - 1]) / span : 0.0;
  return static_cast<float>(g[k - 1] + u * (g[k] - g[k - 1]));
}

bool well_formed(const ConnectionCurves& c) {
  const size_t h = static_cast<size_t>(std::max(0, c.heads));
  const size_t w = static_cast<size_t>(std::max(0, c.window));
  return c.heads > 0 && c.window >= 2 && c.t.size() >= 2 && c.g.size() == h * c.t.size() &&
         c.slot_g.size() == h * w && c.beta.size() == h * w;
}

const ConnectionCurves* find_layer(const ConnectionFrame& f, int layer) {
  for (const ConnectionCurves& c : f.layers)
    if (c.layer == layer) return &c;
  return nullptr;
}

constexpr float kMinCellWidth = 110.0f;  // small multiples narrower than this are overlaid
constexpr float kMinPlotHeight = 40.0f;  // ...and so are those whose data area is lower

// Height of a head's beta-bar row (caption included), from its cell's height.
float beta_bars_height(float fs, float cell_h) {
  return std::clamp(cell_h * 0.18f, 16.0f, 60.0f) + fs + 2;
}

// A head cell's height beyond its plot's data area: title row, top-axis labels, t-axis labels,
// beta bars.
float cell_overhead(float fs, float cell_h) {
  return (fs + 3) + (fs + 2) + (fs + 8) + 2 + beta_bars_height(fs, cell_h);
}

// SameLine when an item `width` wide still fits on this line, else a new line.
void same_line_if_fits(float width) {
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  ImGui::SameLine();
  if (ImGui::GetCursorScreenPos().x + width > right) ImGui::NewLine();
}

float toggle_width(const char* label) {  // a checkbox or radio button with its label
  return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x +
         ImGui::CalcTextSize(label).x;
}

// "layer 0: W 4, causal window, masked edges"
void describe_layer(const ConnectionCurves& c, char* buf, size_t size) {
  std::snprintf(buf, size, "layer %d: W %d, %s window, %s edges", c.layer, c.window,
                c.causal ? "causal" : "centred", c.edges.c_str());
}

}  // namespace

const ConnectionCurves* ConnectionPanel::curves_in(const std::vector<ConnectionFrame>& history,
                                                   int index) const {
  if (index < 0 || index >= static_cast<int>(history.size())) return nullptr;
  const ConnectionCurves* c = find_layer(history[index], layer_);
  if (!c || !well_formed(*c)) return nullptr;
  // Faded frames must match the chosen frame's shape (one generation always does).
  if (current_ && (c->heads != current_->heads || c->window != current_->window ||
                   c->t.size() != current_->t.size()))
    return nullptr;
  return c;
}

void ConnectionPanel::choose_frame(const std::vector<ConnectionFrame>& history,
                                   uint64_t generation) {
  const int n = static_cast<int>(history.size());
  if (generation != generation_) {  // a rebuilt model starts a new history: follow it
    generation_ = generation;
    follow_latest_ = true;
  }
  // The layer: keep the choice while the latest frame has it, else the first ky layer.
  if (!find_layer(history.back(), layer_)) layer_ = history.back().layers.front().layer;
  if (follow_latest_ || frame_step_ < 0) {
    frame_ = n - 1;
  } else {  // the frame with the chosen step, or the nearest earlier one left after thinning
    const auto it =
        std::upper_bound(history.begin(), history.end(), frame_step_,
                         [](int64_t step, const ConnectionFrame& f) { return step < f.step; });
    frame_ = std::clamp(static_cast<int>(it - history.begin()) - 1, 0, n - 1);
  }
  current_ = nullptr;
  current_ = curves_in(history, frame_);
  if (!current_) {  // that frame lacks the layer: show the latest instead
    frame_ = n - 1;
    current_ = curves_in(history, frame_);
  }
  frame_step_ = history[frame_].step;
}

void ConnectionPanel::update_view(const std::vector<ConnectionFrame>& history,
                                  uint64_t generation) {
  uint64_t key = mix(generation, history.size());
  key = mix(key, static_cast<uint64_t>(history.back().step));
  key = mix(key, static_cast<uint64_t>(frame_));
  key = mix(key, static_cast<uint64_t>(frame_step_));
  key = mix(key, static_cast<uint64_t>(layer_ + 1));
  key = mix(key, show_history_ ? 1u : 2u);
  if (view_.valid && view_.key == key) return;
  const ConnectionCurves& c = *current_;
  View v;
  v.key = key;
  v.valid = true;
  render::Range y = render::value_range(c.g.data(), c.g.size());
  y = render::merge(y, render::value_range(c.slot_g.data(), c.slot_g.size()));
  if (show_history_ && frame_ > 0) {
    const int m = std::min(kMaxFaded, frame_);
    for (int i = 0; i < m; ++i) {  // evenly spaced, from the first frame up to before frame_
      const int index = static_cast<int>(static_cast<int64_t>(i) * frame_ / m);
      if (const ConnectionCurves* old = curves_in(history, index)) {
        v.faded.push_back(index);
        y = render::merge(y, render::value_range(old->g.data(), old->g.size()));
      }
    }
  }
  y = render::padded(y, 0.08, false);
  v.y_lo = y.lo, v.y_hi = y.hi;
  // Bar scale: at least twice the uniform share 1/W, so near-uniform weights read as such
  // (half-height bars at the uniform line) rather than as full bars.
  v.beta_max = std::min(1.0f, 2.0f / c.window);
  for (float b : c.beta)
    if (std::isfinite(b)) v.beta_max = std::max(v.beta_max, b);
  v.slot_t.resize(c.window);
  for (int j = 0; j < c.window; ++j) v.slot_t[j] = static_cast<float>(j) / (c.window - 1);
  for (int h = 0; h < c.heads; ++h) {
    try {
      v.summaries.push_back(describe_curve(c.t, c.curve(h), c.window, c.query_slot).sentence);
    } catch (const std::exception& e) {  // too few samples: say so instead of failing the frame
      v.summaries.push_back(std::string("(no summary: ") + e.what() + ")");
    }
  }
  view_ = std::move(v);
  report_.summaries = view_.summaries;
}

void ConnectionPanel::draw(FrameContext& frame) {
  const Snapshot& snap = frame.snap;
  ImFont* small_font = frame.small_font;
  report_.drawn = false;
  report_.heads = report_.faded_curves = report_.maps = 0;
  ImFont* font = small_font ? small_font : ImGui::GetFont();
  current_ = nullptr;  // pointed into last frame's snapshot
  hovered_head_ = hovered_head_next_;
  hovered_head_next_ = -1;

  const std::vector<ConnectionFrame>& history = snap.connection_history();
  if (history.empty() || history.back().layers.empty()) {
    std::string mechanisms;
    for (const std::string& m : snap.mechanisms) mechanisms += (mechanisms.empty() ? "" : ", ") + m;
    const bool uses_ky =
        std::find(snap.mechanisms.begin(), snap.mechanisms.end(), "ky") != snap.mechanisms.end();
    ImGui::PushTextWrapPos(0.0f);
    if (uses_ky)
      ImGui::TextDisabled(
          "No layer uses ky with a learned connection (model.attention: %s; "
          "attention_options.ky.connection is \"none\": plain sliding windows, g = 0, so there "
          "are no curves to show).",
          mechanisms.c_str());
    else
      ImGui::TextDisabled(
          "No layer uses ky with a learned connection (model.attention: %s). Set model.attention "
          "to \"ky\" for a layer (Run panel, or e.g. assets/configs/copy_gap_mixed.json) to see "
          "its connection functions g_h(t) here.",
          mechanisms.empty() ? "none yet" : mechanisms.c_str());
    ImGui::PopTextWrapPos();
    return;
  }

  choose_frame(history, snap.generation);
  draw_toolbar(history);
  choose_frame(history, snap.generation);  // the toolbar may have changed layer or frame
  if (!current_) {
    ImGui::TextDisabled("The connection data of layer %d is malformed (array sizes).", layer_);
    return;
  }
  update_view(history, snap.generation);
  figures::FigureOptions export_options;
  export_options.step = frame_step_;  // the frame on screen
  gui::export_button("connections", snap, export_options);
  report_.drawn = true;
  report_.layer = layer_;
  report_.step = frame_step_;
  report_.frame = frame_;
  report_.frames = static_cast<int>(history.size());

  // Vertical budget: curves take what the summaries and the maps leave.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float spacing = ImGui::GetStyle().ItemSpacing.y;
  // The summaries (small font): a caption, then each head's sentence, wrapped.
  ImGui::PushFont(font);
  const float small_line_h = ImGui::GetTextLineHeightWithSpacing();
  float summaries_h = small_line_h;
  const float prefix_w = ImGui::CalcTextSize("head 00: ").x;
  for (const std::string& sentence : view_.summaries)
    summaries_h += std::max(small_line_h, ImGui::CalcTextSize(sentence.c_str(), nullptr, false,
                                                              std::max(50.0f, avail.x - prefix_w))
                                                  .y +
                                              spacing);
  ImGui::PopFont();
  float maps_h = 0;
  if (show_maps_) {
    const float fs = font->FontSize;
    const float by_width =
        (avail.x - 60.0f - kGap * current_->heads) / std::max(1, current_->heads) + 3 * fs + 8;
    maps_h = std::clamp(std::min(avail.y * 0.3f, by_width), 90.0f, 280.0f);
  }
  const float curves_h = std::max(160.0f, avail.y - summaries_h - maps_h - 3 * spacing);
  draw_curves(history, font, curves_h);
  draw_summaries(font);
  if (show_maps_) draw_maps(snap, font, std::max(90.0f, ImGui::GetContentRegionAvail().y));
}

void ConnectionPanel::draw_toolbar(const std::vector<ConnectionFrame>& history) {
  const ConnectionFrame& latest = history.back();
  char label[96];
  std::snprintf(label, sizeof label, "layer %d", layer_);
  ImGui::SetNextItemWidth(ImGui::CalcTextSize(label).x + ImGui::GetFrameHeight() + 16);
  if (ImGui::BeginCombo("##layer", label)) {
    for (const ConnectionCurves& c : latest.layers) {
      describe_layer(c, label, sizeof label);
      if (ImGui::Selectable(label, c.layer == layer_)) layer_ = c.layer;
    }
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("ky layers with a learned connection network");
  same_line_if_fits(toggle_width("small multiples"));
  if (ImGui::RadioButton("small multiples", !overlaid_)) overlaid_ = false;
  same_line_if_fits(toggle_width("overlaid"));
  if (ImGui::RadioButton("overlaid", overlaid_)) overlaid_ = true;
  same_line_if_fits(toggle_width("history"));
  ImGui::Checkbox("history", &show_history_);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Draw up to %d earlier frames faded behind the chosen one", kMaxFaded);
  same_line_if_fits(toggle_width("maps"));
  ImGui::Checkbox("maps", &show_maps_);

  // History slider: its label is the chosen frame's step (no printf value in the format).
  const int n = static_cast<int>(history.size());
  int index = frame_;
  char format[64];
  std::snprintf(format, sizeof format, "step %lld  (%d/%d)", static_cast<long long>(frame_step_),
                frame_ + 1, n);
  ImGui::SetNextItemWidth(std::clamp(ImGui::GetContentRegionAvail().x * 0.45f, 120.0f, 320.0f));
  if (ImGui::SliderInt("##frame", &index, 0, n - 1, format, ImGuiSliderFlags_AlwaysClamp)) {
    frame_ = std::clamp(index, 0, n - 1);
    frame_step_ = history[frame_].step;
    follow_latest_ = frame_ == n - 1;
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "History of the connection functions (%d frames). At the right end the "
        "slider follows new frames.",
        n);
  ImGui::SameLine();
  ImGui::BeginDisabled(follow_latest_);
  if (ImGui::SmallButton("latest")) follow_latest_ = true;
  ImGui::EndDisabled();
  if (const ConnectionCurves* c = find_layer(latest, layer_)) {
    std::snprintf(label, sizeof label, "W %d, %s window, %s edges: %s", c->window,
                  c->causal ? "causal" : "centred", c->edges.c_str(),
                  c->causal ? "t = 1 is the current token" : "the query sits mid-window");
    same_line_if_fits(ImGui::CalcTextSize(label).x);
    ImGui::TextDisabled("%s", label);
  }
}

void ConnectionPanel::draw_curves(const std::vector<ConnectionFrame>& history, ImFont* font,
                                  float height) {
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const float width = std::max(1.0f, ImGui::GetContentRegionAvail().x);
  ImGui::InvisibleButton("##curves", ImVec2(width, std::max(1.0f, height)));
  curves_hovered_ = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  // Small multiples: the grid whose plots come closest to a 1.6:1 aspect at the largest size.
  // Where no grid leaves the plots readable, the heads are overlaid instead (and the title
  // says why).
  const int heads = current_->heads;
  const float fs = font->FontSize;
  int best_cols = 0;
  float best = 0;
  for (int cols = 1; cols <= heads && !overlaid_; ++cols) {
    const int rows = (heads + cols - 1) / cols;
    const float cell_w = width / cols, cell_h = height / rows;
    const float plot_h = cell_h - cell_overhead(fs, cell_h);
    if (cell_w < kMinCellWidth || plot_h < kMinPlotHeight) continue;
    const float score = std::min((cell_w - 30) / 1.6f, plot_h);
    if (score > best) best = score, best_cols = cols;
  }
  too_small_for_grid_ = !overlaid_ && best_cols == 0;
  report_.overlaid = overlaid_ || too_small_for_grid_;
  if (report_.overlaid) {
    draw_head_plot(dl, history, font, p0, ImVec2(p0.x + width, p0.y + height), -1);
    return;
  }
  const int rows = (heads + best_cols - 1) / best_cols;
  const float cell_w = width / best_cols, cell_h = height / rows;
  for (int h = 0; h < heads; ++h) {
    const ImVec2 c0(p0.x + (h % best_cols) * cell_w, p0.y + (h / best_cols) * cell_h);
    const ImVec2 c1(c0.x + cell_w - (h % best_cols + 1 < best_cols ? 8.0f : 0.0f),
                    c0.y + cell_h - 6.0f);
    draw_head_plot(dl, history, font, c0, c1, h);
    if (h == hovered_head_) dl->AddRect(c0, c1, kHighlight, 3.0f);
  }
}

void ConnectionPanel::draw_head_plot(ImDrawList* dl, const std::vector<ConnectionFrame>& history,
                                     ImFont* font, ImVec2 p0, ImVec2 p1, int head) {
  const ConnectionCurves& c = *current_;
  const float fs = font->FontSize;
  const int first = head < 0 ? 0 : head, last = head < 0 ? c.heads : head + 1;
  const size_t n = c.t.size();
  const float title_h = fs + 3;
  const float bars_h = beta_bars_height(fs, p1.y - p0.y);
  if (p1.y - p0.y - cell_overhead(fs, p1.y - p0.y) < kMinPlotHeight * 0.5f || p1.x - p0.x < 80)
    return;  // too small to read

  // Title row: the head, and the top axis's name at the right.
  char title[80];
  if (head < 0)
    std::snprintf(title, sizeof title,
                  too_small_for_grid_ ? "%d heads (overlaid: too small for "
                                        "small multiples)"
                                      : "%d heads",
                  c.heads);
  else
    std::snprintf(title, sizeof title, "head %d", head);
  // The top axis's name; shortened where the cell is too narrow for both titles.
  const float title_w = font->CalcTextSizeA(fs, FLT_MAX, 0, title).x;
  const char* top_axis = "key offset i - j";
  float top_w = font->CalcTextSizeA(fs, FLT_MAX, 0, top_axis).x;
  if (title_w + top_w + 24 > p1.x - p0.x) {
    top_axis = "offset i - j";
    top_w = font->CalcTextSizeA(fs, FLT_MAX, 0, top_axis).x;
  }
  dl->AddText(font, fs, ImVec2(p1.x - 10 - top_w, p0.y), colors::kDimText, top_axis);
  const ImVec4 title_clip(p0.x, p0.y, p1.x - 16 - top_w, p0.y + title_h);  // never over it
  dl->AddText(font, fs, p0, head < 0 ? colors::kText : categorical_color(head), title, nullptr,
              0.0f, &title_clip);

  // The plot: t at the bottom (padded so the end slots' dots are whole), offsets on top.
  // The t axis is padded by up to half a slot, so the end slots' dots and bars are whole.
  const float plot_bottom = p1.y - bars_h - 2;
  const double pad = std::clamp(0.5 / (c.window - 1), 0.04, 0.1);
  const PlotArea a =
      draw_plot_frame(dl, ImVec2(p0.x, p0.y + title_h + fs * 0.5f + 2), ImVec2(p1.x, plot_bottom),
                      {-pad, 1 + pad}, {view_.y_lo, view_.y_hi}, false, font, "t");
  if (a.max.x - a.min.x < 10 || a.max.y - a.min.y < 10) return;

  // Top axis: a tick per slot; labels at multiples of a stride that fits, offset 0 always.
  const float slot_px = (a.max.x - a.min.x) / (a.x1 - a.x0) / (c.window - 1);
  char buf[16];
  std::snprintf(buf, sizeof buf, "%d", -std::max(c.query_slot, c.window - 1 - c.query_slot));
  const float label_w = font->CalcTextSizeA(fs, FLT_MAX, 0, buf).x + 6;
  const int stride = std::max(1, static_cast<int>(std::ceil(label_w / std::max(1.0f, slot_px))));
  for (int j = 0; j < c.window; ++j) {
    const float x = a.px(view_.slot_t[j]);
    const int offset = c.query_slot - j;
    dl->AddLine(ImVec2(x, a.min.y - 3), ImVec2(x, a.min.y), colors::kDimText);
    if (offset % stride != 0) continue;
    std::snprintf(buf, sizeof buf, "%d", offset);
    const float w = font->CalcTextSizeA(fs, FLT_MAX, 0, buf).x;
    dl->AddText(font, fs, ImVec2(x - w * 0.5f, a.min.y - fs - 3), colors::kText, buf);
  }
  // The query's own token (offset 0): a faint guide.
  const float query_x = a.px(view_.slot_t[c.query_slot]);
  dl->AddLine(ImVec2(query_x, a.min.y), ImVec2(query_x, a.max.y), kQueryGuide);

  // Earlier frames, faded (older: fainter), then the chosen frame with its slot dots (smaller
  // when the slots crowd, so a wide window still shows its curve).
  const float dot_radius = std::clamp(slot_px * 0.2f, 1.5f, 3.5f);
  const int faded = static_cast<int>(view_.faded.size());
  for (int i = 0; i < faded; ++i) {
    const ConnectionCurves* old = curves_in(history, view_.faded[i]);
    if (!old) continue;
    const float alpha = 0.08f + 0.32f * (i + 1) / faded;
    for (int h = first; h < last; ++h) {
      draw_series(dl, a, old->t.data(), old->curve(h), n, with_alpha(categorical_color(h), alpha),
                  1.0f);
      ++report_.faded_curves;
    }
  }
  for (int h = first; h < last; ++h) {
    const bool highlighted = head < 0 && h == hovered_head_;
    draw_series(dl, a, c.t.data(), c.curve(h), n, categorical_color(h), highlighted ? 3.2f : 2.0f);
    draw_markers(dl, a, view_.slot_t.data(), c.slot_values(h), c.window, categorical_color(h),
                 dot_radius);
    ++report_.heads;
  }
  if (head < 0) {  // legend, top-left inside the plot, on a dark backing so curves stay behind
    const float legend_w = font->CalcTextSizeA(fs, FLT_MAX, 0, "head 00").x + 30;
    const float legend_h = std::min<float>(c.heads * (fs + 2) + 6, a.max.y - a.min.y - 4);
    dl->AddRectFilled(ImVec2(a.min.x + 2, a.min.y + 2),
                      ImVec2(a.min.x + 2 + legend_w, a.min.y + 2 + legend_h),
                      IM_COL32(15, 15, 15, 200), 3.0f);
    float y = a.min.y + 4;
    for (int h = 0; h < c.heads && y + fs < a.max.y; ++h, y += fs + 2) {
      std::snprintf(title, sizeof title, "head %d", h);
      dl->AddLine(ImVec2(a.min.x + 6, y + fs * 0.5f), ImVec2(a.min.x + 20, y + fs * 0.5f),
                  categorical_color(h), 2.0f);
      dl->AddText(font, fs, ImVec2(a.min.x + 24, y), colors::kText, title);
    }
  }

  draw_beta_bars(dl, c, a, font, plot_bottom + 4, p1.y, head);

  // Hover readout: the curve(s) at the cursor's t.
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (!curves_hovered_ || !a.contains(mouse)) return;
  if (head >= 0) hovered_head_next_ = head;
  dl->AddLine(ImVec2(mouse.x, a.min.y), ImVec2(mouse.x, a.max.y), colors::kCursor);
  const double t = std::clamp(a.x_at(mouse.x), 0.0, 1.0);
  const double offset = c.query_slot - t * (c.window - 1);
  ImGui::BeginTooltip();
  for (int h = first; h < last; ++h)
    ImGui::TextColored(ImColor(categorical_color(h)), "head %d: t = %.3f, offset %.2f, g = %.4f", h,
                       t, offset, interpolate(c.t, c.curve(h), t));
  ImGui::TextDisabled("step %lld; offset i - j: 0 = the current token, > 0 earlier tokens",
                      static_cast<long long>(frame_step_));
  ImGui::EndTooltip();
}

void ConnectionPanel::draw_beta_bars(ImDrawList* dl, const ConnectionCurves& c, const PlotArea& a,
                                     ImFont* font, float top, float bottom, int head) {
  const float fs = font->FontSize;
  if (bottom - top < fs + 8) return;
  const int first = head < 0 ? 0 : head, last = head < 0 ? c.heads : head + 1;
  const int group = last - first;
  const float slot_px = a.px(view_.slot_t[1]) - a.px(view_.slot_t[0]);
  const float end_room = 2 * (a.px(0.0) - a.min.x);  // the end slots' bars stay inside
  const float group_w = std::clamp(std::min(slot_px * (head < 0 ? 0.8f : 0.6f), end_room), 1.0f,
                                   head < 0 ? 48.0f : 24.0f);
  const float bar_w = group_w / group;
  // Caption row: what the bars are and their scale (bars share it across heads).
  char caption[64];
  std::snprintf(caption, sizeof caption, "beta = softmax_j g(t_j), 0 .. %.2g; line: 1/W",
                view_.beta_max);
  if (font->CalcTextSizeA(fs, FLT_MAX, 0, caption).x > a.max.x - a.min.x)
    std::snprintf(caption, sizeof caption, "beta 0 .. %.2g", view_.beta_max);
  const ImVec4 clip(a.min.x, top, a.max.x, top + fs + 2);
  dl->AddText(font, fs, ImVec2(a.min.x, top), colors::kDimText, caption, nullptr, 0.0f, &clip);
  top += fs + 2;
  const float height = bottom - top;
  dl->AddLine(ImVec2(a.min.x, bottom), ImVec2(a.max.x, bottom), IM_COL32(255, 255, 255, 70));
  const float uniform_y = bottom - height / (c.window * view_.beta_max);  // beta = 1/W
  dl->AddLine(ImVec2(a.min.x, uniform_y), ImVec2(a.max.x, uniform_y), kQueryGuide);

  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const bool hovered = curves_hovered_ && mouse.x >= a.min.x && mouse.x <= a.max.x &&
                       mouse.y >= top && mouse.y <= bottom;
  int hovered_slot = -1;
  if (hovered) {
    const double t = std::clamp(a.x_at(mouse.x), 0.0, 1.0);
    hovered_slot = std::clamp(static_cast<int>(std::lround(t * (c.window - 1))), 0, c.window - 1);
  }
  for (int j = 0; j < c.window; ++j) {
    const float x0 = a.px(view_.slot_t[j]) - group_w * 0.5f;
    if (j == hovered_slot)
      dl->AddRectFilled(ImVec2(x0 - 2, top), ImVec2(x0 + group_w + 2, bottom),
                        IM_COL32(255, 255, 255, 30));
    for (int h = first; h < last; ++h) {
      const float b = c.beta_values(h)[j];
      if (!std::isfinite(b)) continue;
      const float bx = x0 + (h - first) * bar_w;
      const float by = bottom - std::clamp(b / view_.beta_max, 0.0f, 1.0f) * height;
      dl->AddRectFilled(ImVec2(bx, by),
                        ImVec2(bx + std::max(1.0f, bar_w - (group > 1 ? 1 : 0)), bottom),
                        categorical_color(h));
    }
  }
  if (hovered_slot < 0) return;
  if (head >= 0) hovered_head_next_ = head;
  const int j = hovered_slot;
  ImGui::BeginTooltip();
  ImGui::Text("slot %d: t = %.3f, offset %d%s", j, view_.slot_t[j], c.query_slot - j,
              c.query_slot == j ? " (the current token)" : "");
  for (int h = first; h < last; ++h)
    ImGui::TextColored(ImColor(categorical_color(h)), "head %d: beta = %.4f, g = %.4f", h,
                       c.beta_values(h)[j], c.slot_values(h)[j]);
  ImGui::EndTooltip();
}

void ConnectionPanel::draw_summaries(ImFont* font) {
  ImGui::PushFont(font);
  ImGui::TextDisabled("Shape of g_h at step %lld (computed; offset = i - j):",
                      static_cast<long long>(frame_step_));
  for (size_t h = 0; h < view_.summaries.size(); ++h) {
    ImGui::TextColored(ImColor(categorical_color(static_cast<int>(h))), "head %zu:", h);
    ImGui::SameLine();
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(view_.summaries[h].c_str());
    ImGui::PopTextWrapPos();
  }
  ImGui::PopFont();
}

void ConnectionPanel::update_textures(const Snapshot& snap, const std::vector<int>& map_indices) {
  uint64_t key = mix(snap.generation, static_cast<uint64_t>(snap.attention_step + 1));
  key = mix(key, static_cast<uint64_t>(layer_ + 1));
  if (key == uploaded_key_ && maps_.size() == map_indices.size()) return;
  const auto& all = snap.attention_maps();
  float vmax = 0.0f;
  for (int index : map_indices)
    for (float w : all[index].weights)
      if (std::isfinite(w)) vmax = std::max(vmax, w);
  vmax_ = vmax > 0 ? vmax : 1.0f;
  maps_.resize(map_indices.size());
  for (size_t i = 0; i < map_indices.size(); ++i) {
    const AttentionMap& m = all[map_indices[i]];
    maps_[i].upload_matrix(m.weights.data(), m.size, m.size, render::Colormap::Viridis, 0.0f,
                           vmax_);
  }
  if (!colorbar_.valid()) upload_colorbar(colorbar_, render::Colormap::Viridis);
  uploaded_key_ = key;
}

void ConnectionPanel::draw_maps(const Snapshot& snap, ImFont* font, float height) {
  // The chosen layer's maps, by head (well-formed ones only).
  map_indices_.clear();
  const auto& all = snap.attention_maps();
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].layer == layer_ && all[i].size > 0 &&
        all[i].weights.size() == static_cast<size_t>(all[i].size) * all[i].size)
      map_indices_.push_back(static_cast<int>(i));
  if (map_indices_.empty()) {
    ImGui::TextDisabled("No attention maps for layer %d yet.", layer_);
    return;
  }
  update_textures(snap, map_indices_);
  const int count = static_cast<int>(map_indices_.size());
  const int n = all[map_indices_.front()].size;

  const float fs = font->FontSize;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = std::max(1.0f, ImGui::GetContentRegionAvail().x);
  ImGui::InvisibleButton("##maps", ImVec2(width, std::max(1.0f, height)));
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();

  char text[128];
  std::snprintf(text, sizeof text,
                "effective attention of layer %d on the probe (step %lld): query rows, key columns",
                layer_, static_cast<long long>(snap.attention_step));
  dl->AddText(font, fs, origin, colors::kDimText, text);

  float max_token_w = 0;
  for (const auto& t : snap.probe_tokens)
    max_token_w = std::max(max_token_w, font->CalcTextSizeA(fs, FLT_MAX, 0, t.c_str()).x);
  const float label_w = std::min(max_token_w, 40.0f) + 4;
  const float colorbar_w = kColorbarWidth + 40;
  const float title_h = 2 * (fs + 3);  // caption + head titles
  auto side_for = [&](float left, float top) {
    const float w = (width - left - colorbar_w - kGap * count) / count;
    return std::floor(std::max(8.0f, std::min(w, height - top - 2)));
  };
  const bool labels = side_for(label_w, title_h + fs + 2) / n >= kMinLabelCell;
  const float left = labels ? label_w : 0;
  const float top = title_h + (labels ? fs + 2 : 0);
  const float side = side_for(left, top);
  const float cell = side / n;
  const ImVec2 mouse = ImGui::GetIO().MousePos;

  for (int k = 0; k < count; ++k) {
    const AttentionMap& m = all[map_indices_[k]];
    const ImVec2 p0(origin.x + left + k * (side + kGap), origin.y + top);
    const ImVec2 p1(p0.x + side, p0.y + side);
    std::snprintf(text, sizeof text, "head %d", m.head);
    dl->AddText(font, fs, ImVec2(p0.x, origin.y + fs + 3), categorical_color(m.head), text);
    if (!maps_[k].valid()) continue;
    dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(maps_[k].id())), p0, p1);
    ++report_.maps;
    if (m.head == hovered_head_) dl->AddRect(p0, p1, kHighlight);
    // Query tokens left of the first map, key tokens above each map.
    if (labels)
      draw_token_labels(dl, font, p0, cell, n, label_w, k == 0, true, snap.probe_tokens,
                        colors::kDimText);
    if (hovered && mouse.x >= p0.x && mouse.x < p1.x && mouse.y >= p0.y && mouse.y < p1.y) {
      hovered_head_next_ = m.head;
      const int i = std::clamp(static_cast<int>((mouse.y - p0.y) / cell), 0, n - 1);
      const int j = std::clamp(static_cast<int>((mouse.x - p0.x) / cell), 0, n - 1);
      const ImVec2 c0(p0.x + j * cell, p0.y + i * cell);
      dl->AddRect(c0, ImVec2(c0.x + cell, c0.y + cell), colors::kHover);
      ImGui::SetTooltip("layer %d head %d: query %d (%s) -> key %d (%s) = %.4f\noffset i - j = %d",
                        m.layer, m.head, i, token(snap, i), j, token(snap, j),
                        m.weights[static_cast<size_t>(i) * n + j], i - j);
    }
  }

  // Colorbar 0..vmax, as tall as the maps.
  const ImVec2 b0(origin.x + left + count * (side + kGap) + 2, origin.y + top);
  const ImVec2 b1(b0.x + kColorbarWidth, b0.y + side);
  draw_colorbar(dl, b0, b1, colorbar_.id(), vmax_, 5, font, colors::kText);
  dl->AddText(font, fs, ImVec2(b0.x, origin.y + fs + 3), colors::kDimText, "weight");
}

std::vector<std::string> ConnectionPanel::figures(const Snapshot& snap) const {
  if (snap.connection_history().empty()) return {};
  return {"connections"};
}

nlohmann::json ConnectionPanel::report() const {
  const Report& r = report_;
  return {{"drawn", r.drawn},
          {"layer", r.layer},
          {"heads", r.heads},
          {"curves", r.heads},
          {"faded_curves", r.faded_curves},
          {"maps", r.maps},
          {"step", r.step},
          {"frame", r.frame},
          {"frames", r.frames},
          {"mode", r.overlaid ? "overlaid" : "small multiples"},
          {"summaries", r.summaries}};
}

}  // namespace attn::gui
