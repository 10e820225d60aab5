// The Connection Transformer panel's model (app/panels/mechanisms/conn_transformer_model.h) and
// the conn-trace figure it shows, also exportable (figures::build_figure): the figures equal the
// snapshot's values, and the "reorder" control changes what is drawn.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "app/figures/catalog/figures.h"
#include "app/panels/mechanisms/conn_transformer_figures.h"
#include "app/panels/mechanisms/conn_transformer_model.h"
#include "core/base/error.h"
#include "core/models/conn/conn_view.h"
#include "render/plot/export/figure_export.h"
#include "tests/app/panel_models/figure_lookup.h"

using namespace attn;
using attn::test::line_named;
using gui::ConnTransformerModel;

namespace {

constexpr int kSlots = 3;
// C[i][j], row-major: slot 2 has the largest total |C| in and out, then slot 0, then slot 1.
const std::vector<float> kC = {0.10f, -0.05f, 0.30f,   //
                               0.02f, 0.01f,  -0.04f,  //
                               0.50f, 0.03f,  -0.60f};
// The trace: (K + 1) x slots norms, K = 2.
const std::vector<float> kTrace = {1.0f, 2.0f, 3.0f,  //
                                   1.5f, 2.5f, 4.0f,  //
                                   0.5f, 1.0f, 6.0f};

Snapshot conn_snapshot(uint64_t serial, bool with_trace = true, bool tracking = true) {
  auto v = std::make_shared<ConnView>();
  v->slots = kSlots, v->d_model = 8, v->steps = 2, v->heads = 1;
  v->mixing = "none", v->variant = "seed", v->control = "norm-bound", v->limit = 0.95;
  v->matrix = std::make_shared<const std::vector<float>>(kC);
  v->matrix_step = 40;
  v->eigen_step = 40;
  v->eigen_re = {1.2f, 0.9f, 0.9f};
  v->eigen_im = {0.0f, 0.1f, -0.1f};
  if (tracking) {
    v->spectral_radius.steps = {10, 20, 30};
    v->spectral_radius.values = {1.1f, 1.0f, 0.97f};
  }
  if (with_trace) {
    v->trace = kTrace;
    v->trace_step = 40;
  }
  Snapshot s;
  s.serial = serial;
  s.step = 40;
  s.model_views = conn_model_views(*v);
  return s;
}

// The trace figure holds every slot's norms over k, one slot after another with a NaN between,
// and their mean: checked against kTrace directly.
void check_trace(const fig::Figure& f) {
  CHECK(f.name == "conn-trace");
  const fig::LineSeries& slots = line_named(f, "slots");
  const int rows = static_cast<int>(kTrace.size()) / kSlots;
  REQUIRE(slots.y.size() == static_cast<size_t>(kSlots * (rows + 1)));
  for (int s = 0; s < kSlots; ++s) {
    for (int k = 0; k < rows; ++k) {
      CHECK(slots.x[s * (rows + 1) + k] == k);
      CHECK(slots.y[s * (rows + 1) + k] == kTrace[k * kSlots + s]);
    }
    CHECK(std::isnan(slots.y[s * (rows + 1) + rows]));
  }
  const fig::LineSeries& mean = line_named(f, "mean over slots");
  REQUIRE(mean.y.size() == static_cast<size_t>(rows));
  for (int k = 0; k < rows; ++k)
    CHECK(mean.y[k] ==
          doctest::Approx((kTrace[k * 3] + kTrace[k * 3 + 1] + kTrace[k * 3 + 2]) / 3));
}

}  // namespace

TEST_CASE("conn model: the figures for a snapshot hold its values") {
  ConnTransformerModel m;
  const Snapshot snap = conn_snapshot(1);
  m.update(snap);
  for (int k = 0; k < ConnTransformerModel::kPlots; ++k)
    CHECK_MESSAGE(m.plot(ConnTransformerModel::PlotId(k)).ok,
                  m.plot(ConnTransformerModel::PlotId(k)).note);
  const fig::Heatmap& c = m.plot(ConnTransformerModel::kMatrix).figure.panels.at(0).heatmaps.at(0);
  CHECK(c.rows == kSlots);
  CHECK(c.values == kC);
  const fig::Panel& eig = m.plot(ConnTransformerModel::kEigenvalues).figure.panels.at(0);
  bool found = false;
  for (const fig::ScatterSeries& s : eig.scatters)
    if (s.name == "eigenvalues") {
      found = true;
      CHECK(s.x == std::vector<double>{1.2f, 0.9f, 0.9f});
      CHECK(s.y == std::vector<double>{0.0f, 0.1f, -0.1f});
    }
  CHECK(found);
  CHECK(line_named(m.plot(ConnTransformerModel::kSpectral).figure, "rho(I + C)").y ==
        std::vector<double>{1.1f, 1.0f, 0.97f});
  check_trace(m.plot(ConnTransformerModel::kTrace).figure);
  CHECK(m.figures(snap) ==
        std::vector<std::string>{"conn-matrix", "conn-eigenvalues", "conn-spectral", "conn-trace"});
  REQUIRE(m.shown_figure("conn-trace") != nullptr);
  CHECK(m.shown_figure("conn-trace") == &m.plot(ConnTransformerModel::kTrace).figure);
  CHECK(m.report()["figures"]["trace"] == "conn-trace");
  // The statistics text names the cycle and the strongest links, computed from C.
  REQUIRE(m.view());
  const auto lines = ConnTransformerModel::stats_lines(*m.view());
  REQUIRE(lines.size() == 4);
  // (C[0][0] = 0.1f lies just above the threshold 0.1: slot 0's self-loop is a cycle too.)
  CHECK(lines[2] == "shortest cycles: 0 -> 0;  0 -> 2 -> 0");
  CHECK(lines[3].rfind("strongest links: 2->0 0.5, 0->2 0.3", 0) == 0);
}

TEST_CASE("conn model: reorder permutes C by total |C| and relabels the slots") {
  ConnTransformerModel m;
  const Snapshot snap = conn_snapshot(1);
  m.update(snap);
  const fig::Figure plain = m.plot(ConnTransformerModel::kMatrix).figure;
  m.set_reorder(true);
  m.update(snap);  // the same snapshot: the control alone rebuilds
  // Brute force: total |C| of each slot, in and out, sorted descending.
  std::vector<double> strength(kSlots, 0);
  for (int i = 0; i < kSlots; ++i)
    for (int j = 0; j < kSlots; ++j)
      strength[i] += std::abs(kC[i * 3 + j]), strength[j] += std::abs(kC[i * 3 + j]);
  std::vector<int> order(kSlots);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return strength[a] > strength[b]; });
  CHECK(order == std::vector<int>{2, 0, 1});
  CHECK(m.order() == order);
  const fig::Figure& shown = m.plot(ConnTransformerModel::kMatrix).figure;
  const fig::Heatmap& h = shown.panels.at(0).heatmaps.at(0);
  CHECK(h.values != plain.panels.at(0).heatmaps.at(0).values);
  for (int r = 0; r < kSlots; ++r)
    for (int q = 0; q < kSlots; ++q) CHECK(h.values[r * 3 + q] == kC[order[r] * 3 + order[q]]);
  REQUIRE(shown.panels.at(0).x.ticks.size() == 3);
  CHECK(shown.panels.at(0).x.ticks[0].label == "2");
  CHECK(shown.title.find("reordered") != std::string::npos);
  CHECK(m.report()["reorder"] == true);
  // Back off: the snapshot's order again.
  m.set_reorder(false);
  m.update(snap);
  CHECK(m.plot(ConnTransformerModel::kMatrix).figure.panels.at(0).heatmaps.at(0).values == kC);
}

TEST_CASE("conn model: a missing trace or spectrum is a note, and conn-trace is not offered") {
  ConnTransformerModel m;
  const Snapshot snap = conn_snapshot(1, /*with_trace=*/false, /*tracking=*/false);
  m.update(snap);
  CHECK_FALSE(m.plot(ConnTransformerModel::kTrace).ok);
  CHECK(m.plot(ConnTransformerModel::kTrace).note == "no probe yet");
  CHECK_FALSE(m.plot(ConnTransformerModel::kSpectral).ok);
  CHECK(m.plot(ConnTransformerModel::kSpectral).note.find("tracking is off") != std::string::npos);
  CHECK(m.figures(snap) ==
        std::vector<std::string>{"conn-matrix", "conn-eigenvalues", "conn-spectral"});
  CHECK(m.shown_figure("conn-trace") == nullptr);
  // A later snapshot with the probe's trace: the model rebuilds for it.
  m.update(conn_snapshot(2));
  CHECK(m.plot(ConnTransformerModel::kTrace).ok);
  check_trace(m.plot(ConnTransformerModel::kTrace).figure);
  // Not a conn model: nothing shown, nothing offered.
  Snapshot none;
  CHECK_FALSE(ConnTransformerModel::shows(none));
  CHECK(m.figures(none).empty());
}

TEST_CASE("conn-trace is exportable: figures_for lists it, build_figure and its CSV equal it") {
  const Snapshot snap = conn_snapshot(1);
  bool listed = false;
  for (const figures::FigureSpec& spec : figures::figures_for(snap))
    listed |= spec.name == "conn-trace";
  CHECK(listed);
  const fig::Figure f = figures::build_figure("conn-trace", snap);
  check_trace(f);
  CHECK(f.step == 40);
  // The CSV rows of the "slots" series carry the trace's values.
  const std::string csv = fig::figure_csv(f);
  CHECK(csv.find("conn-trace") != std::string::npos);
  CHECK(csv.find(",slots,line,") != std::string::npos);
  CHECK(csv.find(",6,") != std::string::npos);
  // Without a probe it is neither listed nor built, and the message lists what the run has.
  const Snapshot bare = conn_snapshot(1, /*with_trace=*/false);
  for (const figures::FigureSpec& spec : figures::figures_for(bare))
    CHECK(spec.name != "conn-trace");
  CHECK_THROWS_WITH_AS(figures::build_figure("conn-trace", bare), doctest::Contains("it has: loss"),
                       Error);
  CHECK_THROWS_AS(figures::conn_trace_figure(bare), Error);
}

TEST_CASE("conn transformer model: the eigenvalue plot names the step they were computed at") {
  // Eigenvalues are refreshed every eigen_every steps: at step 400 the plot still shows step
  // 40's, and says "at step 40" (the window's header and timeline give the model's step).
  Snapshot snap = conn_snapshot(1);
  snap.step = 400;
  ConnTransformerModel m;
  m.update(snap);
  const std::string& title = m.plot(ConnTransformerModel::kEigenvalues).figure.title;
  CHECK(title.find("at step 40 ") != std::string::npos);
  CHECK(title.find("step 400") == std::string::npos);
  // The spectral plot's four entries go below the plot, not over its curves.
  CHECK(m.plot(ConnTransformerModel::kSpectral).figure.shared_legend);
}
