#include <doctest/doctest.h>

#include "core/views/history.h"

using namespace attn;

TEST_CASE("MetricHistory stays bounded, keeps the curve's ends and regular strides") {
  MetricHistory h(64);
  for (int64_t s = 1; s <= 10000; ++s) h.add(s, static_cast<float>(s) * 0.5f);
  const auto series = h.series();
  CHECK(series.steps.size() <= 65);
  CHECK(series.steps.front() == 1);
  CHECK(series.steps.back() == 10000);  // the latest point is always present
  CHECK(series.values.back() == 5000.0f);
  for (size_t i = 1; i + 1 < series.steps.size(); ++i)
    CHECK(series.steps[i] - series.steps[i - 1] == h.stride());
  for (size_t i = 0; i < series.steps.size(); ++i)
    CHECK(series.values[i] == static_cast<float>(series.steps[i]) * 0.5f);
}

TEST_CASE("MetricHistory state round-trips through JSON and continues identically") {
  MetricHistory a(16), b(16);
  for (int64_t s = 1; s <= 100; ++s) a.add(s, float(s));
  b.from_json(a.to_json());
  for (int64_t s = 101; s <= 300; ++s) {
    a.add(s, float(s));
    b.add(s, float(s));
  }
  CHECK(a.series().steps == b.series().steps);
  CHECK(a.series().values == b.series().values);
}

TEST_CASE("MetricHistory over a 1e6-step run stays under its capacity and keeps both ends") {
  MetricHistory h;  // the default capacity, as the session's loss curves use
  for (int64_t s = 1; s <= 1000000; ++s) h.add(s, static_cast<float>(s % 1000));
  const auto series = h.series();
  CHECK(series.steps.size() <= 4096 + 1);  // + the pending latest point
  CHECK(series.steps.size() >= 4096 / 2);  // halving keeps at least half: the shape survives
  CHECK(series.steps.front() == 1);
  CHECK(series.steps.back() == 1000000);
  CHECK(series.values.back() == 0.0f);
}
