// Causal analyses of attention heads beyond ablation, torch-free: attribution patching, path
// patching, direct logit attribution and the logit lens (core/training/interventions/
// attribution.h, path_patching.h, logit_attribution.h compute them; `attnlab analyze` prints
// them). The metric and its clean/corrupted values are activation patching's (PatchTable,
// core/views/intervention_view.h).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/views/intervention_view.h"

namespace attn {

// Attribution patching: the first-order estimate of activation patching, from one forward on
// the clean probe and one forward and backward on the corrupted one:
//   attribution(head) = sum over positions and Dh of (z_clean - z_corrupt) * d metric / d z,
// the gradient taken on the corrupted run (the run activation patching changes). In metric units;
// divide by (clean_metric - corrupt_metric) for PatchTable's `restored` scale.
struct AttributionTable {
  int64_t step = -1;
  std::string metric;  // as PatchTable::metric
  std::string clean_answer, corrupt_answer;
  double clean_metric = 0, corrupt_metric = 0;
  std::vector<int64_t> read_positions;  // as PatchTable's
  std::string warning;                  // as PatchTable's
  int layers = 0, heads = 0, positions = 0;
  std::vector<std::string> tokens;     // per position the heads see (a classifier's "CLS" first)
  std::vector<double> attribution;     // layer-major [layers x heads]
  std::vector<double> attribution_at;  // [layers x heads x positions]
  // The two-point estimate, layer-major [layers x heads]: the trapezoid rule along the straight
  // path from the corrupted head output to the clean one, (z_clean - z_corrupt) times the mean
  // of d metric / d z on the corrupted run and on the clean run (integrated gradients with two
  // points). The same forward and backward give it; where the metric bends between the runs
  // (a saturated softmax) it ranks heads closer to activation patching. Not recorded in views.rec.
  std::vector<double> two_point;
};

// Path patching: the effect of sender head A on receiver head B through B's input, everything
// else held at the corrupted run. The corrupted probe runs with B's output recomputed from its
// corrupted input plus A's clean-minus-corrupted write to the residual stream (the other heads,
// the MLPs and the embedding frozen at the corrupted run between them); effect = (patched -
// corrupted) / (clean - corrupted) of the metric, as PatchTable's `restored`.
struct PathPatchTable {
  int64_t step = -1;
  std::string metric, clean_answer, corrupt_answer;
  double clean_metric = 0, corrupt_metric = 0;
  std::vector<int64_t> read_positions;  // as PatchTable's
  std::string warning;                  // as PatchTable's
  int layers = 0, heads = 0;
  std::vector<HeadRef> receivers;
  // [sender (layer-major over every head) x receivers.size()]; NaN where the sender's layer is
  // not before the receiver's (no path).
  std::vector<double> effect;
};

// Direct logit attribution of the answer's logit at the answer position (the last; a
// classifier's CLS), through the final norm with its scale frozen at the run's own and the
// unembedding: components "embed" (token and learned position embeddings), "L<l>.H<h>" (a
// head's write through the output projection), "L<l>.attn_bias" (the layer's write with every
// head's output zero: the output projection's bias) and "L<l>.mlp". `total` is the sum of the
// components; it equals answer_logit - held_out, held_out being the final norm's bias and the
// unembedding's bias read at the answer (exactly, up to rounding, when a layer's write is its
// heads' writes plus its bias, as for every mechanism attnlab has).
struct LogitAttribution {
  int64_t step = -1;
  std::string answer;  // the model's top prediction there
  double answer_logit = 0, total = 0, held_out = 0;
  std::vector<std::pair<std::string, double>> components;
};

// The logit lens: the residual stream after each block, decoded through the final norm and the
// unembedding at the answer position. The last layer's row is the model's own output.
struct LogitLensRow {
  int layer = 0;
  int64_t answer_rank = 0;  // 0: the answer is the top token there
  double answer_logprob = 0;
  std::string top;  // the top token there
};
struct LogitLens {
  int64_t step = -1;
  std::string answer;  // the model's top prediction at the answer position
  double model_answer_logprob = 0;
  std::vector<LogitLensRow> layers;
};

}  // namespace attn
