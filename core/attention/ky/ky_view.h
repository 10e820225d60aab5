// ky's generic view (core/views/mechanism_view.h) and its typed reading, torch-free: what
// KyAttention::observe() gives, by name, and ConnectionCurves, the form the Connections panel
// and figure draw from. Only ky's own files (its folder, its panel and figure) read these names.
//
// The view of one ky layer: curves "g" (x: t in [0, 1], one series per head: g_h(t) on a fine
// grid), "slot_g" (x: the slots' t_j, g_h(t_j), the bias added to the logits) and "beta" (x: t_j,
// softmax_j g_h(t_j), the seed's beta_h); scalars "window", "query_slot", "causal" (1 or 0) and
// per head "effective_window" (core/analysis/head_metrics.h); text "edges" (masked | zero-pad).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/views/mechanism_view.h"

namespace attn {

namespace ky_view {
constexpr const char* kMechanism = "ky";
constexpr const char* kCurves = "g";
constexpr const char* kSlots = "slot_g";
constexpr const char* kBeta = "beta";
constexpr const char* kWindow = "window";
constexpr const char* kQuerySlot = "query_slot";
constexpr const char* kCausal = "causal";
constexpr const char* kEffectiveWindow = "effective_window";
constexpr const char* kEdges = "edges";
}  // namespace ky_view

// Condor's learned connection functions g_h(t) of one `ky` layer (Neural KY-Attention).
// Window slot j (0..window-1) sits at t_j = j / (window-1) and holds key i - query_slot + j of
// query i, so its key offset i - key is query_slot - j (positive: earlier tokens). With the
// causal window query_slot = window-1: t = 1 is the current token, and a curve rising toward
// t = 1 is a recency bias.
struct ConnectionCurves {
  int layer = 0;
  int heads = 0;
  int window = 0;
  int query_slot = 0;
  bool causal = true;
  std::string edges;          // masked | zero-pad
  std::vector<float> t;       // fine samples of [0, 1] for drawing the curves
  std::vector<float> g;       // heads x t.size(), head-major: g_h(t)
  std::vector<float> slot_g;  // heads x window: g_h(t_j), the bias added to the logits
  std::vector<float> beta;    // heads x window: softmax_j g_h(t_j) (the seed's beta_h)
  const float* curve(int head) const { return g.data() + head * t.size(); }
  const float* slot_values(int head) const { return slot_g.data() + head * window; }
  const float* beta_values(int head) const { return beta.data() + head * window; }
};

// The connection functions of every `ky` layer at one step.
struct ConnectionFrame {
  int64_t step = 0;
  std::vector<ConnectionCurves> layers;  // ky layers only, in layer order
};

// The generic view of one layer's curves (what observe() returns).
MechanismView ky_view_of(const ConnectionCurves& curves);
// The curves back from a view: nullopt unless it is ky's and its sizes agree (heads x samples,
// heads x window), so a damaged or foreign view is never drawn as ky's.
std::optional<ConnectionCurves> ky_curves_of(const MechanismView& view);
// Whether any frame holds a ky layer's view (cheap: no copy).
bool has_ky_views(const std::vector<MechanismFrame>& frames);
// Every frame's ky layers (frames with none left out).
std::vector<ConnectionFrame> connection_frames_of(const std::vector<MechanismFrame>& frames);

// Views recorded before mechanisms observed themselves (views.rec records under "ky", and
// connections.json): one old per-layer entry (layer, heads, window, query_slot, causal, edges,
// t, g, slot_g, beta; floats as byte strings or numbers) as the generic view, its sizes checked
// (check_mechanism_view) before it is returned. Throws attn::Error naming the field. The
// descriptor's legacy hook (core/attention/mechanism.h).
MechanismView ky_legacy_view(const nlohmann::json& entry);

}  // namespace attn
