// The transformer every mechanism plugs into (private to core: includes torch).
// Token embeddings (+ a learned position table when model.position is "learned"; rope and
// alibi act inside attention, none adds nothing), pre-LN blocks (x + attn(LN x), x + mlp(LN x)),
// final LN. Heads: causal language model (logits per position) or classifier (a CLS token
// prepended, bidirectional attention, logits from the CLS position). Image tasks (a ViT): a Linear
// patch embedding replaces the token embedding; the rest is the same model, so every attention
// mechanism plugs into images exactly as into text.
#pragma once
#include <torch/torch.h>

#include "core/attention/attention.h"
#include "core/config/config.h"
#include "core/models/conn/conn_model.h"

namespace attn {

class BlockImpl : public torch::nn::Module {
 public:
  BlockImpl(const ModelConfig& m, const std::string& mechanism, bool causal, int layer);
  torch::Tensor forward(const torch::Tensor& x);
  std::shared_ptr<AttentionModule> attention;
  // The block's pieces, for analyses that walk the residual stream in eval mode (core/training/
  // interventions/stream.h): forward(x) = h + mlp_write(h), h = x + attention(attention_input(x)).
  torch::Tensor attention_input(const torch::Tensor& x) { return ln1_->forward(x); }
  torch::Tensor mlp_write(const torch::Tensor& h);

 private:
  torch::nn::LayerNorm ln1_{nullptr}, ln2_{nullptr};
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr};
  double dropout_;
};
TORCH_MODULE(Block);

class TransformerImpl : public torch::nn::Module {
 public:
  // vocab: input/output tokens; max_length: longest input sequence. patch_dim > 0: inputs are
  // float patch vectors of that width (vocab is then unused).
  TransformerImpl(const ModelConfig& m, int vocab, int max_length, int patch_dim = 0);
  // tokens [B, L] int64 (or patches [B, L, patch_dim] float) -> logits [B, L, vocab] (lm) or
  // [B, classes] (classifier).
  torch::Tensor forward(const torch::Tensor& inputs);

  std::vector<std::shared_ptr<AttentionModule>> attention_modules() const;
  // The residual stream's pieces, for analyses that walk it in eval mode (direct logit
  // attribution, the logit lens, path patching): embed(inputs) is the stream entering block 0
  // ([B, T, D], a classifier's CLS first, no dropout); forward = unembedding(final_norm(blocks(
  // embed))) read at every position (lm) or the CLS (classifier). Not for a "conn" model.
  torch::Tensor embed(const torch::Tensor& inputs);
  const std::vector<Block>& blocks() const { return blocks_; }
  torch::nn::LayerNorm final_norm() const { return final_ln_; }
  torch::nn::Linear unembedding() const { return head_; }
  int64_t parameter_count() const;
  int64_t attention_parameter_count() const;
  bool is_classifier() const { return classifier_; }
  int heads() const { return heads_; }  // model.heads: every attention layer's head count
  bool takes_patches() const { return !patch_.is_empty(); }
  // The Connection Transformer when model.architecture is "conn" (then the only submodule).
  ConnModel conn() const { return conn_; }
  // The training objective is the loss plus this: the architecture's own penalty (conn:
  // lambda ||C||_F^2), or an undefined tensor when it has none.
  torch::Tensor regularization() const;

 private:
  bool classifier_;
  double dropout_;
  int heads_ = 1;
  torch::nn::Embedding token_{nullptr};
  torch::nn::Linear patch_{nullptr};
  torch::Tensor position_, cls_;  // position_: model.position "learned" only
  int64_t max_positions_ = 0;
  std::vector<Block> blocks_;
  torch::nn::LayerNorm final_ln_{nullptr};
  torch::nn::Linear head_{nullptr};
  ConnModel conn_{nullptr};
};
TORCH_MODULE(Transformer);

}  // namespace attn
