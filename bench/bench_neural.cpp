// Benchmark (prints figures; not a test): Neural Attention's cost on CPU.
//  1. The paper's Table 6 as a sweep over n: one forward + backward of the attention module
//     (B x n x D input, D 256, 4 heads so Dh = 64 like the paper's d, hidden 64, relu, causal)
//     for `dot`, `neural` (the chunked exact split, the mechanism as shipped) and the literal
//     concat form (neural_attention_literal: the [B, H, n, n, 2d'] tensor, where its estimated
//     size fits under --max-literal-mib), at d' = 2, 16 and none. Prints ms and peak MiB with
//     the ratios to dot.
//  2. The docs/design/TARGETS.md CPU figure: one training step (forward, backward, AdamW) of the
//  2-layer
//     causal char LM on fortunes (d128, 4 heads, seq 128, batch 16) with dot, and with neural
//     in the first layer (the paper's placement) and in all layers. Targets: neural at most 6x
//     dot's step time and 1.5x its peak memory.
// Every point runs in a fresh child process, so its peak resident memory (getrusage max RSS)
// belongs to that configuration alone: "peak" is max RSS minus the RSS just before the first
// pass (what the passes themselves allocate); part 2 also prints the process's whole max RSS,
// the measure docs/design/TARGETS.md's anchor figures use. Time, after one warm-up pass: the
// fastest wall time of the timed passes, and the CPU time (user + system, all threads) of that
// pass. On a shared machine the CPU time is the steadier figure: other processes stretch wall time,
// not the work done. usage: bench_neural [--batch B] [--threads T] [--lengths 128,256,...]
// [--max-literal-mib M]
//                     [--skip-module] [--skip-lm] [--lm-steps N]
//        bench_neural --one dot|neural|literal DOWN n B T     (child; DOWN 0 = none)
//        bench_neural --lm dot|first|all DOWN STEPS T CHUNK    (child; CHUNK 0 = default)
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "bench/bench_child.h"
#include "core/attention/neural/neural_attention.h"
#include "core/training/session/session.h"

using namespace attn;
using attn::bench::max_rss_mib;
using attn::bench::rss_mib;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kDModel = 256, kHeads = 4, kHidden = 64;
constexpr int kHeadDim = kDModel / kHeads;

// CPU time (user + system) of the process so far, all threads, in ms.
double cpu_ms() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-3;
}

// Wall and CPU ms of one call.
struct Timing {
  double wall = 0, cpu = 0;
};
template <typename F>
Timing timed(F&& f) {
  const double c0 = cpu_ms();
  const auto t0 = Clock::now();
  f();
  return {std::chrono::duration<double, std::milli>(Clock::now() - t0).count(), cpu_ms() - c0};
}
// The pass with the least wall time: the one least disturbed by other processes.
Timing fastest(const std::vector<Timing>& v) {
  return *std::min_element(v.begin(), v.end(),
                           [](const Timing& a, const Timing& b) { return a.wall < b.wall; });
}

nlohmann::json neural_options(int down, const char* placement) {
  nlohmann::json o = {{"hidden", kHidden}, {"placement", placement}};
  if (down > 0)
    o["down"] = down;
  else
    o["down"] = "none";
  return o;
}

// The literal concat form as a module: the same projections as NeuralAttention (qkv, Wq', Wk',
// out) around neural_attention_literal, so the two differ only in how scores are formed.
struct LiteralNeural {
  int down;
  torch::nn::Linear qkv{kDModel, 3 * kDModel}, out{kDModel, kDModel};
  torch::Tensor query_down, key_down, u, v, hidden_bias, score_weight, score_bias;
  explicit LiteralNeural(int d) : down(d) {
    const int reduced = down > 0 ? down : kHeadDim;
    auto param = [](std::vector<int64_t> shape) {
      return (torch::rand(shape) - 0.5).set_requires_grad(true);
    };
    if (down > 0) {
      query_down = param({kHeads, kHeadDim, reduced});
      key_down = param({kHeads, kHeadDim, reduced});
    }
    u = param({kHeads, kHidden, reduced});
    v = param({kHeads, kHidden, reduced});
    hidden_bias = param({kHeads, kHidden});
    score_weight = param({kHeads, kHidden});
    score_bias = param({kHeads});
  }
  torch::Tensor forward(const torch::Tensor& x) {
    const int64_t B = x.size(0), L = x.size(1);
    auto qkv_out = qkv->forward(x).view({B, L, 3, kHeads, kHeadDim}).permute({2, 0, 3, 1, 4});
    auto q = qkv_out[0], k = qkv_out[1], values = qkv_out[2];
    if (down > 0) {
      q = torch::matmul(q, query_down.unsqueeze(0));
      k = torch::matmul(k, key_down.unsqueeze(0));
    }
    auto y = neural_attention_literal(q, k, u, v, hidden_bias, score_weight, score_bias, values,
                                      NeuralActivation::relu, 1.0 / std::sqrt(kHeadDim), true);
    return out->forward(y.transpose(1, 2).reshape({B, L, kDModel}));
  }
};

// Estimated bytes the literal form holds at its peak, in float32 per (b, head, i, j): C (2d'),
// the hidden pre-activation, the biased pre-activation and the activation (h each, kept for
// backward), and a few n x n score tensors.
double literal_estimate_mib(int down, int n, int B) {
  const int reduced = down > 0 ? down : kHeadDim;
  return static_cast<double>(B) * kHeads * n * n * (2.0 * reduced + 3.0 * kHidden + 4) * 4 /
         (1 << 20);
}

int run_module(const std::string& kind, int down, int n, int B, int threads) {
  torch::set_num_threads(threads);
  torch::manual_seed(1);
  AttentionSpec spec;
  spec.d_model = kDModel;
  spec.heads = kHeads;
  spec.causal = true;
  std::shared_ptr<AttentionModule> module;
  std::unique_ptr<LiteralNeural> literal;
  if (kind == "dot") {
    module = make_attention("dot", spec);
  } else if (kind == "neural") {
    spec.options = neural_options(down, "first-layer");
    module = make_attention("neural", spec);
  } else {
    literal = std::make_unique<LiteralNeural>(down);
  }
  auto x = torch::randn({B, n, kDModel}, torch::requires_grad());
  auto r = torch::randn({B, n, kDModel});
  const double base = rss_mib();
  std::vector<Timing> passes;
  const int count = n >= 1024 || literal ? 2 : 4;
  for (int i = 0; i <= count; ++i) {
    const Timing t = timed([&] {
      auto y = module ? module->forward(x) : literal->forward(x);
      (y * r).sum().backward();
    });
    if (i > 0) passes.push_back(t);  // pass 0 is the warm-up
    x.mutable_grad() = torch::Tensor();
  }
  const Timing best = fastest(passes);
  std::printf("%.3f %.3f %.1f\n", best.wall, best.cpu, max_rss_mib() - base);
  return 0;
}

int run_lm(const std::string& kind, int down, int steps, int threads, int chunk) {
  torch::set_num_threads(threads);
  ExperimentConfig c;
  c.task.name = "text";  // fortunes, the anchor's corpus
  c.task.context = 128;
  c.model.d_model = 128;
  c.model.heads = 4;
  c.model.layers = 2;
  c.model.attention.assign(2, kind == "dot" ? "dot" : "neural");
  if (kind == "first") c.model.attention[1] = "dot";  // the first-layer placement, as resolved
  if (kind != "dot")
    c.model.attention_options["neural"] =
        neural_options(down, kind == "first" ? "first-layer" : "all-layers");
  if (kind != "dot" && chunk > 0) c.model.attention_options["neural"]["chunk"] = chunk;
  c.train.batch_size = 16;
  c.train.steps = 1000000;
  c.train.eval_every = 1000000;
  c.train.eval_batches = 1;
  TrainingSession session(c);
  const double base = rss_mib();
  std::vector<Timing> passes;
  for (int i = 0; i < steps + 2; ++i) {  // two warm-up steps
    const Timing t = timed([&] { session.train_step(); });
    if (i >= 2) passes.push_back(t);
  }
  const Timing best = fastest(passes);
  std::printf("%.3f %.3f %.1f %.1f %lld\n", best.wall, best.cpu, max_rss_mib() - base,
              max_rss_mib(), static_cast<long long>(session.parameters()));
  return 0;
}

std::vector<int> parse_list(const char* s) {
  std::vector<int> v;
  for (const char* p = s; *p;) {
    v.push_back(std::atoi(p));
    p = std::strchr(p, ',');
    if (!p) break;
    ++p;
  }
  return v;
}

// Runs this binary in child mode and reads the numbers it prints (NaN when it failed).
std::vector<double> child(const std::string& args, int count) {
  const std::string cmd = "/proc/" + std::to_string(getpid()) + "/exe " + args;
  std::vector<double> out(count, NAN);
  if (FILE* f = popen(cmd.c_str(), "r")) {
    for (int i = 0; i < count; ++i)
      if (std::fscanf(f, "%lf", &out[i]) != 1) {
        std::fill(out.begin(), out.end(), NAN);
        break;
      }
    pclose(f);
  }
  return out;
}

const char* down_label(int down) {
  static char buf[16];
  if (down == 0) return "none";
  std::snprintf(buf, sizeof buf, "%d", down);
  return buf;
}

void module_sweep(const std::vector<int>& lengths, int B, int threads, double max_literal_mib) {
  std::printf(
      "== 1. attention module forward+backward (Table 6 style): B %d, D %d, %d heads "
      "(Dh %d), hidden %d, relu, causal, torch threads %d\n",
      B, kDModel, kHeads, kHeadDim, kHidden, threads);
  std::printf(
      "   peak = max RSS during the passes minus RSS before them; ratios are to dot at "
      "the same n; '-' = literal form skipped (estimated over %.0f MiB)\n",
      max_literal_mib);
  std::printf("%6s %-16s %5s | %10s %10s %9s | %8s %8s %8s\n", "n", "mechanism", "d'", "wall ms",
              "cpu ms", "peak MiB", "wall/dot", "cpu/dot", "mem/dot");
  auto row = [](int n, const char* name, const char* down, const std::vector<double>& p,
                const std::vector<double>& dot) {
    std::printf("%6d %-16s %5s | %10.2f %10.2f %9.1f | %8.2f %8.2f %8.2f\n", n, name, down, p[0],
                p[1], p[2], p[0] / dot[0], p[1] / dot[1], p[2] / dot[2]);
    std::fflush(stdout);
  };
  const std::string tail = " " + std::to_string(B) + " " + std::to_string(threads);
  for (int n : lengths) {
    const auto dot = child("--one dot 0 " + std::to_string(n) + tail, 3);
    row(n, "dot", "-", dot, dot);
    for (const char* kind : {"neural", "literal"})
      for (int down : {2, 16, 0}) {
        const bool literal = std::strcmp(kind, "literal") == 0;
        const char* name = literal ? "literal concat" : "neural (chunked)";
        if (literal && literal_estimate_mib(down, n, B) > max_literal_mib) {
          std::printf("%6d %-16s %5s | %10s %10s %9s | %8s %8s %8s\n", n, name, down_label(down),
                      "-", "-", "-", "-", "-", "-");
          continue;
        }
        row(n, name, down_label(down),
            child(std::string("--one ") + kind + " " + std::to_string(down) + " " +
                      std::to_string(n) + tail,
                  3),
            dot);
      }
  }
}

void lm_step(int steps, int threads) {
  std::printf(
      "\n== 2. docs/design/TARGETS.md: 2-layer causal char LM training step on fortunes, d128, 4 "
      "heads, seq 128, batch 16, AdamW; fastest of %d steps after 2 warm-up; torch "
      "threads %d\n",
      steps, threads);
  std::printf("   targets: neural <= 6x dot's step time and <= 1.5x its peak memory\n");
  std::printf("%-24s | %9s %9s %9s %10s %8s | %8s %7s %8s %8s\n", "model", "wall ms", "cpu ms",
              "peak MiB", "maxRSS MiB", "params", "wall/dot", "cpu/dot", "peak/dot", "RSS/dot");
  struct Row {
    const char* label;
    const char* kind;
    int down;
    int chunk;  // 0: the mechanism's default (8 query rows per block)
  };
  const Row rows[] = {{"dot", "dot", 0, 0},
                      {"neural first-layer d'=2", "first", 2, 0},
                      {"neural first-layer none", "first", 0, 0},
                      {"neural all-layers d'=2", "all", 2, 0},
                      {"neural all-layers none", "all", 0, 0},
                      {"neural first d'=2 chunk 32", "first", 2, 32},
                      {"neural all d'=2 chunk 32", "all", 2, 32}};
  std::vector<double> dot;
  for (const Row& row : rows) {
    const auto p = child(std::string("--lm ") + row.kind + " " + std::to_string(row.down) + " " +
                             std::to_string(steps) + " " + std::to_string(threads) + " " +
                             std::to_string(row.chunk),
                         5);
    if (dot.empty()) dot = p;
    std::printf("%-24s | %9.2f %9.2f %9.1f %10.1f %8.0f | %8.2f %7.2f %8.2f %8.2f\n", row.label,
                p[0], p[1], p[2], p[3], p[4], p[0] / dot[0], p[1] / dot[1], p[2] / dot[2],
                p[3] / dot[3]);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 7 && std::strcmp(argv[1], "--one") == 0)
    return run_module(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]),
                      std::atoi(argv[6]));
  if (argc == 7 && std::strcmp(argv[1], "--lm") == 0)
    return run_lm(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]),
                  std::atoi(argv[6]));
  int B = 2, threads = 2, lm_steps = 10;
  double max_literal_mib = 2000;
  bool skip_module = false, skip_lm = false;
  std::vector<int> lengths = {128, 256, 512, 1024};
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--skip-module"))
      skip_module = true;
    else if (!std::strcmp(argv[i], "--skip-lm"))
      skip_lm = true;
    else if (!std::strcmp(argv[i], "--batch") && has_value)
      B = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--threads") && has_value)
      threads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--lengths") && has_value)
      lengths = parse_list(argv[++i]);
    else if (!std::strcmp(argv[i], "--lm-steps") && has_value)
      lm_steps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--max-literal-mib") && has_value)
      max_literal_mib = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "bench_neural: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (!skip_module) module_sweep(lengths, B, threads, max_literal_mib);
  if (!skip_lm) lm_step(lm_steps, threads);
  return 0;
}
