#include "app/panels/attention/attention_model.h"

#include <algorithm>
#include <cstdio>
#include <memory>

namespace attn::gui {
namespace {

const char* token(const Snapshot& s, int i) {
  return i >= 0 && i < static_cast<int>(s.probe_tokens.size()) ? s.probe_tokens[i].c_str() : "?";
}

}  // namespace

figures::FigureOptions AttentionModel::options() const {
  figures::FigureOptions o;
  o.layer = controls.layer < 0 ? figures::kAllLayers : controls.layer;
  o.scale = static_cast<figures::AttentionScale>(controls.scale);
  return o;
}

bool AttentionModel::has_maps(const Snapshot& snap) {
  return !snap.attention_maps().empty() && snap.heads > 0 && snap.layers > 0;
}

const InterventionView* AttentionModel::ablation_answer(const Snapshot& snap) const {
  const InterventionView* iv = snap.interventions.get();
  if (controls.ablated.empty() || !iv || iv->ablated_maps.empty() ||
      iv->request.ablate != controls.ablated)
    return nullptr;
  return controls.live || iv->step == snap.attention_step ? iv : nullptr;
}

std::string AttentionModel::ablation_status(const Snapshot& snap) const {
  if (controls.ablated.empty()) return "";
  const std::string heads = head_list_text(controls.ablated);
  if (const InterventionView* iv = ablation_answer(snap))
    return "heads " + heads + " ablated (" + ablation_mode_name(iv->request.mode) +
           "): the maps are the ablated model's at step " + std::to_string(iv->step) +
           "; later layers change, the ablated layer's own maps do not";
  return "heads " + heads + " ablated: the maps are the unablated model's (outlined)" +
         (controls.live ? " until the Interventions panel's answer comes"
                        : " at this recorded step");
}

const fig::Figure& AttentionModel::figure(const Snapshot& snap) {
  const InterventionView* answer = ablation_answer(snap);
  if (snap.serial != built_serial_ || controls.layer != built_.layer ||
      controls.scale != built_.scale || controls.columns != built_.columns ||
      answer != built_answer_) {
    if (answer) {
      Snapshot ablated = snap;
      ablated.attention = std::make_shared<const std::vector<AttentionMap>>(answer->ablated_maps);
      ablated.attention_step = answer->step;
      figure_ = figures::attention_figure(ablated, options());
      figure_.title += ", heads " + head_list_text(answer->request.ablate) + " ablated (" +
                       ablation_mode_name(answer->request.mode) + ")";
    } else {
      figure_ = figures::attention_figure(snap, options());
    }
    reflow(figure_, controls.columns);
    built_serial_ = snap.serial;
    built_ = controls;
    built_answer_ = answer;
  }
  return figure_;
}

void AttentionModel::reflow(fig::Figure& f, int columns) {
  if (columns <= 0 || columns >= f.cols || f.panels.empty()) return;
  const int n = static_cast<int>(f.panels.size());
  f.cols = columns;
  f.rows = (n + columns - 1) / columns;
}

std::string AttentionModel::status(const Snapshot& snap) {
  if (snap.attention_step < 0) return "";
  char status[160];
  std::snprintf(status, sizeof status, "probe at step %lld, %zu tokens%s%s",
                static_cast<long long>(snap.attention_step), snap.probe_tokens.size(),
                snap.token_legend.empty() ? "" : "; ", snap.token_legend.c_str());
  return status;
}

std::vector<HeatmapRef> AttentionModel::ablated_maps(const std::vector<HeadRef>& ablated) const {
  std::vector<HeatmapRef> out;
  for (size_t i = 0; i < figure_.panels.size() && !ablated.empty(); ++i) {
    const auto& maps = figure_.panels[i].heatmaps;
    for (size_t k = 0; k < maps.size(); ++k)
      if (std::find(ablated.begin(), ablated.end(), HeadRef{maps[k].layer, maps[k].head}) !=
          ablated.end())
        out.push_back({static_cast<int>(i), static_cast<int>(k)});
  }
  return out;
}

std::string AttentionModel::hover_text(const Snapshot& snap, HeatmapRef at, int row, int col,
                                       float value, bool ablated) const {
  const fig::Panel& panel = figure_.panels.at(static_cast<size_t>(at.panel));
  // Row 0 is the first query (matrix convention): rows are queries, columns keys.
  char text[512];
  std::snprintf(text, sizeof text,
                "%s: query %d (%s) -> key %d (%s) = %.3f\nright-click: %s this head "
                "(Interventions)",
                panel.title.c_str(), row, token(snap, row), col, token(snap, col), value,
                ablated ? "restore" : "ablate");
  return text;
}

void AttentionModel::observe(const Snapshot& s) {
  report_ = {{"probe_text", s.probe_text},
             {"probe_error", s.probe_error},
             {"probe_tokens", s.probe_tokens},
             {"attention_step", s.attention_step},
             {"step", s.step},
             {"state", to_string(s.state)}};
}

const std::vector<fig::CropPreset>& AttentionModel::crop_presets(
    const Snapshot& snap, const std::function<ExperimentConfig()>& config) {
  if (snap.probe_tokens != presets_labels_ || snap.generation != presets_generation_) {
    presets_labels_ = snap.probe_tokens;
    presets_generation_ = snap.generation;
    try {
      presets_ = presets_of(task_regions_of_labels(config(), snap.probe_tokens));
    } catch (const std::exception&) {  // no task to read the probe with: no named regions
      presets_.clear();
    }
  }
  return presets_;
}

std::vector<fig::CropPreset> AttentionModel::presets_of(const std::vector<TaskRegion>& regions) {
  std::vector<fig::CropPreset> out;
  for (const TaskRegion& r : regions)
    out.push_back({r.name,
                   {static_cast<int>(r.first), static_cast<int>(r.last) + 1},
                   {static_cast<int>(r.key_first), static_cast<int>(r.key_last) + 1}});
  return out;
}

bool AttentionModel::choose_crop(const std::string& name, fig::MapView& view) const {
  for (const fig::CropPreset& p : presets_)
    if (p.name == name) {
      view.set_crop(p);
      return true;
    }
  return false;
}

std::vector<std::string> AttentionModel::figures(const Snapshot& snap) {
  if (snap.attention_step < 0) return {};
  return {"attention"};
}

}  // namespace attn::gui
