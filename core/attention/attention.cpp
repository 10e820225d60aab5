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
std::shared_ptr<AttentionModule> make_attention(const std::string& name,
                                                const AttentionSpec& spec) {
#define ATTN_MECHANISM(id) \
  if (name == id##_mechanism().name) return make_##id##_attention(spec);
#include "core/attention/mechanisms.def"
#undef ATTN_MECHANISM
  throw Error("unknown attention mechanism \"" + name +
              "\" (allowed: " + join_names(attention_mechanism_names()) + ")");
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
