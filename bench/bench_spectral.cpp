// Benchmark (prints figures; not a test): the cost of the Connection Transformer's spectral
// tracking (warm-started rho(I+C) and ||I+C||_2 every step, all eigenvalues every
// eigen_every steps, C and its statistics every matrix_every steps) in training steps/s, at
// N = 256 and 512 slots. Sessions with tracking on and off train side by side in alternating
// rounds (the shared machine drifts); also prints the tracker's own time over training time,
// and the cost of the norm-bound control (one exact SVD of I + C per step).
// usage: bench_spectral [--quick] [--threads T] [--n N] (N: one size instead of 256 and 512)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/models/conn/conn_monitor.h"
#include "core/training/session/session.h"

using namespace attn;
using Clock = std::chrono::steady_clock;

namespace {

ExperimentConfig conn_config(int slots, bool track, const std::string& control) {
  ExperimentConfig c;
  c.task.name = "recall";
  c.task.length = 4;
  c.task.vocab = 8;
  c.model.architecture = "conn";
  c.model.d_model = 64;
  c.model.heads = 1;
  c.model.conn.slots = slots;
  c.model.conn.steps = 2;
  c.model.conn.track = track;
  c.model.conn.control = control;
  c.train.batch_size = 8;
  c.train.steps = 1000000;
  c.train.warmup = 10;
  c.train.eval_every = 1000000;
  c.train.eval_batches = 1;
  return c;
}

double seconds(TrainingSession& s, int steps) {
  const auto t0 = Clock::now();
  for (int i = 0; i < steps; ++i) s.train_step();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Alternating rounds of `steps` steps on a and b; returns total seconds of each.
std::pair<double, double> ab(TrainingSession& a, TrainingSession& b, int rounds, int steps) {
  double ta = 0, tb = 0;
  for (int r = 0; r < rounds; ++r) {
    if (r % 2 == 0) {
      ta += seconds(a, steps);
      tb += seconds(b, steps);
    } else {
      tb += seconds(b, steps);
      ta += seconds(a, steps);
    }
  }
  return {ta, tb};
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int threads = 1;
  std::vector<int> sizes = {256, 512};
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--n") && i + 1 < argc) sizes = {std::atoi(argv[++i])};
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
  }
  torch::set_num_threads(threads);
  const int rounds = quick ? 4 : 8, steps = quick ? 10 : 25;
  std::printf("conn on recall (L 16, D 64, K 2, batch 8), %d threads, %d rounds x %d steps\n",
              threads, rounds, steps);
  for (int n : sizes) {
    TrainingSession on(conn_config(n, true, "none")), off(conn_config(n, false, "none"));
    seconds(on, 3);  // warm-up (allocations, the first eigen refresh)
    seconds(off, 3);
    const double t_on0 =
        dynamic_cast<const ConnMonitor&>(*on.architecture_monitor()).tracking_seconds();
    const auto [t_on, t_off] = ab(on, off, rounds, steps);
    const double total = rounds * steps;
    const double tracker =
        dynamic_cast<const ConnMonitor&>(*on.architecture_monitor()).tracking_seconds() - t_on0;
    std::printf(
        "N %4d  tracking off %6.3f steps/s  on %6.3f steps/s  overhead %+5.2f%%  (tracker's own "
        "time: %.2f%% of training, %.2f ms/step)\n",
        n, total / t_off, total / t_on, 100.0 * (t_on / t_off - 1.0), 100.0 * tracker / t_on,
        1e3 * tracker / total);
    TrainingSession bound(conn_config(n, false, "norm-bound"));
    seconds(bound, 3);
    const auto [t_bound, t_free] = ab(bound, off, quick ? 2 : 4, steps);
    std::printf("N %4d  norm-bound control (exact SVD per step): %+5.2f%% step time\n", n,
                100.0 * (t_bound / t_free - 1.0));
    std::fflush(stdout);
  }
  return 0;
}
