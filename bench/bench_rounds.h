// Measuring arms side by side in alternating rounds: what the CPU benchmarks that compare
// configurations in one run share (bench_targets' thread counts, bench_recording's recording
// arms). The machine's load drifts between runs (here by +-50%): several short rounds, each
// arm's figures then reduced by median or best, and the load average printed beside them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace attn::bench {

// Runs measure(arm) for every arm in each of `rounds` rounds, in alternating order (0..n-1 in
// even rounds, n-1..0 in odd ones: A B B A), so no arm always comes first after a pause.
// after_round (optional) sees the figures so far after each round. Returns each arm's figures,
// in round order.
inline std::vector<std::vector<double>> alternating_rounds(
    size_t arms, int rounds, const std::function<double(size_t arm)>& measure,
    const std::function<void(int round, const std::vector<std::vector<double>>&)>& after_round =
        nullptr) {
  std::vector<std::vector<double>> figures(arms);
  for (int r = 0; r < rounds; ++r) {
    for (size_t k = 0; k < arms; ++k) {
      const size_t arm = r % 2 == 0 ? k : arms - 1 - k;
      figures[arm].push_back(measure(arm));
    }
    if (after_round) after_round(r, figures);
  }
  return figures;
}

// The median (the upper one of an even count); v must not be empty.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The largest; v must not be empty.
inline double best(const std::vector<double>& v) {
  return *std::max_element(v.begin(), v.end());
}

// /proc/loadavg's 1, 5 and 15 minute figures: "0.52 0.61 0.70".
inline std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

}  // namespace attn::bench
