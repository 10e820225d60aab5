// Looking up a figure's series by name, for the panel model tests.
#pragma once
#include <doctest/doctest.h>

#include <string>

#include "render/plot/figure.h"

namespace attn::test {

// The line series named `name` in the figure's first panel; fails the test case when none is.
inline const fig::LineSeries& line_named(const fig::Figure& f, const std::string& name) {
  for (const fig::LineSeries& l : f.panels.at(0).lines)
    if (l.name == name) return l;
  FAIL("no line named " << name);
  static const fig::LineSeries none;
  return none;
}

}  // namespace attn::test
