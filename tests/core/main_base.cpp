// doctest runner for the torch-free core suites (test_base, tests/CMakeLists.txt):
// attnlab_core_torchfree's readers, parsers and analysis, linked without torch (the sanitizer stage
// instruments them).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
