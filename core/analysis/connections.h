// Reading Condor's learned connection functions (torch-free; the Connection panel, the run
// directory's connections.json and tests use it).
//  - describe_curve(): the per-head summary that the seed's §6.3 gives in words (monotone
//    increasing/decreasing, concave/convex, peak offset), computed from the samples.
//  - connection_frames_to_json() / from_json(): the layout of connections.json.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/views/snapshot.h"

namespace attn {

struct CurveShape {
  // "flat", "increasing", "decreasing", "peaked" (rises then falls), "dipped" (falls then
  // rises) or "non-monotone". Changes under 2% of the curve's range count as flat.
  std::string trend;
  // "linear", "concave", "convex" or "mixed", from the second differences: linear when the
  // total change of slope is under 10% of the range; concave/convex when at least 90% of the
  // curvature has one sign.
  std::string curvature;
  float range = 0;         // max g - min g
  float peak_t = 0;        // t of the maximum sample
  int peak_slot = 0;       // window slot nearest peak_t
  int peak_offset = 0;     // key offset i - key of that slot (0 = the query's own token)
  std::string sentence;    // e.g. "increasing, convex; peak at t = 1.00 = offset 0 (the current token)"
};

// t: increasing samples of [0, 1]; g: the curve at them (n >= 3). window/query_slot as in
// ConnectionCurves, to turn t into a key offset.
CurveShape describe_curve(const std::vector<float>& t, const float* g, int window, int query_slot);

nlohmann::json connection_frames_to_json(const std::vector<ConnectionFrame>& frames);
// Throws attn::Error naming the field when the JSON does not have the layout above.
std::vector<ConnectionFrame> connection_frames_from_json(const nlohmann::json& j);

}  // namespace attn
