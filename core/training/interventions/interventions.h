// Interventions on attention heads (torch; internal to core): ablation, head importance and
// activation patching of a Transformer, through the per-head hook every multi-head mechanism
// applies before its output projection (HeadIntervention, core/attention/attention.h). The
// plain result types are torch-free (core/views/intervention_view.h).
// Contract:
//  - Evaluation only: the model is put in eval mode under NoGradGuard and returned to its mode;
//    weights, optimiser state and every random stream are untouched, so interventions taken
//    during training leave the run bit-identical. Hooks are cleared on return, also on a throw.
//  - Eval figures are evaluate()'s (TrainingSession): summed cross-entropy over scored targets
//    and the share of correct argmaxes, on the first `batches` batches of the eval set. Layers
//    without an intervention keep their usual (fused) paths, so the baseline equals the run's
//    own eval on those batches.
//  - Mean ablation replaces a head's output by its mean over every example of the same batches,
//    per position (pooled over positions too when the batches have different lengths).
//  - A model without attention heads (architecture_has_heads,
//  core/models/architectures/architecture.h) is
//    refused (attn::Error) with its architecture's reason.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/data/tasks.h"
#include "core/models/model.h"
#include "core/training/interventions/run_interventions.h"  // check_interventions_apply
#include "core/views/intervention_view.h"

namespace attn {

// `batches` <= 0 or beyond the set: the whole set.
std::vector<Batch> first_batches(const std::vector<Batch>& set, int batches);

EvalFigures evaluate_model(Transformer& model, const std::vector<Batch>& batches);

// `heads` ablated together. An empty list gives baseline == ablated.
AblationResult ablate_heads(Transformer& model, const std::vector<Batch>& batches,
                            const std::vector<HeadRef>& heads, AblationMode mode);

// Every head ablated alone (the same batches and, for mean, the same means as ablate_heads).
// `progress` (optional) is called after each head with (done, total). A model of blocks is
// walked once per batch and each head's pass reruns from its layer on, the last block's MLP and
// the unembedding on the scored rows only: the figures equal ablate_heads' up to float rounding.
ImportanceTable head_importance(Transformer& model, const std::vector<Batch>& batches,
                                AblationMode mode,
                                const std::function<void(int, int)>& progress = {});

// The probe's top prediction at its last position (label, probability), with `heads` ablated
// (mean ablation's means from `batches`). `maps` (optional) receives the same pass's attention
// maps (probe_model's, core/training/session/session.h): the ablated model's, whose layers after
// an ablated head's differ from the unablated maps.
std::pair<int64_t, double> ablated_prediction(Transformer& model, const torch::Tensor& probe,
                                              const std::vector<Batch>& batches,
                                              const std::vector<HeadRef>& heads, AblationMode mode,
                                              std::vector<AttentionMap>* maps = nullptr);

// Activation patching between two probes of one length ([1, L] int64 token inputs):
// clean/corrupted metrics and, for every head, the share of the difference that comes back
// when the corrupted run takes that head's output from the clean run (at every position, and
// at each position alone). `label` names a token. The metric reads the input positions `read`
// (empty: the last; Task::Twin::read gives a twin's). Its answers are `answers` on the clean
// probe and `twin_answers` on the corrupted one, one per read position (Task::Twin's), or, both
// empty, the two runs' argmaxes. Throws attn::Error when the lengths differ, a read position
// is outside the probe, or the answers do not match the read positions.
PatchTable patch_heads(Transformer& model, const torch::Tensor& clean, const torch::Tensor& corrupt,
                       const std::function<std::string(int64_t)>& label,
                       const std::vector<int64_t>& read = {},
                       const std::vector<int64_t>& answers = {},
                       const std::vector<int64_t>& twin_answers = {});

// The patch metric of the corrupted run with `heads` taken from the clean run at every
// position (empty: the corrupted metric; the answers and the metric kind as patch_heads picks,
// given the same `read`, `answers` and `twin_answers`).
double patched_metric(Transformer& model, const torch::Tensor& clean, const torch::Tensor& corrupt,
                      const std::vector<HeadRef>& heads, const std::vector<int64_t>& read = {},
                      const std::vector<int64_t>& answers = {},
                      const std::vector<int64_t>& twin_answers = {});

}  // namespace attn
