// Benchmark (prints figures; not a test): the Gaussian-MHSA map on CPU, chunked (the LibTorch
// reference, core/attention/kernel_family/kernel_attention.cpp) against the naive form that builds
// the [B, H, S, S, Dh, Dh] tensor, as S and Dh grow. One forward + backward per pass, each
// configuration in a fresh child process (peak RSS is that configuration's). The naive form runs
// only where its tensor (and autograd's copies) fit in --naive-limit-mib.
// usage: bench_gaussian [--batch B] [--heads H] [--lengths 16,64,...] [--dims 8,32,...]
//                       [--threads T] [--naive-limit-mib M]
//        bench_gaussian --one chunked|naive S Dh B H T    (child mode, prints "ms peak_mib")
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_child.h"
#include "core/attention/fused_attention.h"

using namespace attn;

namespace {

torch::Tensor naive_map(const torch::Tensor& x, double sigma) {
  auto d = x.unsqueeze(-2).unsqueeze(-1) - x.unsqueeze(-3).unsqueeze(-2);  // [B,H,S,S,Dh,Dh]
  return torch::exp(-d * d / (2 * sigma * sigma)).sum(torch::IntArrayRef{-1, -2});
}

int run_one(const std::string& path, int S, int Dh, int B, int H, int threads) {
  torch::set_num_threads(threads);
  torch::manual_seed(1);
  auto x = torch::randn({B, H, S, Dh}, torch::requires_grad());
  auto r = torch::randn({B, H, S, S});
  const bool naive = path == "naive";
  return bench::report_child(
      [&] {
        auto map = naive ? naive_map(x, 1.0) : gaussian_kernel_map_reference(x, 1.0);
        (map * r).sum().backward();
        x.mutable_grad() = torch::Tensor();
      },
      S * Dh >= 4096 ? 2 : 5);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 8 && std::strcmp(argv[1], "--one") == 0)
    return run_one(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]),
                   std::atoi(argv[6]), std::atoi(argv[7]));
  int B = 8, H = 4, threads = 2;
  double naive_limit_mib = 6000;
  std::vector<int> lengths = {16, 32, 64, 128}, dims = {8, 16, 32, 64};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--batch"))
      B = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--heads"))
      H = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--lengths"))
      lengths = bench::parse_int_list(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--dims"))
      dims = bench::parse_int_list(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--threads"))
      threads = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--naive-limit-mib"))
      naive_limit_mib = std::atof(argv[i + 1]);
  }
  std::printf(
      "Gaussian map forward+backward on CPU, B %d, H %d, torch threads %d; naive only "
      "where 4 copies of its 5-D tensor fit in %.0f MiB\n",
      B, H, threads, naive_limit_mib);
  std::printf("%5s %4s | %11s %11s | %11s %11s | %8s %8s\n", "S", "Dh", "chunked ms", "naive ms",
              "chunked MiB", "naive MiB", "t n/c", "m n/c");
  for (int S : lengths)
    for (int Dh : dims) {
      const std::string args = std::to_string(S) + " " + std::to_string(Dh) + " " +
                               std::to_string(B) + " " + std::to_string(H) + " " +
                               std::to_string(threads);
      const bench::Point c = bench::run_child("--one chunked " + args);
      const double naive_mib = 4.0 * B * H * double(S) * S * Dh * Dh * 4 / (1 << 20);
      const bench::Point n =
          naive_mib <= naive_limit_mib ? bench::run_child("--one naive " + args) : bench::Point{};
      std::printf("%5d %4d | %11.2f %11.2f | %11.1f %11.1f | %8.2f %8.2f\n", S, Dh, c.ms, n.ms,
                  c.mib, n.mib, n.ms / c.ms, n.mib / c.mib);
      std::fflush(stdout);
    }
  return 0;
}
