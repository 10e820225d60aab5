#include "core/json/json_path.h"

#include "core/base/error.h"

namespace attn {
using nlohmann::json;

void set_dotted(json& j, const std::string& key, const json& value) {
  json* node = &j;
  size_t start = 0;
  while (true) {
    const auto dot = key.find('.', start);
    const std::string part =
        key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty()) throw Error("config key '" + key + "' has an empty part");
    if (!node->is_object())
      throw Error("config key '" + key + "': '" + key.substr(0, start ? start - 1 : 0) +
                  "' is not an object");
    if (dot == std::string::npos) {
      (*node)[part] = value;
      return;
    }
    node = &(*node)[part];
    if (node->is_null()) *node = json::object();
    start = dot + 1;
  }
}

json get_dotted(const json& j, const std::string& key) {
  const json* node = &j;
  size_t start = 0;
  while (true) {
    const auto dot = key.find('.', start);
    const std::string part =
        key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node->is_object() || !node->contains(part)) return nullptr;
    node = &(*node)[part];
    if (dot == std::string::npos) return *node;
    start = dot + 1;
  }
}

}  // namespace attn
