// doctest's main, plus one helper mode for the crash-safety test: `test_core --save-loop DIR`
// trains a tiny session and saves a checkpoint to DIR after every step until it is killed
// (test_hardening.cpp kills it with SIGKILL at random moments).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>

#include "core/attention/fused_attention.h"

namespace attn::test {
int save_loop_child(const char* dir);
}

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--save-loop") == 0)
    return attn::test::save_loop_child(argv[2]);
  bool gpu_suite = false;  // ctest's `gpu` test: test_core --test-suite=gpu
  for (int i = 1; i < argc; ++i) gpu_suite |= std::strcmp(argv[i], "--test-suite=gpu") == 0;
  doctest::Context context;
  context.applyCommandLine(argc, argv);
  const int rc = context.run();
  // Every case of the suite needs a GPU: without one they were skipped, and 77 makes ctest
  // say so (SKIP_RETURN_CODE) instead of counting a pass.
  if (rc == 0 && gpu_suite && !attn::fused_kernels_available()) {
    std::printf("test_core: no GPU (or no CUDA kernels in this build): the gpu suite was skipped\n");
    return 77;
  }
  return rc;
}
