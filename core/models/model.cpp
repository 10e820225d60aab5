#include "core/models/model.h"

#include "core/attention/registry.h"
#include "core/base/error.h"
#include "core/random/run_random.h"

namespace attn {

BlockImpl::BlockImpl(const ModelConfig& m, const std::string& mechanism, bool causal, int layer)
    : dropout_(m.dropout) {
  AttentionSpec spec;
  spec.d_model = m.d_model;
  spec.heads = m.heads;
  spec.causal = causal;
  spec.dropout = m.dropout;
  spec.layer = layer;
  spec.position = m.position;
  spec.rope_base = m.rope_base;
  if (m.attention_options.contains(mechanism)) spec.options = m.attention_options.at(mechanism);
  attention = register_module("attention", make_attention(mechanism, spec));
  ln1_ = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({m.d_model})));
  ln2_ = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({m.d_model})));
  fc1_ = register_module("fc1", torch::nn::Linear(m.d_model, m.mlp_ratio * m.d_model));
  fc2_ = register_module("fc2", torch::nn::Linear(m.mlp_ratio * m.d_model, m.d_model));
}

torch::Tensor BlockImpl::forward(const torch::Tensor& x) {
  const bool drop = dropout_ > 0 && is_training();
  auto a = attention->forward(attention_input(x));
  auto h = x + (drop ? run_dropout(a, dropout_) : a);
  auto f = mlp_write(h);
  return h + (drop ? run_dropout(f, dropout_) : f);
}

torch::Tensor BlockImpl::mlp_write(const torch::Tensor& h) {
  return fc2_->forward(torch::gelu(fc1_->forward(ln2_->forward(h))));
}

TransformerImpl::TransformerImpl(const ModelConfig& m, int vocab, int max_length, int patch_dim)
    : classifier_(m.head == "classifier"), dropout_(m.dropout) {
  if (m.architecture == "conn") {  // a whole model of its own (core/models/conn/conn_model.h)
    if (classifier_ || patch_dim > 0)
      throw Error("model.architecture \"conn\" is a causal token model (model.head \"lm\")");
    conn_ = register_module("conn", ConnModel(m, vocab, max_length));
    return;
  }
  const int out = classifier_ ? m.classes : vocab;
  const int positions = max_length + (classifier_ ? 1 : 0);
  if (patch_dim > 0)
    patch_ = register_module("patch", torch::nn::Linear(patch_dim, m.d_model));
  else
    token_ = register_module("token", torch::nn::Embedding(vocab, m.d_model));
  max_positions_ = positions;
  if (m.position == "learned")  // rope / alibi act inside attention; none has no position at all
    position_ = register_parameter("position", torch::randn({positions, m.d_model}) * 0.02);
  if (classifier_) cls_ = register_parameter("cls", torch::zeros({1, 1, m.d_model}));
  heads_ = m.heads;
  // The layers as resolved: every mechanism's layout rule (core/attention/registry.h) applied,
  // so a config built in code runs what its parsed twin runs.
  const std::vector<std::string> mechanisms =
      resolved_attention_layers(m.attention, m.layers, m.attention_options, !classifier_);
  for (int l = 0; l < m.layers; ++l)
    blocks_.push_back(
        register_module("block" + std::to_string(l), Block(m, mechanisms[l], !classifier_, l)));
  final_ln_ =
      register_module("final_ln", torch::nn::LayerNorm(torch::nn::LayerNormOptions({m.d_model})));
  head_ = register_module("head", torch::nn::Linear(m.d_model, out));

  // GPT-2 style init: N(0, 0.02) weights, zero biases, residual output projections scaled by
  // 1/sqrt(2 * layers) so the residual stream's variance does not grow with depth.
  torch::NoGradGuard no_grad;
  if (token_) torch::nn::init::normal_(token_->weight, 0.0, 0.02);
  for (auto& p : named_parameters()) {
    const auto& name = p.key();
    auto& t = p.value();
    if (name.find("ln") != std::string::npos) continue;  // LayerNorm keeps ones/zeros
    if (name.size() >= 4 && name.compare(name.size() - 4, 4, "bias") == 0) {
      t.zero_();
    } else if (t.dim() == 2 && name.find("position") == std::string::npos &&
               name.find("token") == std::string::npos && name.find("patch") == std::string::npos) {
      // The patch embedding keeps LibTorch's fan-in init: N(0, 0.02) would make the embeddings
      // of unit-variance pixels as small as the position table, so at the start the model
      // would see where a patch is about as loudly as what it shows.
      const bool residual_out =
          name.find("fc2") != std::string::npos || name.find("attention.out") != std::string::npos;
      torch::nn::init::normal_(t, 0.0, residual_out ? 0.02 / std::sqrt(2.0 * m.layers) : 0.02);
    }
  }
  for (auto& b : blocks_) b->attention->reset_own_parameters();
}

torch::Tensor TransformerImpl::forward(const torch::Tensor& inputs) {
  if (conn_) return conn_->forward(inputs);
  torch::Tensor x = embed(inputs);
  if (dropout_ > 0 && is_training()) x = run_dropout(x, dropout_);
  for (auto& b : blocks_) x = b->forward(x);
  x = final_ln_->forward(x);
  if (classifier_) return head_->forward(x.select(1, 0));
  return head_->forward(x);
}

torch::Tensor TransformerImpl::embed(const torch::Tensor& inputs) {
  if (conn_) throw Error("the Connection Transformer has no residual stream of blocks to walk");
  const int64_t B = inputs.size(0), L = inputs.size(1);
  torch::Tensor x;
  if (patch_) {
    if (!inputs.is_floating_point() || inputs.dim() != 3 ||
        inputs.size(2) != patch_->weight.size(1))
      throw Error("this model takes float patches [B, S, " +
                  std::to_string(patch_->weight.size(1)) + "], got " + inputs.toString() + " " +
                  c10::str(inputs.sizes()));
    x = patch_->forward(inputs);
  } else {
    if (inputs.is_floating_point() || inputs.dim() != 2)
      throw Error("this model takes int64 tokens [B, L], got " + inputs.toString() + " " +
                  c10::str(inputs.sizes()));
    x = token_->forward(inputs);
  }
  if (classifier_) x = torch::cat({cls_.expand({B, 1, x.size(2)}), x}, 1);
  const int64_t T = x.size(1);
  // Only a learned table bounds the length; rope, alibi and none run at any length.
  if (position_.defined() && T > max_positions_)
    throw Error("input of " + std::to_string(L) + " tokens is longer than the model's " +
                std::to_string(max_positions_ - (classifier_ ? 1 : 0)) + " learned positions");
  if (position_.defined()) x = x + position_.slice(0, 0, T).unsqueeze(0);
  return x;
}

std::vector<std::shared_ptr<AttentionModule>> TransformerImpl::attention_modules() const {
  std::vector<std::shared_ptr<AttentionModule>> r;
  for (const auto& b : blocks_) r.push_back(b->attention);
  return r;
}

torch::Tensor TransformerImpl::regularization() const {
  return conn_ ? conn_->regularization() : torch::Tensor();
}

int64_t TransformerImpl::parameter_count() const {
  int64_t n = 0;
  for (const auto& p : parameters()) n += p.numel();
  return n;
}

int64_t TransformerImpl::attention_parameter_count() const {
  int64_t n = 0;
  for (const auto& a : attention_modules())
    for (const auto& p : a->parameters()) n += p.numel();
  return n;
}

}  // namespace attn
