#include "app/panels/runs/config_diff_model.h"

#include <set>

namespace attn::gui {
namespace {

void flatten_into(const nlohmann::json& j, const std::string& prefix,
                  std::map<std::string, nlohmann::json>& out) {
  if (!j.is_object() || (j.empty() && !prefix.empty())) {
    out[prefix] = j;
    return;
  }
  for (auto it = j.begin(); it != j.end(); ++it)
    flatten_into(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
}

std::string value_text(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

std::map<std::string, nlohmann::json> flatten_config(const nlohmann::json& config) {
  std::map<std::string, nlohmann::json> out;
  flatten_into(config, "", out);
  return out;
}

std::vector<std::string> differing_keys(const std::vector<nlohmann::json>& configs) {
  if (configs.size() < 2) return {};
  std::vector<std::map<std::string, nlohmann::json>> flat;
  std::set<std::string> keys;
  for (const nlohmann::json& c : configs) {
    flat.push_back(flatten_config(c));
    for (const auto& [key, value] : flat.back()) keys.insert(key);
  }
  std::vector<std::string> out;
  for (const std::string& key : keys) {
    if (key == "name") continue;
    const auto first = flat[0].find(key);
    for (const auto& f : flat) {
      const auto at = f.find(key);
      const bool same = (at == f.end()) == (first == flat[0].end()) &&
                        (at == f.end() || at->second == first->second);
      if (!same) {
        out.push_back(key);
        break;
      }
    }
  }
  return out;
}

std::string differing_text(const nlohmann::json& config, const std::vector<std::string>& keys) {
  const auto flat = flatten_config(config);
  std::string out;
  for (const std::string& key : keys) {
    const auto at = flat.find(key);
    out +=
        (out.empty() ? "" : ", ") + key + "=" + (at == flat.end() ? "-" : value_text(at->second));
  }
  return out;
}

}  // namespace attn::gui
