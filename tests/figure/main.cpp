// doctest runner for the figure suite (test_figure): the figure model and its file backends.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
