// KY Transform lab panel (seed 000, section 3): type f(x), pick x0 and a connection-function
// kind, and watch theta(h) as h -> 0 with the limit it reaches. For the polynomial kinds both
// readings are shown side by side: the (n+1)-point fit (Taylor coefficients) and the seed's
// literal two-constraint minimum-norm system (f, f', 0, ...). Also: f against the fitted
// connection function, the linear-linear chain-rule check (eq. 32) and the seed's Example 3.1
// contradiction, with computed numbers.
// Contract: draws one ImGui window named "KY Transform lab" (with a close button when `open`
// is given; nothing when *open is false). Recomputes only when an input changes; bad input
// (a parse error, f not finite near x0, a setting out of range) is shown in red, never thrown.
// Uses no torch and no training state.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "app/gui/panel.h"
#include "app/gui/plot/live_figure.h"
#include "core/analysis/ky_transform.h"

struct ImFont;

namespace attn::gui {

class KyLabPanel : public Panel {
 public:
  KyLabPanel();
  void draw(FrameContext& frame) override;

 private:
  // Everything a computation depends on; compared against the last computed copy.
  struct Inputs {
    std::string f = "exp(x)*cos(2*x)";
    std::string g = "sin(x) + 1";
    double x0 = 0.0;
    int kind = 1;  // index into all_ky_kinds(): poly
    KySettings settings;
    bool operator==(const Inputs& o) const;
  };

  void recompute();
  void draw_inputs();
  void draw_theta_plot(ImFont* font);
  void draw_parameter_table();
  void draw_fit_plot(ImFont* font);
  fig::Figure theta_figure() const;
  fig::Figure fit_figure(double* lo, double* hi) const;
  void draw_chain_section();
  void draw_seed_note();

  Inputs in_, computed_;
  bool have_computed_ = false;
  char f_buf_[256] = {};
  char g_buf_[256] = {};

  // Results of the last computation (empty optionals where it failed).
  std::string error_;        // f's error (parse error, not finite, settings), shown in red
  int error_position_ = -1;  // parse-error position in f, for the caret
  std::optional<Expression> f_;
  std::optional<KyResult> result_;
  std::optional<KyResult> other_reading_;  // poly <-> poly-literal when kind is polynomial
  std::vector<double> reference_;          // expected limit from independent f, f' (poly runs)
  std::string reference_label_;
  std::string chain_error_;
  std::optional<KyChainCheck> chain_;
  std::vector<KySeedExample> seed_;  // Example 3.1 at a few h, computed once

  int plot_component_ = -1;  // theta component shown in the h plot (-1: all)
  int fit_step_ = 0;         // history index whose g(t; theta(h)) is drawn
  LiveFigure theta_plot_, fit_plot_;
};

}  // namespace attn::gui
