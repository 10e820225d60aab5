// attnlab's old checkpoint files (model.pt, optimizer.pt: the zip archives LibTorch's torch::save
// writes) read as DATA ONLY (torch-free). Such an archive holds code/ (TorchScript source that
// LibTorch compiles and runs when it opens the file, __setstate__ included) beside data.pkl (a
// pickle of the module tree) and data/<key> (the tensors' storages). This reader never looks at
// code/: it parses data.pkl with a pickle machine that knows numbers, strings, tuples, lists,
// dicts, the module objects' attribute dicts and tensors, and refuses everything else, so
// nothing in the file can make it run anything.
// Contract:
//  - The file is read whole only after its size is checked against LegacyLimits::max_file_bytes
//    (the caller derives it from what the model needs); anything but a regular file is refused.
//  - The zip directory is parsed bounded (zip64 end records accepted, entries must lie inside
//    the file); data.pkl and the storages must be stored uncompressed (LibTorch writes them so).
//  - The pickle may name only these globals: `__torch__[.*] Module`-style classes (an attribute
//    dict, state given by a plain dict: a class with its own __setstate__ is refused),
//    torch._utils._rebuild_tensor_v2, torch.<Type>Storage and collections.OrderedDict. Any other
//    global or opcode, a malformed stream, or more than LegacyLimits::max_pickle_bytes of
//    data.pkl is an attn::Error naming the file.
//  - read_tensor checks the tensor against the caller's expectation (dtype, shape, C-contiguous
//    strides) and its storage entry's exact size before it copies any bytes.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/runs/formats/safetensors.h"

namespace attn {

struct LegacyLimits {
  uint64_t max_file_bytes = 0;              // the whole archive (required, > 0)
  uint64_t max_pickle_bytes = 16ull << 20;  // data.pkl
};

// One value of the pickle. Dicts keep their order; a module object is a Dict whose
// class_name is its pickled class ("__torch__.___torch_mangle_3.Module").
struct LegacyValue {
  enum class Kind { None, Bool, Int, Float, String, Tuple, List, Dict, Tensor, Storage, Global };
  Kind kind = Kind::None;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;           // String; Global: "module name"; Storage: the storage key
  std::string class_name;  // Dict: a module object's class ("" for a plain dict)
  std::vector<std::shared_ptr<LegacyValue>> items;  // Tuple, List; Tensor: {storage}
  std::vector<std::pair<std::string, std::shared_ptr<LegacyValue>>> dict;  // Dict
  // Tensor: dtype (a safetensors name), storage element offset, sizes, strides. Storage: dtype
  // and numel (in i).
  std::string dtype;
  int64_t offset = 0;
  std::vector<int64_t> sizes, strides;

  // The entry `key` of a Dict, or nullptr.
  const LegacyValue* find(const std::string& key) const;
};

class LegacyArchive {
 public:
  // Opens `path` (see the contract). Throws attn::Error naming it.
  LegacyArchive(const std::string& path, const LegacyLimits& limits);
  // The same for an archive already in memory (`name` for messages; the fuzz target's entry).
  static LegacyArchive from_bytes(std::string bytes, const std::string& name,
                                  const LegacyLimits& limits);

  const LegacyValue& root() const { return *root_; }
  const std::string& path() const { return path_; }

  // Tensor `t`'s bytes checked against `expected` (its name is used in messages). Throws
  // attn::Error naming the file and the tensor.
  RawTensor read_tensor(const LegacyValue& t, const TensorSpec& expected) const;

 private:
  struct Entry {
    uint64_t offset = 0, size = 0;
  };
  LegacyArchive() = default;
  void parse(const LegacyLimits& limits);
  const Entry* entry(const std::string& name) const;

  std::string path_, bytes_, prefix_;
  std::vector<std::pair<std::string, Entry>> entries_;
  std::shared_ptr<LegacyValue> root_;
};

}  // namespace attn
