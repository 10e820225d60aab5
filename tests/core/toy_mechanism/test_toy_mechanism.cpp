// The proof that a mechanism is its folder plus one registry row (issue 47): the toy mechanism of
// this folder (toy_attention.*, registered by toy_row.cpp) is trained by the session, and its
// observe() view reaches the snapshot, views.rec (written and read back), the run directory's
// mechanism_views.json, the export path (the generic mechanism-views figure, its CSV and an SVG
// file) and a panel model (the mechanism-views model), with no other file naming it.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "app/figures/catalog/figures.h"
#include "app/panels/mechanisms/mechanism_views_model.h"
#include "core/runs/directory/run_dir.h"
#include "core/runs/records/view_records.h"
#include "core/training/recording/run_recorder.h"
#include "core/training/session/session.h"
#include "render/plot/export/figure_export.h"
#include "tests/core/helpers.h"
#include "tests/core/toy_mechanism/toy_attention.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("attnlab_toy_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void check_same_view(const MechanismView& a, const MechanismView& b) {
  CHECK(a.mechanism == b.mechanism);
  CHECK(a.layer == b.layer);
  REQUIRE(a.find_curves("decay"));
  REQUIRE(b.find_curves("decay"));
  CHECK(a.find_curves("decay")->ys == b.find_curves("decay")->ys);  // bit-exact floats
  REQUIRE(a.find_matrix("mix"));
  REQUIRE(b.find_matrix("mix"));
  CHECK(a.find_matrix("mix")->values == b.find_matrix("mix")->values);
  CHECK(a.scalar("mean_rate", -1) == b.scalar("mean_rate", -2));
}

}  // namespace

TEST_CASE(
    "a toy mechanism in one folder plus one row: its view reaches snapshot, views.rec, "
    "the run directory and export") {
  ExperimentConfig c = test::tiny_config("copy");
  c.model.attention = {"toy", "dot"};
  c = parse_config(to_json(c));  // the registry knows it: the config parser accepts it
  TrainingSession s(c);
  for (int k = 0; k < 3; ++k) s.train_step();
  s.evaluate();

  // The snapshot: layer 0's view, as the module computes it from its parameters.
  Snapshot snap;
  s.fill_snapshot(snap);
  s.probe_attention(snap);
  REQUIRE(!snap.mechanism_history().empty());
  const MechanismFrame& frame = snap.mechanism_history().back();
  CHECK(frame.step == 3);
  REQUIRE(frame.layers.size() == 1);  // dot shows nothing of itself
  const MechanismView& view = frame.layers[0];
  CHECK(view.mechanism == "toy");
  CHECK(view.layer == 0);
  auto* toy = dynamic_cast<toy::ToyAttention*>(s.model()->attention_modules()[0].get());
  REQUIRE(toy);
  const ViewCurves* decay = view.find_curves("decay");
  REQUIRE(decay);
  REQUIRE(decay->series.size() == 2);
  for (int h = 0; h < 2; ++h) {
    const double rate = std::log1p(std::exp(toy->rate[h].item<double>()));  // softplus
    for (int k = 0; k < toy::kOffsets; ++k)
      CHECK(decay->series_values(h)[k] == doctest::Approx(std::exp(-rate * k)).epsilon(1e-5));
  }

  // views.rec: written by the recorder, read back against the run's shape.
  const fs::path dir = fresh_dir("run");
  const std::string views = (dir / kViewRecordsFile).string();
  const ViewRun run{dir.string(), "", view_shape_of(c)};
  {
    ViewRecorder recorder(views, run);
    recorder.append(s.view_record());
  }
  const auto index = index_view_records(views, run);
  REQUIRE(index.size() == 1);
  const ViewRecord back = read_view_record(views, index[0], run.shape);
  REQUIRE(back.mechanisms.size() == 1);
  check_same_view(back.mechanisms[0], view);

  // The run directory's side file, read back by the torch-free reader.
  write_run_outputs(s, dir.string(), nullptr, /*checkpoint=*/false);
  const std::vector<MechanismFrame> saved = read_mechanism_frames(dir.string());
  REQUIRE(!saved.empty());
  check_same_view(saved.back().layers.at(0), view);

  // Export: the generic figure lists it and draws its curves and matrix; the CSV and SVG carry
  // its numbers.
  bool listed = false;
  for (const auto& spec : figures::figures_for(snap)) listed |= spec.name == "mechanism-views";
  CHECK(listed);
  const fig::Figure f = figures::build_figure("mechanism-views", snap, {});
  REQUIRE(f.panels.size() == 2);  // the curve family and the matrix
  REQUIRE(f.panels[0].lines.size() == 2);
  CHECK(f.panels[0].lines[1].y.at(3) == doctest::Approx(decay->series_values(1)[3]));
  REQUIRE(f.panels[1].heatmaps.size() == 1);
  CHECK(f.panels[1].heatmaps[0].values == view.find_matrix("mix")->values);
  CHECK(f.panels[0].title.find("mean_rate") != std::string::npos);
  fig::ExportRequest request;
  request.format = fig::ExportFormat::Svg;
  request.path = (dir / "toy.svg").string();
  const fig::ExportResult result = fig::export_figure(f, request, {});
  CHECK(fs::file_size(dir / "toy.svg") > 0);
  std::ifstream csv(dir / "toy.csv");
  const std::string text((std::istreambuf_iterator<char>(csv)), std::istreambuf_iterator<char>());
  CHECK(text.find("head 1") != std::string::npos);
  CHECK(!result.files.empty());

  // The panel model draws the same figure for the snapshot; its layer control picks layer 0.
  gui::MechanismViewsModel model;
  CHECK(gui::MechanismViewsModel::layers(snap) == std::vector<int>{0});
  model.layer = 0;
  REQUIRE(model.figure(snap).panels.size() == 2);
  CHECK(model.figure(snap).panels[1].heatmaps.at(0).values == view.find_matrix("mix")->values);
  CHECK(model.error().empty());
  fs::remove_all(dir);
}
