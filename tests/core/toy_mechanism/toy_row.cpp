// The toy mechanism's one registry row, for this test build: what ATTN_MECHANISM(toy) in
// core/attention/mechanisms.def is for a product mechanism.
#include "core/attention/registry.h"
#include "tests/core/toy_mechanism/toy_attention.h"

namespace {
const bool registered = [] {
  attn::register_test_mechanism(attn::toy::toy_mechanism());
  attn::register_test_attention("toy", &attn::toy::make_toy_attention);
  return true;
}();
}  // namespace
