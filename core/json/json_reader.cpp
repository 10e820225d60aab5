#include "core/json/json_reader.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <utility>

#include "core/base/error.h"

namespace attn {

using nlohmann::json;

namespace {

// "offset 17 (line 3, column 2)" of byte `offset` (0-based) in text.
std::string position(const std::string& text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++column;
    }
  }
  return "offset " + std::to_string(offset) + " (line " + std::to_string(line) + ", column " +
         std::to_string(column) + ")";
}

// "UTF-16 (little-endian)" etc. when the bytes say so: a byte-order mark, or the NUL bytes that
// ASCII text in UTF-16/32 interleaves; empty otherwise.
std::string wide_encoding(const std::string& t) {
  auto at = [&](size_t i) { return i < t.size() ? static_cast<unsigned char>(t[i]) : 0x100u; };
  if (at(0) == 0xFF && at(1) == 0xFE && at(2) == 0 && at(3) == 0) return "UTF-32 (little-endian)";
  if (at(0) == 0 && at(1) == 0 && at(2) == 0xFE && at(3) == 0xFF) return "UTF-32 (big-endian)";
  if (at(0) == 0xFF && at(1) == 0xFE) return "UTF-16 (little-endian)";
  if (at(0) == 0xFE && at(1) == 0xFF) return "UTF-16 (big-endian)";
  if (t.size() >= 4 && at(0) != 0 && at(1) == 0 && at(2) == 0 && at(3) == 0)
    return "UTF-32 (little-endian)";
  if (t.size() >= 4 && at(0) == 0 && at(1) == 0 && at(2) == 0 && at(3) != 0)
    return "UTF-32 (big-endian)";
  if (t.size() >= 2 && at(0) != 0 && at(1) == 0) return "UTF-16 (little-endian)";
  if (t.size() >= 2 && at(0) == 0 && at(1) != 0) return "UTF-16 (big-endian)";
  return "";
}

struct DuplicateKey {
  std::string path;
};

// The parser's callback: a set of keys per open object, and the path to the current value.
class KeyTracker {
 public:
  bool operator()(int, json::parse_event_t event, json& parsed) {
    using E = json::parse_event_t;
    switch (event) {
      case E::object_start:
      case E::array_start:
        element();
        frames_.push_back({event == E::object_start, {}, "", -1});
        break;
      case E::object_end:
      case E::array_end:
        if (!frames_.empty()) frames_.pop_back();
        break;
      case E::key: {
        Frame& f = frames_.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second) throw DuplicateKey{path()};
        break;
      }
      case E::value:
        element();
        break;
    }
    return true;
  }

 private:
  struct Frame {
    bool object;
    std::set<std::string> keys;
    std::string key;
    long long index;
  };
  void element() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
  }
  std::string path() const {
    std::string out;
    for (const Frame& f : frames_)
      out += f.object ? (out.empty() ? "" : ".") + f.key : "[" + std::to_string(f.index) + "]";
    return out;
  }
  std::vector<Frame> frames_;
};

}  // namespace

json parse_json_strict(const std::string& text, const std::string& where) {
  const std::string wide = wide_encoding(text);
  if (!wide.empty())
    throw Error(where + ": the file is " + wide + "; attnlab reads UTF-8 JSON: save it as UTF-8");
  const size_t start = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;  // a UTF-8 BOM
  // nlohmann stops at a NUL as if the text ended there: "{}\0anything" would pass.
  const size_t nul = text.find('\0', start);
  if (nul != std::string::npos)
    throw Error(where + ": a NUL byte at " + position(text, nul) +
                ": JSON text has none (a damaged file, or padding after the document); remove it");
  try {
    return json::parse(text.begin() + static_cast<std::ptrdiff_t>(start), text.end(), KeyTracker(),
                       /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const DuplicateKey& d) {
    throw Error(where + ": duplicate key '" + d.path +
                "': a key may appear once in an object (JSON parsers disagree on which one "
                "wins); remove one of them");
  } catch (const json::parse_error& e) {
    // e.byte: 1-based index of the last byte read, counted from `start`.
    const size_t at = start + (e.byte > 0 ? e.byte - 1 : 0);
    const std::string msg = e.what();
    if (at < text.size() && text[at] == '/' && at + 1 < text.size() &&
        (text[at + 1] == '/' || text[at + 1] == '*'))
      throw Error(where + ": a comment at " + position(text, at) +
                  ": attnlab reads strict JSON, which has no comments; remove it");
    if (at > start && text[at - 1] == '/' && at < text.size() &&
        (text[at] == '/' || text[at] == '*'))
      throw Error(where + ": a comment at " + position(text, at - 1) +
                  ": attnlab reads strict JSON, which has no comments; remove it");
    if (msg.find("; expected end of input") != std::string::npos)
      throw Error(where + ": bytes after the JSON document at " + position(text, at) +
                  ": a file holds one JSON value; remove what follows it");
    throw Error(where + ": not valid JSON: " + msg);
  } catch (const json::exception& e) {  // out_of_range for 1e400
    throw Error(where + ": not valid JSON: " + e.what());
  }
}

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

namespace {
thread_local OptionSchema* active_schema = nullptr;
}  // namespace

OptionSchema::OptionSchema() : outer_(active_schema) {
  active_schema = this;
}
OptionSchema::~OptionSchema() {
  active_schema = outer_;
}

bool JsonReader::describing() {
  return active_schema != nullptr;
}

void JsonReader::note(const char* key, const json& fields) const {
  if (!active_schema) return;
  json& keys = active_schema->keys_;
  for (json& k : keys)
    if (k["key"] == key) {
      k.update(fields);
      return;
    }
  json entry = {{"key", key}};
  entry.update(fields);
  keys.push_back(std::move(entry));
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
  if (active_schema) note(key, json::object());
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
  if (active_schema)
    note(key,
         {{"type", "number"}, {"default", out}, {"min", lo}, {"max", hi}, {"min_open", lo_open}});
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
  if (active_schema) note(key, {{"type", "string"}, {"default", out}, {"allowed", allowed}});
  const json* v = find(key);
  if (!v) return;
  if (!v->is_string()) fail(path(key), "must be a string, got " + describe_json(*v));
  std::string s = v->get<std::string>();
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), s) == allowed.end())
    fail(path(key), "must be one of " + join_names(allowed) + ", got \"" + s + "\"");
  out = s;
}

void JsonReader::boolean(const char* key, bool& out) {
  if (active_schema) note(key, {{"type", "boolean"}, {"default", out}});
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
