#include "core/training/recording/saved_run.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/base/version.h"
#include "core/models/architectures/architecture.h"
#include "core/runs/directory/run_dir.h"
#include "core/training/session/session.h"

namespace attn {
namespace fs = std::filesystem;

namespace {

void fill_curves(const RunDirectory& run, Snapshot& s) {
  s.train_loss = run.train_loss;
  s.eval_loss = run.eval_loss;
  s.eval_accuracy = run.eval_accuracy;
  if (run.summary.is_object() && run.summary.contains("unigram_baseline_loss"))
    s.baseline_loss = run.summary["unigram_baseline_loss"].get<double>();
}

}  // namespace

std::shared_ptr<const Snapshot> curves_of_run(const RunDirectory& run) {
  auto s = std::make_shared<Snapshot>();
  fill_curves(run, *s);
  s->task = run.config.task.name;
  s->source_dir = run.dir;
  s->step = run.train_loss.empty() ? 0 : run.train_loss.steps.back();
  s->total_steps = run.config.train.steps;
  s->mechanisms = layer_mechanisms(run.config.model);
  return s;
}

std::vector<NamedTensor> weights_of_run(const RunDirectory& run, int64_t* step,
                                        std::vector<std::string>* buffer_names) {
  const fs::path ckpt = fs::path(run.dir) / "checkpoint";
  if (!run.has_checkpoint)
    throw Error("run directory " + run.dir + " has no checkpoint/: there are no weights to write");
  ExperimentConfig config = TrainingSession::checkpoint_config(ckpt.string());
  config.device = "cpu";
  TrainingSession session(config);
  session.load(ckpt.string());
  if (step) *step = session.step();
  std::vector<NamedTensor> out;
  auto add = [&](const std::string& name, const torch::Tensor& t) {
    const auto flat = t.detach().to(torch::kCPU, torch::kFloat).contiguous();
    NamedTensor n{name, flat.sizes().vec(), {}};
    n.values.assign(flat.data_ptr<float>(), flat.data_ptr<float>() + flat.numel());
    out.push_back(std::move(n));
  };
  for (const auto& p : session.model()->named_parameters()) add(p.key(), p.value());
  for (const auto& b : session.model()->named_buffers()) {
    add(b.key(), b.value());
    if (buffer_names) buffer_names->push_back(b.key());
  }
  return out;
}

std::string weights_file_of_run(const RunDirectory& run, int64_t* step, size_t* tensors,
                                int64_t* values) {
  int64_t at = 0;
  std::vector<std::string> buffers;
  const auto named = weights_of_run(run, &at, &buffers);
  std::string buffer_list;
  for (const auto& b : buffers) buffer_list += (buffer_list.empty() ? "" : ",") + b;
  if (step) *step = at;
  if (tensors) *tensors = named.size();
  if (values) {
    *values = 0;
    for (const auto& t : named) *values += static_cast<int64_t>(t.values.size());
  }
  return safetensors_bytes(named, {{"format", "attnlab-weights-1"},
                                   {"attnlab_version", version_string()},
                                   {"config", to_json(run.config).dump()},
                                   {"step", std::to_string(at)},
                                   {"run", run.id},
                                   {"buffers", buffer_list}});
}

// The head importance views.rec recorded at the checkpoint's step, when it did (a damaged or
// older file, another run's or one its config refuses: none; the figure is then not offered).
static void attach_recorded_importance(const RunDirectory& run, Snapshot& s) {
  const std::string path = (fs::path(run.dir) / kViewRecordsFile).string();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return;
  try {
    const ViewRun owner = view_run_of(run.dir, run.config);
    const auto index = index_view_records(path, owner);
    if (index.empty() || index.back().step != s.step) return;
    ViewRecord r = read_view_record(path, index.back(), owner.shape);
    if (r.importance.empty()) return;
    auto view = std::make_shared<InterventionView>();
    view->importance = std::move(r.importance);
    s.interventions = std::move(view);
  } catch (const std::exception&) {  // not this run's, damaged, refused: not offered
  }
}

std::shared_ptr<const Snapshot> snapshot_of_run(const RunDirectory& run, int64_t probe_image) {
  const fs::path ckpt = fs::path(run.dir) / "checkpoint";
  if (!run.has_checkpoint)
    throw Error("run directory " + run.dir +
                " has no checkpoint/ (only its loss curves can be exported)");
  ExperimentConfig config = TrainingSession::checkpoint_config(ckpt.string());
  config.device = "cpu";
  TrainingSession session(config);
  session.load(ckpt.string());
  if (probe_image >= 0) session.set_probe_index(probe_image);
  auto s = std::make_shared<Snapshot>();
  session.fill_snapshot(*s);
  s->source_dir = run.dir;
  session.probe_attention(*s);
  attach_recorded_importance(run, *s);
  fill_curves(run, *s);
  s->state = TrainerState::Finished;

  // Histories the checkpoint does not hold (they restart at a load) come from the run's files.
  if (auto frames = read_mechanism_frames(run.dir); !frames.empty())
    s->mechanism_views = std::make_shared<const std::vector<MechanismFrame>>(std::move(frames));
  if (const auto restore = architecture_of(config.model).restore_views; restore && s->model_views) {
    auto views = *s->model_views;
    restore(views, run.dir, s->step);
    s->model_views = std::make_shared<const std::vector<MechanismView>>(std::move(views));
  }
  return s;
}

SavedSession::SavedSession(const RunDirectory& run) {
  if (!run.has_checkpoint) throw Error("run directory " + run.dir + " has no checkpoint/");
  const std::string ckpt = (fs::path(run.dir) / "checkpoint").string();
  ExperimentConfig config = TrainingSession::checkpoint_config(ckpt);
  config.device = "cpu";
  session_ = std::make_unique<TrainingSession>(config);
  session_->load(ckpt);
}

SavedSession::~SavedSession() = default;
const ExperimentConfig& SavedSession::config() const {
  return session_->config();
}
int64_t SavedSession::step() const {
  return session_->step();
}
int SavedSession::eval_batches() const {
  return static_cast<int>(session_->task().eval_set().size());
}

}  // namespace attn
