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
//  - Click a cell: the full S x S map of that head (or the head mean) under the grid, with a
//    colorbar and a hover readout "query -> key = w".
//  - Each row's title gives the model, its step and its prediction on the image.
// Saved runs are loaded on the UI thread when added (a checkpoint of a small ViT: tens of ms)
// and probed when the image changes (one forward pass of one image: milliseconds).
// Contract: draws one ImGui window named "Image attention" (a close button when `open` is given).
// Textures are re-uploaded only when a row's maps, the image or the display settings change.
// Needs the GL context current; destroy before the window. No torch.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/training/image_probe.h"
#include "core/views/snapshot.h"
#include "gui/panel.h"
#include "render/gl/gl_texture.h"

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
  void upload(Row& row);
  void draw_toolbar(const Snapshot& snap, Trainer& trainer);
  void draw_grid(ImFont* font);
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
  int colormap_ = 0;       // 0 hot, 1 viridis
  float alpha_ = 0.6f;
  // One scale for every map by default: per-map scales make a near-uniform layer look as hot as
  // a sharp one, and no single colorbar can be read against them.
  bool shared_scale_ = true;
  bool show_mean_ = true;
  uint64_t settings_key_ = 0;  // colormap, scale: a change re-uploads every overlay
  struct Selection {
    int row = -1, layer = -1, head = -1;  // head == heads: the head mean
  } selected_;
  render::Texture2D full_map_, colorbar_;  // colorbar_: the overlay colormap, also the full map's
  uint64_t full_map_key_ = 0;
  float full_map_vmax_ = 1;
  int full_map_size_ = 0;  // S of the full map drawn last (report)
  nlohmann::json report_ = nlohmann::json::object();
};

}  // namespace attn::gui
