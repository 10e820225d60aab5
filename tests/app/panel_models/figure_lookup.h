// A figure's line by name for the panel model tests that read one series' values: the line named
// `name` in the first panel (test_panel_helpers.h: find_line), failing the test case when absent.
#pragma once
#include <doctest/doctest.h>

#include <string>

#include "tests/app/panel_models/test_panel_helpers.h"

namespace attn::test {

inline const fig::LineSeries& line_named(const fig::Figure& f, const std::string& name) {
  const fig::LineSeries* line = find_line(f.panels.at(0), name);
  REQUIRE_MESSAGE(line != nullptr, "no line named " << name);
  return *line;
}

}  // namespace attn::test
