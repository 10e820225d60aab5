// doctest's main, plus one helper mode for the crash-safety test: `test_core --save-loop DIR`
// trains a tiny session and saves a checkpoint to DIR after every step until it is killed
// (test_hardening.cpp kills it with SIGKILL at random moments).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstring>

namespace attn::test {
int save_loop_child(const char* dir);
}

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--save-loop") == 0)
    return attn::test::save_loop_child(argv[2]);
  doctest::Context context;
  context.applyCommandLine(argc, argv);
  return context.run();
}
