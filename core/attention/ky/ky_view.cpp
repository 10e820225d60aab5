#include "core/attention/ky/ky_view.h"

#include "core/analysis/head_metrics.h"
#include "core/base/error.h"

namespace attn {
namespace {

using nlohmann::json;

std::vector<std::string> head_labels(int heads) {
  std::vector<std::string> labels;
  for (int h = 0; h < heads; ++h) labels.push_back("head " + std::to_string(h));
  return labels;
}

std::vector<float> slot_positions(int window) {
  std::vector<float> t(static_cast<size_t>(std::max(window, 0)));
  for (int j = 0; j < window; ++j) t[j] = window > 1 ? static_cast<float>(j) / (window - 1) : 0.f;
  return t;
}

// An old entry's float field: a CBOR byte string or a JSON array.
std::vector<float> legacy_floats(const json& entry, const char* key) {
  const std::string where = std::string("an old ky curves entry's \"") + key + "\"";
  if (!entry.contains(key)) throw Error(where + " is missing");
  return float_array_of(entry.at(key), kMaxViewCells, where);
}

}  // namespace

MechanismView ky_view_of(const ConnectionCurves& c) {
  using namespace ky_view;
  MechanismView v;
  v.mechanism = kMechanism;
  v.layer = c.layer;
  const ViewAxis t{"t", ""}, slot_t{"t_j (window slot)", ""};
  v.curves.push_back({kCurves, t, {"g_h(t)", "logit"}, c.t, head_labels(c.heads), c.g});
  const std::vector<float> slots = slot_positions(c.window);
  v.curves.push_back(
      {kSlots, slot_t, {"g_h(t_j)", "logit"}, slots, head_labels(c.heads), c.slot_g});
  v.curves.push_back(
      {kBeta, slot_t, {"beta_h", "probability"}, slots, head_labels(c.heads), c.beta});
  v.scalars.push_back({kWindow, "slots", -1, static_cast<double>(c.window)});
  v.scalars.push_back({kQuerySlot, "slot", -1, static_cast<double>(c.query_slot)});
  v.scalars.push_back({kCausal, "", -1, c.causal ? 1.0 : 0.0});
  if (c.beta.size() == static_cast<size_t>(c.heads) * static_cast<size_t>(c.window))
    for (int h = 0; h < c.heads; ++h)
      v.scalars.push_back({kEffectiveWindow, "slots", h,
                           static_cast<double>(effective_window(c.beta_values(h), c.window))});
  v.texts.push_back({kEdges, c.edges});
  return v;
}

std::optional<ConnectionCurves> ky_curves_of(const MechanismView& v) {
  using namespace ky_view;
  const ViewCurves* g = v.find_curves(kCurves);
  const ViewCurves* slot = v.find_curves(kSlots);
  const ViewCurves* beta = v.find_curves(kBeta);
  if (v.mechanism != kMechanism || !g || !slot || !beta) return std::nullopt;
  ConnectionCurves c;
  c.layer = v.layer;
  c.heads = static_cast<int>(g->series.size());
  c.window = static_cast<int>(v.scalar(kWindow, 0));
  c.query_slot = static_cast<int>(v.scalar(kQuerySlot, 0));
  c.causal = v.scalar(kCausal, 1) != 0;
  c.edges = v.text(kEdges);
  c.t = g->xs;
  c.g = g->ys;
  c.slot_g = slot->ys;
  c.beta = beta->ys;
  const size_t heads = static_cast<size_t>(c.heads), window = static_cast<size_t>(c.window);
  if (c.heads < 1 || c.window < 2 || c.t.size() < 2 || c.g.size() != heads * c.t.size() ||
      c.slot_g.size() != heads * window || c.beta.size() != heads * window || c.query_slot < 0 ||
      c.query_slot >= c.window)
    return std::nullopt;
  return c;
}

bool has_ky_views(const std::vector<MechanismFrame>& frames) {
  for (const MechanismFrame& f : frames)
    for (const MechanismView& v : f.layers)
      if (v.mechanism == ky_view::kMechanism) return true;
  return false;
}

std::vector<ConnectionFrame> connection_frames_of(const std::vector<MechanismFrame>& frames) {
  std::vector<ConnectionFrame> out;
  for (const MechanismFrame& f : frames) {
    ConnectionFrame frame{f.step, {}};
    for (const MechanismView& v : f.layers)
      if (auto c = ky_curves_of(v)) frame.layers.push_back(std::move(*c));
    if (!frame.layers.empty()) out.push_back(std::move(frame));
  }
  return out;
}

// An old entry's scalar keys are ConnectionCurves' field names (from_json reads each with at(),
// throwing on a missing or mistyped one); its float arrays are read below.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ConnectionCurves, layer, heads, window, query_slot, causal,
                                   edges)

MechanismView ky_legacy_view(const nlohmann::json& k) {
  if (!k.is_object()) throw Error("an old ky curves entry is not an object");
  ConnectionCurves c;
  try {
    k.get_to(c);
  } catch (const json::exception& e) {
    throw Error(std::string("an old ky curves entry: ") + e.what());
  }
  if (c.heads < 0 || c.heads > static_cast<int>(kMaxViewSeries) || c.window < 0 ||
      c.window > static_cast<int>(kMaxViewSamples) || c.edges.size() > kMaxViewNameBytes)
    throw Error("an old ky curves entry of " + std::to_string(c.heads) + " heads and a window of " +
                std::to_string(c.window) + " (at most " + std::to_string(kMaxViewSeries) +
                " heads and " + std::to_string(kMaxViewSamples) + " slots)");
  c.t = legacy_floats(k, "t");
  c.g = legacy_floats(k, "g");
  c.slot_g = legacy_floats(k, "slot_g");
  c.beta = legacy_floats(k, "beta");
  MechanismView v = ky_view_of(c);
  check_mechanism_view(v);
  return v;
}

}  // namespace attn
