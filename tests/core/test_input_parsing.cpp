// Input parsing of issue 30: ATTNLAB_MEMORY_LIMIT sizes (core/base/memory.h), strict JSON
// (core/json/json_reader.h), decimal-only numbers (core/base/decimal.h), metrics.csv step
// order (core/runs/directory/run_dir.h) and the out-of-memory message (core/training/session/training_errors.h).
// Each table's expected values are written out by hand (powers of two, byte offsets counted in
// the literal), not computed by the code under test.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <new>
#include <stdexcept>
#include <string>

#include "core/analysis/spectral.h"
#include "core/base/decimal.h"
#include "core/base/error.h"
#include "core/base/memory.h"
#include "core/config/config.h"
#include "core/json/json_reader.h"
#include "core/runs/directory/run_dir.h"
#include "core/training/session/training_errors.h"
#include "helpers.h"

using namespace attn;
using attn::test::contains;
using attn::test::error_of;

TEST_CASE("ATTNLAB_MEMORY_LIMIT: units with or without a space, binary, any case") {
  const struct {
    const char* text;
    uint64_t bytes;
  } good[] = {
      {"1048576", 1048576ull},  {"512B", 512ull},
      {"1K", 1024ull},          {"1kb", 1024ull},
      {"1KiB", 1024ull},        {"512M", 536870912ull},
      {"512 MB", 536870912ull}, {"2G", 2147483648ull},
      {"2 G", 2147483648ull},  // once read as 2 bytes
      {"2 GiB", 2147483648ull}, {"2gib", 2147483648ull},
      {"1.5G", 1610612736ull},  {"1T", 1099511627776ull},
      {" 3 M ", 3145728ull},
  };
  for (const auto& g : good) {
    INFO(g.text);
    CHECK(parse_memory_size(g.text, "ATTNLAB_MEMORY_LIMIT") == g.bytes);
  }
  const char* bad[] = {"abc",   "2X",   "G",   "-1G",          "0",    "0.1B", "1e9",
                       "2 G B", "0x10", "inf", "99999999999T", "1,5G", ""};
  for (const char* b : bad) {
    INFO(b);
    const std::string msg = error_of([&] { parse_memory_size(b, "ATTNLAB_MEMORY_LIMIT"); });
    CHECK(contains(msg, "ATTNLAB_MEMORY_LIMIT=\"" + std::string(b) + "\""));
    CHECK(contains(msg, "2G, 512M"));  // the accepted forms
  }
}

TEST_CASE("ATTNLAB_MEMORY_LIMIT from the environment: garbage is refused, not ignored") {
  ::setenv("ATTNLAB_MEMORY_LIMIT", "abc", 1);
  CHECK(contains(error_of([] { memory_limit_from_env(); }), "ATTNLAB_MEMORY_LIMIT=\"abc\""));
  CHECK(contains(error_of([] { available_memory_bytes(); }), "ATTNLAB_MEMORY_LIMIT"));
  ::setenv("ATTNLAB_MEMORY_LIMIT", "2 G", 1);
  CHECK(memory_limit_from_env() == 2147483648ull);
  CHECK(available_memory_bytes() <= 2147483648ull);
  CHECK(available_memory_bytes() > 2);
  ::unsetenv("ATTNLAB_MEMORY_LIMIT");
  CHECK(memory_limit_from_env() == 0);
}

TEST_CASE("strict JSON: duplicate keys named with their path and the file") {
  const std::string msg =
      error_of([] { parse_json_strict(R"({"train": {"steps": 1, "steps": 2}})", "c.json"); });
  CHECK(contains(msg, "c.json: duplicate key 'train.steps'"));
  CHECK(contains(error_of([] { parse_json_strict(R"({"a": 1, "a": 1})", "c.json"); }),
                 "duplicate key 'a'"));
  CHECK(contains(error_of([] { parse_json_strict(R"({"a": [{"x": 1}, {"y": 1, "y": 2}]})", "f"); }),
                 "duplicate key 'a[1].y'"));
  // The same key in two objects is no duplicate.
  CHECK(parse_json_strict(R"({"a": {"k": 1}, "b": {"k": 2}, "c": [{"k": 3}, {"k": 4}]})", "f")
            .at("c")
            .at(1)
            .at("k") == 4);
}

TEST_CASE("strict JSON: comments, NUL bytes and trailing bytes are refused with their offset") {
  // Offsets counted by hand in each literal (0-based).
  CHECK(contains(error_of([] { parse_json_strict("{\"a\": 1} // note", "c.json"); }),
                 "c.json: a comment at offset 9 (line 1, column 10)"));
  CHECK(contains(error_of([] { parse_json_strict("{\n  /* note */ \"a\": 1}", "c.json"); }),
                 "a comment at offset 4 (line 2, column 3)"));
  CHECK(contains(error_of([] { parse_json_strict(std::string("{\"a\": 1}\0", 9), "c.json"); }),
                 "c.json: a NUL byte at offset 8 (line 1, column 9)"));
  CHECK(contains(error_of([] { parse_json_strict("{\"a\": 1}\n{\"b\": 2}\n", "c.json"); }),
                 "c.json: bytes after the JSON document at offset 9 (line 2, column 1)"));
  CHECK(contains(error_of([] { parse_json_strict("{\"a\": }", "c.json"); }),
                 "c.json: not valid JSON"));
  // A document cut short is invalid, not "bytes after" it.
  CHECK(contains(error_of([] { parse_json_strict("{ \"model\": ", "c.json"); }),
                 "c.json: not valid JSON"));
  CHECK(contains(error_of([] { parse_json_strict("", "c.json"); }), "c.json: not valid JSON"));
  CHECK(contains(error_of([] { parse_json_strict("{\"a\": 1e400}", "c.json"); }),
                 "c.json: not valid JSON"));
}

TEST_CASE("strict JSON: UTF-16 and UTF-32 are named; a UTF-8 byte-order mark is accepted") {
  const std::string le16("\xFF\xFE{\0}\0", 6), be16("\xFE\xFF\0{\0}", 6);
  const std::string bare_le16("{\0}\0", 4), bare_be16("\0{\0}", 4);
  const std::string le32("{\0\0\0}\0\0\0", 8);
  CHECK(contains(error_of([&] { parse_json_strict(le16, "w.json"); }),
                 "w.json: the file is UTF-16 (little-endian)"));
  CHECK(contains(error_of([&] { parse_json_strict(le16, "w.json"); }), "save it as UTF-8"));
  CHECK(contains(error_of([&] { parse_json_strict(be16, "w.json"); }), "UTF-16 (big-endian)"));
  CHECK(contains(error_of([&] { parse_json_strict(bare_le16, "w.json"); }), "UTF-16"));
  CHECK(contains(error_of([&] { parse_json_strict(bare_be16, "w.json"); }), "UTF-16"));
  CHECK(contains(error_of([&] { parse_json_strict(le32, "w.json"); }), "UTF-32"));
  CHECK(parse_json_strict("\xEF\xBB\xBF{\"a\": 2}", "bom.json").at("a") == 2);
}

TEST_CASE("strict JSON through load_config_file: the config's file is named") {
  const auto dir = test::temp_dir("strict-json");
  const std::string path = dir + "/dup.json";
  std::ofstream(path) << R"({"train": {"steps": 10, "lr": 0.001, "steps": 20}})";
  const std::string msg = error_of([&] { load_config_file(path); });
  CHECK(contains(msg, path + ": duplicate key 'train.steps'"));
  std::ofstream(dir + "/bom.json") << "\xEF\xBB\xBF{\"train\": {\"steps\": 7, \"warmup\": 1}}";
  CHECK(load_config_file(dir + "/bom.json").train.steps == 7);
  std::ofstream(dir + "/summary.json") << R"({"steps": 1, "steps": 2})";
  CHECK(contains(error_of([&] { read_json_file(dir + "/summary.json"); }),
                 "summary.json: duplicate key 'steps'"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("decimal numbers only: hexadecimal refused, underflow and overflow said as such") {
  const struct {
    const char* text;
    double value;
  } good[] = {{"1.5", 1.5}, {"-2e-3", -0.002}, {".5", 0.5}, {"5.", 5.0},
              {"+3", 3.0},  {"1E2", 100.0},    {"0", 0.0},  {"1e-310", 1e-310}};
  for (const auto& g : good) {
    INFO(g.text);
    double x = -1;
    std::string why;
    REQUIRE(parse_decimal(g.text, x, why));
    CHECK(x == g.value);
  }
  const struct {
    const char* text;
    const char* why;
  } bad[] = {{"0x10", "hexadecimal"},         {"-0X1p3", "hexadecimal"},
             {"1e-400", "underflows to 0"},   {"1e400", "overflows"},
             {"inf", "not finite"},           {"NaN", "not finite"},
             {"1e", "not a decimal number"},  {" 1", "not a decimal number"},
             {"abc", "not a decimal number"}, {"", "not a decimal number"}};
  for (const auto& b : bad) {
    INFO(b.text);
    double x = 0;
    std::string why;
    CHECK_FALSE(parse_decimal(b.text, x, why));
    CHECK(contains(why, b.why));
  }
}

TEST_CASE("spectral's CSV matrix: 0x10 is refused, 1e-400 is out of range") {
  int n = 0;
  CHECK(contains(error_of([&] { spectral::parse_matrix_csv("1,0x10\n0,1\n", "m.csv", n); }),
                 "m.csv: row 1, column 2 (line 1): '0x10' is hexadecimal"));
  CHECK(contains(error_of([&] { spectral::parse_matrix_csv("1,0\n1e-400,1\n", "m.csv", n); }),
                 "row 2, column 1 (line 2): '1e-400' is out of range (underflows to 0"));
  const auto m = spectral::parse_matrix_csv("1,2.5\n-3e-1,4\n", "m.csv", n);
  CHECK(n == 2);
  CHECK(m[1] == 2.5);
  CHECK(m[2] == -0.3);
}

TEST_CASE("metrics.csv: a step that does not increase is refused naming the file and line") {
  const std::string header = "step,train_loss,eval_loss,eval_accuracy,lr,steps_per_second\n";
  RunDirectory run;
  parse_metrics_csv(header + "10,1,1,0.5,0.001,9\n20,1,1,0.5,0.001,9\n", "m.csv", run);
  CHECK(run.rows == 2);
  const std::string repeated =
      error_of([&] { parse_metrics_csv(header + "10,1,,,,\n20,1,,,,\n20,1,,,,\n", "m.csv", run); });
  CHECK(contains(repeated, "m.csv line 4: step 20 repeats step 20 of line 3"));
  const std::string back =
      error_of([&] { parse_metrics_csv(header + "10,1,,,,\n30,1,,,,\n20,1,,,,\n", "m.csv", run); });
  CHECK(contains(back, "m.csv line 4: step 20 goes back from step 30 of line 3"));
  // The helper train --resume uses applies the same rule.
  StepOrder order("x.csv");
  order.next(5, 2);
  CHECK(contains(error_of([&] { order.next(5, 3); }), "x.csv line 3: step 5 repeats"));
}

TEST_CASE("out of memory: the config keys and the estimate in two lines, no stack frames") {
  ExperimentConfig c;  // copy, length 8: 16 tokens
  c.train.batch_size = 65536;
  c.model.d_model = 1024;
  c.model.layers = 2;
  c.model.heads = 4;
  // LibTorch 1.13's CPU allocator, as c10::Error::what() prints it (message, then frames).
  const std::runtime_error cpu(
      "[enforce fail at alloc_cpu.cpp:75] data. DefaultCPUAllocator: not enough memory: you "
      "tried to allocate 1099511627776 bytes.\nException raised from alloc_cpu at "
      "alloc_cpu.cpp:75 (most recent call first):\nframe #0: c10::ThrowEnforceNotMet(...)\n"
      "frame #1: c10::alloc_cpu(unsigned long)\n");
  const std::string msg = training_failure_message(cpu, c, 3, "cpu");
  INFO(msg);
  CHECK(msg.rfind("out of memory on cpu at step 3: ", 0) == 0);
  CHECK(contains(msg, "tried to allocate 1024.0 GB"));  // 2^40 bytes
  for (const char* key : {"train.batch_size 65536", "16 tokens (task.length 8)",
                          "model.d_model 1024", "model.layers 2", "model.heads 4"})
    CHECK(contains(msg, key));
  CHECK_FALSE(contains(msg, "frame #"));
  CHECK_FALSE(contains(msg, "Exception raised"));
  CHECK(std::count(msg.begin(), msg.end(), '\n') == 1);  // two lines
  // Activations: 65536 x 16 x 2 x ((10 + 2 x 4) x 1024 + 2 x 4 x 16) floats x 4 bytes
  // = 2097152 x 18560 x 4 = 155692564480 bytes = 145.0 GiB.
  CHECK(contains(msg, "about 145.0 GB"));
  // CUDA's wording, std::bad_alloc; anything else keeps its first line only.
  const std::runtime_error cuda("CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0)\nframe #0");
  CHECK(contains(training_failure_message(cuda, c), "tried to allocate 2.0 GB"));
  CHECK(contains(training_failure_message(std::bad_alloc(), c), "train.batch_size 65536"));
  CHECK(training_failure_message(std::runtime_error("size mismatch\nframe #0: x"), c) ==
        "size mismatch");
  CHECK_FALSE(is_allocation_failure(Error("out of memory")));  // attnlab's own errors
  c.task.name = "text";
  c.task.context = 256;
  CHECK(contains(training_failure_message(std::bad_alloc(), c), "256 tokens (task.context 256)"));
}
