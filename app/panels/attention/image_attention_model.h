// The Image attention panel's model (image_attention_panel.h is its ImGui view): the rows (the
// live run first, then saved runs added for comparison), the shown test image and the picker's
// state, the display controls (layer, overlay colormap and alpha, shared scale, head mean), the
// grid figure they give (figures::image_attention_rows_figure, in variants with 1, 2, ... layer
// blocks side by side; the view picks the one that fits its tile), the full S x S map of the
// selected cell (figures::full_attention_map_figure), the hover readouts and the report.
// Contract: plain data, no ImGui and no torch header (a saved row is a SavedImageRun, loaded on
// the caller's thread when added: tens of ms; probed when the image changes: milliseconds).
// refresh() rebuilds the grid only when a row's maps, its state or a control changed; full_map()
// rebuilds the full map only when the selection, its row or the colormap changed. A failure (a
// run that does not load, an image out of range) is kept in the row or the picker, never thrown.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/figures/models/image_rows_figure.h"
#include "core/training/session/image_probe.h"
#include "core/views/snapshot.h"
#include "render/plot/figure.h"

namespace attn::gui {

class ImageAttentionModel {
 public:
  struct Row {
    bool live = false;
    std::string source;  // "live" or the run directory
    std::unique_ptr<SavedImageRun> run;
    std::string error;
    std::string note;  // e.g. the live run has not probed yet
    ImageProbe probe;
    uint64_t probe_key = 0;  // changes whenever `probe` does
    uint64_t cls_key = 1;    // probe_key when cls was computed
    // Per layer: each head's CLS weights on the patches, then their mean
    // (figures::ImageAttentionRow).
    std::vector<std::vector<float>> cls;
    int grid = 0;
    int columns() const { return probe.heads + 1; }
  };
  struct Controls {
    int layer = -1;    // -1: all layers
    int colormap = 0;  // 0 hot, 1 viridis: the grid's overlays and the full map
    float alpha = 0.6f;
    // One scale for every map by default: per-map scales make a near-uniform layer look as hot
    // as a sharp one, and no single colorbar can be read against them.
    bool shared_scale = true;
    bool show_mean = true;
  };
  // The image picker: class (-1: any, nth is then a raw test index) and nth within it.
  struct Pick {
    int label = -1;
    int nth = 0;
  };
  struct Selection {
    int row = -1, layer = -1, head = -1;  // head == heads: the head mean
  };
  // One grid figure with `layers_per_row` layer blocks side by side (cells[k]: what its panel k
  // shows; block: panels per layer block).
  struct Variant {
    fig::Figure figure;
    std::vector<figures::ImageAttentionCell> cells;
    int layers_per_row = 1;
    int block = 1;
  };
  // What only the view knows, for the report: the grid layout's columns and, per row, the screen
  // rectangle [x0, y0, x1, y1] of its first shown layer's head 0.
  struct Screen {
    int layout_cols = 0;
    std::vector<std::vector<float>> first_cells;
  };
  static const char* const kColormapNames[2];

  ImageAttentionModel();
  ~ImageAttentionModel();

  Controls controls;
  Pick pick;

  // Adds a saved run as a comparison row (a failure is kept in the row).
  void add_run(const std::string& dir);
  // The "Compare run" field (kRunFieldCapacity bytes) and its Enter/button: adds the typed run.
  static constexpr size_t kRunFieldCapacity = 512;
  char* run_field() { return run_field_; }
  void add_typed_run();
  // Removes comparison row i (i >= 1) and the selection.
  void remove_run(size_t i);
  // Shows test image `index` in every row from the next refresh on.
  void request_image(int64_t index) { pending_index_ = index; }
  // The Fashion-MNIST files to pick from (kept once set: the first run's or the live task's).
  void set_data_dir(const std::string& dir);
  // "Show": the picker's image becomes the next one shown, or pick_error() says why not.
  void show_pick();
  const std::string& pick_error() const { return pick_error_; }
  int64_t index() const { return index_; }  // the shown test image; -1: the live run's
  std::string image_text() const;           // "test image 7: Sneaker" ("": none yet)

  // Once a frame: takes the pending image (or the live run's), the live row from `snap`, every
  // row's overlays, and rebuilds the grid when something changed. image_task: the live run is
  // an image classifier. Returns the test image the trainer must probe (-1: no change).
  int64_t refresh(const Snapshot& snap, bool image_task);

  size_t row_count() const { return rows_.size(); }
  const Row& row(size_t i) const { return *rows_[i]; }
  // "live", or the run directory's last part (the whole path when two rows would share it).
  std::string row_label(size_t i) const;
  int layers() const;  // the most layers of any row (the layer control's range)

  const std::vector<Variant>& variants() const { return variants_; }
  size_t variant() const { return variant_; }
  void use_variant(size_t i);
  uint64_t grid_key() const { return grid_key_; }  // changes whenever the grid is rebuilt
  const fig::Figure& grid() const { return grid_figure_; }
  const std::vector<figures::ImageAttentionCell>& cells() const { return cells_; }
  bool grid_has_live() const { return grid_has_live_; }  // the live row is in the grid
  const std::string& grid_error() const { return grid_error_; }
  // The readouts of a grid cell: the picture's pixel, or an overlay's patch.
  std::string picture_text(const figures::ImageAttentionCell& c, int row, int col,
                           float value) const;
  std::string overlay_text(const figures::ImageAttentionCell& c, int row, int col,
                           float value) const;

  const Selection& selection() const { return selected_; }
  bool has_selection() const { return selected_.row >= 0; }
  void select(const figures::ImageAttentionCell& c) { selected_ = {c.row, c.layer, c.column}; }
  void close_full_map() { selected_ = {}; }
  bool selection_is_live() const;
  // The full map of the selection (an empty figure when there is none, or why in full_title()).
  const fig::Figure& full_map();
  const std::string& full_title() const { return full_title_; }
  std::string full_map_text(int row, int col, float value) const;  // "query i CLS -> key j ..."

  // What the panel shows (the GUI's exit report and tests): the image, the controls, the grid,
  // the full map and per row its source, image, prediction and per map the CLS patch weights.
  void make_report(const Snapshot& snap, const Screen& screen);
  const nlohmann::json& report() const { return report_; }
  static std::vector<std::string> figures(const Snapshot& snap);

 private:
  void choose_image(const Snapshot& snap, int64_t* ask);
  void sync_live_row(const Snapshot& snap, bool image_task);
  void probe_saved_rows();
  void compute(Row& row);
  uint64_t state_key(const Snapshot& snap);
  void rebuild_grid();
  std::vector<figures::ImageAttentionRow> grid_rows() const;
  nlohmann::json row_report(size_t i, const Screen& screen) const;
  render::Colormap overlay_colormap() const {
    return controls.colormap == 0 ? render::Colormap::Hot : render::Colormap::Viridis;
  }

  std::vector<std::unique_ptr<Row>> rows_;  // rows_[0]: the live run
  int64_t index_ = -1;
  int64_t pending_index_ = -1;   // asked for by request_image() / show_pick()
  std::string live_mechanisms_;  // "dot/pseudo": the live run's layers, as in the titles
  std::string data_dir_;
  std::string pick_error_;
  char run_field_[kRunFieldCapacity] = {};
  Selection selected_;
  std::vector<Variant> variants_;
  size_t variant_ = 0;
  fig::Figure grid_figure_;
  std::vector<figures::ImageAttentionCell> cells_;
  uint64_t grid_key_ = 0;
  bool grid_has_live_ = false;
  std::string grid_error_;
  fig::Figure full_figure_;
  uint64_t full_key_ = 0;
  std::string full_title_;
  int full_grid_ = 0;  // the full map's patch grid side (token names)
  nlohmann::json report_ = nlohmann::json::object();
};

}  // namespace attn::gui
