// Access to torch::optim::AdamW's per-parameter state across LibTorch versions (internal to
// core): the state map is keyed by the parameter's TensorImpl, as a string in LibTorch 1.x
// (c10::guts::to_string of the pointer) and as the pointer in 2.x. Both compile.
#pragma once
#include <torch/torch.h>

#include <sstream>
#include <string>
#include <type_traits>

namespace attn {

template <class Map>
typename Map::key_type adamw_state_key(const Map&, const torch::Tensor& p) {
  using Key = typename Map::key_type;
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream key;  // c10::guts::to_string's form (2.x has no c10::guts::to_string)
    key << p.unsafeGetTensorImpl();
    return key.str();
  } else
    return static_cast<Key>(p.unsafeGetTensorImpl());
}

}  // namespace attn
