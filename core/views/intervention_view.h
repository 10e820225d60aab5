// Interventions on attention heads, torch-free: what the Interventions panel asks the trainer
// for (Trainer::request_interventions), what the trainer and `attnlab analyze` compute
// (core/training/interventions/interventions.h) and what the window, the figures and views.rec
// read.
//  - Ablation replaces a head's output, the [B, L, Dh] slice of the per-head outputs before the
//    output projection: zero (0), mean (its mean over the evaluated batches, per position) or
//    uniform (it attends uniformly over the keys each query may see). Evaluation only: weights,
//    optimiser and the training stream are never touched.
//  - Importance: every head ablated alone, eval loss and accuracy minus the unablated ones.
//  - Patching: the corrupted probe run with one head's output (or one head at one position)
//    taken from the clean probe's run; `restored` = (patched - corrupted) / (clean - corrupted)
//    of the metric: 1 when the head alone carries the difference, 0 when it carries none.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/views/snapshot.h"  // AttentionMap

namespace attn {

enum class AblationMode { zero, mean, uniform };
const char* ablation_mode_name(AblationMode mode);
// "zero" | "mean" | "uniform"; throws attn::Error naming `what` and the allowed values.
AblationMode parse_ablation_mode(const std::string& text, const std::string& what);

struct HeadRef {
  int layer = 0, head = 0;
  bool operator==(const HeadRef& o) const { return layer == o.layer && head == o.head; }
  bool operator<(const HeadRef& o) const {
    return layer != o.layer ? layer < o.layer : head < o.head;
  }
};
// "L.H[,L.H...]" (e.g. "0.1,1.3"), each checked against layers x heads; duplicates dropped.
// Throws attn::Error naming `what`, the culprit and the allowed range.
std::vector<HeadRef> parse_head_list(const std::string& text, int layers, int heads,
                                     const std::string& what);
std::string head_list_text(const std::vector<HeadRef>& heads);  // "0.1,1.3"

struct EvalFigures {
  double loss = 0, accuracy = 0;
};

// The model evaluated on its task rebuilt at another length (Trainer::request_length_eval, the
// Loss panel's eval-length field; core/training/interventions/length_eval.h).
struct LengthEvalView {
  int length = 0;   // the value asked for
  std::string key;  // "task.context" or "task.length"
  int trained = 0;  // the run's own value of that key
  int tokens = 0;   // model input length at `length`
  int batches = 0;
  int64_t step = -1;    // the model's step when computed
  EvalFigures figures;  // valid when error is empty
  std::string error;    // why it cannot run (a learned position table, a task without length)
};

// Eval loss and accuracy with `heads` ablated, beside the unablated ones, on `batches` batches.
struct AblationResult {
  AblationMode mode = AblationMode::zero;
  std::vector<HeadRef> heads;
  int batches = 0;
  EvalFigures baseline, ablated;
};

// Every head ablated alone. loss/accuracy: layer-major [layers x heads], the ablated figures
// (subtract baseline for the change the panels and figures show).
struct ImportanceTable {
  int64_t step = -1;  // the model's step
  AblationMode mode = AblationMode::zero;
  int batches = 0;
  int layers = 0, heads = 0;
  EvalFigures baseline;
  std::vector<float> loss, accuracy;
  bool empty() const { return layers == 0; }
  float loss_change(int layer, int head) const;
  float accuracy_change(int layer, int head) const;
};

// The smallest |clean - corrupted| metric difference a share restored is trusted on: below
// it, a share is a ratio of noise (0.023 nats once read as "restores 1.97"). In the metric's
// units (logits or nats). `attnlab analyze` refuses below it without --allow-small-difference.
constexpr double kMinPatchDifference = 0.1;
// Empty when |clean - corrupt| >= kMinPatchDifference; else a one-line warning naming both.
std::string small_difference_warning(double clean, double corrupt);

struct PatchTable {
  int64_t step = -1;
  // "logit_diff": logit(clean answer) - logit(corrupted answer), summed over the read positions
  // (0 where the two answers agree), when the model's answers differ somewhere; "loss": the
  // clean answers' cross-entropy summed there otherwise.
  std::string metric;
  std::string clean_answer, corrupt_answer;  // token labels of the answers, one per position
  double clean_metric = 0, corrupt_metric = 0;
  // The input positions the metric reads: the task's scored positions the twin changes (the
  // twin's Task::Twin::read), or every scored position for a typed corrupted probe.
  std::vector<int64_t> read_positions;
  std::string warning;  // small_difference_warning(clean_metric, corrupt_metric)
  int layers = 0, heads = 0, positions = 0;
  // Per position the heads see (a classifier's "CLS" first): the clean and corrupted probes'
  // labels, and the positions where they differ.
  std::vector<std::string> tokens, corrupt_tokens;
  std::vector<int> differing;
  std::vector<float> restored;     // layer-major [layers x heads]
  std::vector<float> restored_at;  // [layers x heads x positions]: one head at one position
  bool empty() const { return layers == 0; }
};

// The panel's request; the trainer recomputes when it changes and at every recorded step.
struct InterventionRequest {
  std::vector<HeadRef> ablate;  // heads to ablate together (empty: no ablation)
  AblationMode mode = AblationMode::zero;
  bool importance = false;  // compute the importance table in `mode`
  // Patch from `clean` (empty: the run's probe) into `corrupt` (empty: the task's twin of it).
  bool patch = false;
  std::string clean, corrupt;
  bool asks() const { return !ablate.empty() || importance || patch; }
  bool operator==(const InterventionRequest& o) const {
    return ablate == o.ablate && mode == o.mode && importance == o.importance && patch == o.patch &&
           clean == o.clean && corrupt == o.corrupt;
  }
  bool operator!=(const InterventionRequest& o) const { return !(*this == o); }
};

// What the trainer publishes for a request (Snapshot::interventions).
struct InterventionView {
  InterventionRequest request;
  int64_t step = -1;
  AblationResult ablation;  // heads empty: none asked
  // The probe's prediction at its last position, unablated and with request.ablate ablated.
  std::string prediction, ablated_prediction;
  double prediction_probability = 0, ablated_probability = 0;
  // The probe's attention maps (Snapshot::attention's layout) with request.ablate ablated, at
  // `step`: a layer after an ablated head's reads the changed stream, so its maps differ from
  // the unablated model's (the ablated layer's own maps do not: the hook acts on head outputs).
  // Empty when nothing is ablated or the mechanism gives no maps.
  std::vector<AttentionMap> ablated_maps;
  ImportanceTable importance;
  PatchTable patch;
  std::string error;  // why part of the request could not be computed ("" when all was)
};

}  // namespace attn
