// The bounded safetensors reader (core/runs/formats/safetensors.h): round trips of every dtype the
// checkpoints use, and hostile files (claimed sizes, offsets, dtypes, shapes, names, nesting)
// refused naming the file and the tensor before anything is allocated for the data.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/runs/formats/safetensors.h"
#include "temp_dir.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

void spit(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

std::string u64_le(uint64_t v) {
  std::string s;
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return s;
}

// A file with this header JSON (padded) and `data` bytes after it.
std::string with_header(const std::string& header, const std::string& data) {
  std::string h = header;
  h.append((8 - h.size() % 8) % 8, ' ');
  return u64_le(h.size()) + h + data;
}

std::string le_bytes(const void* p, size_t n) {
  return std::string(static_cast<const char*>(p), n);  // the test hosts are little-endian
}

const std::vector<TensorSpec> kTwo = {{"a", "F32", {2, 3}}, {"b", "I64", {2}}};

std::string two_tensors() {
  const float a[6] = {1, -2, 3.5f, 0, 1e-30f, -0.0f};
  const int64_t b[2] = {7, -(int64_t(1) << 40)};
  return safetensors_bytes(std::vector<RawTensor>{{"a", "F32", {2, 3}, le_bytes(a, sizeof a)},
                                                  {"b", "I64", {2}, le_bytes(b, sizeof b)}},
                           {{"format", "test"}});
}

SafetensorsLimits limits(uint64_t data = 1 << 20) {
  SafetensorsLimits l;
  l.max_data_bytes = data;
  return l;
}

// The reader's message for a file holding `bytes`, expecting kTwo.
std::string refusal(const std::string& bytes, const std::vector<TensorSpec>& expected = kTwo,
                    SafetensorsLimits l = limits()) {
  test::ScopedTempDir dir("st");
  const fs::path p = dir.path / "x.safetensors";
  spit(p, bytes);
  try {
    read_safetensors(p.string(), expected, l);
  } catch (const Error& e) {
    const std::string what = e.what();
    CHECK(what.find(p.string()) != std::string::npos);  // every message names the file
    return what;
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("safetensors: F32, I64, F64 and BOOL tensors round trip bit for bit, metadata too") {
  test::ScopedTempDir dir("st");
  const double d[3] = {1.0 / 3, -1e300, 5e-324};
  const char flags[4] = {1, 0, 0, 1};
  std::string bytes = two_tensors();
  const fs::path p = dir.path / "x.safetensors";
  spit(p, bytes);
  const auto read = read_safetensors(p.string(), kTwo, limits());
  REQUIRE(read.tensors.size() == 2);
  CHECK(read.metadata.at("format") == "test");
  const float a[6] = {1, -2, 3.5f, 0, 1e-30f, -0.0f};
  CHECK(read.tensors[0].bytes == le_bytes(a, sizeof a));
  const int64_t b[2] = {7, -(int64_t(1) << 40)};
  CHECK(read.tensors[1].bytes == le_bytes(b, sizeof b));

  const std::vector<TensorSpec> more = {
      {"d", "F64", {3}}, {"f", "BOOL", {2, 2}}, {"e", "F32", {0}}};
  spit(p, safetensors_bytes(std::vector<RawTensor>{{"d", "F64", {3}, le_bytes(d, sizeof d)},
                                                   {"f", "BOOL", {2, 2}, le_bytes(flags, 4)},
                                                   {"e", "F32", {0}, ""}},
                            {}));
  const auto read2 = read_safetensors(p.string(), more, limits());
  CHECK(read2.tensors[0].bytes == le_bytes(d, sizeof d));
  CHECK(read2.tensors[1].bytes == le_bytes(flags, 4));
  CHECK(read2.tensors[2].bytes.empty());
}

TEST_CASE("safetensors: the float writer and the raw writer give the same bytes") {
  const std::vector<float> v = {0.5f, -3, 1e10f};
  CHECK(safetensors_bytes(std::vector<NamedTensor>{{"w", {3}, v}}, {{"k", "v"}}) ==
        safetensors_bytes(std::vector<RawTensor>{{"w", "F32", {3}, le_bytes(v.data(), 12)}},
                          {{"k", "v"}}));
}

TEST_CASE("safetensors: hostile or damaged files are refused naming the file and the tensor") {
  const std::string good = two_tensors();
  const uint64_t header = [&] {
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(good[i]);
    return n;
  }();
  const std::string data = good.substr(8 + header);
  REQUIRE(data.size() == 24 + 16);
  auto header_of = [](const std::string& a, const std::string& b) {
    return "{\"a\":" + a + ",\"b\":" + b + "}";
  };
  const std::string a_ok = R"({"dtype":"F32","shape":[2,3],"data_offsets":[0,24]})";
  const std::string b_ok = R"({"dtype":"I64","shape":[2],"data_offsets":[24,40]})";
  REQUIRE(refusal(with_header(header_of(a_ok, b_ok), data)) == "(accepted)");

  SUBCASE("a header length of 2^63 is refused before anything is read") {
    CHECK(refusal(u64_le(uint64_t(1) << 63) + "{}").find("over the limit") != std::string::npos);
  }
  SUBCASE("a header larger than the file") {
    CHECK(refusal(u64_le(1 << 20) + "{}").find("bytes, but a") != std::string::npos);
  }
  SUBCASE("too short for a header length") {
    CHECK(refusal("abc").find("too short") != std::string::npos);
  }
  SUBCASE("truncated data") {
    CHECK(refusal(good.substr(0, good.size() - 1)).find("truncated") != std::string::npos);
  }
  SUBCASE("bytes appended") {
    CHECK(refusal(good + "x").find("truncated, extended") != std::string::npos);
  }
  SUBCASE("dtype declared other than expected (I32 over float bytes)") {
    const std::string a = R"({"dtype":"I32","shape":[2,3],"data_offsets":[0,24]})";
    const std::string m = refusal(with_header(header_of(a, b_ok), data));
    CHECK(m.find("tensor a has dtype \"I32\", expected \"F32\"") != std::string::npos);
  }
  SUBCASE("another shape with the same byte count") {
    const std::string a = R"({"dtype":"F32","shape":[3,2],"data_offsets":[0,24]})";
    CHECK(refusal(with_header(header_of(a, b_ok), data)).find("tensor a has shape [3,2]") !=
          std::string::npos);
  }
  SUBCASE("overlapping offsets") {
    const std::string b = R"({"dtype":"I64","shape":[2],"data_offsets":[8,24]})";
    const std::string m = refusal(with_header(header_of(a_ok, b), data));
    CHECK(m.find("tensor b") != std::string::npos);
    CHECK(m.find("overlaps") != std::string::npos);
  }
  SUBCASE("offsets past the data") {
    const std::string b = R"({"dtype":"I64","shape":[2],"data_offsets":[32,48]})";
    CHECK(refusal(with_header(header_of(a_ok, b), data)).find("outside the file's 40 data bytes") !=
          std::string::npos);
  }
  SUBCASE("a span that does not fit the shape") {
    const std::string a = R"({"dtype":"F32","shape":[2,3],"data_offsets":[0,20]})";
    CHECK(refusal(with_header(header_of(a, b_ok), data)).find("span 20 bytes") !=
          std::string::npos);
  }
  SUBCASE("negative or non-integer offsets") {
    const std::string a = R"({"dtype":"F32","shape":[2,3],"data_offsets":[-1,23]})";
    CHECK(refusal(with_header(header_of(a, b_ok), data)).find("tensor a: data_offsets") !=
          std::string::npos);
  }
  SUBCASE("a tensor missing, a tensor the model has not") {
    const std::string c = R"({"c":{"dtype":"I64","shape":[2],"data_offsets":[24,40]}})";
    CHECK(refusal(with_header(R"({"a":)" + a_ok + "}", data.substr(0, 24))).find("is ") !=
          std::string::npos);
    CHECK(refusal(with_header(R"({"a":)" + a_ok +
                                  R"(,"c":{"dtype":"I64","shape":[2],)"
                                  R"("data_offsets":[24,40]}})",
                              data))
              .find("tensor c is not one of this model's") != std::string::npos);
    (void)c;
  }
  SUBCASE("a million-deep header is refused before the parser sees it") {
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    CHECK(refusal(with_header(deep, data)).find("nests deeper") != std::string::npos);
  }
  SUBCASE("a header that is not JSON") {
    CHECK(refusal(with_header("{not json", data)).find("not valid JSON") != std::string::npos);
  }
  SUBCASE("expectations over the stated limit are refused before the file is opened") {
    CHECK(refusal(good, kTwo, limits(39)).find("limit of 39 bytes") != std::string::npos);
  }
  SUBCASE("a directory or FIFO is not read") {
    test::ScopedTempDir dir("st");
    CHECK_THROWS_WITH_AS(read_safetensors(dir.path.string(), kTwo, limits()),
                         doctest::Contains("not a regular file"), Error);
  }
}
