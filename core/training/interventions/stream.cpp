#include "core/training/interventions/stream.h"

#include "core/base/error.h"

namespace attn::detail {

Stream walk(Scope& scope, const torch::Tensor& inputs) {
  Transformer& model = scope.model();
  Stream s;
  torch::Tensor x = model->embed(inputs.to(scope.device()));
  s.embed = x;
  std::vector<Block> blocks = model->blocks();  // holders: their modules are not const
  for (int l = 0; l < static_cast<int>(blocks.size()); ++l) {
    s.resid.push_back(x);
    scope.at(l).capture = true;
    const torch::Tensor a = blocks[l]->attention->forward(blocks[l]->attention_input(x));
    s.z.push_back(scope.at(l).captured);
    scope.clear();
    const torch::Tensor h = x + a;
    const torch::Tensor f = blocks[l]->mlp_write(h);
    x = h + f;
    s.attn.push_back(a);
    s.mlp.push_back(f);
  }
  s.resid.push_back(x);
  const torch::Tensor y = model->unembedding()->forward(model->final_norm()->forward(x));
  s.logits = model->is_classifier() ? y.select(1, 0) : y;
  return s;
}

torch::Tensor write_of(Scope& scope, int layer, const torch::Tensor& x, const torch::Tensor& z) {
  Block block = scope.model()->blocks().at(layer);
  HeadIntervention& iv = scope.at(layer);
  iv.kinds.assign(scope.heads(), HeadIntervention::Kind::replace);
  iv.replacement = z;
  const torch::Tensor w = block->attention->forward(block->attention_input(x));
  scope.clear();
  return w;
}

torch::Tensor head_write(Scope& scope, int layer, int head, const torch::Tensor& x,
                         const torch::Tensor& z) {
  torch::Tensor only = torch::zeros_like(z);
  only.select(1, head).copy_(z.select(1, head));
  return write_of(scope, layer, x, only) - write_of(scope, layer, x, torch::zeros_like(z));
}

torch::Tensor heads_on(Scope& scope, int layer, const torch::Tensor& x) {
  Block block = scope.model()->blocks().at(layer);
  scope.at(layer).capture = true;
  block->attention->forward(block->attention_input(x));
  torch::Tensor z = scope.at(layer).captured;
  scope.clear();
  return z;
}

int64_t answer_position(Scope& scope, int64_t T) {
  return scope.model()->is_classifier() ? 0 : T - 1;
}

}  // namespace attn::detail
