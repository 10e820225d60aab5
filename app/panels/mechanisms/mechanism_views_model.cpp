#include "app/panels/mechanisms/mechanism_views_model.h"

#include <algorithm>
#include <exception>

#include "app/figures/models/mechanism_view_figure.h"

namespace attn::gui {

std::vector<int> MechanismViewsModel::layers(const Snapshot& snap) {
  std::vector<int> out;
  if (empty(snap)) return out;
  for (const MechanismView& v : snap.mechanism_history().back().layers) out.push_back(v.layer);
  return out;
}

const fig::Figure& MechanismViewsModel::figure(const Snapshot& snap) {
  if (snap.serial == built_serial_ && layer == built_layer_ && frame == built_frame_)
    return figure_;
  built_serial_ = snap.serial, built_layer_ = layer, built_frame_ = frame;
  const auto& history = snap.mechanism_history();
  figures::MechanismViewOptions o;
  o.layer = layer;
  if (frame >= 0 && !history.empty())
    o.step = history[std::min<size_t>(static_cast<size_t>(frame), history.size() - 1)].step;
  figure_ = fig::Figure{};
  error_.clear();
  try {
    figure_ = figures::build_mechanism_view_figure(history, o);
  } catch (const std::exception& e) {
    error_ = e.what();
  }
  return figure_;
}

nlohmann::json MechanismViewsModel::report() const {
  nlohmann::json panels = nlohmann::json::array();
  for (const fig::Panel& p : figure_.panels) panels.push_back(p.title);
  return {{"layer", layer},
          {"frame", frame},
          {"step", figure_.step},
          {"panels", panels},
          {"error", error_}};
}

}  // namespace attn::gui
