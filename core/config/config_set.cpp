#include "core/config/config_set.h"

#include "core/base/error.h"
#include "core/config/config.h"
#include "core/config/config_keys.h"
#include "core/json/json_path.h"

namespace attn {
using nlohmann::json;

namespace {

// A key the config has: one the table lists (not a section), or a mechanism's own option under
// model.attention_options.<mechanism>.<key>, which parse_config checks against the mechanism.
bool known_key(const std::string& key) {
  static const std::string options = "model.attention_options.";
  if (key.rfind(options, 0) == 0) return key.find('.', options.size()) != std::string::npos;
  for (const ConfigKey& k : config_keys())
    if (k.path == key) return k.type != ConfigType::section && k.type != ConfigType::options;
  return false;
}

}  // namespace

ConfigSet parse_config_set(const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    throw Error("--set " + spec + ": expected key=value (e.g. --set train.lr=3e-3)");
  ConfigSet s;
  s.key = spec.substr(0, eq);
  if (!known_key(s.key))
    throw Error("--set " + spec + ": unknown config key '" + s.key +
                "' (`attnlab config --doc` lists every key)");
  const std::string text = spec.substr(eq + 1);
  s.value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (s.value.is_discarded()) s.value = text;
  return s;
}

void apply_config_sets(json& config, const std::vector<std::string>& specs) {
  json edited = config;
  for (const std::string& spec : specs) {
    const ConfigSet s = parse_config_set(spec);
    try {
      set_dotted(edited, s.key, s.value);
    } catch (const Error& e) {
      throw Error("--set " + spec + ": " + e.what());
    }
  }
  check_config_depth(edited, "--set");
  config = std::move(edited);
}

ExperimentConfig load_config_with_sets(const std::string& path,
                                       const std::vector<std::string>& specs) {
  if (specs.empty()) return load_config_file(path);
  json config = read_config_json(path);
  apply_config_sets(config, specs);
  return parse_config(config, path + " with --set");
}

}  // namespace attn
