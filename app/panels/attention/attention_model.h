// The Attention panel's model (attention_panel.h is its ImGui view): the controls (layer, colour
// scale), the grid of the probe's attention maps they give for a snapshot
// (figures::attention_figure, exactly what Export writes; the ablated model's maps while heads
// are ablated in the Interventions panel), which maps to outline as ablated, the
// hover readout and the panel's report for tests.
// Contract: plain data, no ImGui, no torch. figure() rebuilds the grid only when the snapshot
// (serial) or a control changed since the last call.
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/figures/catalog/figures.h"
#include "core/config/config.h"
#include "core/data/task_regions.h"
#include "core/views/intervention_view.h"
#include "core/views/snapshot.h"
#include "render/plot/figure.h"
#include "render/plot/map_view.h"

namespace attn::gui {

// A heatmap of a figure: figure.panels[panel].heatmaps[heatmap].
struct HeatmapRef {
  int panel = 0;
  int heatmap = 0;
};

class AttentionModel {
 public:
  struct Controls {
    int layer = -1;  // -1: all layers
    int scale = 0;   // figures::AttentionScale: shared, per map, fixed 0..1
    // At most this many maps a row (0: the builder's, one per head): a narrow tile stacks them
    // rather than shrink them (the panel sets it from the tile's width).
    int columns = 0;
    // The heads ablated in the Interventions panel (UiState::interventions.ablate) and whether
    // the window shows the live model (no recorded step on the timeline); the panel sets both.
    std::vector<HeadRef> ablated;
    bool live = true;
  };
  Controls controls;

  // The figure builder's options for the controls.
  figures::FigureOptions options() const;
  // The snapshot has maps to show.
  static bool has_maps(const Snapshot& snap);
  // The grid for `snap` with the controls (has_maps(snap) must hold). With heads ablated and
  // answered (ablation_answer), the ablated model's maps: a later layer's reads the changed
  // stream; the title says which heads and the step.
  const fig::Figure& figure(const Snapshot& snap);
  // The snapshot's answer to controls.ablated with its maps (InterventionView::ablated_maps),
  // when it answers exactly those heads and is of the shown model: the live one, or the
  // recorded step when it is that step's; else null (the grid shows the unablated maps).
  const InterventionView* ablation_answer(const Snapshot& snap) const;
  // The line under the toolbar while heads are ablated ("" when none are).
  std::string ablation_status(const Snapshot& snap) const;
  // `f`'s panels (row-major, in order) laid out `columns` a row when that is fewer than its own.
  static void reflow(fig::Figure& f, int columns);
  // The grid built last (empty before the first).
  const fig::Figure& shown() const { return figure_; }
  // The line beside the toolbar: the probe's step, its tokens and the token legend ("": no probe).
  static std::string status(const Snapshot& snap);
  // The heatmaps of the grid built last whose head is in `ablated` (outlined on screen).
  std::vector<HeatmapRef> ablated_maps(const std::vector<HeadRef>& ablated) const;
  // The readout for the cell (row = query, col = key) of the map `at` of the grid built last.
  std::string hover_text(const Snapshot& snap, HeatmapRef at, int row, int col, float value,
                         bool ablated) const;

  // Takes the snapshot's probe state for report() (every frame, drawn or not).
  void observe(const Snapshot& snap);
  // probe_text, probe_error, probe_tokens, attention_step, step, state (the probe editor's tests).
  const nlohmann::json& report() const { return report_; }
  // The Crop combo's presets for `snap`'s probe: the task's regions (core/data/task_regions.h,
  // "whole" first) as crops of whole cells. Worked out again, with `config` (called then only),
  // when the probe's labels or the model's generation change.
  const std::vector<fig::CropPreset>& crop_presets(const Snapshot& snap,
                                                   const std::function<ExperimentConfig()>& config);
  // Regions as crops: rows [first, last + 1), columns [key_first, key_last + 1).
  static std::vector<fig::CropPreset> presets_of(const std::vector<TaskRegion>& regions);
  // Crops `view` to the preset called `name`; false (the view unchanged) when there is none.
  bool choose_crop(const std::string& name, fig::MapView& view) const;
  // The exportable figures the panel shows for `snap`.
  static std::vector<std::string> figures(const Snapshot& snap);

 private:
  fig::Figure figure_;
  uint64_t built_serial_ = ~uint64_t(0);
  Controls built_{-3, -1, 0, {}, true};
  const InterventionView* built_answer_ = nullptr;
  nlohmann::json report_;
  std::vector<fig::CropPreset> presets_;
  std::vector<std::string> presets_labels_;
  uint64_t presets_generation_ = ~uint64_t(0);
};

}  // namespace attn::gui
