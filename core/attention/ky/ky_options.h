// Neural KY-Attention's options (model.attention_options.ky), torch-free. The mechanism itself:
// core/attention/ky/ky_attention.h.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace attn {

struct KyOptions {
  int window = 16;                   // W >= 2
  std::string placement = "causal";  // causal | centered
  std::string edges = "masked";      // masked | zero-pad
  int hidden = 32;                   // width of each g_h's two hidden layers
  // learned: the connection networks g_h; none: g = 0, i.e. plain sliding-window attention
  // (the baseline that isolates what the learned bias adds); table: a free per-head bias over
  // the W slots, an H x W parameter table starting at zero (the baseline that isolates what
  // g_h's smooth MLP form adds over any slot bias at all).
  std::string connection = "learned";
  // Initialisation of g_h's layers. uniform (default): torch::nn::Linear's, U(+-1/sqrt(fan_in))
  // for weights and biases, so g starts as a small random curve. xavier: the seed's (§5, Thm 5.6
  // proof: "Xavier/He initialization"), Glorot-uniform weights U(+-sqrt(6/(fan_in+fan_out)))
  // and zero biases.
  std::string init = "uniform";
};

// Parses model.attention_options.ky (throws attn::Error naming the key).
KyOptions parse_ky_options(const nlohmann::json& options);
// Throws attn::Error when a centred window would let a causal model see the token it predicts.
// The config parser runs it through the descriptor; the module runs it when built directly.
void check_ky_causality(const KyOptions& options, bool causal);

}  // namespace attn
