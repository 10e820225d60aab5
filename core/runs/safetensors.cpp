#include "core/runs/safetensors.h"

#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "core/base/error.h"

namespace attn {
namespace {

void append_u64_le(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void append_f32_le(std::string& out, float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

}  // namespace

std::string safetensors_bytes(const std::vector<NamedTensor>& tensors,
                              const std::map<std::string, std::string>& metadata) {
  // nlohmann's ordered_json keeps the tensors in the order given (readers do not care; people
  // reading the header do).
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  std::set<std::string> seen;
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    if (t.name.empty() || t.name == "__metadata__" || !seen.insert(t.name).second)
      throw Error("safetensors: tensor name \"" + t.name + "\" is empty, reserved or repeated");
    int64_t count = 1;
    for (const int64_t d : t.shape) {
      if (d < 0) throw Error("safetensors: tensor " + t.name + " has a negative dimension");
      count *= d;
    }
    if (count != static_cast<int64_t>(t.values.size()))
      throw Error("safetensors: tensor " + t.name + " holds " + std::to_string(t.values.size()) +
                  " values for a shape of " + std::to_string(count));
    const uint64_t bytes = 4 * static_cast<uint64_t>(count);
    header[t.name] = {
        {"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string out;
  out.reserve(8 + json.size() + offset);
  append_u64_le(out, json.size());
  out += json;
  for (const auto& t : tensors)
    for (const float v : t.values) append_f32_le(out, v);
  return out;
}

}  // namespace attn
