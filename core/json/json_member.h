// j[key] when j is an object that holds key, else `fallback`. For reading optional fields of
// documents attnlab wrote itself (leaderboards, manifests); nlohmann's j.value(key, json) with a
// json default does not compile (its template deduction meets std::apply's tuple rules).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace attn {

inline nlohmann::json json_member(const nlohmann::json& j, const std::string& key,
                                  const nlohmann::json& fallback) {
  if (j.is_object()) {
    const auto it = j.find(key);
    if (it != j.end()) return *it;
  }
  return fallback;
}

}  // namespace attn
