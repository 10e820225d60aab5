// Snapshot: the immutable, plain-CPU view of a training run that the trainer publishes for the
// UI (and tests). Published as std::shared_ptr<const Snapshot>; readers never lock or touch
// torch. No torch here.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/views/mechanism_view.h"

namespace attn {

struct InterventionView;
struct LengthEvalView;  // core/views/intervention_view.h

enum class TrainerState { Idle, Running, Paused, Stopping, Finished, Diverged, Error };
const char* to_string(TrainerState s);

// A metric over training steps. Bounded: when full it keeps every other point (see
// MetricHistory in core/views/history.h), so copying it into a snapshot stays cheap for long runs.
struct Series {
  std::vector<int64_t> steps;
  std::vector<float> values;
  bool empty() const { return steps.empty(); }
};

// Attention weights of one head for the probe input: size x size, row = query, col = key.
struct AttentionMap {
  int layer = 0;
  int head = 0;
  int size = 0;
  std::vector<float> weights;
};

// The probe image of an image task, for drawing attention over it (empty for token tasks).
// The probe's token 0 is the CLS token; token 1 + r * grid + c is the patch at grid row r,
// column c, covering pixels [r * patch, (r + 1) * patch) x [c * patch, (c + 1) * patch).
struct ProbeImage {
  int rows = 0, cols = 0;     // pixels
  int patch = 0;              // patch side in pixels; grid = rows / patch
  int index = -1;             // index in the test set
  int label = -1;             // true class
  std::string label_name;     // "Ankle boot"
  std::vector<float> pixels;  // rows * cols, row-major, 0 (black) .. 1 (white)
  bool empty() const { return pixels.empty(); }
};

struct Snapshot {
  uint64_t serial = 0;      // increases with every publish
  uint64_t generation = 0;  // increases whenever the model is rebuilt (reset, reconfigure, load)
  TrainerState state = TrainerState::Idle;
  std::string message;  // error / divergence text, or a status note
  std::string run_dir;  // where this model is recorded (TrainerOptions::runs_root); "" = nowhere
  // The run directory this model was loaded from (its checkpoint/); "" = trained here. The
  // timeline reads its recorded views (and those another process still appends to it).
  std::string source_dir;
  // Why this model is not (wholly) recorded: "not recorded: ..." or "recording failed: ..."
  // naming the directory and file; kept until the model is replaced ("" = all well).
  std::string record_error;
  int64_t step = 0;
  int64_t total_steps = 0;
  double learning_rate = 0.0;
  double steps_per_second = 0.0;
  // Time the trainer spent publishing snapshots (probes included) over time spent training,
  // since the model was built: the UI's cost to training, measured directly.
  double publish_overhead = 0.0;
  std::string device;  // "cpu", or "cuda:0 (GPU name)"
  int threads = 0;     // torch intra-op threads for the next step; 0 = no model yet
  std::string
      threads_reason;  // why (core/training/threads/thread_policy.h: fixed, or what was measured)
  int64_t gpu_memory = 0;  // bytes LibTorch's caching allocator holds on the GPU; 0 on CPU
  std::string task;
  std::string token_legend;  // what the probe's non-symbol labels mean (Task::label_legend)
  std::vector<std::string> mechanisms;  // per layer
  int64_t parameters = 0;
  int64_t attention_parameters = 0;

  Series train_loss;
  Series eval_loss;
  Series eval_accuracy;
  double baseline_loss = 0.0;  // text: unigram cross-entropy on eval; 0 if not applicable

  // Probe input and the attention maps of every layer and head on it (layer-major).
  std::vector<std::string> probe_tokens;  // one label per row of each map
  std::string probe_text;   // the user's probe (Trainer::request_probe); "" = the task's own
  std::string probe_error;  // why the last typed probe was refused ("" = accepted)
  ProbeImage probe_image;   // image tasks only
  std::vector<float> probe_probabilities;  // classifiers: class probabilities on the probe
  int layers = 0;
  int heads = 0;
  int64_t attention_step = -1;  // step the maps were computed at; -1 = none yet
  // Shared between consecutive snapshots until the next probe, so publishing never copies maps.
  std::shared_ptr<const std::vector<AttentionMap>> attention;
  const std::vector<AttentionMap>& attention_maps() const {
    static const std::vector<AttentionMap> none;
    return attention ? *attention : none;
  }

  // Every layer's mechanism view (AttentionModule::observe, core/views/mechanism_view.h) over
  // training, oldest first; the last frame is the latest. Recorded at every evaluation and probe,
  // thinned to a bounded count (every other frame dropped when full, first and last kept). Empty
  // when no layer's mechanism shows a view. Shared like `attention`.
  std::shared_ptr<const std::vector<MechanismFrame>> mechanism_views;
  const std::vector<MechanismFrame>& mechanism_history() const {
    static const std::vector<MechanismFrame> none;
    return mechanism_views ? *mechanism_views : none;
  }

  // The Interventions panel's request answered on the model (Trainer::request_interventions;
  // core/views/intervention_view.h): the ablation, importance and patching it asked for, at the
  // step it says. At a recorded step (the timeline) its importance is the recorded one. Null:
  // nothing asked and nothing recorded.
  std::shared_ptr<const InterventionView> interventions;
  // The Loss panel's eval-length field answered (Trainer::request_length_eval); null: not asked.
  std::shared_ptr<const LengthEvalView> length_eval;

  // Views of the whole model rather than of a layer, published by an architecture without
  // attention layers (its monitor, core/models/architectures/architecture_monitor.h): one per mechanism name,
  // layer 0. Null or empty for models of attention layers.
  std::shared_ptr<const std::vector<MechanismView>> model_views;
  // The model view of `mechanism`; nullptr when there is none.
  const MechanismView* model_view(const std::string& mechanism) const {
    if (model_views)
      for (const MechanismView& v : *model_views)
        if (v.mechanism == mechanism) return &v;
    return nullptr;
  }
};

}  // namespace attn
