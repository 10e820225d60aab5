#include "core/training/threads/team_check.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace attn {

bool team_runs_promptly(int threads, double max_seconds, double max_total_seconds) {
  using Clock = std::chrono::steady_clock;
  if (threads <= 1) return true;
  const int previous = at::get_num_threads();
  at::set_num_threads(threads);
  constexpr int kRegions = 15;
  std::vector<double> seconds;
  const auto start = Clock::now();
  for (int r = 0; r < kRegions; ++r) {
    const auto t0 = Clock::now();
    // One chunk per thread, each a few microseconds of work: the region ends when the last
    // thread of the team has run its chunk.
    at::parallel_for(0, threads, 1, [&](int64_t begin, int64_t end) {
      volatile double x = 0;
      for (int64_t i = begin; i < end; ++i)
        for (int k = 0; k < 2000; ++k) x = x + k;
    });
    seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    if (std::chrono::duration<double>(Clock::now() - start).count() > max_total_seconds) break;
  }
  at::set_num_threads(previous);
  std::sort(seconds.begin(), seconds.end());
  // Cut short by the time limit, or most regions slow: some thread waited for a core.
  return static_cast<int>(seconds.size()) == kRegions && seconds[seconds.size() / 2] <= max_seconds;
}

}  // namespace attn
