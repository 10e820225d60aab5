// Connection Transformer panel (model.architecture "conn", seed 001; docs/design/MECHANISMS.md
// section 2), from Snapshot::conn (core/views/conn_view.h):
//  - C as a heatmap, diverging colormap centred on 0 with its colorbar; hover reads C[i,j]
//    ("slot i influences slot j"); optional reordering of the slots by total |influence|.
//  - rho(I+C) and ||I+C||_2 over training (the warm-started per-step estimates), with the
//    control's limit r and 1 as dashed lines.
//  - All eigenvalues of I+C in the complex plane (slow cadence) with the unit circle and the
//    limit circle.
//  - The reasoning trace of the probe input: every slot's state norm after compression and
//    after each of the K steps (thin lines), their mean (thick).
//  - Connection statistics: strongest links, inhibitory count, sparsity, cycles in C > t; the
//    parameter count beside the seed's formula.
// rho and the norm are measurements, not convergence guarantees (LayerNorm after each step).
// Contract: draws one ImGui window named "Connection Transformer" (a close button when `open`
// is given) from the snapshot only; the heatmap texture is re-uploaded only when a new C is
// published (matrix_step, generation) or the ordering changes. Needs the GL context current;
// destroy before the window. No torch.
#pragma once
#include <cstdint>
#include <vector>

#include "core/views/conn_view.h"
#include "core/views/snapshot.h"
#include "gui/panel.h"
#include "render/gl/gl_texture.h"

struct ImFont;

namespace attn::gui {

class ConnPanel : public Panel {
 public:
  void draw(FrameContext& frame) override;
  std::vector<std::string> figures(const Snapshot& snap) const override;
  bool wants_auto_open(const Snapshot& snap) const override { return snap.conn != nullptr; }

 private:
  void update_texture(const ConnView& v, uint64_t generation);
  void draw_matrix(const ConnView& v, ImFont* font, float width, float height);
  void draw_spectra(const ConnView& v, ImFont* font, float width, float height);
  void draw_eigenvalues(const ConnView& v, ImFont* font, float width, float height);
  void draw_trace(const ConnView& v, ImFont* font, float width, float height);
  void draw_stats(const ConnView& v);

  render::Texture2D matrix_, colorbar_;
  std::vector<int> order_;  // display position -> slot
  float vmax_ = 1;
  bool reorder_ = false;
  uint64_t texture_key_ = ~0ull;
};

}  // namespace attn::gui
