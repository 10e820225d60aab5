// The parameter count of a transformer (core/models/model.h) from its config alone, by formula:
// no model is built, so a claim can be counted at a paper's dimensions (width 256, 6 layers)
// without the memory or time to build it. Torch-free. Each layer's attention is counted by its
// mechanism's descriptor (attention_parameter_count, core/attention/registry.h), over the layers
// as resolved (resolved_attention_layers): this file names no mechanism. An architecture without
// attention layers is counted by its row's formula (ArchitectureDescriptor::parameter_count,
// token models), attention 0 as its runs record; one without a formula is refused.
// Contract: equals Transformer::parameter_count() for the same config, vocabulary, input length
// and patch size (tests/core/test_model.cpp checks it against built models).
#pragma once
#include <cstdint>

#include "core/config/config.h"

namespace attn {

struct ModelSize {
  int64_t attention = 0;  // every layer's attention module
  int64_t total = 0;      // the whole model
};

// vocab: token models' vocabulary (ignored with a patch_dim); max_length: the input length
// (patches for image models, which add a CLS position); patch_dim: pixels per patch, 0 for
// token models. Throws attn::Error for another architecture, invalid mechanism options or a
// layout a mechanism's rule refuses.
ModelSize model_parameter_count(const ModelConfig& m, int vocab, int max_length, int patch_dim);

}  // namespace attn
