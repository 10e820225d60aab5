// doctest runner for the app/ suite (test_app): the window's plain-data parts, no GL, no torch.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
