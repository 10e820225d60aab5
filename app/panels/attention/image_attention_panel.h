// Image attention panel (kernel attention family, seed 002, Figures 6-12; docs/design/MECHANISMS.md
// section 3): where the CLS token of an image classifier looks, over the test image itself.
//  - Rows: the live run first, then saved runs added for comparison (run directories, from the
//    panel's "Compare run" field or `attnlab gui --compare-run DIR`). All rows show the same
//    test image, so dot vs pseudo vs gaussian compare directly.
//  - Columns: the picture alone, then per head the CLS row of that layer's attention (query 0
//    on the patch tokens) reshaped to the patch grid and drawn over the picture, then the head
//    mean. One layer or all layers (a row per layer). Overlay colormap (hot, viridis) and alpha
//    are adjustable; one scale is shared by all shown maps (with its colorbar) unless the user
//    picks a per-map scale, which the grid then states.
//  - The image: any test image by class and index within the class (or by raw test index);
//    the choice goes to the trainer (Trainer::request_probe_image) and to every saved run.
//  - Click a cell: the full S x S map of that head (or the head mean) beside or under the grid,
//    with a colorbar and a hover readout "query -> key = w".
//  - Each row's title gives the model, its step and its prediction on the image.
// The panel is an ImageAttentionModel (image_attention_model.h: rows, image, controls, the grid
// and full-map figures, the report) and this ImGui view of it, which places the grid and the full
// map in the tile (choosing the grid variant whose maps come out largest) and draws them with the
// screen painter (gui/plot/live_figure.h); each Export button writes the figure on screen.
// Contract: draws into the tile the workspace gives it. Needs the GL context current (the
// figures' heatmaps are textures); destroy before the window. No torch.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "app/gui/panel.h"
#include "app/gui/plot/live_figure.h"
#include "app/panels/attention/image_attention_model.h"

struct ImFont;

namespace attn::gui {

class ImageAttentionPanel : public Panel {
 public:
  // Adds a saved run as a comparison row; a failure is shown in the panel (and kept in the
  // report), never thrown.
  void add_run(const std::string& dir) { model_.add_run(dir); }
  // Shows test image `index` in every row from the next draw on (the trainer is asked too).
  void request_image(int64_t index) { model_.request_image(index); }
  void draw(FrameContext& frame) override;
  nlohmann::json report() const override { return model_.report(); }
  std::vector<std::string> figures(const Snapshot& snap) const override {
    return ImageAttentionModel::figures(snap);
  }
  // What the last draw showed, for the GUI's exit report (ATTN_GUI_REPORT) and tests: the image,
  // and per row its source, image, prediction and, per map, the CLS row's patch weights.
  nlohmann::json report_json() const { return model_.report(); }

 private:
  void draw_picker();
  void draw_toolbar();
  void draw_runs();
  void draw_row_notes();
  double map_side(const fig::Figure& f, double width_pt, double height_pt, int* cols = nullptr);
  double variant_score(size_t i, double width_pt, double height_pt);
  std::pair<size_t, double> best_variant(ImVec2 area, ImFont* font);
  bool place_full_beside(ImVec2 avail, ImVec2 beside_area, ImVec2 under_area, ImVec2 whole,
                         ImFont* font);
  ImVec2 compact_size(ImVec2 size, ImFont* font);
  void draw_grid(ImFont* font, ImVec2 size);
  void draw_full_map(ImFont* font);

  ImageAttentionModel model_;
  ImageAttentionModel::Screen screen_;  // what the last draw put where (the report)
  FigureView metrics_;                  // the figure font's metrics, for compact_size()
  LiveFigure grid_plot_, full_plot_;
  uint64_t compact_key_ = 0, compact_shape_ = 0;
  ImVec2 compact_{0, 0};
  ImVec2 compact_pt_{0, 0};  // compact_ in points (0: none to reuse)
  uint64_t place_key_ = 0;   // the full map beside the grid or under it, for this size
  bool place_beside_ = false;
};

}  // namespace attn::gui
