// A toy attention mechanism that lives in this folder only, for the proof that a mechanism is its
// folder plus one registry row (test_toy_mechanism.cpp): uniform causal attention over values,
// each head scaled by a learned gain and the heads mixed by a learned H x H matrix. Its observe()
// shows a curve family ("decay": exp(-softplus(rate_h) k) over key offsets k), a matrix ("mix")
// and a scalar ("mean_rate"), so that every kind of generic view entry travels.
#pragma once
#include <torch/torch.h>

#include "core/attention/attention.h"
#include "core/attention/mechanism.h"

namespace attn::toy {

constexpr int kOffsets = 8;  // samples of the "decay" curve

class ToyAttention : public AttentionModule {
 public:
  explicit ToyAttention(const AttentionSpec& spec);
  torch::Tensor forward(const torch::Tensor& x) override;
  std::optional<MechanismView> observe() override;
  torch::Tensor rate, mix;  // [H], [H, H]

 private:
  HeadShape shape_;
  torch::nn::Linear v_{nullptr}, out_{nullptr};
};

const MechanismDescriptor& toy_mechanism();
std::shared_ptr<AttentionModule> make_toy_attention(const AttentionSpec& spec);

}  // namespace attn::toy
