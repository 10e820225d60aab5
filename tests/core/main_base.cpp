// Plain doctest runner: the torch-free core suites (test_base, tests/CMakeLists.txt) and the GPU
// cases alone (test_gpu_cases). test_base holds
// attnlab_core_torchfree's readers, parsers and analysis, linked without torch (the sanitizer stage
// instruments them).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
