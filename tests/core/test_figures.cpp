// Figures built from a real session's snapshot (app/figures): the CSV export holds exactly the
// tensors they came from (attention weights of a fresh forward pass, the Connection Transformer's
// C, the loss history), and a saved run's snapshot equals the live one's.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "app/figures/catalog/figures.h"
#include "app/figures/models/ky_lab_figures.h"
#include "core/base/error.h"
#include "core/models/conn/conn_model.h"
#include "core/models/conn/conn_view.h"
#include "core/runs/directory/run_dir.h"
#include "core/training/headless/headless.h"
#include "core/training/interventions/run_interventions.h"
#include "core/training/recording/saved_run.h"
#include "core/training/session/session.h"
#include "helpers.h"
#include "render/plot/export/figure_export.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

struct CsvCell {
  std::string series, kind;
  long i = 0, j = 0;
  double x = 0, y = 0, value = 0;
};

std::vector<CsvCell> parse(const std::string& csv) {
  std::vector<CsvCell> cells;
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::string cur;
    bool quoted = false;
    for (char c : line) {
      if (c == '"')
        quoted = !quoted;
      else if (c == ',' && !quoted)
        f.push_back(cur), cur.clear();
      else
        cur += c;
    }
    f.push_back(cur);
    REQUIRE(f.size() == 16);
    CsvCell c;
    c.series = f[3], c.kind = f[4];
    c.i = f[5].empty() ? 0 : std::stol(f[5]);
    c.j = f[6].empty() ? 0 : std::stol(f[6]);
    c.x = f[7].empty() ? 0 : std::stod(f[7]);
    c.y = f[8].empty() ? 0 : std::stod(f[8]);
    c.value = f[9].empty() ? 0 : std::stod(f[9]);
    cells.push_back(c);
  }
  return cells;
}

}  // namespace

TEST_CASE("figures: attention CSV equals the weights of an independent forward pass") {
  ExperimentConfig c = test::tiny_config("copy");
  TrainingSession session(c);
  for (int i = 0; i < 5; ++i) session.train_step();
  Snapshot snap;
  session.fill_snapshot(snap);
  session.probe_attention(snap);
  const fig::Figure f = figures::build_figure("attention", snap);
  CHECK(f.panels.size() == static_cast<size_t>(c.model.layers * c.model.heads));

  // The reference: the probe input through the model again.
  const ProbeResult ref =
      probe_model(session.model(), session.task().probe_input().to(torch::kCPU));
  std::map<std::string, const AttentionMap*> by_name;
  for (const auto& m : ref.maps)
    by_name["layer" + std::to_string(m.layer) + "_head" + std::to_string(m.head)] = &m;
  size_t checked = 0;
  for (const auto& cell : parse(fig::figure_csv(f))) {
    REQUIRE(cell.kind == "heatmap");
    const AttentionMap* m = by_name.at(cell.series);
    CHECK(static_cast<float>(cell.value) == m->weights[cell.i * m->size + cell.j]);
    ++checked;
  }
  CHECK(checked == ref.maps.size() * ref.maps[0].weights.size());
}

TEST_CASE("figures: conn-matrix CSV equals the model's effective C; loss CSV equals the history") {
  ExperimentConfig c = test::tiny_config("recall");
  c.model.architecture = "conn";
  c.model.d_model = 16;
  c.model.heads = 1;
  c.model.conn.slots = 12;
  c.model.conn.steps = 2;
  TrainingSession session(c);
  for (int i = 0; i < 12; ++i) session.train_step();
  session.evaluate();
  Snapshot snap;
  session.fill_snapshot(snap);
  session.probe_attention(snap);
  const auto conn = conn_view_of(snap);
  REQUIRE(conn);
  REQUIRE(conn->matrix);
  const torch::Tensor ref = session.model()->conn()->effective_connection().to(torch::kFloat).cpu();
  REQUIRE(ref.size(0) == 12);
  size_t checked = 0;
  for (const auto& cell : parse(fig::figure_csv(figures::build_figure("conn-matrix", snap)))) {
    CHECK(static_cast<float>(cell.value) == ref[cell.i][cell.j].item<float>());
    ++checked;
  }
  CHECK(checked == 144);

  // Eigenvalues: the figure's points are the view's, and the unit circle is drawn.
  const fig::Figure eig = figures::build_figure("conn-eigenvalues", snap);
  REQUIRE(eig.panels[0].scatters.size() == 1);
  CHECK(eig.panels[0].scatters[0].x.size() == conn->eigen_re.size());

  size_t losses = 0;
  for (const auto& cell : parse(fig::figure_csv(figures::build_figure("loss", snap)))) {
    if (cell.series != "train") continue;
    CHECK(static_cast<int64_t>(cell.x) == snap.train_loss.steps[cell.i]);
    CHECK(static_cast<float>(cell.y) == snap.train_loss.values[cell.i]);
    ++losses;
  }
  CHECK(losses == snap.train_loss.steps.size());
  CHECK(losses == 12);
}

TEST_CASE("figures: a saved run's snapshot gives the live maps; unknown names list the known") {
  const fs::path dir =
      fs::temp_directory_path() / ("attnlab_fig_run_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  ExperimentConfig c = test::tiny_config("copy");
  c.train.steps = 20;
  HeadlessOptions o;
  o.out_dir = dir.string();
  o.threads = 1;
  train_headless(c, o);
  const RunDirectory run = read_run_directory(dir.string());
  CHECK(run.finished);
  CHECK(run.has_checkpoint);
  CHECK(run.mechanism() == "dot");
  CHECK(run.eval_loss.steps == std::vector<int64_t>{10, 20});
  const auto snap = snapshot_of_run(run);
  CHECK(snap->step == 20);
  CHECK(snap->train_loss.steps == run.train_loss.steps);

  // The same weights probed directly.
  ExperimentConfig cc = TrainingSession::checkpoint_config((dir / "checkpoint").string());
  TrainingSession session(cc);
  session.load((dir / "checkpoint").string());
  const ProbeResult ref = probe_model(session.model(), session.task().probe_input());
  REQUIRE(snap->attention_maps().size() == ref.maps.size());
  for (size_t k = 0; k < ref.maps.size(); ++k)
    CHECK(snap->attention_maps()[k].weights == ref.maps[k].weights);

  const auto names = figures::figures_for(*snap);
  REQUIRE(names.size() == 3);
  CHECK(names[2].name == "importance");  // recorded in views.rec at the checkpoint's step
  CHECK_THROWS_WITH_AS(
      figures::build_figure("conn-matrix", *snap),
      doctest::Contains(
          "unknown figure 'conn-matrix' for this run; it has: loss, attention, importance"),
      Error);
  // The recorded importance is the checkpoint's, computed afresh on the same batches.
  const ImportanceTable fresh =
      session_importance(session, AblationMode::zero, kRecordedImportanceBatches);
  REQUIRE(snap->interventions);
  CHECK(snap->interventions->importance.step == 20);
  CHECK(snap->interventions->importance.loss == fresh.loss);
  CHECK(snap->interventions->importance.baseline.loss == fresh.baseline.loss);
  const fig::Figure f = figures::build_figure("importance", *snap);
  REQUIRE(f.panels.size() == 1);
  REQUIRE(f.panels[0].heatmaps.size() == 1);
  CHECK(f.panels[0].heatmaps[0].values[1] ==
        fresh.loss[1] - static_cast<float>(fresh.baseline.loss));
  fs::remove_all(dir);
}

TEST_CASE("figures: geometry and KY convergence figures hold the lab's own numbers") {
  geometry::Scene scene = geometry::preset(geometry::preset_names().front());
  figures::GeometryFigureInput in;
  in.scene = scene;
  in.query = {0.4, -0.2};
  in.grid = {9, 2.0, 33};
  in.circle_radius = 1.0;
  const fig::Figure g = figures::geometry_figure(in);
  REQUIRE(g.panels.size() == 1);
  const fig::Panel& p = g.panels[0];
  const auto values = geometry::value_points(scene);
  const auto hull = geometry::convex_hull(values);
  // The screen's default views: hull and bounding box, no linear images or ellipses.
  REQUIRE(p.polygons.size() == 2);
  CHECK(p.polygons[1].name == "bounding box");
  REQUIRE(p.polygons[0].x.size() == hull.size());
  for (size_t i = 0; i < hull.size(); ++i) {
    CHECK(p.polygons[0].x[i] == hull[i].x);
    CHECK(p.polygons[0].y[i] == hull[i].y);
  }
  auto named = [](const auto& series, const std::string& name) {
    int found = 0;
    for (const auto& s : series) found += s.name.rfind(name, 0) == 0;
    return found;
  };
  CHECK(named(p.polygons, "predicted ellipse") == 0);
  CHECK(named(p.lines, "linear image") == 0);
  const geometry::Vec2 out = geometry::attend(scene, in.query);
  bool found = false;
  for (const auto& s : p.scatters)
    if (s.name == "output z")
      found = s.x == std::vector<double>{out.x} && s.y == std::vector<double>{out.y};
  CHECK(found);
  // Tokens are named as on screen: t1..tn at the tokens' own positions.
  for (const auto& s : p.scatters)
    if (s.name == "tokens t_j") {
      REQUIRE(s.labels.size() == scene.tokens.size());
      for (size_t j = 0; j < scene.tokens.size(); ++j) {
        CHECK(s.labels[j] == "t" + std::to_string(j + 1));
        CHECK(s.x[j] == scene.tokens[j].x);
      }
    }
  // 9 + 9 grid lines of 33 samples each, NaN-separated.
  CHECK(p.lines[0].x.size() == 18 * 34);

  // The views the panel switches: linear on adds one image and one ellipse per circle; grid,
  // hull, circles and output off remove theirs.
  in.circle_count = 3;
  in.views.linear = true;
  const fig::Panel lin = figures::geometry_figure(in).panels[0];
  CHECK(named(lin.polygons, "predicted ellipse") == 3);
  CHECK(named(lin.lines, "linear image") == 3);
  CHECK(named(lin.lines, "softmax image") == 3);
  in.views = {false, false, false, false, false};
  const fig::Panel bare = figures::geometry_figure(in).panels[0];
  CHECK(bare.polygons.empty());
  CHECK(bare.lines.empty());
  CHECK(named(bare.scatters, "output") == 0);
  CHECK(named(bare.scatters, "query v") == 1);

  const Expression f("exp(x)");
  KySettings s;
  const KyResult r = ky_transform(f, 0.3, s);
  REQUIRE(r.converged);
  const fig::Figure k = figures::ky_convergence_figure(r, ky_function(f), 0.3, 0.1, 0.5);
  REQUIRE(k.panels.size() == 2);
  const auto& fit = k.panels[1].lines;
  REQUIRE(fit.size() == 2);
  for (size_t i = 0; i < fit[1].x.size(); i += 50) {
    CHECK(fit[0].y[i] == doctest::Approx(std::exp(fit[0].x[i])));
    CHECK(fit[1].y[i] == ky_connection(r.kind, r.theta, 0.3, fit[1].x[i]));
  }
  CHECK_THROWS_AS(figures::ky_convergence_figure(KyResult{}, ky_function(f), 0.3, 0.1, 0.5), Error);
}
