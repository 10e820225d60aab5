// Connection Transformer panel (model.architecture "conn", seed 001; docs/design/MECHANISMS.md
// section 2), the view of ConnTransformerModel (conn_transformer_model.h), from Snapshot::conn:
//  - C as a heatmap, diverging colormap centred on 0 with its colorbar; hover reads C[i,j]
//    ("slot i influences slot j"); optional reordering of the slots by total |influence|; zoom
//    (wheel), pan (drag) and crop as the attention maps (render/plot/map_view.h).
//  - All eigenvalues of I+C in the complex plane (slow cadence) with the unit circle and the
//    limit circle; hover reads the nearest eigenvalue and its modulus.
//  - rho(I+C) and ||I+C||_2 over training (the warm-started per-step estimates), with the
//    control's limit r and 1 as dashed lines.
//  - The reasoning trace of the probe input: every slot's state norm after compression and
//    after each of the K steps (thin lines), their mean (thick).
//  - Connection statistics: strongest links, inhibitory count, sparsity, cycles in C > t; the
//    parameter count beside the seed's formula.
// rho and the norm are measurements, not convergence guarantees (LayerNorm after each step).
// Contract: the model builds every figure (app/figures: conn-matrix, conn-eigenvalues,
// conn-spectral, conn-trace, all exportable); this view only lays them out, draws them with the
// screen painter (gui/plot/live_figure.h), reads the hovered value and sends the figure on
// screen to the Export dialog. Needs the GL context current; destroy before the window. No torch.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "app/gui/plot/live_figure.h"
#include "app/panels/mechanisms/conn_transformer_model.h"
#include "app/panels/model_panel.h"

struct ImFont;

namespace attn::gui {

// The figures it shows and their Export button come from the model (ModelPanel).
static_assert(kModelShowsFigures<ConnTransformerModel>);

class ConnTransformerPanel : public ModelPanel<ConnTransformerModel> {
 public:
  ConnTransformerPanel();
  // conn-matrix as on screen (zoom and crop included); the others as the model built them.
  const fig::Figure* shown_figure(const std::string& name) const override;
  void draw(FrameContext& frame) override;
  bool wants_auto_open(const Snapshot& snap) const override {
    return snap.model_view("conn") != nullptr;
  }

 private:
  // Draws the plot's figure in `size` at the cursor (or why it has none); true when drawn.
  bool draw_plot(Model::PlotId id, ImFont* font, ImVec2 size, const char* label);
  void draw_toolbar(const Snapshot& snap);
  void draw_matrix(const ConnView& v, ImFont* font, ImVec2 size);
  void draw_eigenvalues(ImFont* font, ImVec2 size);
  void draw_spectra(ImFont* font, ImVec2 size, UiState& ui);
  void draw_trace(ImFont* font, ImVec2 size);

  std::array<LiveFigure, Model::kPlots> live_;
  mutable fig::Figure matrix_on_screen_;  // shown_figure("conn-matrix"), made when asked
};

}  // namespace attn::gui
