// Connection Transformer panel (model.architecture "conn", seed 001; docs/design/MECHANISMS.md
// section 2), from Snapshot::conn (core/views/conn_view.h):
//  - C as a heatmap, diverging colormap centred on 0 with its colorbar; hover reads C[i,j]
//    ("slot i influences slot j"); optional reordering of the slots by total |influence|.
//  - All eigenvalues of I+C in the complex plane (slow cadence) with the unit circle and the
//    limit circle; hover reads the nearest eigenvalue and its modulus.
//  - rho(I+C) and ||I+C||_2 over training (the warm-started per-step estimates), with the
//    control's limit r and 1 as dashed lines.
//  - The reasoning trace of the probe input: every slot's state norm after compression and
//    after each of the K steps (thin lines), their mean (thick).
//  - Connection statistics: strongest links, inhibitory count, sparsity, cycles in C > t; the
//    parameter count beside the seed's formula.
// rho and the norm are measurements, not convergence guarantees (LayerNorm after each step).
// Contract: every plot is a figure of the figure model drawn by the screen painter
// (gui/plot/live_figure.h): C, the eigenvalues and the spectra are figures::conn_matrix_figure,
// conn_eigenvalues_figure and conn_spectral_figure (the "reorder" control permutes the built
// matrix figure's rows and columns, relabels its ticks with the real slot indices and says so in
// its title); the trace is a figure built here ("conn-trace"). Each Export button sends the
// figure on screen to the Export dialog. The figures are rebuilt only when the snapshot
// (serial) or a control changes. Needs the GL context current; destroy before the window.
// No torch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "app/gui/panel.h"
#include "app/gui/plot/live_figure.h"
#include "core/views/conn_view.h"
#include "core/views/snapshot.h"
#include "render/plot/figure.h"

struct ImFont;

namespace attn::gui {

class ConnTransformerPanel : public Panel {
 public:
  void draw(FrameContext& frame) override;
  std::vector<std::string> figures(const Snapshot& snap) const override;
  bool wants_auto_open(const Snapshot& snap) const override { return snap.conn != nullptr; }

 private:
  UiState* ui_ = nullptr;  // this frame's (the timeline's cursor and click requests)
  // A plot area: the figure on screen, whether it could be built, and why not.
  struct Plot {
    LiveFigure live;
    fig::Figure figure;
    bool ok = false;
    std::string note;
  };

  void rebuild(const Snapshot& snap);
  // Draws plot.figure in `size` at the cursor (or why it has none); true when drawn.
  bool draw_plot(Plot& plot, ImFont* font, ImVec2 size, const char* id);
  void draw_matrix(const ConnView& v, ImFont* font, ImVec2 size);
  void draw_eigenvalues(ImFont* font, ImVec2 size);
  void draw_spectra(ImFont* font, ImVec2 size);
  void draw_trace(ImFont* font, ImVec2 size);
  void draw_stats(const ConnView& v);

  Plot matrix_, eigen_, spectral_, trace_;
  std::vector<int> order_;  // display position -> slot
  bool reorder_ = false;
  uint64_t built_serial_ = ~uint64_t(0);
  bool built_reorder_ = false;
};

}  // namespace attn::gui
