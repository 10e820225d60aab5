// Computes the Neural panel's data (core/attention/neural/neural_view.h) from a Neural Attention
// layer, on the trainer thread (NeuralAttention::observe). Private to core (includes torch).
#pragma once
#include <torch/torch.h>

#include <memory>
#include <vector>

#include "core/attention/neural/neural_attention.h"
#include "core/attention/neural/neural_view.h"

namespace attn {

// Layer info and the per-head parameter table (norms of the values and of their .grad).
NeuralLayerInfo neural_layer_info(const NeuralAttention& module, int layer);

// Surface and slice of one head for the request's range, query and direction. When the module's
// d' is not 2 the result is not available and its note says why. Throws attn::Error for a head
// out of range.
NeuralScoreSurface neural_score_surface(const NeuralAttention& module, int layer, int head,
                                        const NeuralViewRequest& request);

}  // namespace attn
