#include "core/runs/formats/safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "core/base/error.h"

namespace attn {
namespace {

void append_u64_le(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Elements of a shape, or -1 when a dimension is negative or the product overflows 2^62.
int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (const int64_t d : shape) {
    if (d < 0) return -1;
    if (d != 0 && count > (int64_t(1) << 62) / d) return -1;
    count *= d;
  }
  return count;
}

// The deepest nesting of arrays and objects in JSON text (strings skipped), so that a header
// of a million '[' is refused before the recursive parser sees it.
int json_depth(const std::string& text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// The file, open for reading: a regular file (a FIFO or device is refused, never read).
struct ReadFile {
  int fd = -1;
  uint64_t size = 0;
  ~ReadFile() {
    if (fd >= 0) close(fd);
  }
};

void open_regular(const std::string& path, ReadFile& f) {
  f.fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (f.fd < 0) throw Error("safetensors file " + path + ": cannot open (" + strerror(errno) + ")");
  struct stat st {};
  if (fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode))
    throw Error("safetensors file " + path + " is not a regular file");
  f.size = static_cast<uint64_t>(st.st_size);
}

void read_exactly(const ReadFile& f, uint64_t offset, char* out, uint64_t n,
                  const std::string& path) {
  while (n > 0) {
    const ssize_t got =
        pread(f.fd, out, std::min<uint64_t>(n, 1u << 30), static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      throw Error("safetensors file " + path + ": read failed at byte " + std::to_string(offset) +
                  (got < 0 ? std::string(" (") + strerror(errno) + ")" : " (file shrank)"));
    out += got;
    offset += static_cast<uint64_t>(got);
    n -= static_cast<uint64_t>(got);
  }
}

// One header entry checked against its expectation; returns [begin, end) of its bytes.
std::pair<uint64_t, uint64_t> checked_entry(const nlohmann::json& entry, const TensorSpec& want,
                                            uint64_t data_bytes, const std::string& path) {
  const std::string where = "safetensors file " + path + ": tensor " + want.name;
  if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") ||
      !entry.contains("data_offsets"))
    throw Error(where + ": its header entry needs \"dtype\", \"shape\" and \"data_offsets\"");
  const auto& dtype = entry["dtype"];
  if (!dtype.is_string() || dtype.get<std::string>() != want.dtype)
    throw Error(where + " has dtype " + dtype.dump() + ", expected \"" + want.dtype + "\"");
  const auto& shape = entry["shape"];
  std::vector<int64_t> got;
  if (shape.is_array())
    for (const auto& d : shape) {
      if (!d.is_number_integer()) {
        got.clear();
        break;
      }
      got.push_back(d.get<int64_t>());
    }
  if (!shape.is_array() || got.size() != shape.size() || got != want.shape)
    throw Error(where + " has shape " + shape.dump() + ", expected " + shape_text(want.shape));
  const auto& off = entry["data_offsets"];
  if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
      !off[1].is_number_unsigned())
    throw Error(where + ": data_offsets " + off.dump() + " is not two non-negative integers");
  const uint64_t begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
  const uint64_t bytes = static_cast<uint64_t>(element_count(want.shape)) *
                         static_cast<uint64_t>(safetensors_dtype_size(want.dtype));
  if (begin > end || end > data_bytes)
    throw Error(where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                "] outside the file's " + std::to_string(data_bytes) + " data bytes");
  if (end - begin != bytes)
    throw Error(where + ": data_offsets span " + std::to_string(end - begin) + " bytes, but " +
                want.dtype + " " + shape_text(want.shape) + " needs " + std::to_string(bytes));
  return {begin, end};
}

}  // namespace

bool host_is_little_endian() {
  const uint16_t one = 1;
  unsigned char first;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

void swap_element_bytes(std::string& bytes, int width) {
  if (width <= 1) return;
  for (size_t i = 0; i + static_cast<size_t>(width) <= bytes.size(); i += width)
    std::reverse(bytes.begin() + static_cast<std::ptrdiff_t>(i),
                 bytes.begin() + static_cast<std::ptrdiff_t>(i + width));
}

int safetensors_dtype_size(const std::string& dtype) {
  static const std::map<std::string, int> sizes = {
      {"F64", 8},  {"I64", 8}, {"U64", 8}, {"F32", 4}, {"I32", 4}, {"U32", 4}, {"F16", 2},
      {"BF16", 2}, {"I16", 2}, {"U16", 2}, {"I8", 1},  {"U8", 1},  {"BOOL", 1}};
  const auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

std::string safetensors_bytes(const std::vector<NamedTensor>& tensors,
                              const std::map<std::string, std::string>& metadata) {
  std::vector<RawTensor> raw;
  raw.reserve(tensors.size());
  for (const auto& t : tensors) {
    RawTensor r{t.name, "F32", t.shape, {}};
    r.bytes.resize(t.values.size() * sizeof(float));
    if (!t.values.empty()) std::memcpy(r.bytes.data(), t.values.data(), r.bytes.size());
    if (!host_is_little_endian()) swap_element_bytes(r.bytes, 4);
    raw.push_back(std::move(r));
  }
  return safetensors_bytes(raw, metadata);
}

std::string safetensors_bytes(const std::vector<RawTensor>& tensors,
                              const std::map<std::string, std::string>& metadata) {
  // nlohmann's ordered_json keeps the tensors in the order given (readers do not care; people
  // reading the header do).
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  std::set<std::string> seen;
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    if (t.name.empty() || t.name == "__metadata__" || !seen.insert(t.name).second)
      throw Error("safetensors: tensor name \"" + t.name + "\" is empty, reserved or repeated");
    const int width = safetensors_dtype_size(t.dtype);
    if (width == 0) throw Error("safetensors: tensor " + t.name + " has dtype " + t.dtype);
    const int64_t count = element_count(t.shape);
    if (count < 0) throw Error("safetensors: tensor " + t.name + " has a negative dimension");
    const uint64_t bytes = static_cast<uint64_t>(count) * static_cast<uint64_t>(width);
    if (bytes != t.bytes.size())
      throw Error("safetensors: tensor " + t.name + " holds " + std::to_string(t.bytes.size()) +
                  " bytes for " + t.dtype + " " + shape_text(t.shape) + " (" +
                  std::to_string(bytes) + ")");
    header[t.name] = {
        {"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string out;
  out.reserve(8 + json.size() + offset);
  append_u64_le(out, json.size());
  out += json;
  for (const auto& t : tensors) out += t.bytes;  // callers give little-endian bytes
  return out;
}

SafetensorsContents read_safetensors(const std::string& path,
                                     const std::vector<TensorSpec>& expected,
                                     const SafetensorsLimits& limits) {
  const std::string file = "safetensors file " + path;
  // What the expectation adds up to, before the file is looked at.
  uint64_t data_bytes = 0;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < expected.size(); ++i) {
    const TensorSpec& s = expected[i];
    const int width = safetensors_dtype_size(s.dtype);
    const int64_t count = element_count(s.shape);
    if (width == 0 || count < 0 || !index.emplace(s.name, i).second)
      throw Error(file + ": tensor " + s.name +
                  " is expected with an invalid dtype, shape or name");
    const uint64_t bytes = static_cast<uint64_t>(count) * static_cast<uint64_t>(width);
    if (bytes > limits.max_data_bytes || data_bytes + bytes > limits.max_data_bytes)
      throw Error(file + ": the expected tensors need more than the limit of " +
                  std::to_string(limits.max_data_bytes) + " bytes (at tensor " + s.name + ")");
    data_bytes += bytes;
  }
  ReadFile f;
  open_regular(path, f);
  if (f.size < 8) throw Error(file + " is " + std::to_string(f.size) + " bytes: too short");
  unsigned char prefix[8];
  read_exactly(f, 0, reinterpret_cast<char*>(prefix), 8, path);
  uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = (header_bytes << 8) | prefix[i];
  if (header_bytes > limits.max_header_bytes)
    throw Error(file + ": header of " + std::to_string(header_bytes) +
                " bytes, over the limit of " + std::to_string(limits.max_header_bytes));
  if (f.size != 8 + header_bytes + data_bytes)
    throw Error(file + " is " + std::to_string(f.size) + " bytes, but a " +
                std::to_string(header_bytes) + "-byte header and the expected tensors (" +
                std::to_string(expected.size()) + ", " + std::to_string(data_bytes) +
                " bytes) make " + std::to_string(8 + header_bytes + data_bytes) +
                " (truncated, extended or not this model's)");
  std::string text(header_bytes, '\0');
  read_exactly(f, 8, text.data(), header_bytes, path);
  constexpr int kMaxDepth = 4;  // {name: {"shape": [..]}}, __metadata__ {k: v}
  if (json_depth(text) > kMaxDepth)
    throw Error(file + ": header nests deeper than " + std::to_string(kMaxDepth) + " levels");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(file + ": header is not valid JSON (" + e.what() + ")");
  }
  if (!header.is_object()) throw Error(file + ": header is not a JSON object");
  SafetensorsContents out;
  std::vector<std::pair<uint64_t, uint64_t>> spans(expected.size());
  std::vector<bool> seen(expected.size(), false);
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it->is_object()) throw Error(file + ": __metadata__ is not an object");
      for (auto m = it->begin(); m != it->end(); ++m) {
        if (!m->is_string()) throw Error(file + ": __metadata__ " + m.key() + " is not a string");
        out.metadata[m.key()] = m->get<std::string>();
      }
      continue;
    }
    const auto found = index.find(it.key());
    if (found == index.end())
      throw Error(file + ": tensor " + it.key() + " is not one of this model's (" +
                  std::to_string(expected.size()) + " expected)");
    spans[found->second] = checked_entry(*it, expected[found->second], data_bytes, path);
    seen[found->second] = true;
  }
  for (size_t i = 0; i < expected.size(); ++i)
    if (!seen[i]) throw Error(file + ": tensor " + expected[i].name + " is missing");
  // Sorted by offset, the spans must tile [0, data_bytes): no overlap, no gap.
  std::vector<size_t> order(expected.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return spans[a] < spans[b]; });
  uint64_t at = 0;
  for (const size_t i : order) {
    if (spans[i].first != at)
      throw Error(file + ": tensor " + expected[i].name + " starts at data byte " +
                  std::to_string(spans[i].first) + ", expected " + std::to_string(at) +
                  (spans[i].first < at ? " (overlaps the tensor before it)" : " (a gap)"));
    at = spans[i].second;
  }
  // Checked: now the data, exactly what the expectation needs.
  out.tensors.reserve(expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    RawTensor t{expected[i].name, expected[i].dtype, expected[i].shape, {}};
    t.bytes.resize(spans[i].second - spans[i].first);
    read_exactly(f, 8 + header_bytes + spans[i].first, t.bytes.data(), t.bytes.size(), path);
    if (!host_is_little_endian()) swap_element_bytes(t.bytes, safetensors_dtype_size(t.dtype));
    out.tensors.push_back(std::move(t));
  }
  return out;
}

}  // namespace attn
