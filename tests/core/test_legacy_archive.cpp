// The data-only reader of attnlab's old checkpoint archives (core/runs/formats/legacy_archive.h).
// The archives are built here byte by byte (a stored zip and a pickle written opcode by opcode, the
// way LibTorch writes model.pt), independent of the reader: an honest one reads back exactly,
// and every way a hostile one could make a pickle run something (a foreign global, a class with
// its own __setstate__, a call, an opcode attnlab never wrote) is refused naming the file. The
// real LibTorch archives are converted end to end by tests/e2e/checkpoint_safety.sh.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/base/error.h"
#include "core/runs/formats/legacy_archive.h"
#include "temp_dir.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

std::string le(uint64_t v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return s;
}

struct ZipEntry {
  std::string name, data;
  int method = 0;  // 0 stored, 8 deflated (the data is then not read)
};

// A zip archive as miniz writes LibTorch's (no comment, no extra fields, CRC left 0).
std::string zip(const std::vector<ZipEntry>& entries) {
  std::string out, dir;
  for (const ZipEntry& e : entries) {
    const uint64_t local = out.size();
    out += le(0x04034b50, 4) + le(20, 2) + le(0, 2) + le(e.method, 2) + le(0, 4) + le(0, 4) +
           le(e.data.size(), 4) + le(e.data.size(), 4) + le(e.name.size(), 2) + le(0, 2) + e.name +
           e.data;
    dir += le(0x02014b50, 4) + le(20, 2) + le(20, 2) + le(0, 2) + le(e.method, 2) + le(0, 4) +
           le(0, 4) + le(e.data.size(), 4) + le(e.data.size(), 4) + le(e.name.size(), 2) +
           le(0, 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(local, 4) + e.name;
  }
  const uint64_t cd = out.size();
  out += dir;
  out += le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(entries.size(), 2) + le(entries.size(), 2) +
         le(dir.size(), 4) + le(cd, 4) + le(0, 2);
  return out;
}

// Pickle pieces (protocol 2, as LibTorch's pickler writes them).
std::string str(const std::string& s) {
  return "X" + le(s.size(), 4) + s;
}
std::string global(const std::string& module, const std::string& name) {
  return "c" + module + "\n" + name + "\n";
}
std::string i1(int v) {
  return "K" + std::string(1, static_cast<char>(v));
}
// _rebuild_tensor_v2((storage, FloatStorage, key, cpu, numel), offset, sizes, strides, False, {}).
std::string tensor(const std::string& key, int numel, int offset, const std::string& sizes,
                   const std::string& strides) {
  return global("torch._utils", "_rebuild_tensor_v2") + "((" + str("storage") +
         global("torch", "FloatStorage") + str(key) + str("cpu") + i1(numel) + "tQ" + i1(offset) +
         "(" + sizes + "t(" + strides + "t\x89" + global("collections", "OrderedDict") + ")Rt" +
         "R";
}
// A module object holding `items` (key/value pickles) as its attribute dict.
std::string module(const std::string& items) {
  return global("__torch__", "Module") + ")\x81}(" + items + "ub";
}
std::string pickle(const std::string& body) {
  return "\x80\x02" + body + ".";
}

std::string floats(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

struct Fixture {
  test::ScopedTempDir dir{"legacy"};
  fs::path write(const std::string& bytes, const std::string& name = "model.pt") {
    const fs::path p = dir.path / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  // Opens an archive with data.pkl `pkl` and storage "0" of six floats 0..5.
  LegacyArchive open(const std::string& pkl, int data_method = 0) {
    const fs::path p = write(zip({{"archive/data.pkl", pkl, data_method},
                                  {"archive/code/__torch__.py", "raise", 8},
                                  {"archive/data/0", floats({0, 1, 2, 3, 4, 5})}}));
    return LegacyArchive(p.string(), {1u << 20});
  }
};

std::string refusal(Fixture& f, const std::string& pkl) {
  try {
    f.open(pkl);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

const std::string kWeight = tensor("0", 6, 0, i1(2) + i1(3), i1(3) + i1(1));

}  // namespace

TEST_CASE("legacy archive: an honest module tree reads back as data, checked against the model") {
  Fixture f;
  const std::string inner = module(str("weight") + kWeight);
  const LegacyArchive a =
      f.open(pickle(module(str("block") + inner + str("step") + i1(7) + str("lr") + "G" +
                           std::string("\x3f\xd0\x00\x00\x00\x00\x00\x00", 8))));
  const LegacyValue& root = a.root();
  CHECK(root.class_name == "__torch__.Module");
  REQUIRE(root.find("step"));
  CHECK(root.find("step")->i == 7);
  CHECK(root.find("lr")->f == doctest::Approx(0.25));
  const LegacyValue* block = root.find("block");
  REQUIRE(block);
  const LegacyValue* w = block->find("weight");
  REQUIRE(w);
  const RawTensor r = a.read_tensor(*w, {"block.weight", "F32", {2, 3}});
  CHECK(r.bytes == floats({0, 1, 2, 3, 4, 5}));
  CHECK(r.shape == std::vector<int64_t>{2, 3});

  auto refused = [&](const TensorSpec& spec, const std::string& why) {
    try {
      a.read_tensor(*w, spec);
      FAIL("read a tensor that does not match: " << why);
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find("model.pt") != std::string::npos);
      CHECK(std::string(e.what()).find(why) != std::string::npos);
    }
  };
  refused({"block.weight", "F64", {2, 3}}, "is F32, not F64");
  refused({"block.weight", "F32", {3, 2}}, "another shape");
  refused({"block.weight", "F32", {6}}, "another shape");
}

TEST_CASE("legacy archive: tensors that reach past their storage or are strided are refused") {
  Fixture f;
  auto read = [&](const std::string& t, std::vector<int64_t> shape) {
    const LegacyArchive a = f.open(pickle(module(str("w") + t)));
    return a.read_tensor(*a.root().find("w"), {"w", "F32", shape});
  };
  CHECK(read(tensor("0", 6, 2, i1(4), i1(1)), {4}).bytes == floats({2, 3, 4, 5}));
  CHECK_THROWS_WITH_AS(read(tensor("0", 6, 3, i1(4), i1(1)), {4}),
                       doctest::Contains("reaches past its storage"), Error);
  CHECK_THROWS_WITH_AS(read(tensor("0", 6, 0, i1(2) + i1(3), i1(1) + i1(2)), {2, 3}),
                       doctest::Contains("not stored contiguously"), Error);
  // The storage claims more elements than data/0 holds.
  CHECK_THROWS_WITH_AS(read(tensor("0", 8, 0, i1(8), i1(1)), {8}),
                       doctest::Contains("no stored data of its storage's size"), Error);
  CHECK_THROWS_WITH_AS(read(tensor("9", 6, 0, i1(6), i1(1)), {6}), doctest::Contains("data/9"),
                       Error);
}

TEST_CASE("legacy archive: nothing in the pickle can make the reader call anything") {
  Fixture f;
  struct Case {
    const char* what;
    std::string pkl;
    const char* says;
  };
  const std::vector<Case> cases = {
      {"os.system", pickle(global("os", "system") + "(" + str("touch x") + "tR"),
       "global os.system"},
      {"builtins.eval", pickle(global("builtins", "eval") + "(" + str("1") + "tR"),
       "global builtins.eval"},
      {"torch.load", pickle(global("torch", "load") + ")R"), "global torch.load"},
      {"a __setstate__ state", pickle(global("__torch__", "Module") + ")\x81(" + kWeight + "tb"),
       "own __setstate__"},
      {"a call to a module class", pickle(global("__torch__", "Module") + ")R"),
       "calls __torch__.Module"},
      {"OrderedDict with arguments",
       pickle(global("collections", "OrderedDict") + "(" + str("a") + "tR"),
       "calls collections.OrderedDict"},
      {"INST", pickle("(ios\nsystem\n."), "opcode 0x69"},
      {"STACK_GLOBAL", pickle(str("os") + str("system") + "\x93"), "opcode 0x93"},
      {"a storage from a foreign id", pickle("(" + str("file") + str("/etc/passwd") + "tQ"),
       "not a storage"},
      {"a memo never stored", pickle("h\x05"), "never stored"},
      {"a truncated stream",
       std::string("\x80\x02X\xff\x00\x00\x00"
                   "ab",
                   9),
       "longer than the file"},
      {"no STOP", std::string("\x80\x02N"), "ends early"},
      {"two values left", pickle("NN"), "ends with 2 values"},
  };
  for (const Case& c : cases) {
    const std::string what = c.what, msg = refusal(f, c.pkl);
    CAPTURE(what);
    CAPTURE(msg);
    CHECK(msg.find(c.says) != std::string::npos);
    CHECK(msg.find("model.pt") != std::string::npos);
    CHECK(msg.find("nothing in the file was run") != std::string::npos);
  }
}

TEST_CASE("legacy archive: the file and its entries are bounded before they are read") {
  Fixture f;
  const std::string honest = pickle(module(str("w") + kWeight));
  // Compressed data.pkl (LibTorch stores it): not read.
  CHECK_THROWS_WITH_AS(f.open(honest, 8), doctest::Contains("holds no stored data.pkl"), Error);
  // Over the caller's limit: refused before it is read.
  const fs::path big = f.write(zip({{"archive/data.pkl", honest}}), "big.pt");
  CHECK_THROWS_WITH_AS(LegacyArchive(big.string(), {64}),
                       doctest::Contains("attnlab reads at most 0 MiB"), Error);
  LegacyLimits tight{1u << 20, 8};
  CHECK_THROWS_WITH_AS(LegacyArchive(big.string(), tight),
                       doctest::Contains("more than the limit 8"), Error);
  // Not a zip, a directory, an entry overrunning the file.
  CHECK_THROWS_WITH_AS(LegacyArchive(f.write("not a zip at all, honestly").string(), {1u << 20}),
                       doctest::Contains("is not a zip archive"), Error);
  CHECK_THROWS_WITH_AS(LegacyArchive(f.dir.path.string(), {1u << 20}),
                       doctest::Contains("reads only regular files"), Error);
  std::string z = zip({{"archive/data.pkl", honest}});
  const std::string huge = le(0x7fffffff, 4);
  std::string cd_broken = z;  // the directory claims 2 GiB for data.pkl
  const size_t cd = z.find(std::string("\x50\x4b\x01\x02", 4));
  cd_broken.replace(cd + 20, 4, huge);
  cd_broken.replace(cd + 24, 4, huge);
  CHECK_THROWS_WITH_AS(LegacyArchive(f.write(cd_broken, "overrun.pt").string(), {1u << 20}),
                       doctest::Contains("overruns the file"), Error);
}

// A fuzzer's find (fuzz_legacy, 2026-11-30): a 53-byte archive whose end record asks for zip64.
// b.size() - 56 wrapped, so the zip64 record's offset went unchecked and the reader read past
// the buffer (ASan reported the read). Now it is refused by name, as every broken archive is.
TEST_CASE("legacy archive: a zip64 locator in a file too short for its record is refused") {
  const unsigned char raw[] = {0x50, 0x4b, 0x03, 0x04, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                               0x50, 0x4b, 0x06, 0x07, 0x00, 0x00, 0x00, 0x00, 0xfe, 0x6d, 0x00,
                               0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x40, 0x00, 0x50, 0x4b,
                               0x05, 0x06, 0x00, 0x00, 0x00, 0x00, 0x2d, 0x00, 0x2d, 0x00, 0xac,
                               0x0d, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00};
  const std::string bytes(reinterpret_cast<const char*>(raw), sizeof raw);
  REQUIRE(bytes.size() < 56);
  CHECK_THROWS_WITH_AS(LegacyArchive::from_bytes(bytes, "short.pt", {1u << 24}),
                       doctest::Contains("old checkpoint short.pt: has a broken zip64 record"),
                       Error);
}
