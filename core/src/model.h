// The transformer every mechanism plugs into (private to core: includes torch).
// Token + learned position embeddings, pre-LN blocks (x + attn(LN x), x + mlp(LN x)), final LN.
// Heads: causal language model (logits per position) or classifier (a CLS token prepended,
// bidirectional attention, logits from the CLS position).
#pragma once
#include <torch/torch.h>

#include "core/config.h"
#include "core/src/attention.h"

namespace attn {

class BlockImpl : public torch::nn::Module {
 public:
  BlockImpl(const ModelConfig& m, const std::string& mechanism, bool causal, int layer);
  torch::Tensor forward(const torch::Tensor& x);
  std::shared_ptr<AttentionModule> attention;

 private:
  torch::nn::LayerNorm ln1_{nullptr}, ln2_{nullptr};
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr};
  double dropout_;
};
TORCH_MODULE(Block);

class TransformerImpl : public torch::nn::Module {
 public:
  // vocab: input/output tokens; max_length: longest input sequence.
  TransformerImpl(const ModelConfig& m, int vocab, int max_length);
  // tokens [B, L] int64 -> logits [B, L, vocab] (lm) or [B, classes] (classifier).
  torch::Tensor forward(const torch::Tensor& tokens);

  std::vector<std::shared_ptr<AttentionModule>> attention_modules() const;
  int64_t parameter_count() const;
  int64_t attention_parameter_count() const;
  bool is_classifier() const { return classifier_; }

 private:
  bool classifier_;
  double dropout_;
  torch::nn::Embedding token_{nullptr};
  torch::Tensor position_, cls_;
  std::vector<Block> blocks_;
  torch::nn::LayerNorm final_ln_{nullptr};
  torch::nn::Linear head_{nullptr};
};
TORCH_MODULE(Transformer);

}  // namespace attn
