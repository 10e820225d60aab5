#include "core/config/json_reader.h"

#include <algorithm>
#include <sstream>
#include <utility>

#include "core/base/error.h"

namespace attn {

using nlohmann::json;

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& s : names) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string describe_json(const json& v) {
  std::string kind = v.is_string()           ? "string"
                     : v.is_boolean()        ? "boolean"
                     : v.is_number_integer() ? "integer"
                     : v.is_number()         ? "number"
                     : v.is_array()          ? "array"
                     : v.is_object()         ? "object"
                                             : "null";
  std::string text = v.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return kind + " " + text;
}

JsonReader::JsonReader(const json& j, std::string prefix, std::string where)
    : j_(j), prefix_(std::move(prefix)), where_(std::move(where)) {
  if (!j_.is_object())
    fail(prefix_.empty() ? "the top level" : prefix_,
         "must be an object, got " + describe_json(j_));
}

void JsonReader::fail(const std::string& key, const std::string& what) const {
  throw Error((where_.empty() ? "" : where_ + ": ") + key + " " + what);
}

std::string JsonReader::path(const std::string& key) const {
  return prefix_.empty() ? key : prefix_ + "." + key;
}

const json* JsonReader::find(const char* key) {
  if (std::find(allowed_.begin(), allowed_.end(), key) == allowed_.end()) allowed_.push_back(key);
  auto it = j_.find(key);
  return it == j_.end() ? nullptr : &*it;
}

long long JsonReader::read_integer(const char* key, const json& v, long long lo, long long hi,
                                   const char* zero_reason) const {
  if (!v.is_number_integer())
    fail(path(key), "must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                        "], got " + describe_json(v));
  long long x = v.is_number_unsigned() ? static_cast<long long>(v.get<unsigned long long>())
                                       : v.get<long long>();
  if (v.is_number_unsigned() && v.get<unsigned long long>() > static_cast<unsigned long long>(hi))
    x = hi + 1;
  if (x == 0 && zero_reason) fail(path(key), std::string("must not be 0: ") + zero_reason);
  if (x < lo || x > hi)
    fail(path(key),
         "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + v.dump());
  return x;
}

void JsonReader::number(const char* key, double& out, double lo, double hi, bool lo_open) {
  const json* v = find(key);
  if (!v) return;
  if (!v->is_number()) fail(path(key), "must be a number, got " + describe_json(*v));
  const double x = v->get<double>();
  std::ostringstream range;
  range << (lo_open ? "(" : "[") << lo << ", " << hi << "]";
  if (!(lo_open ? x > lo : x >= lo) || !(x <= hi))
    fail(path(key), "must be in " + range.str() + ", got " + v->dump());
  out = x;
}

void JsonReader::string(const char* key, std::string& out,
                        const std::vector<std::string>& allowed) {
  const json* v = find(key);
  if (!v) return;
  if (!v->is_string()) fail(path(key), "must be a string, got " + describe_json(*v));
  std::string s = v->get<std::string>();
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), s) == allowed.end())
    fail(path(key), "must be one of " + join_names(allowed) + ", got \"" + s + "\"");
  out = s;
}

void JsonReader::boolean(const char* key, bool& out) {
  const json* v = find(key);
  if (!v) return;
  if (!v->is_boolean()) fail(path(key), "must be true or false, got " + describe_json(*v));
  out = v->get<bool>();
}

void JsonReader::finish() const {
  for (auto it = j_.begin(); it != j_.end(); ++it) {
    if (std::find(allowed_.begin(), allowed_.end(), it.key()) != allowed_.end()) continue;
    const std::string allowed =
        allowed_.empty() ? "it takes no options" : "allowed: " + join_names(allowed_);
    throw Error((where_.empty() ? "" : where_ + ": ") + "unknown key '" + path(it.key()) + "' (" +
                allowed + ")");
  }
}

}  // namespace attn
