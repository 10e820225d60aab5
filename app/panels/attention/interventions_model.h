// The Interventions panel's model (interventions_panel.h is its ImGui view): the panel's own
// controls (the patch's typed probes, loss or accuracy on the importance map, which map a narrow
// tile shows), the changes its buttons make to the shared request (UiState::interventions), the
// importance and activation-patching figures it shows for a snapshot's InterventionView
// (figures::importance_figure / patch_figure, exactly what Export writes), the summary line, the
// hover readouts and the report for tests; and the causal tables views.rec recorded at the
// timeline's step (ViewRecord::attribution, ::dla: build_recorded).
// Contract: plain data, no ImGui, no torch. A function that changes the request returns true
// when it did; the view then sends the request to the trainer. build() rebuilds the figures only
// when the view (its pointer) or the loss/accuracy choice changed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/runs/records/view_records.h"
#include "core/views/intervention_view.h"
#include "core/views/snapshot.h"
#include "render/plot/figure.h"

namespace attn::gui {

// `items` set in lines at most `width` wide (`measure` gives a string's width), joined by
// spaces: a line breaks between items, and inside an item only where the item alone is wider
// than `width`, then at its spaces. A number has no space, so it is never split (ImGui's own
// wrapping breaks after a '.', "Eval loss 1." / "2095"); a word wider than `width` stands alone.
std::vector<std::string> wrap_items(const std::vector<std::string>& items, float width,
                                    const std::function<float(const std::string&)>& measure);

class InterventionsModel {
 public:
  static constexpr size_t kProbeCapacity = 256;  // bytes of each probe field, NUL included

  // Controls of the panel alone.
  bool show_accuracy = false;       // the importance map shows the accuracy change instead
  int shown = 0;                    // narrow tiles: 0 shows the importance map, 1 the patching map
  char* clean() { return clean_; }  // the patch's probes as typed ("": the run's probe / the twin)
  char* corrupt() { return corrupt_; }

  // The first frame shown asks for the importance table (what a first look wants): true once.
  bool first_show(InterventionRequest& r);
  // The buttons' changes to the request; each returns true when the request changed.
  static bool set_mode(InterventionRequest& r, int mode);
  static bool restore_all(InterventionRequest& r);
  bool patch(InterventionRequest& r) const;  // "Patch": the typed probes
  static bool stop_patching(InterventionRequest& r);

  // Builds the figures of `v` (may be null: none).
  void build(const InterventionView* v);
  bool have_importance() const { return have_importance_; }
  bool have_patch() const { return have_patch_; }
  const fig::Figure& importance() const { return importance_figure_; }
  const fig::Figure& patching() const { return patch_figure_; }
  // Which maps to draw: both in a wide tile, the one `shown` picks in a narrow one.
  bool draws_importance(bool narrow) const { return have_importance_ && (!narrow || shown == 0); }
  bool draws_patch(bool narrow) const { return have_patch_ && (!narrow || shown == 1); }

  // The line under the controls: the error (red), then the ablation's figures or, with no head
  // ablated, a dimmed hint with the eval figures; waiting: no view yet. Each names its step and
  // eval batch count. With no head ablated the figures are the importance map's baseline, at
  // the map's step (the timeline's recorded step); an ablation runs on the model (v->step), and
  // when `timeline_step` (-1: the live model) shows another step the line says which.
  struct Summary {
    bool waiting = false;
    std::string error;
    std::string text;
    // The text's items ("loss 1.2095 -> 3.4", "at step 300"): a line breaks between them, never
    // inside one that fits (wrap_items); text is them joined by spaces.
    std::vector<std::string> items;
    bool dimmed = false;
  };
  static Summary summary(const InterventionView* v, int64_t timeline_step = -1);
  // "importance recorded at step S" when the importance map is older than the view ("": not).
  static std::string importance_note(const InterventionView& v);
  // The ablated heads inside the importance table (outlined on the map).
  static std::vector<HeadRef> outlined(const ImportanceTable& t,
                                       const std::vector<HeadRef>& ablate);
  std::string importance_text(const ImportanceTable& t, int layer, int head, float value,
                              bool ablated) const;
  // panel 0: the head map (row layer, col head); panel 1: by position (row layer * heads + head).
  static std::string patch_text(const PatchTable& p, int panel, int row, int col, float value);

  // The attribution patching and direct logit attribution views.rec recorded at the step the
  // timeline shows. `record`: the timeline's record (null: none, the live model without a
  // recording: nothing is shown, as before); `timeline_step`: the step chosen on the timeline
  // (-1: following the newest record, `model_step` the live model's). A record without
  // attribution shows recorded_line() saying so in one line and no figure (never another step's).
  void build_recorded(const ViewRecord* record, int64_t timeline_step, int64_t model_step = -1);
  bool have_recorded() const { return recorded_step_ >= 0; }  // a record at all
  bool have_recorded_figure() const { return have_recorded_figure_; }
  // attribution patching (layer x head, metric units) and, beside it, the heads' direct logit
  // attribution (logit units) of the recorded probe; titled with the recorded step.
  const fig::Figure& recorded() const { return recorded_figure_; }
  // "attribution and DLA recorded at step N (the timeline's step)", the metric, the DLA's answer
  // and its other components (embedding, MLPs, biases); or "no attribution recorded at step N".
  const std::string& recorded_line() const { return recorded_line_; }
  int64_t recorded_step() const { return recorded_step_; }
  static std::string recorded_text(int panel, int layer, int head, float value, int64_t step);

  // Takes the request and the view for report() (every frame, drawn or not).
  void observe(const InterventionRequest& r, const InterventionView* v);
  // The last frame's screen rectangles [x0, y0, x1, y1], for the GUI tests' clicks: the
  // importance map's cells ({"L.H": rect}) and the Patch button.
  void set_cells(nlohmann::json cells) { cells_ = std::move(cells); }
  void set_patch_button(nlohmann::json rect) { patch_button_ = std::move(rect); }
  // "ablate", "mode", "importance", "patch", "step", "error", "ablated_loss", "baseline_loss",
  // "importance_step", "cells", "patch_button", "recorded_step" (-1: none), "recorded_attribution",
  // "recorded_dla" (the record's step holds them).
  const nlohmann::json& report() const { return report_; }
  static std::vector<std::string> figures(const Snapshot& snap);
  const fig::Figure* shown_figure(const std::string& name) const;

 private:
  bool sent_ = false;
  char clean_[kProbeCapacity] = {};
  char corrupt_[kProbeCapacity] = {};
  nlohmann::json report_;
  nlohmann::json cells_ = nlohmann::json::object(), patch_button_;
  fig::Figure importance_figure_, patch_figure_;
  bool have_importance_ = false, have_patch_ = false;
  const void* built_view_ = nullptr;
  bool built_accuracy_ = false;
  fig::Figure recorded_figure_;
  bool have_recorded_figure_ = false, recorded_attribution_ = false, recorded_dla_ = false;
  std::string recorded_line_;
  int64_t recorded_step_ = -1;
  const void* built_record_ = nullptr;
  int64_t built_timeline_step_ = -2, built_model_step_ = -2;
};

}  // namespace attn::gui
