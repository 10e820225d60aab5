// Reading Condor's learned connection functions (torch-free; the Connections panel, its figure
// and tests use it).
//  - describe_curve(): the per-head summary that the seed's §6.3 gives in words (monotone
//    increasing/decreasing, concave/convex, peak offset), computed from the samples.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attn {

struct CurveShape {
  // "flat", "increasing", "decreasing", "peaked" (rises then falls), "dipped" (falls then
  // rises) or "non-monotone". Changes under 2% of the curve's range count as flat.
  std::string trend;
  // "linear", "concave", "convex" or "mixed", from the second differences: linear when the
  // total change of slope is under 10% of the range; concave/convex when at least 90% of the
  // curvature has one sign.
  std::string curvature;
  float range = 0;      // max g - min g
  float peak_t = 0;     // t of the maximum sample
  int peak_slot = 0;    // window slot nearest peak_t
  int peak_offset = 0;  // key offset i - key of that slot (0 = the query's own token)
  std::string
      sentence;  // e.g. "increasing, convex; peak at t = 1.00 = offset 0 (the current token)"
};

// t: increasing samples of [0, 1]; g: the curve at them (n >= 3). window/query_slot as in
// ConnectionCurves (the mechanism's own view header), to turn t into a key offset.
CurveShape describe_curve(const std::vector<float>& t, const float* g, int window, int query_slot);

}  // namespace attn
