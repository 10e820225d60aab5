// The fuzz targets' bodies, shared by the libFuzzer entry points (fuzz_*.cpp, clang-14) and the
// normal suite, which replays every saved input (tests/core/test_fuzz_regressions.cpp).
// Each takes one input and returns normally when the code under test kept its contract: a
// result, or attn::Error with a message. A broken contract throws ContractViolation; a crash or
// a sanitizer report is a finding by itself.
#pragma once
#include <cmath>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/analysis/ky_transform.h"
#include "core/base/error.h"
#include "core/config/config.h"
#include "core/models/conn/spectrum.h"
#include "core/runs/formats/legacy_archive.h"

namespace attn::fuzz {

struct ContractViolation : std::logic_error {
  using std::logic_error::logic_error;
};

// Config text (JSON): parses into a validated config, or attn::Error / a JSON parse error. A
// parsed config survives to_json -> parse_config unchanged.
inline void config_one(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return;  // not JSON: load_config_file reports it with the file name
  }
  try {
    const ExperimentConfig c = parse_config(j, "fuzz");
    const nlohmann::json resolved = to_json(c);
    if (to_json(parse_config(resolved, "fuzz (resolved)")) != resolved)
      throw ContractViolation("config: to_json(parse_config(to_json(c))) != to_json(c)");
  } catch (const Error&) {
  }
}

// KY expression text: compiles, or ExpressionError with a position inside the text.
inline void expression_one(const std::string& text) {
  if (text.size() > 4096) return;  // the GUI field and the CLI take one line
  try {
    Expression e(text);
    for (double x : {0.0, 0.5, -1.0, 1e300}) (void)e(x);
    Expression copy = e;
    const double a = e(0.25), b = copy(0.25);
    if (!(a == b || (std::isnan(a) && std::isnan(b))))
      throw ContractViolation("expression: a copy evaluates differently");
  } catch (const ExpressionError& err) {
    if (err.position < -1 || err.position > static_cast<int>(text.size()))
      throw ContractViolation("expression: error position " + std::to_string(err.position) +
                              " outside the text");
  } catch (const Error&) {
  }
}

// CSV matrix text: an n x n matrix of finite numbers, or attn::Error.
inline void matrix_one(const std::string& text) {
  int n = -1;
  std::vector<double> c;
  try {
    c = spectral::parse_matrix_csv(text, "fuzz.csv", n);
  } catch (const Error&) {
    return;
  }
  if (n < 1 || c.size() != static_cast<size_t>(n) * static_cast<size_t>(n))
    throw ContractViolation("matrix: n = " + std::to_string(n) + " but " +
                            std::to_string(c.size()) + " values");
  for (double v : c)
    if (!std::isfinite(v)) throw ContractViolation("matrix: a non-finite value was accepted");
  if (n <= 6) {
    (void)spectral::shifted_spectrum(c, n);
    (void)spectral::apply_control(c, n, spectral::Control::NormBound, 0.95);
  }
}

// An old checkpoint archive (model.pt bytes): parses as data, or attn::Error. Every tensor it
// holds reads back at exactly numel x dtype size bytes, or is refused with attn::Error. The walk
// is bounded: a pickle can make a container hold itself.
inline void legacy_one(const std::string& bytes) {
  try {
    const LegacyArchive a = LegacyArchive::from_bytes(bytes, "fuzz.pt", {1u << 24});
    std::vector<const LegacyValue*> todo = {&a.root()};
    for (size_t seen = 0; !todo.empty() && seen < 4096; ++seen) {
      const LegacyValue* v = todo.back();
      todo.pop_back();
      for (const auto& kv : v->dict) todo.push_back(kv.second.get());
      for (const auto& item : v->items) todo.push_back(item.get());
      if (v->kind != LegacyValue::Kind::Tensor) continue;
      try {
        const RawTensor r = a.read_tensor(*v, {"t", v->dtype, v->sizes});
        uint64_t n = static_cast<uint64_t>(safetensors_dtype_size(v->dtype));
        for (const int64_t d : v->sizes) n *= static_cast<uint64_t>(d);
        if (r.bytes.size() != n)
          throw ContractViolation("legacy: a tensor read back " + std::to_string(r.bytes.size()) +
                                  " bytes, not " + std::to_string(n));
      } catch (const Error&) {
      }
    }
  } catch (const Error&) {
  }
}

}  // namespace attn::fuzz
