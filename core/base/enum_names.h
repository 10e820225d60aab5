// One table per enum: each enum that users spell as text (configs, CLI, files) lists its
// (value, name) pairs once, and both directions read that table, so a name and its parser
// cannot drift apart. Torch-free, header-only.
//   constexpr EnumName<Map> kMapNames[] = {{Map::Softmax, "softmax"}, {Map::Linear, "linear"}};
//   enum_name(m, kMapNames)              -> "softmax" ("?" for a value not in the table)
//   find_enum(kMapNames, "linear", &m)   -> true, m = Map::Linear
//   enum_choices(kMapNames)              -> "softmax, linear" (for error messages)
#pragma once
#include <cstddef>
#include <string>

namespace attn {

template <typename E>
struct EnumName {
  E value;
  const char* name;
};

template <typename E, size_t N>
const char* enum_name(E value, const EnumName<E> (&table)[N]) {
  for (const auto& row : table)
    if (row.value == value) return row.name;
  return "?";
}

template <typename E, size_t N>
bool find_enum(const EnumName<E> (&table)[N], const std::string& name, E* out) {
  for (const auto& row : table)
    if (name == row.name) {
      *out = row.value;
      return true;
    }
  return false;
}

template <typename E, size_t N>
std::string enum_choices(const EnumName<E> (&table)[N], const char* separator = ", ") {
  std::string all;
  for (const auto& row : table) all += (all.empty() ? "" : separator) + std::string(row.name);
  return all;
}

}  // namespace attn
