#include "core/runs/formats/legacy_archive.h"

#include <cstdio>
#include <cstring>
#include <map>

#include "core/base/error.h"
#include "core/base/file_io.h"

namespace attn {
namespace {

using Value = LegacyValue;
using Ptr = std::shared_ptr<LegacyValue>;

uint64_t le(const std::string& b, uint64_t at, int n) {
  uint64_t v = 0;
  for (int k = n - 1; k >= 0; --k) v = (v << 8) | static_cast<unsigned char>(b[at + k]);
  return v;
}

Ptr make(Value::Kind kind) {
  auto v = std::make_shared<Value>();
  v->kind = kind;
  return v;
}

// The storage classes LibTorch pickles, as safetensors dtype names.
const std::map<std::string, std::string>& storage_dtypes() {
  static const std::map<std::string, std::string> m = {
      {"FloatStorage", "F32"},     {"DoubleStorage", "F64"}, {"HalfStorage", "F16"},
      {"BFloat16Storage", "BF16"}, {"LongStorage", "I64"},   {"IntStorage", "I32"},
      {"ShortStorage", "I16"},     {"CharStorage", "I8"},    {"ByteStorage", "U8"},
      {"BoolStorage", "BOOL"}};
  return m;
}

bool allowed_global(const std::string& module, const std::string& name) {
  if (module == "__torch__" || module.rfind("__torch__.", 0) == 0) return true;
  if (module == "torch._utils" && name == "_rebuild_tensor_v2") return true;
  if (module == "collections" && name == "OrderedDict") return true;
  return module == "torch" && storage_dtypes().count(name) > 0;
}

// The pickle machine: a stack of values, marks and a memo; each opcode it knows builds data.
class Unpickler {
 public:
  Unpickler(const std::string& data, const std::string& file) : d_(data), file_(file) {}

  Ptr run() {
    while (true) {
      const unsigned char op = byte();
      if (op == '.') break;  // STOP
      step(op);
    }
    if (stack_.size() != 1) fail("ends with " + std::to_string(stack_.size()) + " values");
    return stack_.back();
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw Error("old checkpoint " + file_ + ": data.pkl " + why +
                " (a data-only reader refuses it; nothing in the file was run)");
  }
  unsigned char byte() {
    if (at_ >= d_.size()) fail("ends early");
    return static_cast<unsigned char>(d_[at_++]);
  }
  uint64_t num(int n) {
    if (d_.size() - at_ < static_cast<size_t>(n)) fail("ends early");
    const uint64_t v = le(d_, at_, n);
    at_ += n;
    return v;
  }
  std::string text(uint64_t n) {
    if (n > d_.size() - at_) fail("holds a string longer than the file");
    std::string s = d_.substr(at_, n);
    at_ += n;
    return s;
  }
  std::string line() {
    const size_t end = d_.find('\n', at_);
    if (end == std::string::npos || end - at_ > 256) fail("holds a malformed GLOBAL");
    std::string s = d_.substr(at_, end - at_);
    at_ = end + 1;
    return s;
  }
  void push(Ptr v) {
    if (stack_.size() > (1u << 20)) fail("is nested too deeply");
    stack_.push_back(std::move(v));
  }
  Ptr pop() {
    if (stack_.empty() || (!marks_.empty() && stack_.size() == marks_.back()))
      fail("pops an empty stack");
    Ptr v = stack_.back();
    stack_.pop_back();
    return v;
  }
  std::vector<Ptr> pop_mark() {
    if (marks_.empty()) fail("has no MARK where one is needed");
    std::vector<Ptr> out(stack_.begin() + static_cast<std::ptrdiff_t>(marks_.back()), stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return out;
  }
  Ptr& top() {
    if (stack_.empty()) fail("pops an empty stack");
    return stack_.back();
  }
  Ptr scalar(Value::Kind kind) { return make(kind); }
  Ptr tuple(std::vector<Ptr> items) {
    Ptr t = make(Value::Kind::Tuple);
    t->items = std::move(items);
    return t;
  }
  void memo_put(uint64_t key) {
    if (memo_.size() > (1u << 22)) fail("memoises too many values");
    memo_[key] = top();
  }
  void memo_get(uint64_t key) {
    const auto it = memo_.find(key);
    if (it == memo_.end()) fail("refers to a value it never stored");
    push(it->second);
  }
  void set_items(Ptr& dict, std::vector<Ptr> kv);
  void step(unsigned char op);
  void global();
  void reduce();
  void build();
  void persistent_id();
  Ptr rebuild_tensor(const std::vector<Ptr>& args);

  const std::string& d_;
  std::string file_;
  size_t at_ = 0;
  std::vector<Ptr> stack_;
  std::vector<size_t> marks_;
  std::map<uint64_t, Ptr> memo_;
};

void Unpickler::set_items(Ptr& dict, std::vector<Ptr> kv) {
  if (dict->kind != Value::Kind::Dict || kv.size() % 2) fail("sets items on what is not a dict");
  for (size_t k = 0; k < kv.size(); k += 2) {
    if (kv[k]->kind != Value::Kind::String) fail("has a dict key that is not a string");
    dict->dict.emplace_back(kv[k]->s, kv[k + 1]);
  }
}

void Unpickler::step(unsigned char op) {
  using K = Value::Kind;
  switch (op) {
    case 0x80:
      byte();
      return;  // PROTO
    case 0x95:
      num(8);
      return;  // FRAME
    case '(':
      marks_.push_back(stack_.size());
      return;  // MARK
    case 'N':
      push(scalar(K::None));
      return;
    case 0x88:
    case 0x89: {  // NEWTRUE, NEWFALSE
      Ptr v = scalar(K::Bool);
      v->b = op == 0x88;
      return push(v);
    }
    case 'K':
    case 'M':
    case 'J': {  // BININT1, BININT2, BININT
      Ptr v = scalar(K::Int);
      v->i = op == 'K'   ? static_cast<int64_t>(num(1))
             : op == 'M' ? static_cast<int64_t>(num(2))
                         : static_cast<int64_t>(static_cast<int32_t>(num(4)));
      return push(v);
    }
    case 0x8a: {  // LONG1
      const uint64_t n = byte();
      if (n > 8) fail("holds an integer wider than 64 bits");
      uint64_t raw = n ? num(static_cast<int>(n)) : 0;
      if (n && n < 8 && (raw >> (8 * n - 1)) & 1) raw |= ~0ull << (8 * n);  // sign-extend
      Ptr v = scalar(K::Int);
      v->i = static_cast<int64_t>(raw);
      return push(v);
    }
    case 'G': {  // BINFLOAT (big-endian)
      uint64_t bits = 0;
      for (int k = 0; k < 8; ++k) bits = (bits << 8) | byte();
      Ptr v = scalar(K::Float);
      std::memcpy(&v->f, &bits, 8);
      return push(v);
    }
    case 'X':
    case 0x8c: {  // BINUNICODE, SHORT_BINUNICODE
      Ptr v = scalar(K::String);
      v->s = text(num(op == 'X' ? 4 : 1));
      return push(v);
    }
    case ')':
      return push(tuple({}));  // EMPTY_TUPLE
    case 't':
      return push(tuple(pop_mark()));  // TUPLE
    case 0x85:
    case 0x86:
    case 0x87: {  // TUPLE1..3
      std::vector<Ptr> items(op - 0x84);
      for (size_t k = items.size(); k-- > 0;) items[k] = pop();
      return push(tuple(std::move(items)));
    }
    case ']':
      return push(make(K::List));  // EMPTY_LIST
    case 'a': {                    // APPEND
      Ptr v = pop();
      if (top()->kind != K::List) fail("appends to what is not a list");
      top()->items.push_back(v);
      return;
    }
    case 'e': {  // APPENDS
      std::vector<Ptr> items = pop_mark();
      if (top()->kind != K::List) fail("appends to what is not a list");
      for (Ptr& v : items) top()->items.push_back(v);
      return;
    }
    case '}':
      return push(make(K::Dict));  // EMPTY_DICT
    case 's': {                    // SETITEM
      Ptr v = pop(), k = pop();
      return set_items(top(), {k, v});
    }
    case 'u': {  // SETITEMS
      std::vector<Ptr> kv = pop_mark();
      return set_items(top(), std::move(kv));
    }
    case 'q':
      return memo_put(num(1));  // BINPUT
    case 'r':
      return memo_put(num(4));  // LONG_BINPUT
    case 'h':
      return memo_get(num(1));  // BINGET
    case 'j':
      return memo_get(num(4));  // LONG_BINGET
    case 'c':
      return global();
    case 'R':
      return reduce();
    case 0x81: {  // NEWOBJ: a module object
      Ptr args = pop(), cls = pop();
      if (cls->kind != K::Global || cls->s.rfind("__torch__", 0) != 0 || !args->items.empty())
        fail("constructs an object that is not a module");
      Ptr obj = make(K::Dict);
      obj->class_name = cls->s;
      return push(obj);
    }
    case 'b':
      return build();
    case 'Q':
      return persistent_id();
    default: {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", op);
      fail(std::string("holds pickle opcode ") + hex + ", which attnlab's checkpoints never held");
    }
  }
}

void Unpickler::global() {
  const std::string module = line(), name = line();
  if (!allowed_global(module, name))
    fail("names the global " + module + "." + name +
         ", which is not a tensor, a storage or a module");
  Ptr g = make(Value::Kind::Global);
  g->s = module + "." + name;
  g->dtype = module == "torch" ? storage_dtypes().at(name) : "";
  push(g);
}

void Unpickler::reduce() {
  Ptr args = pop(), fn = pop();
  if (fn->kind != Value::Kind::Global || args->kind != Value::Kind::Tuple)
    fail("calls something that is not a known global");
  if (fn->s == "collections.OrderedDict" && args->items.empty())
    return push(make(Value::Kind::Dict));
  if (fn->s == "torch._utils._rebuild_tensor_v2") return push(rebuild_tensor(args->items));
  fail("calls " + fn->s);
}

// _rebuild_tensor_v2(storage, offset, sizes, strides, requires_grad, hooks[, metadata]).
Ptr Unpickler::rebuild_tensor(const std::vector<Ptr>& a) {
  using K = Value::Kind;
  if (a.size() < 4 || a[0]->kind != K::Storage || a[1]->kind != K::Int || a[2]->kind != K::Tuple ||
      a[3]->kind != K::Tuple)
    fail("rebuilds a tensor from arguments of the wrong kinds");
  Ptr t = make(K::Tensor);
  t->items = {a[0]};
  t->dtype = a[0]->dtype;
  t->offset = a[1]->i;
  for (const Ptr& d : a[2]->items) {
    if (d->kind != K::Int) fail("has a tensor size that is not an integer");
    t->sizes.push_back(d->i);
  }
  for (const Ptr& d : a[3]->items) {
    if (d->kind != K::Int) fail("has a tensor stride that is not an integer");
    t->strides.push_back(d->i);
  }
  return t;
}

void Unpickler::build() {
  Ptr state = pop();
  Ptr& obj = top();
  if (obj->kind != Value::Kind::Dict || obj->class_name.empty())
    fail("sets the state of what is not a module");
  if (state->kind != Value::Kind::Dict)
    fail("gives " + obj->class_name + " a state that is not a plain dict (its own __setstate__)");
  for (auto& kv : state->dict) obj->dict.push_back(kv);
}

// ('storage', <Type>Storage, key, device, numel): a storage in data/<key>.
void Unpickler::persistent_id() {
  using K = Value::Kind;
  Ptr pid = pop();
  const auto& p = pid->items;
  if (pid->kind != K::Tuple || p.size() != 5 || p[0]->kind != K::String || p[0]->s != "storage" ||
      p[1]->kind != K::Global || p[1]->dtype.empty() || p[2]->kind != K::String ||
      p[4]->kind != K::Int || p[4]->i < 0)
    fail("holds a persistent id that is not a storage");
  Ptr s = make(K::Storage);
  s->dtype = p[1]->dtype;
  s->s = p[2]->s;
  s->i = p[4]->i;
  push(s);
}

// The whole file through the project's bounded reader (a regular file only, never a FIFO that
// would block, at most `limit` bytes).
std::string read_bounded(const std::string& path, uint64_t limit) {
  try {
    return read_regular_file(path, limit);
  } catch (const Error& e) {
    throw Error(std::string("old checkpoint: ") + e.what());
  }
}

}  // namespace

const LegacyValue* LegacyValue::find(const std::string& key) const {
  for (const auto& kv : dict)
    if (kv.first == key) return kv.second.get();
  return nullptr;
}

LegacyArchive::LegacyArchive(const std::string& path, const LegacyLimits& limits) : path_(path) {
  if (limits.max_file_bytes == 0) throw Error("LegacyArchive: no size limit given");
  bytes_ = read_bounded(path, limits.max_file_bytes);
  parse(limits);
}

LegacyArchive LegacyArchive::from_bytes(std::string bytes, const std::string& name,
                                        const LegacyLimits& limits) {
  LegacyArchive a;
  a.path_ = name;
  if (bytes.size() > limits.max_file_bytes)
    throw Error("old checkpoint " + name + " is " + std::to_string(bytes.size()) +
                " bytes, more than this run's model can need (" +
                std::to_string(limits.max_file_bytes) + ")");
  a.bytes_ = std::move(bytes);
  a.parse(limits);
  return a;
}

void LegacyArchive::parse(const LegacyLimits& limits) {
  const std::string& b = bytes_;
  const std::string& path = path_;
  auto bad = [&](const std::string& why) { return Error("old checkpoint " + path + ": " + why); };
  // The end of central directory record (22 bytes, no comment: LibTorch writes none).
  if (b.size() < 22 || le(b, b.size() - 22, 4) != 0x06054b50) throw bad("is not a zip archive");
  const uint64_t eocd = b.size() - 22;
  uint64_t count = le(b, eocd + 10, 2), cd = le(b, eocd + 16, 4);
  if (cd == 0xffffffffu || count == 0xffff) {  // zip64: its locator sits just before
    if (eocd < 20 || le(b, eocd - 20, 4) != 0x07064b50) throw bad("has no zip64 locator");
    const uint64_t z = le(b, eocd - 20 + 8, 8);
    // b.size() >= 56 first: below it the unsigned b.size() - 56 wraps and z went unchecked (a
    // fuzzer's 53-byte archive read past the buffer).
    if (b.size() < 56 || z > b.size() - 56 || le(b, z, 4) != 0x06064b50)
      throw bad("has a broken zip64 record");
    count = le(b, z + 32, 8);
    cd = le(b, z + 48, 8);
  }
  if (count > 1u << 20) throw bad("lists too many files");
  uint64_t at = cd;
  for (uint64_t k = 0; k < count; ++k) {
    if (at > b.size() || b.size() - at < 46 || le(b, at, 4) != 0x02014b50)
      throw bad("has a broken zip directory");
    const uint64_t method = le(b, at + 10, 2), csize = le(b, at + 20, 4), size = le(b, at + 24, 4),
                   nlen = le(b, at + 28, 2), elen = le(b, at + 30, 2), clen = le(b, at + 32, 2),
                   local = le(b, at + 42, 4);
    if (b.size() - at - 46 < nlen) throw bad("has a broken zip directory");
    const std::string name = b.substr(at + 46, nlen);
    at += 46 + nlen + elen + clen;
    if (method != 0 || csize != size) continue;  // compressed (code/): never read
    if (b.size() < 30 || local > b.size() - 30 || le(b, local, 4) != 0x04034b50)
      throw bad("has a broken entry " + name);
    const uint64_t data = local + 30 + le(b, local + 26, 2) + le(b, local + 28, 2);
    if (data > b.size() || size > b.size() - data)
      throw bad("entry " + name + " overruns the file");
    entries_.push_back({name, {data, size}});
    if (name.size() > 9 && name.compare(name.size() - 9, 9, "/data.pkl") == 0 &&
        name.find('/') == name.size() - 9)
      prefix_ = name.substr(0, name.size() - 8);
  }
  const Entry* pkl = prefix_.empty() ? nullptr : entry(prefix_ + "data.pkl");
  if (!pkl) throw bad("holds no stored data.pkl (not a LibTorch archive)");
  if (pkl->size > limits.max_pickle_bytes)
    throw bad("data.pkl is " + std::to_string(pkl->size) + " bytes, more than the limit " +
              std::to_string(limits.max_pickle_bytes));
  const std::string pickle = b.substr(pkl->offset, pkl->size);
  root_ = Unpickler(pickle, path).run();
}

const LegacyArchive::Entry* LegacyArchive::entry(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.first == name) return &e.second;
  return nullptr;
}

RawTensor LegacyArchive::read_tensor(const LegacyValue& t, const TensorSpec& expected) const {
  auto bad = [&](const std::string& why) {
    return Error("old checkpoint " + path_ + ": tensor " + expected.name + " " + why);
  };
  if (t.kind != LegacyValue::Kind::Tensor) throw bad("is not a tensor");
  if (t.dtype != expected.dtype) throw bad("is " + t.dtype + ", not " + expected.dtype);
  if (t.sizes != expected.shape) throw bad("has another shape than this model's");
  const uint64_t elsize = static_cast<uint64_t>(safetensors_dtype_size(t.dtype));
  uint64_t numel = 1, stride = 1;
  for (size_t k = t.sizes.size(); k-- > 0;) {
    if (t.strides.size() != t.sizes.size() ||
        (t.sizes[k] > 1 && t.strides[k] != static_cast<int64_t>(stride)))
      throw bad("is not stored contiguously");
    if (t.sizes[k] < 0) throw bad("has a negative size");
    if (t.sizes[k] > 0 && numel > (uint64_t{1} << 62) / elsize / static_cast<uint64_t>(t.sizes[k]))
      throw bad("claims more elements than any file holds");
    numel *= static_cast<uint64_t>(t.sizes[k]);
    stride *= static_cast<uint64_t>(t.sizes[k]);
  }
  const LegacyValue& storage = *t.items.at(0);
  const uint64_t snumel = static_cast<uint64_t>(storage.i);
  if (t.offset < 0 || static_cast<uint64_t>(t.offset) > snumel ||
      numel > snumel - static_cast<uint64_t>(t.offset))
    throw bad("reaches past its storage");
  const Entry* e = entry(prefix_ + "data/" + storage.s);
  if (!e || snumel > e->size / elsize || e->size != snumel * elsize)
    throw bad("has no stored data of its storage's size (data/" + storage.s + ")");
  RawTensor r{expected.name, t.dtype, t.sizes, {}};
  r.bytes = bytes_.substr(e->offset + static_cast<uint64_t>(t.offset) * elsize, numel * elsize);
  return r;
}

}  // namespace attn
