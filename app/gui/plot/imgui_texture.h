// A GL texture name as ImGui's texture id. ImGui up to 1.91.3 declares ImTextureID as void*,
// 1.91.4 and later as an integer (ImU64): this compiles against both (Debian 12 ships 1.86).
#pragma once
#include <imgui.h>

#include <cstdint>
#include <type_traits>

namespace attn::gui {

template <typename Id = ImTextureID>
Id imgui_texture(unsigned gl_name) {
  if constexpr (std::is_pointer_v<Id>)
    return reinterpret_cast<Id>(static_cast<std::uintptr_t>(gl_name));
  else
    return static_cast<Id>(gl_name);
}

}  // namespace attn::gui
