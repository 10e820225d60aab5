#include "core/attention/attention.h"

#include <cmath>
#include <map>
#include <mutex>
#include <vector>

#include "core/attention/mechanism.h"
#include "core/attention/registry.h"
#include "core/base/error.h"
#include "core/json/json_reader.h"

namespace attn {
namespace {
std::vector<std::pair<std::string, AttentionFactory>>& test_factories() {
  static std::vector<std::pair<std::string, AttentionFactory>> factories;
  return factories;
}
}  // namespace

void register_test_attention(const std::string& name, AttentionFactory make) {
  test_factories().emplace_back(name, make);
}

std::shared_ptr<AttentionModule> make_attention(const std::string& name,
                                                const AttentionSpec& spec) {
#define ATTN_MECHANISM(id) \
  if (name == id##_mechanism().name) return make_##id##_attention(spec);
#include "core/attention/mechanisms.def"
#undef ATTN_MECHANISM
  for (const auto& [test_name, make] : test_factories())
    if (name == test_name) return make(spec);
  throw Error("unknown attention mechanism \"" + name +
              "\" (allowed: " + join_names(attention_mechanism_names()) + ")");
}

bool HeadIntervention::active() const {
  for (const Kind k : kinds)
    if (k != Kind::keep) return true;
  return false;
}

torch::Tensor AttentionModule::intervene(const torch::Tensor& y,
                                         const std::function<torch::Tensor()>& uniform_output) {
  if (!intervention) return y;
  HeadIntervention& iv = *intervention;
  if (iv.capture && iv.leaf) {
    iv.captured = y.detach().requires_grad_(true);
    return iv.active() ? intervene_on(iv.captured, uniform_output) : iv.captured;
  }
  if (iv.capture) iv.captured = iv.keep_graph ? y : y.detach();
  return iv.active() ? intervene_on(y, uniform_output) : y;
}

torch::Tensor AttentionModule::intervene_on(const torch::Tensor& y,
                                            const std::function<torch::Tensor()>& uniform_output) {
  HeadIntervention& iv = *intervention;
  const int64_t H = y.size(1);
  torch::Tensor uniform;
  std::vector<torch::Tensor> heads = y.unbind(1);
  for (int64_t h = 0; h < H && h < static_cast<int64_t>(iv.kinds.size()); ++h) {
    torch::Tensor changed;
    switch (iv.kinds[h]) {
      case HeadIntervention::Kind::keep:
        continue;
      case HeadIntervention::Kind::zero:
        changed = torch::zeros_like(heads[h]);
        break;
      case HeadIntervention::Kind::replace:
        if (!iv.replacement.defined())
          throw Error("head " + std::to_string(h) + ": a replacement was asked for but none given");
        changed = iv.replacement.select(1, h).to(y.dtype()).expand_as(heads[h]);
        break;
      case HeadIntervention::Kind::uniform:
        if (!uniform.defined()) uniform = uniform_output();
        changed = uniform.select(1, h);
        break;
    }
    if (iv.positions.defined())  // [L] or [B, L] -> [1 or B, L, 1] against [B, L, Dh]
      changed = torch::where(iv.positions.view({-1, y.size(2), 1}), changed, heads[h]);
    heads[h] = changed;
  }
  return torch::stack(heads, 1);
}

torch::Tensor uniform_attention(const torch::Tensor& v, bool causal) {
  const int64_t L = v.size(2);
  if (!causal) return v.mean(2, /*keepdim=*/true).expand_as(v);
  auto count = torch::arange(1, L + 1, v.options()).view({1, 1, L, 1});
  return v.cumsum(2) / count;
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

void fan_in_uniform_(torch::Tensor& t, double fan_in) {
  torch::NoGradGuard no_grad;
  const double bound = 1.0 / std::sqrt(fan_in);
  t.uniform_(-bound, bound);
}

}  // namespace attn
