// `--set key=value` (repeatable) on every command that takes a config: train, gui, sweep, suite,
// eval, bench-step, data. The value is read as JSON when it is valid JSON (numbers, true, lists,
// quoted strings) and kept as text otherwise, so `model.attention=ky` and `train.lr=3e-3` both
// work; unlike `--vary` it is never split on commas.
// Contract: apply_config_sets refuses a malformed spec or a key the config does not have
// (attn::Error naming `--set` and the key), before changing anything; the values are then
// checked by parse_config like the file's own, and the command records the result in the run's
// config.json (to_json of the parsed config).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attn {

struct ConfigSet {
  std::string key;  // dotted: "train.lr", "model.attention_options.ky.window"
  nlohmann::json value;
};

ConfigSet parse_config_set(const std::string& spec);
// Applies every spec to `config` in order (a later one wins); on error `config` is unchanged.
void apply_config_sets(nlohmann::json& config, const std::vector<std::string>& specs);
// The config file with the specs applied, parsed: parse_config's messages name the file and, when
// specs were given, "with --set".
struct ExperimentConfig;
ExperimentConfig load_config_with_sets(const std::string& path,
                                       const std::vector<std::string>& specs);
// A short description for the commands' --help.
inline const char* kConfigSetHelp =
    "Override one config key (repeatable): --set train.lr=3e-3 --set model.attention=ky. Values "
    "are checked like the file's own; `attnlab config --doc` lists every key";

}  // namespace attn
