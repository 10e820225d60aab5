// Dotted paths into a JSON document ("train.lr", "model.attention_options.ky.window"): the
// config overrides of `--set`, `--vary`, suites and reproductions address keys this way.
// set_dotted creates missing objects and throws attn::Error when the path crosses a value that
// is not an object or has an empty part; get_dotted returns null when the path is absent.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace attn {

void set_dotted(nlohmann::json& j, const std::string& key, const nlohmann::json& value);
nlohmann::json get_dotted(const nlohmann::json& j, const std::string& key);

}  // namespace attn
