#include "app/panels/mechanisms/ky_connections_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>

#include "app/figures/models/connections_figure.h"
#include "app/gui/plot/export_dialog.h"
#include "app/gui/window/palette.h"
#include "app/gui/window/widgets.h"
#include "app/panels/mechanism_panels.h"
#include "core/analysis/connections.h"
#include "render/plot/colormap.h"

namespace attn::gui {
namespace {

constexpr ImU32 kHighlight = IM_COL32(255, 255, 255, 110);
constexpr ImU32 kMarker = IM_COL32(255, 255, 255, 220);
// Small multiples whose plots would be narrower than this (font sizes: the figure layout wraps
// narrower ones) or lower than these (pixels) are overlaid or lose the beta row.
constexpr float kMinPlotWidth = 6.0f;
constexpr float kMinPlotHeight = 40.0f;
constexpr float kMinBetaPlotHeight = 48.0f;  // each of the two rows, with the beta row

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

const ConnectionCurves* find_layer(const ConnectionFrame& f, int layer) {
  for (const ConnectionCurves& c : f.layers)
    if (c.layer == layer) return &c;
  return nullptr;
}

// "layer 0: W 4, causal window, masked edges"
void describe_layer(const ConnectionCurves& c, char* buf, size_t size) {
  std::snprintf(buf, size, "layer %d: W %d, %s window, %s edges", c.layer, c.window,
                c.causal ? "causal" : "centred", c.edges.c_str());
}

// Head h's colour: the figure's (okabe_ito, app/figures/models/connections_figure.h), for the
// hover.
ImU32 head_color(int h) {
  const render::Rgba8 c = render::okabe_ito(h);
  return IM_COL32(c.r, c.g, c.b, 255);
}

// Panel k's plot area on screen, as the last draw() of `live` laid it out.
struct ScreenRect {
  ImVec2 min, max;
  bool contains(ImVec2 p) const {
    return p.x >= min.x && p.x <= max.x && p.y >= min.y && p.y <= max.y;
  }
};
ScreenRect plot_rect(const LiveFigure& live, int k) {
  const fig::PanelLayout& L = live.layout().panels.at(static_cast<size_t>(k));
  const ImVec2 a = live.to_screen(k, L.xmin, L.ymin), b = live.to_screen(k, L.xmax, L.ymax);
  return {ImVec2(std::min(a.x, b.x), std::min(a.y, b.y)),
          ImVec2(std::max(a.x, b.x), std::max(a.y, b.y))};
}
// The data x (linear axis) of panel k at screen x.
double data_x_at(const LiveFigure& live, int k, float sx) {
  const fig::PanelLayout& L = live.layout().panels.at(static_cast<size_t>(k));
  const float a = live.to_screen(k, L.xmin, L.ymin).x, b = live.to_screen(k, L.xmax, L.ymin).x;
  return b != a ? L.xmin + (sx - a) / (b - a) * (L.xmax - L.xmin) : L.xmin;
}

}  // namespace

const ConnectionCurves* KyConnectionsPanel::curves_in(const std::vector<ConnectionFrame>& history,
                                                      int index) const {
  if (index < 0 || index >= static_cast<int>(history.size())) return nullptr;
  const ConnectionCurves* c = find_layer(history[index], layer_);
  if (!c || !figures::well_formed(*c)) return nullptr;
  // Faded frames must match the chosen frame's shape (one generation always does).
  if (current_ && (c->heads != current_->heads || c->window != current_->window ||
                   c->t.size() != current_->t.size()))
    return nullptr;
  return c;
}

void KyConnectionsPanel::choose_frame(const std::vector<ConnectionFrame>& history,
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

void KyConnectionsPanel::update_view(const std::vector<ConnectionFrame>& history,
                                     uint64_t generation) {
  uint64_t key = mix(generation, history.size());
  key = mix(key, static_cast<uint64_t>(history.back().step));
  key = mix(key, static_cast<uint64_t>(frame_));
  key = mix(key, static_cast<uint64_t>(frame_step_));
  key = mix(key, static_cast<uint64_t>(layer_ + 1));
  if (view_.valid && view_.key == key) return;
  const ConnectionCurves& c = *current_;
  View v;
  v.key = key;
  v.valid = true;
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

void KyConnectionsPanel::draw(FrameContext& frame) {
  const Snapshot& snap = frame.snap;
  ImFont* font = frame.small_font ? frame.small_font : ImGui::GetFont();
  report_.drawn = false;
  report_.heads = report_.faded_curves = report_.maps = 0;
  report_.beta = false;
  current_ = nullptr;  // pointed into last frame's snapshot
  hovered_head_ = hovered_head_next_;
  hovered_head_next_ = -1;

  const std::vector<ConnectionFrame>& history = ky_history(snap);
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
  if (show_maps_) build_maps(snap);
  report_.layer = layer_;
  report_.step = frame_step_;
  report_.frame = frame_;
  report_.frames = static_cast<int>(history.size());

  // Vertical budget: curves take what the summaries and the maps leave.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float spacing = ImGui::GetStyle().ItemSpacing.y;
  const float fs = font->FontSize;
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
  // The curves need about this much to keep readable plots (title, tick and axis labels, and
  // kMinPlotHeight), the maps this much for small squares; each figure must fit in the panel
  // as a whole (no scrolling: what is on screen is the whole figure), so where both do not fit
  // the maps are left out and a line says so.
  const float rest = avail.y - summaries_h - 3 * spacing;
  const float curves_min = 8 * fs + kMinPlotHeight, maps_min = 7 * fs + 40;
  no_room_for_maps_ = show_maps_ && !maps_.panels.empty() && rest - maps_min < curves_min;
  const bool maps = show_maps_ && !no_room_for_maps_;
  float curves_h = rest - (show_maps_ ? small_line_h : 0);  // without maps: their line
  if (maps) {
    // Square maps side by side, plus the figure's title, head titles, token labels and axis
    // labels (about 7 font sizes) and its colorbar (about 5 wide).
    const int count = std::max(1, static_cast<int>(maps_heads_.size()));
    const float side = (avail.x - 5 * fs) / count - 2.5f * fs;
    const float wanted = std::clamp(std::min(avail.y * 0.32f, side + 7 * fs), maps_min, 320.0f);
    curves_h = rest - std::min(wanted, rest - curves_min);
  }
  draw_curves(history, font, ImVec2(std::max(1.0f, avail.x), std::max(120.0f, curves_h)));
  draw_summaries(font);
  if (maps) {
    draw_maps(snap, font, std::max(60.0f, ImGui::GetContentRegionAvail().y));
  } else if (show_maps_ && no_room_for_maps_) {
    ImGui::PushFont(font);
    ImGui::TextDisabled("Attention maps: no room at this size (enlarge the panel).");
    ImGui::PopFont();
  } else if (show_maps_) {
    ImGui::TextDisabled("No attention maps for layer %d yet.", layer_);
  }
}

void KyConnectionsPanel::draw_toolbar(const std::vector<ConnectionFrame>& history) {
  const ConnectionFrame& latest = history.back();
  const float slider_w = std::clamp(ImGui::GetContentRegionAvail().x * 0.28f, 110.0f, 300.0f);
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
  same_line_if_fits(checkbox_width("small multiples"));
  if (ImGui::RadioButton("small multiples", !overlaid_)) overlaid_ = false;
  same_line_if_fits(checkbox_width("overlaid"));
  if (ImGui::RadioButton("overlaid", overlaid_)) overlaid_ = true;
  same_line_if_fits(checkbox_width("history"));
  ImGui::Checkbox("history", &show_history_);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Draw up to %d earlier frames faded behind the chosen one",
                      figures::kMaxConnectionHistory);
  same_line_if_fits(checkbox_width("beta"));
  // Asked for but left out for lack of room (last frame): the label dimmed, the tooltip says why.
  dimmable_checkbox("beta", &show_beta_, no_room_for_beta_);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "beta_h = softmax_j g_h(t_j) as bars, in a row of plots under the curves (as tall as "
        "theirs), with the key offsets i - j of the slots on its axis%s",
        no_room_for_beta_ ? ".\nLeft out now: too little height for two rows of plots; enlarge "
                            "the panel or hide the maps."
                          : "");
  same_line_if_fits(checkbox_width("maps"));
  dimmable_checkbox("maps", &show_maps_, no_room_for_maps_);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "The layer's effective attention on the probe input, one map per head%s",
        no_room_for_maps_ ? ".\nLeft out now: too little height beside the curves." : "");

  // History slider: its label is the chosen frame's step (no printf value in the format).
  const int n = static_cast<int>(history.size());
  int index = frame_;
  char format[64];
  std::snprintf(format, sizeof format, "step %lld  (%d/%d)", static_cast<long long>(frame_step_),
                frame_ + 1, n);
  same_line_if_fits(slider_w + ImGui::GetStyle().ItemSpacing.x + button_width("latest"));
  ImGui::SetNextItemWidth(slider_w);
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
  // Export: the figures as drawn last frame (what is on screen).
  same_line_if_fits(button_width("Export..."));
  ImGui::BeginDisabled(curves_.figure.panels.empty());
  if (ImGui::SmallButton("Export...")) request_figure_export(curves_.figure);
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Export the curves as shown");
  if (show_maps_) {
    same_line_if_fits(button_width("Export maps..."));
    ImGui::BeginDisabled(maps_.panels.empty() || no_room_for_maps_);
    if (ImGui::SmallButton("Export maps...")) request_figure_export(maps_);
    ImGui::EndDisabled();
    if (no_room_for_maps_ && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip("The maps are not on screen (no room): enlarge the panel");
  }

  if (const ConnectionCurves* c = find_layer(latest, layer_)) {
    std::snprintf(label, sizeof label, "W %d, %s window, %s edges: %s", c->window,
                  c->causal ? "causal" : "centred", c->edges.c_str(),
                  c->causal ? "t = 1 is the current token" : "the query sits mid-window");
    std::string caption = label;
    // Why the figure differs from what the controls ask (as of the last frame's space).
    if (too_small_for_grid_) caption += "; overlaid: too small for small multiples";
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("%s", caption.c_str());
    ImGui::PopTextWrapPos();
  }
}

KyConnectionsPanel::Arrangement KyConnectionsPanel::arrange(ImVec2 size, ImFont* font) const {
  const int heads = current_->heads;
  const float fs = font->FontSize;  // the figure's font size in pixels
  // The figure's overheads, roughly: its title and margins, each row's title, tick labels and
  // axis label, the y-axis labels (on every column with the beta row, else on the first).
  const float title_h = 2.2f * fs, row_h = 5.4f * fs, axis_w = 4.5f * fs;
  auto plot_h = [&](int fig_rows) { return (size.y - title_h) / fig_rows - row_h; };
  auto plot_w = [&](int cols, bool beta) {
    return beta ? (size.x - 2 * fs) / cols - axis_w - 1.8f * fs
                : (size.x - 2 * fs - axis_w) / cols - 1.2f * fs;
  };
  auto grid = [&](bool beta, Arrangement& out) {
    float best = 0;
    int best_cols = 0;
    for (int cols = 1; cols <= heads; ++cols) {
      const int rows = (heads + cols - 1) / cols;
      if (beta && heads % cols != 0) continue;  // a beta row under every full row of curves
      const float w = plot_w(cols, beta), h = plot_h(rows * (beta ? 2 : 1));
      if (w < kMinPlotWidth * fs || h < (beta ? kMinBetaPlotHeight : kMinPlotHeight)) continue;
      const float score = std::min(w / 1.6f, h);
      if (score > best) best = score, best_cols = cols;
    }
    out.overlaid = false, out.beta = beta, out.cols = best_cols;
    return best_cols > 0;
  };
  Arrangement a;
  if (overlaid_ || !((show_beta_ && grid(true, a)) || grid(false, a))) {
    a.overlaid = true;
    a.cols = 1;
    a.beta = show_beta_ && plot_h(2) >= kMinBetaPlotHeight;
  }
  return a;
}

figures::ConnectionsOptions KyConnectionsPanel::options(const Arrangement& a) const {
  figures::ConnectionsOptions o;
  o.layer = layer_;
  o.step = frame_step_;
  o.overlaid = a.overlaid;
  o.beta = a.beta;
  o.history = show_history_ ? figures::kMaxConnectionHistory : 0;
  o.cols = a.cols;
  return o;
}

void KyConnectionsPanel::draw_curves(const std::vector<ConnectionFrame>& history, ImFont* font,
                                     ImVec2 size) {
  const Arrangement a = arrange(size, font);
  too_small_for_grid_ = !overlaid_ && a.overlaid;
  no_room_for_beta_ = show_beta_ && !a.beta;
  uint64_t key = mix(view_.key, a.overlaid ? 1u : 2u);
  key = mix(key, a.beta ? 1u : 2u);
  key = mix(key, static_cast<uint64_t>(a.cols));
  key = mix(key, show_history_ ? 1u : 2u);
  if (key != curves_key_ || curves_.figure.panels.empty()) {
    try {
      built_ = options(a);
      curves_ = figures::build_connections_figure(history, built_);
      arranged_ = a;
    } catch (const std::exception& e) {
      curves_ = {};
      curves_error_ = e.what();
    }
    curves_key_ = key;
  }
  if (curves_.figure.panels.empty()) {
    ImGui::TextDisabled("%s", curves_error_.c_str());
    return;
  }
  ImGui::PushID("curves");
  const bool drawn = curves_live_.draw(curves_.figure, size, font);
  const bool hovered = ImGui::IsItemHovered();
  ImGui::PopID();
  if (!drawn || curves_live_.layout().panels.size() != curves_.figure.panels.size()) return;
  report_.drawn = true;
  report_.heads = curves_.curves;
  report_.faded_curves = curves_.faded;
  report_.overlaid = arranged_.overlaid;
  report_.beta = arranged_.beta;
  hover_curves(hovered);
}

void KyConnectionsPanel::hover_curves(bool hovered) {
  const ConnectionCurves& c = *current_;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const int count = static_cast<int>(curves_.figure.panels.size());
  if (static_cast<int>(curves_.roles.size()) != count) return;
  const int window = c.window;

  // The head hovered last frame (here or in the maps): its plots outlined in small multiples,
  // its curve thickened when overlaid.
  if (hovered_head_ >= 0 && hovered_head_ < c.heads) {
    for (int k = 0; k < count; ++k) {
      const figures::ConnectionsPanelRole& role = curves_.roles[k];
      const ScreenRect r = plot_rect(curves_live_, k);
      if (!arranged_.overlaid) {
        if (role.first == hovered_head_) dl->AddRect(r.min, r.max, kHighlight, 0.0f, 0, 2.0f);
        continue;
      }
      if (role.beta) continue;
      std::vector<ImVec2> points;
      const float* g = c.curve(hovered_head_);
      for (size_t i = 0; i < c.t.size(); ++i)
        points.push_back(curves_live_.to_screen(k, c.t[i], g[i]));
      dl->PushClipRect(r.min, r.max, true);
      dl->AddPolyline(points.data(), static_cast<int>(points.size()), head_color(hovered_head_), 0,
                      4.0f);
      dl->PopClipRect();
    }
  }
  if (!hovered) return;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  int k = 0;
  while (k < count && !plot_rect(curves_live_, k).contains(mouse)) ++k;
  if (k == count) return;
  const figures::ConnectionsPanelRole& role = curves_.roles[k];
  const ScreenRect r = plot_rect(curves_live_, k);
  const double t = std::clamp(data_x_at(curves_live_, k, mouse.x), 0.0, 1.0);
  if (!arranged_.overlaid) hovered_head_next_ = role.first;

  if (!role.beta) {  // the curve(s) at the cursor's t
    dl->AddLine(ImVec2(mouse.x, r.min.y), ImVec2(mouse.x, r.max.y), colors::kCursor);
    const double offset = c.query_slot - t * (window - 1);
    float nearest = 12.0f;  // px: the curve under the mouse, when overlaid
    for (int h = role.first; h < role.last; ++h) {
      const ImVec2 p = curves_live_.to_screen(k, t, interpolate(c.t, c.curve(h), t));
      dl->AddCircle(p, 4.0f, kMarker, 0, 1.5f);
      if (arranged_.overlaid && std::abs(p.y - mouse.y) < nearest)
        nearest = std::abs(p.y - mouse.y), hovered_head_next_ = h;
    }
    ImGui::BeginTooltip();
    for (int h = role.first; h < role.last; ++h)
      ImGui::TextColored(ImColor(head_color(h)), "head %d: t = %.3f, offset %.2f, g = %.4f", h, t,
                         offset, interpolate(c.t, c.curve(h), t));
    ImGui::TextDisabled("step %lld; offset i - j: 0 = the current token, > 0 earlier tokens",
                        static_cast<long long>(frame_step_));
    ImGui::EndTooltip();
    return;
  }
  // Beta bars: the slot nearest the cursor.
  const int j = std::clamp(static_cast<int>(std::lround(t * (window - 1))), 0, window - 1);
  const double slot = 1.0 / (window - 1),
               half = std::min(slot * 0.5, figures::connections_t_pad(window));
  const float x0 = curves_live_.to_screen(k, j * slot - half, 0).x;
  const float x1 = curves_live_.to_screen(k, j * slot + half, 0).x;
  dl->AddRectFilled(ImVec2(std::max(r.min.x, x0), r.min.y), ImVec2(std::min(r.max.x, x1), r.max.y),
                    IM_COL32(255, 255, 255, 30));
  ImGui::BeginTooltip();
  ImGui::Text("slot %d: t = %.3f, offset %d%s", j, j * slot, c.query_slot - j,
              c.query_slot == j ? " (the current token)" : "");
  for (int h = role.first; h < role.last; ++h)
    ImGui::TextColored(ImColor(head_color(h)), "head %d: beta = %.4f, g = %.4f", h,
                       c.beta_values(h)[j], c.slot_values(h)[j]);
  ImGui::TextDisabled("beta = softmax_j g(t_j); dashed line: the uniform 1/W = %.3g", 1.0 / window);
  ImGui::EndTooltip();
}

void KyConnectionsPanel::draw_summaries(ImFont* font) {
  ImGui::PushFont(font);
  ImGui::TextDisabled("Shape of g_h at step %lld (computed; offset = i - j):",
                      static_cast<long long>(frame_step_));
  for (size_t h = 0; h < view_.summaries.size(); ++h) {
    ImGui::TextColored(ImColor(head_color(static_cast<int>(h))), "head %zu:", h);
    ImGui::SameLine();
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(view_.summaries[h].c_str());
    ImGui::PopTextWrapPos();
  }
  ImGui::PopFont();
}

void KyConnectionsPanel::build_maps(const Snapshot& snap) {
  const auto& all = snap.attention_maps();
  uint64_t key = mix(snap.generation, static_cast<uint64_t>(snap.attention_step + 1));
  key = mix(key, static_cast<uint64_t>(layer_ + 1));
  key = mix(key, all.size());
  if (key == maps_key_) return;
  maps_key_ = key;
  // The chosen layer's maps, by head (well-formed ones only), on one colour scale.
  std::vector<const AttentionMap*> maps;
  float vmax = 0.0f;
  for (const AttentionMap& m : all)
    if (m.layer == layer_ && m.size > 0 &&
        m.weights.size() == static_cast<size_t>(m.size) * m.size) {
      maps.push_back(&m);
      for (float w : m.weights)
        if (std::isfinite(w)) vmax = std::max(vmax, w);
    }
  maps_ = fig::Figure{};
  maps_heads_.clear();
  if (maps.empty()) return;
  fig::Figure& f = maps_;
  f.name = "connections-maps";
  f.title = "Effective attention of layer " + std::to_string(layer_) + " on the probe, step " +
            std::to_string(snap.attention_step);
  f.cols = static_cast<int>(maps.size());
  f.share_x = f.share_y = true;  // the same tokens: the axis labels once
  f.aspect = std::min(1.2, 0.25 + 0.9 / f.cols);
  for (const AttentionMap* m : maps) {
    fig::Panel p = fig::matrix_panel("key", "query", fig::token_ticks(snap.probe_tokens, m->size));
    p.title = "head " + std::to_string(m->head);
    p.short_title = "h" + std::to_string(m->head);
    fig::Heatmap h =
        fig::square_heatmap("layer" + std::to_string(m->layer) + "_head" + std::to_string(m->head),
                            m->size, m->weights);
    h.colormap = render::Colormap::Viridis;
    h.vmin = 0, h.vmax = vmax > 0 ? vmax : 1.0;
    h.colorbar_label = "weight";
    p.heatmaps.push_back(std::move(h));
    f.panels.push_back(std::move(p));
    maps_heads_.push_back(m->head);
  }
}

void KyConnectionsPanel::draw_maps(const Snapshot& snap, ImFont* font, float height) {
  ImGui::PushID("maps");
  const bool drawn = maps_live_.draw(
      maps_, ImVec2(std::max(1.0f, ImGui::GetContentRegionAvail().x), height), font);
  ImGui::PopID();
  const int count = static_cast<int>(maps_.panels.size());
  if (!drawn || static_cast<int>(maps_live_.layout().panels.size()) != count) return;
  report_.maps = count;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (int k = 0; k < count; ++k)
    if (maps_heads_[k] == hovered_head_) {
      const ScreenRect r = plot_rect(maps_live_, k);
      dl->AddRect(r.min, r.max, kHighlight, 0.0f, 0, 2.0f);
    }
  const auto cell = maps_live_.hover_cell(maps_);
  if (!cell || cell->panel < 0 || cell->panel >= count) return;
  const int head = maps_heads_[cell->panel];
  hovered_head_next_ = head;
  dl->AddRect(cell->min, cell->max, colors::kHover);
  // Row 0 is the first query (matrix convention): rows are queries, columns keys.
  ImGui::SetTooltip("layer %d head %d: query %d (%s) -> key %d (%s) = %.4f\noffset i - j = %d",
                    layer_, head, cell->row, token(snap, cell->row), cell->col,
                    token(snap, cell->col), cell->value, cell->row - cell->col);
}

const std::vector<ConnectionFrame>& KyConnectionsPanel::ky_history(const Snapshot& snap) {
  if (snap.mechanism_views != history_source_) {
    history_source_ = snap.mechanism_views;
    history_ = connection_frames_of(snap.mechanism_history());
  }
  return history_;
}

std::vector<std::string> KyConnectionsPanel::figures(const Snapshot& snap) const {
  if (!has_ky_views(snap.mechanism_history())) return {};
  return {"connections"};
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(KyConnectionsPanel::Report, drawn, layer, heads, faded_curves,
                                   maps, step, frame, frames, beta, summaries)

nlohmann::json KyConnectionsPanel::report() const {
  nlohmann::json j = report_;
  j["curves"] = report_.heads;
  j["mode"] = report_.overlaid ? "overlaid" : "small multiples";
  // The builder's options of the figure on screen: `attnlab export --figure connections` with
  // --layer, --step, --multiples, --beta, --history and --cols set from these writes the same.
  j["options"] = {{"layer", built_.layer},       {"step", built_.step},
                  {"overlaid", built_.overlaid}, {"beta", built_.beta},
                  {"history", built_.history},   {"cols", built_.cols}};
  return j;
}

// The panel table's row, registered as every mechanism panel's is (app/panels/mechanism_panels.h).
namespace {
const bool kRegistered =
    register_mechanism_panel({"ky",
                              /*replaces_attention=*/false,
                              {"connections", "Connections", TilePlace::Right,
                               [](const PanelSetup& s) { return experiment_uses(s, "ky"); },
                               make_mechanism_panel<KyConnectionsPanel>}});
}  // namespace

}  // namespace attn::gui
