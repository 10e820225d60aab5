// The config keys that differ between runs, as W&B's runs table shows them: each run's resolved
// config (core's to_json_every_key) flattened to dotted keys ("model.attention", "seed",
// "train.lr"), and the keys whose values are not the same in every run, so that runs that all
// read "dot" can be told apart (the Runs and Compare panels' "differs" column).
// Contract: plain JSON, no core, no ImGui. Arrays and scalars are leaves; objects nest. "name"
// is left out (the run's label already names it).
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attn::gui {

// Dotted leaf key -> value of a JSON object ({"a": {"b": 1}} -> {"a.b": 1}).
std::map<std::string, nlohmann::json> flatten_config(const nlohmann::json& config);
// The keys whose value differs among `configs` or is missing from some, sorted; none for fewer
// than two configs.
std::vector<std::string> differing_keys(const std::vector<nlohmann::json>& configs);
// "model.attention=ky, seed=2": `config`'s values of `keys` in order, strings unquoted, a
// missing key as "-"; "" when `keys` is empty.
std::string differing_text(const nlohmann::json& config, const std::vector<std::string>& keys);

}  // namespace attn::gui
