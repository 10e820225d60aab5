// The one description of the configuration: every key of an experiment config with its type,
// range or allowed values, and meaning. parse_config (config.cpp) reads each key through this
// table, so the range it enforces is the range described here, and `attnlab config --doc`
// writes docs/guide/config.md from it (config_doc_markdown), defaults taken from a default
// ExperimentConfig. A key the parser reads that is not listed here is a programming error
// (config_key throws std::logic_error), caught by every parse. Torch-free.
#pragma once
#include <string>
#include <vector>

namespace attn {

enum class ConfigType {
  integer,  // [lo, hi]
  number,   // [lo, hi], or (lo, hi] with lo_open
  string,   // one of `allowed` when it is not empty, else any text
  boolean,
  names,    // a mechanism name, or a list of them (one per layer): one of `allowed`
  section,  // an object of keys of its own (task, model, model.conn, train)
  options,  // model.attention_options: {"<mechanism>": {...}}, each mechanism's own keys
};

struct ConfigKey {
  std::string path;  // "train.record_every"
  ConfigType type;
  double lo = 0, hi = 0;             // integer, number: the range (integers up to 2^53 are exact)
  bool lo_open = false;              // number: lo itself is refused
  std::vector<std::string> allowed;  // string, names
  std::string meaning;               // one line, markdown
  // When the default is not a constant (train.record_every: train.eval_every), what it is;
  // empty: the default ExperimentConfig's value.
  std::string default_text = "";
};

// Every key, in the order the page lists them (each section before its keys).
const std::vector<ConfigKey>& config_keys();
// The key at `path`; throws std::logic_error when the table does not list it.
const ConfigKey& config_key(const std::string& path);
// "[1, 8192]", "(0, 1]", "copy, reverse, ...", "true or false", "any text": what is allowed.
std::string config_allowed_text(const ConfigKey& key);
// docs/guide/config.md: every key with its type, allowed values, default and meaning, then each
// mechanism's options (model.attention_options.<name>) from the registry.
std::string config_doc_markdown();

}  // namespace attn
