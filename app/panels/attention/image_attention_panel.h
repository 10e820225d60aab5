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
// The grid and the full map are figures of the figure model (app/figures/image_rows_figure.h)
// drawn by the screen painter (gui/plot/live_figure.h), rebuilt only when a row's maps or a control
// change; each Export button writes the figure on screen.
// Saved runs are loaded on the UI thread when added (a checkpoint of a small ViT: tens of ms)
// and probed when the image changes (one forward pass of one image: milliseconds).
// Contract: draws into the tile the workspace gives it. Needs the GL context current (the
// figures' heatmaps are textures); destroy before the window. No torch.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "app/figures/image_rows_figure.h"
#include "app/gui/panel.h"
#include "app/gui/plot/live_figure.h"
#include "core/training/session/image_probe.h"
#include "core/views/snapshot.h"

struct ImFont;

namespace attn {
class Trainer;
}

namespace attn::gui {

class ImageAttentionPanel : public Panel {
 public:
  ImageAttentionPanel();
  ~ImageAttentionPanel();
  // Adds a saved run as a comparison row; a failure is shown in the panel (and kept in the
  // report), never thrown.
  void add_run(const std::string& dir);
  // Shows test image `index` in every row from the next draw on (the trainer is asked too).
  void request_image(int64_t index) { pending_index_ = index; }
  void draw(FrameContext& frame) override;
  nlohmann::json report() const override { return report_; }
  std::vector<std::string> figures(const Snapshot& snap) const override;
  // What the last draw showed, for the GUI's exit report (ATTN_GUI_REPORT) and tests: the image,
  // and per row its source, image, prediction and, per map, the CLS row's patch weights.
  nlohmann::json report_json() const { return report_; }

 private:
  struct Row;
  void sync_live_row(const Snapshot& snap, bool image_task);
  void probe_saved_rows();
  void compute(Row& row);
  std::string row_label(size_t i) const;
  void draw_toolbar(const Snapshot& snap, Trainer& trainer);
  void rebuild_grid();
  void use_variant(size_t i);
  double map_side(const fig::Figure& f, double width_pt, double height_pt, int* cols = nullptr);
  double variant_score(size_t i, double width_pt, double height_pt);
  std::pair<size_t, double> best_variant(ImVec2 area, ImFont* font);
  ImVec2 compact_size(ImVec2 size, ImFont* font);
  void draw_grid(ImFont* font, ImVec2 size);
  void draw_full_map(ImFont* font);
  void make_report(const Snapshot& snap);
  render::Colormap overlay_colormap() const {
    return colormap_ == 0 ? render::Colormap::Hot : render::Colormap::Viridis;
  }

  std::vector<std::unique_ptr<Row>> rows_;  // rows_[0]: the live run
  int64_t index_ = -1;                      // the shown test image; -1 = the live run's
  int64_t pending_index_ = -1;              // asked for by request_image() / the toolbar
  std::string live_mechanisms_;             // "dot/pseudo": the live run's layers, as in the titles
  std::string data_dir_;                    // Fashion-MNIST files, for picking by class
  int pick_class_ = -1, pick_nth_ = 0;      // class -1: nth is a raw test index
  std::string pick_error_;
  char run_field_[512] = {};
  int layer_choice_ = -1;  // -1: all layers
  int colormap_ = 0;       // 0 hot, 1 viridis: the grid's overlays and the full map
  float alpha_ = 0.6f;
  // One scale for every map by default: per-map scales make a near-uniform layer look as hot as
  // a sharp one, and no single colorbar can be read against them.
  bool shared_scale_ = true;
  bool show_mean_ = true;
  struct Selection {
    int row = -1, layer = -1, head = -1;  // head == heads: the head mean
  } selected_;
  // The grid: one figure of every row, rebuilt when grid_key_ changes, in variants with 1, 2, ...
  // layer blocks side by side; the one shown (variant_) is copied to grid_figure_ (cells_[k]:
  // what its panel k shows). The full map of the selected cell is rebuilt when full_key_ changes.
  struct Variant {
    fig::Figure figure;
    std::vector<figures::ImageAttentionCell> cells;
    int layers_per_row = 1;
    int block = 1;  // panels per layer block
  };
  std::vector<Variant> variants_;
  size_t variant_ = 0;
  fig::Figure grid_figure_;
  std::vector<figures::ImageAttentionCell> cells_;
  LiveFigure grid_plot_;
  uint64_t grid_key_ = 0;
  bool grid_has_live_ = false;  // the live row is in the grid (the export's provenance)
  std::string grid_error_;
  FigureView metrics_;  // the figure font's metrics, for compact_size()
  uint64_t compact_key_ = 0, compact_shape_ = 0;
  ImVec2 compact_{0, 0};
  ImVec2 compact_pt_{0, 0};  // compact_ in points (0: none to reuse)
  uint64_t place_key_ = 0;   // the full map beside the grid or under it, for this size
  bool place_beside_ = false;
  fig::Figure full_figure_;
  LiveFigure full_plot_;
  uint64_t full_key_ = 0;
  std::string full_title_;
  std::vector<float> full_weights_;
  int full_map_size_ = 0;  // S of the full map drawn last (report)
  int full_grid_ = 0;      // its patch grid side (token names)
  nlohmann::json report_ = nlohmann::json::object();
};

}  // namespace attn::gui
