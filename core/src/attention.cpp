#include "core/src/attention.h"

#include <mutex>

#include "core/attention_registry.h"
#include "core/error.h"
#include "core/src/kernel_attention.h"
#include "core/src/ky_attention.h"
#include "core/src/neural_attention.h"
#include "core/src/run_random.h"

namespace attn {
namespace {

void reject_all_options(const std::string& name, const nlohmann::json& options) {
  if (!options.is_object()) throw Error("model.attention_options." + name + " must be an object");
  if (!options.empty())
    throw Error("unknown key 'model.attention_options." + name + "." + options.begin().key() +
                "' (mechanism \"" + name + "\" takes no options)");
}

std::vector<MechanismInfo> build_registry() {
  std::vector<MechanismInfo> r;
  r.push_back({"dot", "scaled dot-product attention, softmax(QK^T / sqrt(Dh)) V",
               [](const AttentionSpec& s) { return std::make_shared<DotAttention>(s); },
               [](const nlohmann::json& o) { reject_all_options("dot", o); },
               /*options_help=*/""});
  r.push_back({"ky",
               "Neural KY-Attention (Condor): window-W attention plus a learned per-head bias "
               "g_h(t) over window slots",
               [](const AttentionSpec& s) { return std::make_shared<KyAttention>(s); },
               validate_ky_options,
               "window (16, >= 2), placement (causal | centered), edges (masked | zero-pad), "
               "hidden (32), connection (learned | none)"});
  r.push_back({"neural",
               "Neural Attention: softmax(A / sqrt(Dh)) V with scores A_ij = w_a^T act(W_h "
               "[q'_i ; k'_j] + b_h) + b_a from a one-hidden-layer MLP per head",
               make_neural_attention, validate_neural_options,
               "down (2 | none, d' of the q/k down-projection), hidden (64), "
               "activation (relu | gelu | tanh), placement (first-layer | all-layers), "
               "chunk (32, query rows per block on CPU)"});
  r.push_back({"pseudo",
               "Pseudo-MHSA (seed 002's Param-Fusion): softmax(X~_i A_i X~_i^T / Dh) X~_i with "
               "X~ = X U + b1, one Dh x Dh kernel A_i per head",
               [](const AttentionSpec& s) { return std::make_shared<PseudoAttention>(s); },
               validate_pseudo_options, /*options_help=*/""});
  r.push_back({"semi-fusion",
               "Semi-Fusion (seed 002): Pseudo-MHSA without b1, with a per-head value matrix "
               "Wv_i and the output projection W^O kept",
               [](const AttentionSpec& s) { return std::make_shared<SemiFusionAttention>(s); },
               validate_semi_fusion_options, /*options_help=*/""});
  r.push_back({"gaussian",
               "Gaussian-MHSA (seed 002): score sum_{d1,d2} exp(-(x~_s,d1 - x~_r,d2)^2 / "
               "(2 sigma^2)) / Dh, i.e. A_i fixed to ones (no score parameters)",
               [](const AttentionSpec& s) { return std::make_shared<GaussianAttention>(s); },
               validate_gaussian_options, "sigma (1.0, finite, > 0)"});
  r.push_back({"linear-sim",
               "Linear-Sim (seed 002): a simulated map x~_s^T W_o pool(X~) / Dh with one Dh x Dh "
               "weight per key position o; the key's own content never enters its score",
               [](const AttentionSpec& s) { return std::make_shared<LinearSimAttention>(s); },
               validate_linear_sim_options,
               "max_len (256, 1..4096): the longest sequence, one weight slot per position"});
  return r;
}

const std::vector<MechanismInfo>& registry() {
  static const std::vector<MechanismInfo> r = build_registry();
  return r;
}

}  // namespace

const MechanismInfo& find_mechanism(const std::string& name) {
  for (const auto& m : registry())
    if (m.name == name) return m;
  throw Error("unknown attention mechanism \"" + name + "\"");
}

const std::vector<std::string>& attention_mechanism_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& m : registry()) n.push_back(m.name);
    return n;
  }();
  return names;
}

std::string attention_mechanism_description(const std::string& name) {
  for (const auto& m : registry())
    if (m.name == name) return m.description;
  return {};
}

std::string attention_mechanism_options_help(const std::string& name) {
  for (const auto& m : registry())
    if (m.name == name) return m.options_help;
  return {};
}

void validate_attention_options(const std::string& name, const nlohmann::json& options) {
  find_mechanism(name).validate(options);
}

torch::Tensor causal_mask(int64_t length, const torch::Device& device) {
  // Small cache: one model uses one length and device at a time, the probe another.
  static std::mutex mu;
  static std::map<std::pair<int64_t, std::string>, torch::Tensor> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto key = std::make_pair(length, device.str());
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() > 16) cache.clear();
  auto mask = torch::ones({length, length}, torch::dtype(torch::kBool).device(device)).triu(1);
  cache.emplace(key, mask);
  return mask;
}

DotAttention::DotAttention(const AttentionSpec& spec)
    : heads_(spec.heads),
      head_dim_(spec.d_model / spec.heads),
      causal_(spec.causal),
      dropout_(spec.dropout) {
  qkv_ = register_module("qkv", torch::nn::Linear(spec.d_model, 3 * spec.d_model));
  out_ = register_module("out", torch::nn::Linear(spec.d_model, spec.d_model));
}

torch::Tensor DotAttention::forward(const torch::Tensor& x) {
  const int64_t B = x.size(0), L = x.size(1), D = x.size(2);
  // [B, L, 3, H, Dh] -> three [B, H, L, Dh]
  auto qkv = qkv_->forward(x).view({B, L, 3, heads_, head_dim_}).permute({2, 0, 3, 1, 4});
  auto q = qkv[0], k = qkv[1], v = qkv[2];
  auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(head_dim_));
  if (causal_) scores = scores.masked_fill(causal_mask(L, x.device()), -INFINITY);
  auto weights = torch::softmax(scores, -1);
  if (record_weights) recorded_weights = weights.detach();
  if (dropout_ > 0 && is_training()) weights = run_dropout(weights, dropout_);
  auto y = torch::matmul(weights, v).transpose(1, 2).reshape({B, L, D});
  return out_->forward(y);
}

}  // namespace attn
