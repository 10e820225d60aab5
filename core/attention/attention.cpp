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

const std::vector<MechanismInfo>& mechanisms() {
  static const std::vector<MechanismInfo> table = {
#define ATTN_MECHANISM(id)                                                                   \
  MechanismInfo{                                                                             \
      id##_mechanism().name, id##_mechanism().description, make_##id##_attention,            \
      [](const nlohmann::json& o) { validate_attention_options(id##_mechanism().name, o); }, \
      id##_mechanism().options_help},
#include "core/attention/mechanisms.def"
#undef ATTN_MECHANISM
  };
  return table;
}

}  // namespace

const MechanismInfo& find_mechanism(const std::string& name) {
  for (const auto& m : mechanisms())
    if (m.name == name) return m;
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
