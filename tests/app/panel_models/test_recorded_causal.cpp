// The Heads and Interventions panels' models following the timeline for the causal tables
// views.rec records (ViewRecord::attribution, ::dla): a run recorded at two steps with different
// attribution shows each step's own values at that step in both models, read back through the
// timeline's reader (core/runs/records/view_timeline.h) from a real views.rec; a record without
// attribution says so instead of showing another step's; and the Heads panel's positions control
// averages the map metrics over the task's scored positions (the rows `attnlab export
// --positions` takes, probe_rows), against the mean over those rows computed here.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "app/panels/attention/heads_model.h"
#include "app/panels/attention/interventions_model.h"
#include "core/runs/directory/run_files.h"
#include "core/runs/records/view_records.h"
#include "core/runs/records/view_timeline.h"
#include "core/training/interventions/run_interventions.h"
#include "tests/core/temp_dir.h"

using namespace attn;
using attn::gui::HeadsModel;
using attn::gui::InterventionsModel;

namespace {

constexpr int kLayers = 2, kHeads = 2;

// A run directory (config.json of a 2-layer, 2-head model and the run's marker) and its views.rec.
struct RunDir : test::ScopedTempDir {
  ExperimentConfig config;
  RunDir() : test::ScopedTempDir("recorded-causal") {
    config.model.layers = kLayers;
    config.model.heads = kHeads;
    mark_run_directory(path.string());
    std::ofstream(path / "config.json") << to_json(config).dump();
  }
  std::string views() const { return (path / kViewRecordsFile).string(); }
  ViewRun run() const { return view_run_of(path.string(), config); }
};

// A record at `step`; with `causal`, attribution and DLA values no other step shares.
ViewRecord record(int64_t step, bool causal) {
  ViewRecord r;
  r.step = step;
  r.layers = kLayers;
  r.heads = kHeads;
  r.probe_tokens = {"0", "1", "2", "3"};
  for (int l = 0; l < kLayers; ++l)
    for (int h = 0; h < kHeads; ++h) {
      AttentionMap m{l, h, 4, std::vector<float>(16, 0.25f)};
      r.maps.push_back(std::move(m));
    }
  if (!causal) return r;
  r.attribution.metric = "logit_diff";
  r.attribution.clean = 2.0;
  r.attribution.corrupt = -1.0;
  r.attribution.layers = kLayers;
  r.attribution.heads = kHeads;
  r.dla.answer = "7";
  r.dla.answer_logit = 3.5;
  r.dla.names = {"embed"};
  r.dla.values = {0.5f};
  for (int i = 0; i < kLayers * kHeads; ++i) {
    r.attribution.values.push_back(0.001f * static_cast<float>(step) +
                                   0.1f * static_cast<float>(i));
    r.dla.names.push_back("L" + std::to_string(i / kHeads) + ".H" + std::to_string(i % kHeads));
    r.dla.values.push_back(-0.002f * static_cast<float>(step) - 0.1f * static_cast<float>(i));
  }
  r.dla.names.push_back("L1.mlp");
  r.dla.values.push_back(1.25f);
  return r;
}

const std::vector<float>& cells(const fig::Figure& f, size_t panel = 0) {
  return f.panels.at(panel).heatmaps.at(0).values;
}

// Every record of the timeline read into the Heads model (a few per call, as per frame).
void collect_all(HeadsModel& m, ViewTimeline& t) {
  for (int i = 0; i < 8 && m.steps() < t.steps().size(); ++i) m.collect(t);
  REQUIRE(m.steps() == t.steps().size());
}

}  // namespace

TEST_CASE("recorded causal tables: each recorded step shows its own attribution and DLA") {
  RunDir dir;
  {
    ViewRecorder writer(dir.views(), dir.run());
    writer.append(record(100, true));
    writer.append(record(200, true));
    writer.append(record(300, false));  // an older record's shape: no attribution
  }
  ViewTimeline timeline;
  timeline.set_sources({{dir.path.string()}});
  timeline.refresh(0.0);
  REQUIRE(timeline.steps() == std::vector<int64_t>{100, 200, 300});

  HeadsModel heads;
  collect_all(heads, timeline);
  InterventionsModel iv;
  for (const int64_t step : {100, 200}) {
    const ViewRecord expected = record(step, true);
    heads.build(heads.step_for(step));
    REQUIRE(heads.attribution_ok());
    CHECK(cells(heads.attribution()) == expected.attribution.values);
    CHECK(heads.attribution().title ==
          "attribution patching at step " + std::to_string(step) + " (recorded)");
    CHECK(heads.report()["attribution"] == true);
    CHECK(heads.shown_figure("attribution") == &heads.attribution());

    const std::shared_ptr<const ViewRecord> r = timeline.record_at(step);
    iv.build_recorded(r.get(), step);
    REQUIRE(iv.have_recorded_figure());
    CHECK(iv.recorded_step() == step);
    CHECK(cells(iv.recorded(), 0) == expected.attribution.values);
    // The heads' DLA as layer x head (the record's rows after "embed"); the rest in the line.
    CHECK(cells(iv.recorded(), 1) ==
          std::vector<float>(expected.dla.values.begin() + 1, expected.dla.values.end() - 1));
    CHECK(iv.recorded_line().find("recorded at step " + std::to_string(step) +
                                  " (the timeline's step " + std::to_string(step) + ")") !=
          std::string::npos);
    CHECK(iv.recorded_line().find("embed +0.500") != std::string::npos);
    CHECK(iv.recorded_line().find("L1.mlp +1.250") != std::string::npos);
    iv.observe({}, nullptr);
    CHECK(iv.report()["recorded_step"] == step);
    CHECK(iv.report()["recorded_attribution"] == true);
    CHECK(iv.report()["recorded_dla"] == true);
  }

  // Step 300 recorded no attribution: one line says so, no figure of step 200's values.
  heads.build(300);
  CHECK_FALSE(heads.attribution_ok());
  CHECK(heads.attribution_note().find("no attribution recorded at step 300") == 0);
  CHECK(heads.shown_figure("attribution") == nullptr);
  const std::shared_ptr<const ViewRecord> r300 = timeline.record_at(300);
  iv.build_recorded(r300.get(), 300);
  CHECK(iv.have_recorded());
  CHECK_FALSE(iv.have_recorded_figure());
  CHECK(iv.recorded_line().find("no attribution recorded at step 300") == 0);
  CHECK(iv.shown_figure("recorded-attribution") == nullptr);
  iv.observe({}, nullptr);
  CHECK(iv.report()["recorded_attribution"] == false);

  // Following the recording (Latest): the newest record, its line naming the model's step.
  iv.build_recorded(timeline.record_at(200).get(), -1, 250);
  CHECK(iv.recorded_line().find("recorded at step 200 (the newest record; the model is at step "
                                "250)") != std::string::npos);
  // The live model without a recording: nothing recorded is shown.
  iv.build_recorded(nullptr, -1, 250);
  CHECK_FALSE(iv.have_recorded());
  CHECK(iv.recorded_line().empty());
}

TEST_CASE("heads model: the positions control averages the map metrics over the scored rows") {
  const ExperimentConfig config =
      load_config_file(std::string(ATTN_SOURCE_DIR) + "/assets/configs/recall.json");
  // A recall probe (4 pairs, the separator, then queries and answers) ending on a query key.
  ViewRecord r;
  r.step = 50;
  r.layers = 1;
  r.heads = 1;
  r.probe_tokens = {"3", "v1", "5",  "v2", "0",  "v0", "6",  "v4",
                    "?", "5",  "v2", "0",  "v0", "6",  "v4", "3"};
  const int n = static_cast<int>(r.probe_tokens.size());
  // Row q attends uniformly over keys 0..q: its entropy is log(q + 1), different on every row.
  AttentionMap m{0, 0, n, std::vector<float>(static_cast<size_t>(n) * n, 0.0f)};
  for (int q = 0; q < n; ++q)
    for (int k = 0; k <= q; ++k) m.weights[static_cast<size_t>(q) * n + k] = 1.0f / (q + 1);
  r.maps.push_back(std::move(m));

  HeadsModel all, answer;
  all.add_record(r);
  CHECK(answer.set_positions(0, config));
  answer.add_record(r);
  all.build(50);
  answer.build(50);
  REQUIRE(all.grid_ok());
  REQUIRE(answer.grid_ok());
  double every = 0, scored_mean = 0;
  for (int q = 0; q < n; ++q) every += std::log(q + 1.0) / n;
  const std::vector<int> scored = probe_rows(config, "answer", "positions")(r.probe_tokens);
  REQUIRE_FALSE(scored.empty());
  REQUIRE(static_cast<int>(scored.size()) < n);
  for (const int q : scored) scored_mean += std::log(q + 1.0) / static_cast<double>(scored.size());
  CHECK(cells(all.grid()).at(0) == doctest::Approx(every).epsilon(1e-4));
  CHECK(cells(answer.grid()).at(0) == doctest::Approx(scored_mean).epsilon(1e-4));
  CHECK(std::fabs(cells(all.grid()).at(0) - cells(answer.grid()).at(0)) > 1e-3);
  CHECK(answer.report()["positions"] == "answer");

  // The shared colour scale spans the metric over every step: the map's own range no longer.
  answer.add_record([&] {
    ViewRecord later = r;
    later.step = 60;
    for (float& w : later.maps[0].weights) w = 0;
    for (int q = 0; q < n; ++q) later.maps[0].weights[static_cast<size_t>(q) * n] = 1;  // entropy 0
    return later;
  }());
  answer.shared_scale = true;
  answer.build(50);
  CHECK(answer.grid().panels.at(0).heatmaps.at(0).vmin == doctest::Approx(0.0));
  CHECK(answer.report()["shared_scale"] == true);

  // An image task has no scored token positions: the choice stays "all", said in a line.
  const ExperimentConfig image =
      load_config_file(std::string(ATTN_SOURCE_DIR) + "/assets/configs/fmnist_dot.json");
  HeadsModel img;
  img.set_positions(0, image);
  CHECK(img.positions() == 2);
  CHECK(img.positions_note().find("images") != std::string::npos);
}
