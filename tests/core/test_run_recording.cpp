// Recording runs trained in the window (core/training/recording/run_recorder.h,
// TrainerOptions::runs_root) and following run directories (core/runs/directory/run_list.h).
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/analysis/head_metrics.h"
#include "core/attention/neural/neural_view.h"
#include "core/config/config.h"
#include "core/models/conn/conn_view.h"
#include "core/runs/directory/run_dir.h"
#include "core/runs/directory/run_list.h"
#include "core/runs/directory/run_lock.h"
#include "core/runs/directory/run_writer.h"
#include "core/runs/records/view_records.h"
#include "core/runs/records/view_timeline.h"
#include "core/training/headless/headless.h"
#include "core/training/recording/saved_run.h"
#include "core/training/session/session.h"
#include "core/training/trainer.h"
#include "helpers.h"
#include "recording_helpers.h"

using namespace attn;
namespace fs = std::filesystem;
using test::in_state;
using test::wait_until;

namespace {

void append(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::app);
  out << text;
}

// metrics.csv rows without their last column (steps_per_s is a timing).
std::vector<std::string> rows_without_speed(const fs::path& csv) {
  std::vector<std::string> out;
  std::istringstream in(test::file_bytes(csv));
  std::string line;
  while (std::getline(in, line)) out.push_back(line.substr(0, line.rfind(',')));
  return out;
}

std::vector<fs::path> subdirs(const fs::path& root) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_directory()) out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("a run trained in the window is recorded exactly as attnlab train writes it") {
  const fs::path root = test::temp_dir("record-same");
  auto c = test::tiny_config();
  c.name = "same";
  c.train.steps = 40;
  {
    Trainer t(c, test::recording_options((root / "gui").string()));
    t.start();
    REQUIRE(wait_until([&] { return in_state(t, TrainerState::Finished); }, 120));
    CHECK(fs::path(t.latest()->run_dir).parent_path() == root / "gui");
  }
  const auto dirs = subdirs(root / "gui");
  REQUIRE(dirs.size() == 1);
  CHECK(dirs[0].filename().string().rfind("same-", 0) == 0);
  test::train_into(c, root / "cli");
  // Same seed, same steps, one thread each: the same rows (step, train, eval, accuracy, lr).
  const auto gui_rows = rows_without_speed(dirs[0] / "metrics.csv");
  CHECK(gui_rows.size() == 5);  // header + steps 10, 20, 30, 40
  CHECK(gui_rows == rows_without_speed(root / "cli" / "metrics.csv"));
  const auto a = test::json_of(dirs[0] / "summary.json"),
             b = test::json_of(root / "cli" / "summary.json");
  for (const char* key : {"steps", "eval_loss", "eval_accuracy", "final_train_loss", "parameters",
                          "config_hash", "mechanism", "task"})
    CHECK_MESSAGE(a[key] == b[key], key);
  CHECK(!a.contains("interrupted"));
  CHECK(a["source"] == "gui");
  CHECK(test::json_of(dirs[0] / "checkpoint" / "state.json")["step"] == 40);
  CHECK(test::json_of(dirs[0] / "config.json") == test::json_of(root / "cli" / "config.json"));
  CHECK(run_lock_holder(dirs[0].string()).empty());  // released when the trainer went
  fs::remove_all(root);
}

TEST_CASE("pause saves checkpoint and summary; training on removes the summary; reset closes") {
  const fs::path root = test::temp_dir("record-pause");
  auto c = test::tiny_config();
  c.name = "p";
  c.train.steps = 100000;
  Trainer t(c, test::recording_options(root.string()));
  t.start();
  REQUIRE(wait_until([&] { return t.latest()->step >= 12 && !t.latest()->run_dir.empty(); }));
  const fs::path dir = t.latest()->run_dir;
  CHECK(!run_lock_holder(dir.string()).empty());  // the window holds its run
  CHECK(!fs::exists(dir / "summary.json"));       // live: no summary
  t.pause();
  REQUIRE(wait_until([&] { return in_state(t, TrainerState::Paused); }));
  REQUIRE(fs::exists(dir / "summary.json"));
  auto s = test::json_of(dir / "summary.json");
  CHECK(s["interrupted_by"] == "paused in the window");
  CHECK(s["steps"] == t.latest()->step);
  CHECK(test::json_of(dir / "checkpoint" / "state.json")["step"] == t.latest()->step);
  const int64_t paused_at = t.latest()->step;

  t.start();
  REQUIRE(wait_until([&] { return t.latest()->step > paused_at + 2; }));
  CHECK(!fs::exists(dir / "summary.json"));  // never an old summary beside a newer model

  t.reset();
  REQUIRE(wait_until([&] { return in_state(t, TrainerState::Idle) && t.latest()->step == 0; }));
  s = test::json_of(dir / "summary.json");
  CHECK(s["interrupted_by"] == "reset in the window");
  CHECK(s["steps"] == test::json_of(dir / "checkpoint" / "state.json")["step"]);
  CHECK(run_lock_holder(dir.string()).empty());
  CHECK(t.latest()->run_dir.empty());  // a fresh model has no directory until it trains
  t.start();
  REQUIRE(wait_until([&] { return !t.latest()->run_dir.empty(); }));
  CHECK(t.latest()->run_dir != dir.string());
  CHECK(subdirs(root).size() == 2);
  // Every row of the first run is whole, one per evaluation.
  const auto rows = rows_without_speed(dir / "metrics.csv");
  for (size_t i = 1; i < rows.size(); ++i)
    CHECK(rows[i].rfind(std::to_string(10 * i) + ",", 0) == 0);
  fs::remove_all(root);
}

TEST_CASE("a runs root that cannot be written: training goes on, with a message") {
  const fs::path root = test::temp_dir("record-bad");
  auto c = test::tiny_config();
  c.train.steps = 100000;
  Trainer t(c, test::recording_options(test::blocked_runs_root(root)));
  t.start();
  REQUIRE(
      wait_until([&] { return t.latest()->message.find("not recorded") != std::string::npos; }));
  CHECK(t.latest()->message.find("file") != std::string::npos);  // names the path
  const int64_t step = t.latest()->step;
  REQUIRE(wait_until([&] { return t.latest()->step > step + 5; }));
  CHECK(t.state() == TrainerState::Running);
  CHECK(t.latest()->run_dir.empty());
  fs::remove_all(root);
}

TEST_CASE("FollowedRun reads whole rows only and names the run's state") {
  const fs::path dir = test::temp_dir("follow");
  auto c = test::tiny_config();
  write_run_config(dir.string(), c);
  const fs::path csv = dir / "metrics.csv";
  { std::ofstream(csv) << kMetricsHeader << "\n"; }
  FollowedRun f(dir.string());
  CHECK(f.refresh());
  CHECK(f.metric_rows() == 0);
  CHECK(f.state() == "incomplete");      // no summary, no writer
  CHECK(!f.refresh());                   // nothing changed: not read again
  append(csv, "10,2.5,2.4,0.1,0.001,");  // being written: no newline yet
  f.refresh();
  CHECK(f.metric_rows() == 0);
  append(csv, "50\n20,2.");
  f.refresh();
  CHECK(f.metric_rows() == 1);
  CHECK(f.last_step() == 10);
  CHECK(f.run().eval_loss.values == std::vector<float>{2.4f});
  {
    RunDirLock lock(dir.string(), "test writer", false);
    f.refresh();
    CHECK(f.state() == "live");
    { std::ofstream(dir / "summary.json") << R"({"steps": 10, "interrupted": true})"; }
    f.refresh();
    CHECK(f.state() == "paused");
  }
  f.refresh();
  CHECK(f.state() == "stopped");
  { std::ofstream(dir / "summary.json") << R"({"steps": 10, "diverged": true, "x": 1})"; }
  f.refresh();
  CHECK(f.state() == "diverged");
  { std::ofstream(dir / "summary.json") << R"({"steps": 10})"; }
  f.refresh();
  CHECK(f.state() == "finished");
  // A damaged file later: the last good reading stays, the error says which file.
  { std::ofstream(csv) << "step,train_loss\nten,1\n"; }
  f.refresh();
  CHECK(f.metric_rows() == 1);
  CHECK(f.error().find("metrics.csv") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("find_run_dirs lists runs and expands folders (sweeps) to their cells") {
  const fs::path root = test::temp_dir("find");
  auto c = test::tiny_config();
  for (const char* d : {"b", "sweep/cell-1", "sweep/cell-0", "deep/x/y/z"}) {
    write_run_config((root / d).string(), c);
    std::ofstream(root / d / "metrics.csv") << kMetricsHeader << "\n";
  }
  fs::create_directories(root / "empty");
  std::ofstream(root / "sweep" / "sweep.json") << "{}";
  const auto found = find_run_dirs(root.string());
  const std::vector<std::string> want = {(root / "b").string(), (root / "sweep/cell-0").string(),
                                         (root / "sweep/cell-1").string()};
  CHECK(found == want);  // deep/x/y/z is 4 levels down: past the default depth
  CHECK(find_run_dirs((root / "b").string()) == std::vector<std::string>{(root / "b").string()});
  CHECK(find_run_dirs((root / "missing").string()).empty());
  // New run directories never collide.
  const std::string first = new_run_dir(root.string(), "r");
  fs::create_directories(first);
  const std::string second = new_run_dir(root.string(), "r");
  CHECK(second != first);
  CHECK(fs::path(first).parent_path() == root);
  fs::remove_all(root);
}

TEST_CASE("views.rec: recorded maps are the model's at step 0 and at the checkpoint") {
  const fs::path root = test::temp_dir("record-views");
  auto c = test::tiny_config();
  c.train.steps = 40;
  c.train.record_every = 10;
  const test::RecordedRun run = test::train_recorded(c, root / "on", 5);
  std::vector<int64_t> steps;
  for (const auto& e : run.index) steps.push_back(e.step);
  CHECK(steps == std::vector<int64_t>{0, 10, 20, 30, 40});

  auto check_maps = [](const ViewRecord& r, const std::vector<AttentionMap>& maps) {
    REQUIRE(r.maps.size() == maps.size());
    REQUIRE(maps.size() == 4);  // 2 layers x 2 heads
    for (size_t i = 0; i < maps.size(); ++i) {
      REQUIRE(r.maps[i].weights.size() == maps[i].weights.size());
      for (size_t k = 0; k < maps[i].weights.size(); ++k)
        CHECK(std::abs(r.maps[i].weights[k] - maps[i].weights[k]) <= 1e-6);
    }
  };
  // Step 40: the maps probed from the final checkpoint, as `attnlab export` loads it.
  const auto saved = snapshot_of_run(read_run_directory((root / "on").string()));
  check_maps(run.last, saved->attention_maps());
  CHECK(run.last.probe_tokens == saved->probe_tokens);
  // Step 0: the initial model of the same config and seed.
  TrainingSession initial(c);
  Snapshot s0;
  initial.probe_attention(s0);
  check_maps(run.first, s0.attention_maps());

  // The induction scores: each head's on the induction probe (n random tokens, then the same n
  // again), measured here through the ordinary probe path of the initial model.
  const std::vector<int64_t> repeated = initial.induction_probe();
  REQUIRE(repeated.size() >= 4);
  const size_t half = repeated.size() / 2;
  for (size_t i = 0; i < half; ++i) {
    CHECK(repeated[i + half] == repeated[i]);
    CHECK(repeated[i] >= 0);
    CHECK(repeated[i] < c.task.vocab);
  }
  initial.set_probe_tokens(repeated);
  Snapshot rs;
  initial.probe_attention(rs);
  std::vector<std::string> ids;
  for (const int64_t t : repeated) ids.push_back(std::to_string(t));
  const ViewRecord& first = run.first;
  REQUIRE(first.induction.size() == rs.attention_maps().size());
  for (size_t i = 0; i < first.induction.size(); ++i) {
    const AttentionMap& m = rs.attention_maps()[i];
    CHECK(std::abs(first.induction[i] - map_induction(m.weights, m.size, ids)) <= 1e-6);
  }
  // ... and they are the head metrics' "induction".
  for (const HeadMetric& hm : head_metrics(first))
    if (hm.metric == "induction")
      CHECK(hm.value ==
            doctest::Approx(first.induction[static_cast<size_t>(hm.layer * 2 + hm.head)]));

  // Recording never changes training: with it off the rows are the same, and there is no file.
  c.train.record_every = 0;
  test::train_into(c, root / "off");
  CHECK(!fs::exists(root / "off" / kViewRecordsFile));
  CHECK(rows_without_speed(root / "on" / "metrics.csv") ==
        rows_without_speed(root / "off" / "metrics.csv"));
  fs::remove_all(root);
}

TEST_CASE(
    "views.rec: a neural run records every head's score surface, the checkpoint's at the end") {
  const fs::path root = test::temp_dir("record-neural");
  ExperimentConfig c = test::tiny_config("copy");
  c.model.attention.assign(2, "neural");
  c.model.attention_options =
      nlohmann::json::parse(R"({"neural": {"down": 2, "hidden": 8, "placement": "all-layers"}})");
  c.train.steps = 20;
  c.train.record_every = 10;
  const test::RecordedRun run = test::train_recorded(c, root / "neural", 3);
  const ViewRecord& first = run.first;
  const ViewRecord& last = run.last;
  // Every neural layer's generic view, every head's surface in it (NeuralAttention::observe).
  REQUIRE(last.mechanisms.size() == 2);
  CHECK(last.mechanisms[1].mechanism == "neural");
  CHECK(last.mechanisms[1].layer == 1);
  NeuralViewRequest q;
  q.layer = 1, q.head = 1;
  const auto recorded = neural_view_of(MechanismFrame{last.step, last.mechanisms}, &q);
  REQUIRE(recorded);
  CHECK(recorded->surface.layer == 1);
  CHECK(recorded->surface.head == 1);
  // The last record is the checkpoint's model: its surface for layer 1, head 1 observed again.
  const auto live =
      neural_view_of(test::checkpoint_session(root / "neural")->mechanism_frame(), &q);
  REQUIRE(live);
  REQUIRE(live->surface.learned.size() == recorded->surface.learned.size());
  double worst = 0;
  for (size_t i = 0; i < live->surface.learned.size(); ++i)
    worst =
        std::max(worst, double(std::abs(live->surface.learned[i] - recorded->surface.learned[i])));
  CHECK(worst <= 1e-6);
  CHECK(live->surface.slice_learned == recorded->surface.slice_learned);
  // Training moved the surface between the first and the last record.
  const auto at_first = neural_view_of(MechanismFrame{first.step, first.mechanisms}, &q);
  REQUIRE(at_first);
  CHECK(at_first->surface.learned != recorded->surface.learned);
  // The exported figure of the saved run draws the checkpoint's surface.
  const auto saved = snapshot_of_run(read_run_directory((root / "neural").string()));
  const auto shown = neural_view_of(saved->mechanism_history());
  REQUIRE(shown);
  CHECK(shown->surface.available);
  fs::remove_all(root);
}

TEST_CASE("views.rec: a conn run records C and the spectrum of I + C of each step") {
  const fs::path root = test::temp_dir("record-conn");
  ExperimentConfig c = test::tiny_conn_config("recall");
  c.model.d_model = 16;
  c.model.conn.init_std = 0.3;
  c.train.steps = 20;
  c.train.record_every = 10;
  const test::RecordedRun run = test::train_recorded(c, root / "conn", 3);
  const ViewRecord& last = run.last;
  // The record holds the generic view of the whole model, which decodes to C and its spectrum.
  REQUIRE(last.model_views.size() == 1);
  CHECK(last.model_views[0].mechanism == "conn");
  const ConnView lastc = conn_view_from(last.model_views[0]);
  REQUIRE(lastc.slots == 6);
  REQUIRE(lastc.matrix);
  const std::vector<float>& lc = *lastc.matrix;
  CHECK(lastc.matrix_step == 20);
  // C at the last step is the checkpoint's C, as `attnlab export` probes it.
  const auto saved = snapshot_of_run(read_run_directory((root / "conn").string()));
  const auto savedc = conn_view_of(*saved);
  REQUIRE(savedc);
  REQUIRE(savedc->matrix);
  REQUIRE(savedc->matrix->size() == lc.size());
  for (size_t i = 0; i < lc.size(); ++i) CHECK(std::abs((*savedc->matrix)[i] - lc[i]) <= 1e-6);
  // And the model's own C, read from the checkpoint's weights.
  {
    const auto model = test::checkpoint_session(root / "conn");
    const torch::Tensor own =
        model->model()->conn()->effective_connection().to(torch::kFloat).cpu();
    REQUIRE(own.numel() == static_cast<int64_t>(lc.size()));
    for (size_t i = 0; i < lc.size(); ++i)
      CHECK(own.view(-1)[static_cast<int64_t>(i)].item<float>() == lc[i]);
  }
  // The eigenvalues of I + C against two invariants computed here in double: their sum is the
  // trace, their product (a real number) the determinant by Gaussian elimination.
  const int n = lastc.slots;
  std::vector<double> a(static_cast<size_t>(n * n));
  double trace = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      a[i * n + j] = lc[i * n + j] + (i == j ? 1.0 : 0.0);
      if (i == j) trace += a[i * n + j];
    }
  double det = 1;
  for (int k = 0; k < n; ++k) {
    int p = k;
    for (int i = k + 1; i < n; ++i)
      if (std::abs(a[i * n + k]) > std::abs(a[p * n + k])) p = i;
    if (p != k) {
      for (int j = 0; j < n; ++j) std::swap(a[k * n + j], a[p * n + j]);
      det = -det;
    }
    det *= a[k * n + k];
    for (int i = k + 1; i < n; ++i) {
      const double f = a[i * n + k] / a[k * n + k];
      for (int j = k; j < n; ++j) a[i * n + j] -= f * a[k * n + j];
    }
  }
  REQUIRE(lastc.eigen_re.size() == static_cast<size_t>(n));
  double sum = 0, rho = 0;
  std::complex<double> product = 1;
  for (int i = 0; i < n; ++i) {
    const std::complex<double> e(lastc.eigen_re[i], lastc.eigen_im[i]);
    sum += e.real();
    product *= e;
    rho = std::max(rho, std::abs(e));
  }
  CHECK(sum == doctest::Approx(trace).epsilon(1e-5));
  CHECK(product.real() == doctest::Approx(det).epsilon(1e-4));
  CHECK(std::abs(product.imag()) <= 1e-4 * std::max(1.0, std::abs(det)));
  CHECK(lastc.exact_radius == doctest::Approx(rho).epsilon(1e-6));
  CHECK(lastc.exact_norm >= lastc.exact_radius * (1 - 1e-6));  // ||M|| >= rho(M)
  // The first record is the initial model's, and C moved since.
  const ViewRecord& first = run.first;
  CHECK(first.step == 0);
  REQUIRE(first.model_views.size() == 1);
  CHECK(*conn_view_from(first.model_views[0]).matrix != lc);
  // rho(I + C) is among the head metrics, once per record.
  int radii = 0;
  for (const HeadMetric& m : head_metrics(last)) radii += m.metric == "spectral_radius";
  CHECK(radii == 1);
  fs::remove_all(root);
}
