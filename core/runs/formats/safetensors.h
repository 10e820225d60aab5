// The safetensors format (torch-free): tensors as one file that Python reads without attnlab
// (python/attnlab, or the `safetensors` package, or twenty lines of numpy). attnlab writes its
// exports (`export --weights`) and its checkpoints (checkpoint/model.safetensors,
// optimizer.safetensors) in it: data only, nothing in such a file can run code.
// Layout (https://huggingface.co/docs/safetensors, public and small): an unsigned 64-bit
// little-endian header length N, then N bytes of JSON -- {name: {"dtype", "shape",
// "data_offsets": [begin, end]}, ..., "__metadata__": {string: string}} padded with spaces to a
// multiple of 8 -- then the tensors' raw little-endian bytes, offsets relative to the data start.
// Contract (writing):
//  - tensors are written in the order given, C order; names must be unique and non-empty, and
//    "__metadata__" is not a name (attn::Error otherwise). NamedTensor is float32 ("F32");
//    RawTensor carries any dtype of safetensors_dtype_size() as little-endian bytes.
//  - the bytes are independent of the machine's endianness (written little-endian explicitly).
// Contract (reading, read_safetensors): bounded and checked before anything is allocated for
// the data. The caller states what it expects (every tensor's name, dtype and shape: the exact
// set, no more, no fewer) and a byte limit. The file's size must be exactly 8 + header + the
// expected data; the header length at most SafetensorsLimits::max_header_bytes; the header
// valid JSON of bounded nesting; every tensor's dtype and shape those expected and its
// data_offsets in range, not overlapping, covering the data contiguously with exactly
// product(shape) x dtype size bytes. Every failure is an attn::Error naming the file (and the
// tensor when one is at fault). Symbolic links are followed; anything but a regular file is
// refused.
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

// A tensor of any dtype: its bytes little-endian, C order (product(shape) x dtype size bytes).
struct RawTensor {
  std::string name;
  std::string dtype;  // "F32", "F64", "I64", "I32", "BOOL", ... (safetensors_dtype_size)
  std::vector<int64_t> shape;
  std::string bytes;
};

// Bytes per element of a safetensors dtype ("F64" 8, "F32"/"I32"/"U32" 4, "F16"/"BF16"/"I16"/
// "U16" 2, "I8"/"U8"/"BOOL" 1, "I64"/"U64" 8); 0 for a name that is none of these.
int safetensors_dtype_size(const std::string& dtype);

std::string safetensors_bytes(const std::vector<NamedTensor>& tensors,
                              const std::map<std::string, std::string>& metadata);
std::string safetensors_bytes(const std::vector<RawTensor>& tensors,
                              const std::map<std::string, std::string>& metadata);

// One tensor the reader expects: its name, dtype and shape.
struct TensorSpec {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
};

struct SafetensorsLimits {
  uint64_t max_header_bytes = 100ull << 20;  // the JSON header
  uint64_t max_data_bytes = 0;               // the tensors' bytes (required, > 0 unless empty)
};

struct SafetensorsContents {
  std::map<std::string, std::string> metadata;  // "__metadata__" (string values only)
  std::vector<RawTensor> tensors;               // in the order of the expectation
};

// Reads `path` as described in the contract above. Throws attn::Error.
SafetensorsContents read_safetensors(const std::string& path,
                                     const std::vector<TensorSpec>& expected,
                                     const SafetensorsLimits& limits);

// Whether this machine stores numbers little-endian (the file's order); bytes of other
// machines are swapped per element by the writer and the reader.
bool host_is_little_endian();
// Reverses each `width`-byte element of bytes in place (big-endian hosts).
void swap_element_bytes(std::string& bytes, int width);

}  // namespace attn
