#include "app/panels/training/compare_model.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <thread>

#include "app/figures/runs/compare_figures.h"
#include "app/panels/runs/config_diff_model.h"
#include "core/runs/directory/run_writer.h"  // new_run_dir
#include "core/training/headless/sweep.h"
#include "core/training/trainer.h"
#include "render/plot/colormap.h"

namespace attn::gui {
namespace fs = std::filesystem;

struct CompareModel::Run {
  std::string label;
  float color[3] = {1, 1, 1};
  // Live: a trainer; saved: a run directory.
  std::unique_ptr<Trainer> trainer;
  ExperimentConfig config;
  std::shared_ptr<const Snapshot> snap;
  int threads = 0;         // a live run's torch threads (its fair share of the cores)
  std::string out_dir;     // where a live run is recorded (TrainerOptions::run_dir)
  bool saved = false;      // finished (or diverged) and recorded whole
  std::string save_error;  // the trainer's record_error: not (wholly) recorded
  RunDirectory dir;        // saved runs (and live runs once saved: empty otherwise)
  bool is_live() const { return trainer != nullptr; }
  const Series& eval_loss() const { return snap ? snap->eval_loss : dir.eval_loss; }
  const Series& eval_accuracy() const { return snap ? snap->eval_accuracy : dir.eval_accuracy; }
  const Series& train_loss() const { return snap ? snap->train_loss : dir.train_loss; }
};

namespace {

void set_color(float out[3], int index) {
  const render::Rgba8 c = render::okabe_ito(index);
  out[0] = c.r / 255.0f, out[1] = c.g / 255.0f, out[2] = c.b / 255.0f;
}

double summary_value(const RunDirectory& d, const char* key) {
  return d.finished && d.summary.contains(key) && d.summary[key].is_number()
             ? d.summary[key].get<double>()
             : NAN;
}

double last_value(const Series& s) {
  return s.empty() ? NAN : s.values.back();
}

}  // namespace

CompareModel::CompareModel() = default;
CompareModel::~CompareModel() = default;  // each Trainer's destructor stops and joins

bool CompareModel::start_runs(const ExperimentConfig& base, const std::string& key,
                              const std::string& values) {
  std::vector<std::unique_ptr<Run>> fresh;
  try {
    const VaryAxis axis = parse_vary(key + "=" + values);
    const nlohmann::json base_json = to_json(base);
    // Each value is validated before any run starts: a bad one names the key and what is allowed.
    const SweepPlan plan = plan_sweep({{"", base_json}}, {axis}, 1);
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const size_t live =
        std::count_if(runs_.begin(), runs_.end(),
                      [](const auto& r) {
                        return r->is_live() && r->snap && r->snap->state == TrainerState::Running;
                      }) +
        plan.cells.size();
    TrainerOptions options;
    // Fair shares: N runs on C cores get C / N threads each (at least one).
    options.threads = static_cast<int>(std::max<size_t>(1, cores / live));
    // run-<date-time>, with -2, -3, ... when two comparisons start in the same second.
    const std::string batch = new_run_dir(save_root_, "run");
    for (const auto& cell : plan.cells) {
      auto r = std::make_unique<Run>();
      r->label = cell.group;
      r->config = cell.config;
      r->out_dir = (fs::path(batch) / cell.group).string();
      fresh.push_back(std::move(r));
    }
    for (auto& r : fresh) {
      r->threads = options.threads;
      // Recorded like the window's own run (core/training/recording/run_recorder.h): a row per
      // evaluation, checkpoint and summary on finish, divergence, error and close.
      options.run_dir = r->out_dir;
      r->trainer = std::make_unique<Trainer>(r->config, options);
      r->trainer->start();
    }
  } catch (const std::exception& e) {
    error_ = e.what();
    return false;
  }
  for (auto& r : fresh) {
    set_color(r->color, static_cast<int>(runs_.size()));
    runs_.push_back(std::move(r));
  }
  error_.clear();
  return true;
}

bool CompareModel::add_saved_run(const std::string& dir) {
  try {
    auto r = std::make_unique<Run>();
    r->dir = read_run_directory(dir);
    r->label = r->dir.id;
    // A sweep cell ("seed-5") is named with its group directory, as `attnlab compare` does.
    if (r->label.rfind("seed-", 0) == 0) {
      const std::string group =
          fs::path(r->dir.dir).lexically_normal().parent_path().filename().string();
      if (!group.empty()) r->label = group + "/" + r->label;
    }
    r->config = r->dir.config;
    r->saved = true;
    r->out_dir = dir;
    set_color(r->color, static_cast<int>(runs_.size()));
    runs_.push_back(std::move(r));
  } catch (const std::exception& e) {
    error_ = e.what();
    return false;
  }
  error_.clear();
  return true;
}

void CompareModel::poll() {
  for (auto& r : runs_) {
    if (!r->is_live() || closed_) continue;
    r->snap = r->trainer->latest();
    // The trainer records the run itself; its summary is written before it reports Finished.
    r->save_error = r->snap->record_error;
    r->saved = r->save_error.empty() && (r->snap->state == TrainerState::Finished ||
                                         r->snap->state == TrainerState::Diverged);
  }
}

std::vector<std::string> CompareModel::close() {
  std::vector<std::string> out;
  if (closed_) return out;
  closed_ = true;
  for (auto& r : runs_)
    if (r->is_live())
      for (const std::string& line : r->trainer->close())
        out.push_back("Compare run " + r->label + ": " + line);
  return out;
}

float* CompareModel::color(size_t run) {
  return runs_.at(run)->color;
}

// A hash of what the overlay is built from: each run's snapshot, saved state and colour, the
// y scale and the seed bands.
uint64_t CompareModel::overlay_key() const {
  uint64_t key = 1469598103934665603ull ^ static_cast<uint64_t>(y_scale) ^
                 (static_cast<uint64_t>(seed_bands) << 8);
  auto mix = [&key](uint64_t v) { key = (key ^ v) * 1099511628211ull; };
  for (const auto& r : runs_) {
    mix(reinterpret_cast<uintptr_t>(r->snap.get()));
    mix(r->dir.finished);
    for (float c : r->color) mix(static_cast<uint64_t>(c * 1000));
  }
  return key;
}

const fig::Figure& CompareModel::overlay() {
  // Rebuilt only when something changed: the overlay copies every run's series.
  const uint64_t key = overlay_key();
  if (key != overlay_key_ || runs_.size() != overlay_dirs_.size()) {
    overlay_ = build_overlay();
    overlay_key_ = key;
  }
  return overlay_;
}

fig::Figure CompareModel::build_overlay() {
  overlay_dirs_.assign(runs_.size(), RunDirectory{});
  std::vector<figures::CompareCurve> curves;
  for (size_t i = 0; i < runs_.size(); ++i) {
    const Run& r = *runs_[i];
    RunDirectory& d = overlay_dirs_[i];
    d.id = r.label;
    d.dir = r.is_live() ? r.out_dir : r.dir.dir;  // names a seed group by its parent directory
    d.config = r.is_live() ? r.config : r.dir.config;
    d.finished = r.dir.finished;
    d.train_loss = r.train_loss();
    d.eval_loss = r.eval_loss();
    d.eval_accuracy = r.eval_accuracy();
    curves.push_back({&d, r.label, fig::Color::rgb(r.color[0], r.color[1], r.color[2]), true});
  }
  figures::CompareOptions options;
  options.y_scale = static_cast<figures::YScale>(y_scale);  // the combo's order: auto, linear, log
  options.seed_bands = static_cast<figures::SeedBands>(seed_bands);  // off, sd, ci95
  fig::Figure f = figures::loss_overlay(curves, "Comparison", options);
  log_y_shown_ = !f.panels.empty() && f.panels.front().y.log;
  return f;
}

bool CompareModel::any_metrics() const {
  for (const auto& r : runs_)
    if (!r->eval_loss().empty() || !r->train_loss().empty()) return true;
  return false;
}

bool CompareModel::any_maps() const {
  return map_layers() > 0;
}

CompareModel::Row CompareModel::row(size_t run) const {
  const Run& r = *runs_.at(run);
  Row row;
  row.label = r.label;
  if (r.snap) {
    const Snapshot& s = *r.snap;
    row.state = to_string(s.state);
    row.step = static_cast<double>(s.step);
    row.eval_loss = last_value(s.eval_loss);
    row.eval_accuracy = last_value(s.eval_accuracy);
    row.parameters = static_cast<double>(s.parameters);
    row.attention_parameters = static_cast<double>(s.attention_parameters);
    row.steps_per_second = s.steps_per_second;
  } else {
    row.state = r.dir.finished ? "saved" : "saved (unfinished)";
    row.step = summary_value(r.dir, "steps");
    row.eval_loss = summary_value(r.dir, "eval_loss");
    row.eval_accuracy = summary_value(r.dir, "eval_accuracy");
    row.parameters = summary_value(r.dir, "parameters");
    row.attention_parameters = summary_value(r.dir, "attention_parameters");
    row.steps_per_second = summary_value(r.dir, "steps_per_second");
  }
  row.differs = differing_text(configs_.at(run), differing_keys());
  if (!r.save_error.empty()) {
    row.saved = r.save_error, row.tone = SavedTone::Failed;
  } else if (r.saved || !r.is_live()) {
    row.saved = r.out_dir;
  } else {
    row.saved = "recording to " + r.out_dir, row.tone = SavedTone::Recording;
  }
  return row;
}

const std::vector<std::string>& CompareModel::differing_keys() const {
  if (configs_.size() != runs_.size()) {  // runs are only ever added
    for (size_t i = configs_.size(); i < runs_.size(); ++i)
      configs_.push_back(to_json_every_key(runs_[i]->config));
    differing_ = gui::differing_keys(configs_);
  }
  return differing_;
}

int CompareModel::map_layers() const {
  int layers = 0;
  for (const auto& r : runs_)
    if (r->snap && !r->snap->attention_maps().empty()) layers = std::max(layers, r->snap->layers);
  return layers;
}

int CompareModel::map_heads() const {
  int heads = 0;
  for (const auto& r : runs_)
    if (r->snap && !r->snap->attention_maps().empty()) heads = std::max(heads, r->snap->heads);
  return heads;
}

std::vector<CompareModel::MapShown> CompareModel::maps() const {
  std::vector<MapShown> out;
  for (const auto& r : runs_) {
    if (!r->snap) continue;
    const AttentionMap* map = nullptr;
    for (const auto& m : r->snap->attention_maps())
      if (m.layer == layer && m.head == head) map = &m;
    if (map && map->size > 0) out.push_back({r->label, r->color, map});
  }
  return out;
}

nlohmann::json CompareModel::report() const {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& r : runs_) {
    nlohmann::json j = {{"label", r->label},
                        {"kind", r->is_live() ? "live" : "saved"},
                        {"color", {r->color[0], r->color[1], r->color[2]}},
                        {"saved", r->saved},
                        {"dir", r->out_dir},
                        {"threads", r->threads}};
    const Series& e = r->eval_loss();
    j["eval_loss"] = e.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.values.back());
    j["eval_points"] = e.steps.size();
    if (r->snap) {
      j["state"] = to_string(r->snap->state);
      j["step"] = r->snap->step;
      j["attention_maps"] = r->snap->attention_maps().size();
    }
    if (!r->save_error.empty()) j["save_error"] = r->save_error;
    j["differs"] = row(runs.size()).differs;
    runs.push_back(j);
  }
  // What the curves show: the eval panel's line names and its bands (seed groups).
  nlohmann::json lines = nlohmann::json::array(), bands = nlohmann::json::array();
  if (!overlay_.panels.empty()) {
    for (const auto& l : overlay_.panels.front().lines) lines.push_back(l.name);
    for (const auto& b : overlay_.panels.front().polygons) bands.push_back(b.name);
  }
  return {{"runs", runs},
          {"error", error_},
          {"log_y", log_y_shown_},
          {"seed_bands", seed_bands},
          {"eval_lines", lines},
          {"eval_bands", bands},
          {"differing_keys", differing_keys()}};
}

}  // namespace attn::gui
