// The KY Transform lab panel's model (ky_lab_panel.h draws it): the lab's inputs (f, g, x0, the
// connection-function kind and its settings), what they compute (the transform, the other
// polynomial reading or the limit expected from f and f', the chain-rule check, the seed's
// Example 3.1) and the figures shown: ky-theta and ky-fit (app/figures/models/ky_lab_figures.h, the
// same builders `attnlab ky --figure` writes) and ky-convergence.
// Contract: plain data, no ImGui, no torch; UI thread only. update() recomputes only when an
// input changed; bad input (a parse error, f not finite near x0, a setting out of range) becomes
// error() (with the parse position), never an exception. The controls (the theta component shown,
// the step whose fit is drawn) are clamped to the last result.
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/ky_transform.h"
#include "render/plot/figure.h"

namespace attn::gui {

class KyLabModel {
 public:
  // Everything a computation depends on; compared against the last computed copy.
  struct Inputs {
    std::string f = "exp(x)*cos(2*x)";
    std::string g = "sin(x) + 1";
    double x0 = 0.0;
    int kind = 1;  // index into all_ky_kinds(): poly
    KySettings settings;
    bool operator==(const Inputs& o) const;
  };
  static constexpr size_t kTextCapacity = 256;  // bytes of the f and g fields, NUL included

  KyLabModel();

  // The inputs, for the view's widgets (f and g through their fields below).
  Inputs& inputs() { return in_; }
  const Inputs& computed() const { return computed_; }
  KyKind kind() const { return all_ky_kinds()[static_cast<size_t>(in_.kind)]; }
  // The f and g text fields (kTextCapacity bytes, NUL-terminated); the view calls the
  // matching set_ after an edit. set_f/set_g also fill the field (truncated to fit).
  char* f_field() { return f_buf_; }
  char* g_field() { return g_buf_; }
  void set_f(const std::string& f);
  void set_g(const std::string& g);

  // Recomputes when the inputs changed since the last computation.
  void update();

  // Results of the last computation.
  const std::string& error() const { return error_; }
  int error_position() const { return error_position_; }  // in computed().f; -1: none
  const std::optional<KyResult>& result() const { return result_; }
  const std::optional<KyResult>& other_reading() const { return other_reading_; }
  const std::vector<double>& reference() const { return reference_; }
  const std::string& reference_label() const { return reference_label_; }
  const std::string& chain_error() const { return chain_error_; }
  const std::optional<KyChainCheck>& chain() const { return chain_; }
  const std::vector<KySeedExample>& seed_examples() const { return seed_; }
  bool polynomial() const;  // the result's kind is poly or poly-literal

  // The controls: the theta component the h plot shows (-1: all) and the step whose fit is drawn.
  int component() const { return component_; }
  void set_component(int c);
  int fit_step() const { return fit_step_; }
  void set_fit_step(int k);
  // The step count of the last result (0: none), the bound of set_fit_step.
  int steps() const;

  // The figures for the last result (each throws attn::Error when there is none).
  fig::Figure theta_figure() const;
  fig::Figure fit_figure() const;
  fig::Figure convergence_figure() const;
  // f at t (NaN without a parsed f), for the fit plot's tooltip.
  double f_at(double t) const;

  // For the exit report and tests: the inputs computed, the result and the controls.
  nlohmann::json report() const;

 private:
  void second_opinion(const KySettings& s);

  Inputs in_, computed_;
  bool have_computed_ = false;
  char f_buf_[kTextCapacity] = {};
  char g_buf_[kTextCapacity] = {};
  std::string error_;
  int error_position_ = -1;
  std::optional<Expression> f_;
  std::optional<KyResult> result_;
  std::optional<KyResult> other_reading_;  // poly <-> poly-literal when kind is polynomial
  std::vector<double> reference_;          // expected limit from independent f, f' (other kinds)
  std::string reference_label_;
  std::string chain_error_;
  std::optional<KyChainCheck> chain_;
  std::vector<KySeedExample> seed_;  // Example 3.1 at a few h, computed once
  int component_ = -1;
  int fit_step_ = 0;
};

}  // namespace attn::gui
