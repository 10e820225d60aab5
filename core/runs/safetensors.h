// The safetensors format (torch-free): the model's tensors as one file that Python reads without
// attnlab (python/attnlab, or the `safetensors` package, or twenty lines of numpy).
// Layout (https://huggingface.co/docs/safetensors, public and small): an unsigned 64-bit
// little-endian header length N, then N bytes of JSON -- {name: {"dtype", "shape",
// "data_offsets": [begin, end]}, ..., "__metadata__": {string: string}} padded with spaces to a
// multiple of 8 -- then the tensors' raw little-endian bytes, offsets relative to the data start.
// Contract:
//  - tensors are written in the order given, float32 ("F32"), C order; names must be unique and
//    non-empty, and "__metadata__" is not a name (attn::Error otherwise).
//  - the bytes are independent of the machine's endianness (written little-endian explicitly).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attn {

struct NamedTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> values;  // product of shape elements, C order
};

std::string safetensors_bytes(const std::vector<NamedTensor>& tensors,
                              const std::map<std::string, std::string>& metadata);

}  // namespace attn
