// Benchmark (prints figures; not a test): Neural KY-Attention against dot-product attention as
// the sequence grows at a fixed window.
// For each L and mechanism, one forward + backward of the attention module (B x L x D input,
// D 128, 4 heads, causal) in a fresh child process, so that the peak resident memory it reports
// (getrusage max RSS minus the RSS before the first pass) belongs to that configuration alone.
// Time: median of the timed passes after one warm-up. Prints a table, the growth exponents
// (log-log slope between the two largest L) and the crossover L where ky becomes cheaper.
// usage: bench_ky [--window W] [--batch B] [--threads T] [--lengths 128,256,...]
//                 [--max-dot-length L]
//        bench_ky --one ky|dot L W B T    (child mode, prints "ms peak_mib")
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_child.h"
#include "core/attention/attention.h"

using namespace attn;

namespace {

constexpr int kDModel = 128, kHeads = 4;

int run_one(const std::string& mechanism, int L, int W, int B, int threads) {
  torch::set_num_threads(threads);
  torch::manual_seed(1);
  AttentionSpec spec;
  spec.d_model = kDModel;
  spec.heads = kHeads;
  spec.causal = true;
  if (mechanism == "ky") spec.options = {{"window", W}};
  auto module = make_attention(mechanism, spec);
  auto x = torch::randn({B, L, kDModel}, torch::requires_grad());
  auto r = torch::randn({B, L, kDModel});
  const int passes = L >= 2048 ? 3 : 6;
  return bench::report_child(
      [&] {
        (module->forward(x) * r).sum().backward();
        x.mutable_grad() = torch::Tensor();
      },
      passes);
}

bench::Point measure(const std::string& mech, int L, int W, int B, int threads) {
  return bench::run_child("--one " + mech + " " + std::to_string(L) + " " + std::to_string(W) +
                          " " + std::to_string(B) + " " + std::to_string(threads));
}

double slope(double x0, double y0, double x1, double y1) {
  return std::log(y1 / y0) / std::log(x1 / x0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 7 && std::strcmp(argv[1], "--one") == 0)
    return run_one(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]),
                   std::atoi(argv[6]));
  int W = 32, B = 4, max_dot = 4096, threads = 2;
  std::vector<int> lengths = {128, 256, 512, 1024, 2048, 4096};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--window"))
      W = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--batch"))
      B = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--lengths"))
      lengths = bench::parse_int_list(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--max-dot-length"))
      max_dot = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--threads"))
      threads = std::atoi(argv[i + 1]);
  }
  std::printf(
      "attention module forward+backward, B %d, D %d, %d heads, causal; ky window %d; "
      "torch threads %d\n",
      B, kDModel, kHeads, W, threads);
  std::printf("%7s | %10s %10s | %10s %10s | %8s %8s\n", "L", "ky ms", "dot ms", "ky MiB",
              "dot MiB", "t dot/ky", "m dot/ky");
  std::vector<bench::Point> ky, dot;
  int crossover_time = -1, crossover_mem = -1;
  for (int L : lengths) {
    ky.push_back(measure("ky", L, W, B, threads));
    dot.push_back(L <= max_dot ? measure("dot", L, W, B, threads) : bench::Point{});
    const bench::Point &k = ky.back(), &d = dot.back();
    std::printf("%7d | %10.2f %10.2f | %10.1f %10.1f | %8.2f %8.2f\n", L, k.ms, d.ms, k.mib, d.mib,
                d.ms / k.ms, d.mib / k.mib);
    std::fflush(stdout);
    if (crossover_time < 0 && k.ms < d.ms) crossover_time = L;
    if (crossover_mem < 0 && k.mib < d.mib) crossover_mem = L;
  }
  const size_t n = lengths.size();
  if (n >= 2) {
    auto exponent = [&](const std::vector<bench::Point>& v, bool time) {
      for (size_t i = n - 1; i >= 1; --i) {  // the two largest L measured
        const bench::Point &a = v[i - 1], &b = v[i];
        const double ya = time ? a.ms : a.mib, yb = time ? b.ms : b.mib;
        if (std::isfinite(ya) && std::isfinite(yb) && ya > 0 && yb > 0)
          return slope(lengths[i - 1], ya, lengths[i], yb);
      }
      return static_cast<double>(NAN);
    };
    std::printf(
        "growth exponent (log-log slope, two largest L): ky time %.2f memory %.2f; "
        "dot time %.2f memory %.2f\n",
        exponent(ky, true), exponent(ky, false), exponent(dot, true), exponent(dot, false));
  }
  std::printf(
      "crossover: ky faster than dot from L = %d, smaller from L = %d (-1: not within "
      "the lengths measured)\n",
      crossover_time, crossover_mem);
  return 0;
}
