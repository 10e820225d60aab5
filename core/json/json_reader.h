// The strict JSON object reader behind every config section and every mechanism's options
// (torch-free). Each getter consumes one key: a missing key leaves `out` untouched (its
// default), a present one must have the right type and range. finish() then refuses any key
// that no getter asked for. Every message names the full key path and what was allowed:
//   "<where>: model.d_model must be in [1, 8192], got 0"
//   "unknown key 'model.attention_options.ky.widow' (allowed: window, placement, ...)"
// `where` (the file or source) prefixes messages when it is not empty.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attn {

// Parses `text`, the contents of `where` (a file), as strict JSON (RFC 8259), the one parser for
// every JSON file attnlab reads as input (configs, run directories' config.json and summary.json,
// manifests). Throws attn::Error naming `where` and what to do for:
//   - a key twice in one object ("duplicate key 'train.steps'"; nlohmann would keep the last);
//   - comments (// and /* */ are not JSON; they are refused, not skipped);
//   - a NUL byte anywhere, bytes after the document (offset, line and column named);
//   - UTF-16 or UTF-32 text, with or without a byte-order mark ("save it as UTF-8");
//   - anything else invalid ("not valid JSON" and the parser's line and column).
// A UTF-8 byte-order mark (EF BB BF) at the start is accepted and skipped (Windows editors write
// one). The result may nest arbitrarily deep: callers bound it (check_config_depth).
nlohmann::json parse_json_strict(const std::string& text, const std::string& where);

// "integer 3", "string \"abc\"", ... (shortened to 40 characters) for error messages.
std::string describe_json(const nlohmann::json& v);
// "a, b, c"
std::string join_names(const std::vector<std::string>& names);

// Describing a record instead of reading one: while an OptionSchema lives on a thread, every
// getter of every JsonReader on that thread also records its key in it: {"key", "type"
// (integer | number | string | boolean; absent for a key only find() asked for), "default"
// (what `out` held, the record's default), "min", "max", "min_open", "allowed"}. Reading {}
// through a record's fields function then lists its keys with their defaults and ranges from
// the one place that reads them (mechanisms.json: core/attention/registry.h).
class OptionSchema {
 public:
  OptionSchema();
  ~OptionSchema();
  OptionSchema(const OptionSchema&) = delete;
  OptionSchema& operator=(const OptionSchema&) = delete;
  const nlohmann::json& keys() const { return keys_; }  // an array, in reading order

 private:
  friend class JsonReader;
  nlohmann::json keys_ = nlohmann::json::array();
  OptionSchema* outer_;
};

class JsonReader {
 public:
  // Throws attn::Error when j is not an object. prefix: the key path of j ("model.conn").
  JsonReader(const nlohmann::json& j, std::string prefix, std::string where = "");

  [[noreturn]] void fail(const std::string& key, const std::string& what) const;
  std::string path(const std::string& key) const;  // prefix + "." + key

  // Marks key as allowed and returns its value, or null when absent.
  const nlohmann::json* find(const char* key);

  // Integer in [lo, hi]. zero_reason, when given, explains why 0 is refused (a message of its
  // own, before the range check).
  template <typename Int>
  void integer(const char* key, Int& out, long long lo, long long hi,
               const char* zero_reason = nullptr) {
    if (describing())
      note(key, {{"type", "integer"},
                 {"default", static_cast<long long>(out)},
                 {"min", lo},
                 {"max", hi}});
    if (const nlohmann::json* v = find(key))
      out = static_cast<Int>(read_integer(key, *v, lo, hi, zero_reason));
  }
  // Number in [lo, hi], or (lo, hi] with lo_open.
  void number(const char* key, double& out, double lo, double hi, bool lo_open = false);
  // String, one of `allowed` when it is not empty.
  void string(const char* key, std::string& out, const std::vector<std::string>& allowed = {});
  void boolean(const char* key, bool& out);
  // Refuses keys nobody asked for.
  void finish() const;

 private:
  static bool describing();  // an OptionSchema lives on this thread
  void note(const char* key, const nlohmann::json& fields) const;
  long long read_integer(const char* key, const nlohmann::json& v, long long lo, long long hi,
                         const char* zero_reason) const;
  const nlohmann::json& j_;
  std::string prefix_, where_;
  std::vector<std::string> allowed_;
};

// Reads one object into a default T: fields(reader, t) asks for each key, then finish() refuses
// the rest. For option records (core/attention/<name>/<name>_options.cpp).
template <typename T, typename Fields>
T read_json_object(const nlohmann::json& j, const std::string& prefix, Fields fields) {
  JsonReader reader(j, prefix);
  T out;
  fields(reader, out);
  reader.finish();
  return out;
}

}  // namespace attn
