// Benchmark (prints figures; not a test): the cost of divergence recovery (TrainingSession keeps
// a copy of the state before every update, GoodState, and checks the weights after it).
// Median ms per training step with recovery on and off, alternating rounds in one process, for
// the shipped copy.json and fortunes.json experiments. usage: bench_recovery [rounds]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/base/memory.h"
#include "core/training/session/session.h"

using namespace attn;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  attn::keep_freed_memory_in_heap();  // as attnlab's main: the allocator it runs with
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 6;
  torch::set_num_threads(1);
  for (const std::string name : {"copy", "fortunes"}) {
    ExperimentConfig c =
        load_config_file(std::string(ATTN_SOURCE_DIR) + "/assets/configs/" + name + ".json");
    c.train.steps = 1000000;
    TrainingSession on(c), off(c);
    off.set_recovery(false);
    std::vector<double> t_on, t_off;
    for (int i = 0; i < 3; ++i) on.train_step(), off.train_step();  // warm-up
    for (int r = 0; r < rounds; ++r) {
      for (int k = 0; k < 2; ++k) {
        TrainingSession& s = k == 0 ? on : off;
        const auto t0 = Clock::now();
        for (int i = 0; i < 10; ++i) s.train_step();
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / 10;
        (k == 0 ? t_on : t_off).push_back(ms);
      }
    }
    std::sort(t_on.begin(), t_on.end());
    std::sort(t_off.begin(), t_off.end());
    const double a = t_on[t_on.size() / 2], b = t_off[t_off.size() / 2];
    std::printf("%-9s %9lld params: %.3f ms/step with recovery, %.3f without (%+.1f%%)\n",
                name.c_str(), static_cast<long long>(on.parameters()), a, b, 100.0 * (a - b) / b);
  }
  return 0;
}
