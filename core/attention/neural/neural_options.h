// Neural Attention's options (model.attention_options.neural), torch-free. The mechanism
// itself: core/attention/neural/neural_attention.h.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace attn {

enum class NeuralActivation { relu, gelu, tanh };                   // gelu is the exact (erf) form
NeuralActivation parse_neural_activation(const std::string& name);  // throws attn::Error
const char* neural_activation_name(NeuralActivation a);

struct NeuralOptions {
  // d' of the down-projection; 0 means "none" (q' = q, k' = k). Default 2: the paper's best
  // perplexity (25.46 vs 25.64 at d' = 16 and 25.56 without, Table 1), the setting of all its
  // vision runs, and the cheapest (Table 6: 1.4 GB against 8.7 GB without down-projection).
  int down = 2;
  int hidden = 64;  // h, the width of the scorer's hidden layer
  NeuralActivation activation = NeuralActivation::relu;  // the paper's
  // "first-layer" (the paper's §3.2) or "all-layers". Which layers run neural attention is
  // decided once, by the descriptor's layout rule (model.attention as resolved); the module
  // does not look at it.
  std::string placement = "first-layer";
  // Query rows per block off CUDA (the dispatcher picks its own). 8, not 32: bench_neural's LM
  // step (d128, seq 128, batch 16) runs at 4.1x dot's CPU time and 1.23x its max RSS with 8,
  // against 8.9x and 2.05x with 32 (docs/design/TARGETS.md asks for at most 6x and 1.5x):
  // smaller blocks keep the [rows, n, h] activations in cache.
  int chunk = 8;
  // "split" (attnlab's: W_h [q'; k'] = U q' + V k', scored in blocks of `chunk` rows, never the
  // [B, H, T, T, *] tensors) or "literal": the paper's eqs. 7-10 as plain autograd, building
  // C = [q'_i ; k'_j] [B, H, T, T, 2d'] and the [B, H, T, T, h] hidden layer and keeping them
  // for backward, as the paper's Table 6 measured (issue 49: its memory against d'). For
  // benchmarks: it takes no dropout and no ALiBi (refused), and no fused kernel.
  std::string scorer = "split";
  // One down-projection and one scorer for all heads (the authors' code: the parameter deltas
  // of the paper's Table 1 imply it, e.g. +3K at d' = 16 where per-head scorers would add 22K)
  // instead of one per head (attnlab's default: every other per-head quantity is per head, and
  // a head's scorer is what the Neural panel draws).
  bool share_across_heads = false;
  // A bias on the down-projection, q' = q Wq' + bq' (the authors' nn.Linear has one; eqs. 5-6
  // have none, and neither does attnlab's default).
  bool down_bias = false;
};

// Parses model.attention_options.neural (throws attn::Error naming the key and the reason).
NeuralOptions parse_neural_options(const nlohmann::json& options);

}  // namespace attn
