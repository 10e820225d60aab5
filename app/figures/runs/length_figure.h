// Length generalisation (torch-free): eval accuracy and eval loss against the evaluated length,
// one line per run, the training length of each marked; what `attnlab eval --figure` writes.
// Throws attn::Error when no curve has a point.
#pragma once
#include <string>
#include <vector>

#include "render/plot/figure.h"

namespace attn::figures {

struct LengthCurve {
  std::string name;  // the run's id
  std::string key;   // "task.context" or "task.length"
  int trained = 0;   // its training length
  std::vector<int> lengths;
  std::vector<double> loss, accuracy;
};

fig::Figure length_figure(const std::vector<LengthCurve>& curves);

}  // namespace attn::figures
