// Benchmark (prints figures; not a test) for the fused CUDA kernels, on the GPU machine.
// For each kernel and shape: forward, and forward + backward, of
//   fused     the kernel (core/kernels/),
//   chunked   the LibTorch reference path (core/attention/fused_attention.h, windowed_attention),
//   naive     the papers' literal formula in LibTorch (where it fits in memory),
//   dot       dot-product attention, at::matmul + softmax (and SDPA when the LibTorch has it).
// Time: CUDA events on the current stream, 5 warm-ups, median of 50 samples, each the mean of 10
// back-to-back calls, inputs rotated over 4 sets so repeated runs do not measure the cache. Memory:
// the caching allocator's peak during one forward + backward, minus what was allocated before it.
// Roofline: the bound that applies (special-function rate for Gaussian, FP32 rate for Neural,
// memory bandwidth for KY, measured with a device-to-device copy in the same run). usage: bench_gpu
// [--quick] [--only gaussian|neural|ky] [--json FILE]
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/attention/cuda_ops.h"
#include "core/attention/fused_attention.h"
#include "core/attention/ky/ky_attention.h"

using namespace attn;
using Inputs = std::vector<torch::Tensor>;
using Op = std::function<torch::Tensor(const Inputs&)>;

namespace {

int g_runs = 50;

struct Measure {
  double fwd_ms = NAN, train_ms = NAN, peak_mib = NAN;
  std::string note;
};

cudaStream_t stream() {
  return at::cuda::getCurrentCUDAStream().stream();
}

// Median over runs of the mean time of `batch` back-to-back calls of body(call index), timed
// with events. Back to back, the host's per-call work (autograd bookkeeping, launches) overlaps
// the device's, so short kernels are timed as they run inside a training step.
double median_ms(const std::function<void(int)>& body, int runs, int batch = 10) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < 5; ++i) body(i);
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    cudaEventRecord(a, stream());
    for (int k = 0; k < batch; ++k) body(i * batch + k);
    cudaEventRecord(b, stream());
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms / batch);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// sets: rotated input sets (leaves with requires_grad where a gradient is wanted).
Measure measure(const Op& op, const std::vector<Inputs>& sets, bool fused) {
  Measure m;
  set_fused_kernels_enabled(fused);
  try {
    {
      torch::NoGradGuard no_grad;
      m.fwd_ms = median_ms([&](int i) { op(sets[i % sets.size()]); }, g_runs);
    }
    auto step = [&](int i) {
      auto& in = sets[i % sets.size()];
      auto out = op(in);
      out.backward(torch::ones_like(out));
      for (auto& t : in)
        if (t.grad().defined()) t.mutable_grad().reset();
    };
    m.train_ms = median_ms(step, g_runs);
    torch::cuda::synchronize();
    const int64_t before = cuda::memory_allocated();
    cuda::reset_peak_memory();
    step(0);
    torch::cuda::synchronize();
    m.peak_mib = (cuda::peak_memory_allocated() - before) / double(1 << 20);
  } catch (const std::exception& e) {
    m.note = std::string(e.what()).substr(0, 60);
    for (char& c : m.note)
      if (c == '\n') c = ' ';
  }
  set_fused_kernels_enabled(true);
  c10::cuda::CUDACachingAllocator::emptyCache();
  return m;
}

std::vector<Inputs> make_sets(const std::vector<std::vector<int64_t>>& shapes,
                              const std::vector<bool>& grad, int count = 4) {
  std::vector<Inputs> sets;
  for (int s = 0; s < count; ++s) {
    Inputs in;
    for (size_t i = 0; i < shapes.size(); ++i)
      in.push_back(torch::randn(shapes[i], torch::dtype(torch::kFloat).device(torch::kCUDA))
                       .requires_grad_(grad[i]));
    sets.push_back(in);
  }
  return sets;
}

torch::Tensor dot_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                            bool causal) {
  auto s = torch::matmul(q, k.transpose(-1, -2)) / std::sqrt(double(q.size(-1)));
  if (causal) {
    const int64_t L = q.size(-2);
    s = s.masked_fill(torch::ones({L, L}, torch::dtype(torch::kBool).device(q.device())).triu(1),
                      -INFINITY);
  }
  return torch::matmul(torch::softmax(s, -1), v);
}

struct Row {
  std::string kernel, shape, path;
  Measure m;
  double roofline_pct = NAN;
};
std::vector<Row> g_rows;

void report(const std::string& kernel, const std::string& shape, const std::string& path,
            const Measure& m, double roofline_pct = NAN) {
  g_rows.push_back({kernel, shape, path, m, roofline_pct});
  std::printf("%-9s %-30s %-10s %10.3f %10.3f %10.1f %8s %s\n", kernel.c_str(), shape.c_str(),
              path.c_str(), m.fwd_ms, m.train_ms, m.peak_mib,
              std::isnan(roofline_pct) ? "" : (std::to_string(int(roofline_pct)) + "%").c_str(),
              m.note.c_str());
  std::fflush(stdout);
}

double copy_bandwidth_gbs() {
  auto a = torch::empty({int64_t(1) << 28}, torch::dtype(torch::kFloat).device(torch::kCUDA));
  auto b = torch::empty_like(a);
  a.uniform_();
  const double ms = median_ms([&](int) { b.copy_(a); }, 20, 1);
  return 2.0 * a.numel() * 4 / (ms * 1e-3) / 1e9;
}

int device_attr(cudaDeviceAttr attr) {
  int v = 0, dev = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&v, attr, dev);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string json_path, only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--json") && i + 1 < argc)
      json_path = argv[++i];
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc)
      only = argv[++i];
    else {
      std::fprintf(stderr,
                   "bench_gpu: unknown argument %s\n"
                   "usage: bench_gpu [--quick] [--only gaussian|neural|ky] [--json FILE]\n",
                   argv[i]);
      return 2;
    }
  }
  if (!fused_kernels_available()) {
    std::fprintf(stderr, "bench_gpu: no CUDA device or no kernels in this build\n");
    return 2;
  }
  if (quick) g_runs = 10;
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  const int sms = prop.multiProcessorCount;
  const double clock_ghz = device_attr(cudaDevAttrClockRate) / 1e6;
  const double bw = copy_bandwidth_gbs();
  std::printf("device: %s, %d SMs, %.2f GHz max clock, measured copy bandwidth %.0f GB/s\n",
              prop.name, sms, clock_ghz, bw);
  std::printf("%-9s %-30s %-10s %10s %10s %10s %8s\n", "kernel", "shape", "path", "fwd ms",
              "fwd+bwd ms", "peak MiB", "roofline");

  // ---- Gaussian-MHSA: B=100, S=64, D=256 (8 heads of 32), then longer sequences ----
  auto wanted = [&](const char* kernel) { return only.empty() || only == kernel; };
  for (int64_t S : !wanted("gaussian") ? std::vector<int64_t>{}
                   : quick             ? std::vector<int64_t>{64}
                                       : std::vector<int64_t>{64, 256, 1024}) {
    const int64_t B = S == 64 ? 100 : (S == 256 ? 16 : 2), H = 8, Dh = 32;
    const std::string shape = "B" + std::to_string(B) + " H8 S" + std::to_string(S) + " Dh32";
    auto sets = make_sets({{B, H, S, Dh}}, {true});
    Op op = [](const Inputs& t) { return gaussian_kernel_map(t[0], 1.0); };
    const auto fused = measure(op, sets, true);
    // Symmetric halving: S(S+1)/2 pairs of Dh^2 exponentials; special-function unit 16/clk/SM.
    const double exps = double(B) * H * S * (S + 1) / 2 * Dh * Dh;
    const double bound_ms = exps / (16.0 * sms * clock_ghz * 1e9) * 1e3;
    report("gaussian", shape, "fused", fused, bound_ms / fused.fwd_ms * 100);
    report("gaussian", shape, "chunked", measure(op, sets, false));
    Op naive = [](const Inputs& t) {
      auto a = t[0].unsqueeze(-2).unsqueeze(-1), b = t[0].unsqueeze(-3).unsqueeze(-2);
      auto d = a - b;
      return torch::exp(-d * d / 2.0).sum(torch::IntArrayRef{-1, -2});
    };
    if (double(B) * H * S * S * Dh * Dh * 4 * 4 < 60e9)
      report("gaussian", shape, "naive", measure(naive, sets, false));
    else
      report("gaussian", shape, "naive", Measure{NAN, NAN, NAN, "5-D tensor over 60 GB: skipped"});
    auto qkv = make_sets({{B, H, S, Dh}, {B, H, S, Dh}, {B, H, S, Dh}}, {true, true, true});
    Op dot = [](const Inputs& t) { return dot_attention(t[0], t[1], t[2], false); };
    report("gaussian", shape, "dot", measure(dot, qkv, false));
  }

  // ---- Neural attention: no down-projection, hidden 64, n = 1024 and longer ----
  for (int64_t N : !wanted("neural") ? std::vector<int64_t>{}
                   : quick           ? std::vector<int64_t>{1024}
                                     : std::vector<int64_t>{1024, 2048, 4096}) {
    const int64_t B = 8, H = 8, Dh = 64, C = 64;
    const std::string shape = "B8 H8 n" + std::to_string(N) + " Dh64 h64";
    auto sets = make_sets({{B, H, N, C}, {B, H, N, C}, {H, C}, {H}, {B, H, N, Dh}},
                          {true, true, true, false, true});
    const double scale = 1.0 / 8.0;
    Op op = [&](const Inputs& t) {
      return neural_attention(t[0], t[1], t[2], t[3], t[4], NeuralActivation::relu, scale, true);
    };
    const auto fused = measure(op, sets, true);
    // Per causal pair: h x (add, max, fma) + Dv fma; FP32 at 128 lanes x 2 flops/clk/SM.
    const double flops = double(B) * H * N * (N + 1) / 2 * (4.0 * C + 2.0 * Dh);
    const double bound_ms = flops / (256.0 * sms * clock_ghz * 1e9) * 1e3;
    report("neural", shape, "fused", fused, bound_ms / fused.fwd_ms * 100);
    report("neural", shape, "chunked", measure(op, sets, false));
    Op literal = [&](const Inputs& t) {
      auto z = torch::relu(t[0].unsqueeze(3) + t[1].unsqueeze(2));  // [B,H,n,n,h]
      auto s = (z * t[2].view({1, H, 1, 1, C})).sum(-1) + t[3].view({1, H, 1, 1});
      const int64_t L = t[0].size(2);
      s = (s * scale).masked_fill(
          torch::ones({L, L}, torch::dtype(torch::kBool).device(s.device())).triu(1), -INFINITY);
      return torch::matmul(torch::softmax(s, -1), t[4]);
    };
    if (double(B) * H * N * N * C * 4 * 3 < 60e9)
      report("neural", shape, "naive", measure(literal, sets, false));
    else
      report("neural", shape, "naive",
             Measure{NAN, NAN, NAN, "n x n x h tensor over 60 GB: skipped"});
    auto qkv = make_sets({{B, H, N, Dh}, {B, H, N, Dh}, {B, H, N, Dh}}, {true, true, true});
    Op dot = [](const Inputs& t) { return dot_attention(t[0], t[1], t[2], true); };
    report("neural", shape, "dot", measure(dot, qkv, false));
#if defined(TORCH_VERSION_MAJOR) && TORCH_VERSION_MAJOR >= 2
    Op sdpa = [](const Inputs& t) {
      return at::scaled_dot_product_attention(t[0], t[1], t[2], {}, 0.0, true);
    };
    report("neural", shape, "sdpa", measure(sdpa, qkv, false));
#endif
  }

  // ---- KY window: L = 4096, W = 15, and longer ----
  for (int64_t L : !wanted("ky") ? std::vector<int64_t>{}
                   : quick       ? std::vector<int64_t>{4096}
                                 : std::vector<int64_t>{4096, 16384}) {
    const int64_t B = 8, H = 8, Dh = 64;
    const int W = 15;
    const std::string shape = "B8 H8 L" + std::to_string(L) + " Dh64 W15";
    auto sets =
        make_sets({{B, H, L, Dh}, {B, H, L, Dh}, {B, H, L, Dh}, {H, W}}, {true, true, true, true});
    Op op = [&](const Inputs& t) {
      return windowed_attention(t[0], t[1], t[2], t[3], W, W - 1, true);
    };
    const auto fused = measure(op, sets, true);
    // Fewest bytes: read q, k, v and write out (+ the row statistics).
    const double bytes = 4.0 * B * H * L * Dh * 4 + B * H * L * 4.0;
    const double bound_ms = bytes / (bw * 1e9) * 1e3;
    report("ky", shape, "fused", fused, bound_ms / fused.fwd_ms * 100);
    report("ky", shape, "chunked", measure(op, sets, false));
    auto qkv = make_sets({{B, H, L, Dh}, {B, H, L, Dh}, {B, H, L, Dh}}, {true, true, true});
    Op dot = [](const Inputs& t) { return dot_attention(t[0], t[1], t[2], true); };
    report("ky", shape, "dot", measure(dot, qkv, false));
#if defined(TORCH_VERSION_MAJOR) && TORCH_VERSION_MAJOR >= 2
    Op sdpa = [](const Inputs& t) {
      return at::scaled_dot_product_attention(t[0], t[1], t[2], {}, 0.0, true);
    };
    report("ky", shape, "sdpa", measure(sdpa, qkv, false));
#endif
  }

  if (!json_path.empty()) {
    nlohmann::json j;
    j["device"] = prop.name;
    j["copy_bandwidth_gbs"] = bw;
    j["sm_count"] = sms;
    j["clock_ghz"] = clock_ghz;
    for (const auto& r : g_rows) {
      auto num = [](double v) { return std::isnan(v) ? nlohmann::json() : nlohmann::json(v); };
      j["rows"].push_back({{"kernel", r.kernel},
                           {"shape", r.shape},
                           {"path", r.path},
                           {"forward_ms", num(r.m.fwd_ms)},
                           {"train_ms", num(r.m.train_ms)},
                           {"peak_mib", num(r.m.peak_mib)},
                           {"roofline_pct", num(r.roofline_pct)},
                           {"note", r.m.note}});
    }
    std::ofstream(json_path) << j.dump(2) << "\n";
  }
  return 0;
}
