// The fused CPU kernels (core/kernels/cpu_kernels.h) against the LibTorch references they
// replace (computed by other code: chunked autograd-free reference and autograd of the literal
// form) and against central finite differences in float64.
#include <doctest/doctest.h>

#include "core/attention/attention.h"
#include "core/attention/fused_attention.h"
#include "core/kernels/cpu_kernels.h"
#include "core/kernels/cpu_math.h"
#include "core/random/run_random.h"

using namespace attn;

namespace {

// The largest difference relative to the largest magnitude of the reference b (gradients mix
// signs, so entries near zero carry only rounding).
double max_rel_diff(const torch::Tensor& a, const torch::Tensor& b) {
  auto ad = a.to(torch::kDouble), bd = b.to(torch::kDouble);
  return (ad - bd).abs().max().item<double>() / std::max(1e-12, bd.abs().max().item<double>());
}

// The literal [B, H, S, S, Dh, Dh] form: autograd gives its gradient independently of both the
// chunked reference's hand-written backward and the kernel's.
torch::Tensor gaussian_literal(const torch::Tensor& x, double sigma) {
  auto k = x.unsqueeze(3).unsqueeze(5) - x.unsqueeze(2).unsqueeze(4);
  return torch::exp(-k.pow(2) / (2 * sigma * sigma)).sum({4, 5});
}

struct Shape {
  int64_t B, H, S, Dh;
  double sigma;
};
const Shape kShapes[] = {{1, 1, 1, 1, 1.0},
                         {2, 3, 13, 5, 0.7},
                         {1, 2, 33, 8, 1.3},
                         {2, 1, 9, 16, 0.4},
                         {1, 1, 64, 3, 2.0}};

}  // namespace

TEST_CASE("cpu exp: within a few ulp of std::exp on [-87, 0]; NaN stays NaN, -inf gives ~0") {
  double worst = 0;
  for (int i = 0; i <= 200000; ++i) {
    const float x = -87.0f * static_cast<float>(i) / 200000.0f;
    const double want = std::exp(static_cast<double>(x));
    worst = std::max(worst, std::abs(cpu::exp_nonpositive(x) - want) / want);
  }
  CHECK(worst < 3e-7);  // ~2.5 float ulp
  CHECK(std::isnan(cpu::exp_nonpositive(std::nanf(""))));
  const float tiny = cpu::exp_nonpositive(-INFINITY);
  CHECK((tiny >= 0 && tiny < 1e-37f));
  CHECK(cpu::exp_nonpositive(0.0f) == 1.0f);
}

TEST_CASE("cpu gaussian map: forward and gradient match the literal form (float64, float32)") {
  torch::manual_seed(21);
  for (const auto& sh : kShapes) {
    for (const auto dtype : {torch::kDouble, torch::kFloat}) {
      CAPTURE(sh.S);
      CAPTURE(sh.Dh);
      CAPTURE(dtype);
      const double tol = dtype == torch::kDouble ? 1e-11 : 2e-5;
      auto x0 = torch::randn({sh.B, sh.H, sh.S, sh.Dh}, torch::kDouble);
      auto upstream = torch::randn({sh.B, sh.H, sh.S, sh.S}, torch::kDouble);  // not symmetric
      auto xl = x0.clone().requires_grad_(true);
      auto literal = gaussian_literal(xl, sh.sigma);
      (literal * upstream).sum().backward();
      auto xk = x0.to(dtype).requires_grad_(true);
      auto kernel = cpu::gaussian_map(xk, sh.sigma);
      (kernel * upstream.to(dtype)).sum().backward();
      REQUIRE(kernel.sizes() == literal.sizes());
      CHECK(max_rel_diff(kernel, literal) < tol);
      CHECK(max_rel_diff(xk.grad(), xl.grad()) < (dtype == torch::kDouble ? 1e-11 : 2e-5));
      // The chunked reference (a second, independent implementation) agrees as well.
      CHECK(max_rel_diff(kernel, gaussian_kernel_map_reference(x0.to(dtype), sh.sigma)) < tol);
    }
  }
}

TEST_CASE("cpu gaussian map: gradient against central finite differences (float64)") {
  torch::manual_seed(5);
  const double sigma = 0.8, h = 1e-5;
  auto x = torch::randn({2, 2, 7, 4}, torch::kDouble);
  auto upstream = torch::randn({2, 2, 7, 7}, torch::kDouble);
  auto loss = [&](const torch::Tensor& t) {
    return (cpu::gaussian_map(t, sigma) * upstream).sum().item<double>();
  };
  auto xg = x.clone().requires_grad_(true);
  (cpu::gaussian_map(xg, sigma) * upstream).sum().backward();
  auto analytic = xg.grad();
  auto numeric = torch::empty_like(x);
  for (int64_t i = 0; i < x.numel(); ++i) {
    auto plus = x.clone(), minus = x.clone();
    plus.view({-1})[i] += h;
    minus.view({-1})[i] -= h;
    numeric.view({-1})[i] = (loss(plus) - loss(minus)) / (2 * h);
  }
  CHECK(max_rel_diff(analytic, numeric) < 1e-7);
}

TEST_CASE("cpu gaussian map: the dispatcher takes it on the CPU; off, the reference") {
  torch::manual_seed(8);
  auto x = torch::randn({1, 2, 10, 4});
  auto fused = gaussian_kernel_map(x, 0.9);
  set_fused_kernels_enabled(false);
  auto reference = gaussian_kernel_map(x, 0.9);
  set_fused_kernels_enabled(true);
  CHECK(max_rel_diff(fused, reference) < 2e-5);
  CHECK(torch::equal(fused, cpu::gaussian_map(x, 0.9)));  // the kernel, not the reference
  CHECK_THROWS_WITH(cpu::gaussian_map(x, -1.0), doctest::Contains("sigma must be finite and > 0"));
}

TEST_CASE("cpu neural scores: attention and every gradient match the chunked reference") {
  torch::manual_seed(22);
  struct Case {
    int64_t B, H, n, C, Dv;
    bool causal;
  };
  for (const Case& c : {Case{2, 3, 11, 7, 5, true}, Case{1, 2, 17, 16, 4, false},
                        Case{1, 1, 1, 3, 2, true}, Case{2, 4, 33, 64, 8, true}}) {
    for (const auto dtype : {torch::kDouble, torch::kFloat}) {
      CAPTURE(c.n);
      CAPTURE(c.causal);
      CAPTURE(dtype);
      const auto o = torch::TensorOptions().dtype(dtype);
      std::vector<torch::Tensor> ins = {torch::randn({c.B, c.H, c.n, c.C}, o),
                                        torch::randn({c.B, c.H, c.n, c.C}, o),
                                        torch::randn({c.H, c.C}, o), torch::randn({c.H}, o),
                                        torch::randn({c.B, c.H, c.n, c.Dv}, o)};
      auto upstream = torch::randn({c.B, c.H, c.n, c.Dv}, o);
      auto run = [&](bool fused) {
        std::vector<torch::Tensor> t;
        for (const auto& x : ins) t.push_back(x.clone().requires_grad_(true));
        torch::Tensor weights;
        auto y =
            fused ? neural_attention(t[0], t[1], t[2], t[3], t[4], NeuralActivation::relu, 0.3,
                                     c.causal, &weights)
                  : neural_attention_reference(t[0], t[1], t[2], t[3], t[4], NeuralActivation::relu,
                                               0.3, c.causal, 4, &weights);
        (y * upstream).sum().backward();
        std::vector<torch::Tensor> out = {y.detach(), weights.detach()};
        for (const auto& x : t) out.push_back(x.grad());
        return out;
      };
      REQUIRE(neural_cpu_kernel_applies(ins[0], NeuralActivation::relu));
      const auto fused = run(true), reference = run(false);
      const double tol = dtype == torch::kDouble ? 1e-11 : 2e-5;
      const std::string names[] = {"y", "weights", "dp", "dr", "dw", "db", "dv"};
      for (size_t i = 0; i < fused.size(); ++i) {
        CAPTURE(names[i]);
        if (names[i] == "db")  // softmax is shift-invariant: 0 up to rounding in both
          CHECK(fused[i].abs().max().item<double>() < tol);
        else
          CHECK(max_rel_diff(fused[i], reference[i]) < tol);
      }
    }
  }
  CHECK_FALSE(neural_cpu_kernel_applies(torch::zeros({1}), NeuralActivation::gelu));
}

TEST_CASE("cpu neural scores: dropout and ALiBi on the kernel's path match the reference") {
  torch::manual_seed(24);
  for (const bool causal : {true, false}) {
    for (const auto dtype : {torch::kDouble, torch::kFloat}) {
      CAPTURE(causal);
      CAPTURE(dtype);
      const auto o = torch::TensorOptions().dtype(dtype);
      const int64_t B = 2, H = 3, n = 9, C = 6, Dv = 4;
      std::vector<torch::Tensor> ins = {torch::randn({B, H, n, C}, o),
                                        torch::randn({B, H, n, C}, o), torch::randn({H, C}, o),
                                        torch::randn({H}, o), torch::randn({B, H, n, Dv}, o)};
      const auto keep = (torch::rand({B, H, n, n}, o) > 0.25).to(dtype) / 0.75;
      const auto slopes = torch::tensor({0.5, 0.25, 0.125}, o);
      REQUIRE(neural_cpu_kernel_applies(ins[0], NeuralActivation::relu));  // the kernel's branch
      auto upstream = torch::randn({B, H, n, Dv}, o);
      auto run = [&](bool kernel) {
        std::vector<torch::Tensor> t;
        for (const auto& x : ins) t.push_back(x.clone().requires_grad_(true));
        auto y = kernel ? neural_attention(t[0], t[1], t[2], t[3], t[4], NeuralActivation::relu,
                                           0.4, causal, nullptr, keep, slopes)
                        : neural_attention_reference(t[0], t[1], t[2], t[3], t[4],
                                                     NeuralActivation::relu, 0.4, causal, 4,
                                                     nullptr, keep, slopes);
        (y * upstream).sum().backward();
        std::vector<torch::Tensor> out = {y.detach()};
        for (size_t i = 0; i < t.size(); ++i)
          if (i != 3) out.push_back(t[i].grad());  // db: 0 up to rounding in both
        return out;
      };
      const auto kernel = run(true), reference = run(false);
      const double tol = dtype == torch::kDouble ? 1e-11 : 2e-5;
      for (size_t i = 0; i < kernel.size(); ++i) {
        CAPTURE(i);
        CHECK(max_rel_diff(kernel[i], reference[i]) < tol);
      }
      // Both did something: without them the output differs.
      auto plain = neural_attention(ins[0], ins[1], ins[2], ins[3], ins[4], NeuralActivation::relu,
                                    0.4, causal);
      CHECK(max_rel_diff(plain, kernel[0]) > 1e-2);
    }
  }
}

TEST_CASE("cpu neural scores: gradient against finite differences; a scorer shared by heads") {
  torch::manual_seed(23);
  const double h = 1e-6;
  const auto o = torch::TensorOptions().dtype(torch::kDouble);
  auto p = torch::randn({1, 2, 6, 5}, o), r = torch::randn({1, 2, 6, 5}, o);
  auto shared = torch::randn({1, 5}, o);  // one scorer, broadcast over the two heads
  auto upstream = torch::randn({1, 2, 6, 6}, o);
  auto loss = [&](const torch::Tensor& pp, const torch::Tensor& rr, const torch::Tensor& ww) {
    return (cpu::neural_relu_scores(pp, rr, ww.expand({2, 5}), true) * upstream).sum();
  };
  std::vector<torch::Tensor> t = {p.clone().requires_grad_(true), r.clone().requires_grad_(true),
                                  shared.clone().requires_grad_(true)};
  loss(t[0], t[1], t[2]).backward();
  for (int which = 0; which < 3; ++which) {
    CAPTURE(which);
    auto numeric = torch::empty_like(t[which]);
    for (int64_t i = 0; i < numeric.numel(); ++i) {
      std::vector<torch::Tensor> plus = {p.clone(), r.clone(), shared.clone()};
      std::vector<torch::Tensor> minus = {p.clone(), r.clone(), shared.clone()};
      plus[which].view({-1})[i] += h;
      minus[which].view({-1})[i] -= h;
      numeric.view({-1})[i] = (loss(plus[0], plus[1], plus[2]).item<double>() -
                               loss(minus[0], minus[1], minus[2]).item<double>()) /
                              (2 * h);
    }
    CHECK(max_rel_diff(t[which].grad(), numeric) < 1e-7);
  }
  // The scores themselves against the definition, with the masked upper triangle zero.
  auto literal = (torch::relu(p.unsqueeze(3) + r.unsqueeze(2)) * shared.view({1, 1, 1, 1, 5}))
                     .sum(-1)
                     .masked_fill(torch::ones({6, 6}, torch::kBool).triu(1), 0);
  CHECK(max_rel_diff(cpu::neural_relu_scores(p, r, shared.expand({2, 5}), true), literal) < 1e-12);
}

namespace {

// Dot attention written independently of both the kernel and dot_attention.cpp: the projection
// split by heads, the causal mask as -inf, LibTorch's softmax; autograd gives its gradient.
torch::Tensor packed_attention_literal(const torch::Tensor& qkv, int64_t H, bool causal,
                                       const torch::Tensor& keep = torch::Tensor()) {
  const int64_t B = qkv.size(0), L = qkv.size(1), D = qkv.size(2) / 3, Dh = D / H;
  auto heads = qkv.view({B, L, 3, H, Dh}).permute({2, 0, 3, 1, 4});  // [3, B, H, L, Dh]
  auto scores = torch::einsum("bhid,bhjd->bhij", {heads[0], heads[1]}) / std::sqrt(double(Dh));
  if (causal) scores = scores.masked_fill(torch::ones({L, L}, torch::kBool).triu(1), -INFINITY);
  auto weights = torch::softmax(scores, -1);
  if (keep.defined()) weights = weights * keep;
  auto y = torch::einsum("bhij,bhjd->bhid", {weights, heads[2]});
  return y.permute({0, 2, 1, 3}).reshape({B, L, D});
}

}  // namespace

TEST_CASE("cpu packed softmax attention: output and gradient match the literal form") {
  torch::manual_seed(31);
  struct Case {
    int64_t B, L, H, Dh;
    bool causal;
  };
  for (const Case& c :
       {Case{2, 7, 3, 5, true}, Case{1, 1, 1, 1, true}, Case{3, 13, 2, 8, false},
        Case{2, 64, 4, 16, true}, Case{1, 33, 4, 32, true}, Case{1, 21, 2, 16, false},
        Case{2, 19, 2, 64, true}, Case{1, 6, 1, 64, false}}) {
    for (const auto dtype : {torch::kDouble, torch::kFloat}) {
      CAPTURE(c.L);
      CAPTURE(c.Dh);
      CAPTURE(c.causal);
      CAPTURE(dtype);
      const auto o = torch::TensorOptions().dtype(dtype);
      // Large logits (x3) so that the softmax is far from uniform and the mask matters.
      auto qkv0 = torch::randn({c.B, c.L, 3 * c.H * c.Dh}, o) * 3;
      auto upstream = torch::randn({c.B, c.L, c.H * c.Dh}, o);
      // Dropout's scaled mask (p = 0.3) on every other case.
      torch::Tensor keep;
      if (c.L % 2 == 1) keep = (torch::rand({c.B, c.H, c.L, c.L}, o) > 0.3).to(dtype) / 0.7;
      auto a = qkv0.clone().requires_grad_(true), b = qkv0.clone().requires_grad_(true);
      auto fused = cpu::packed_softmax_attention(a, c.H, c.causal, keep);
      auto literal = packed_attention_literal(b, c.H, c.causal, keep);
      (fused * upstream).sum().backward();
      (literal * upstream).sum().backward();
      const double tol = dtype == torch::kDouble ? 1e-12 : 3e-5;
      REQUIRE(fused.sizes() == literal.sizes());
      CHECK(max_rel_diff(fused, literal) < tol);
      CHECK(max_rel_diff(a.grad(), b.grad()) < tol);
    }
  }
}

TEST_CASE("cpu packed softmax attention: gradient against central finite differences") {
  torch::manual_seed(32);
  const double h = 1e-6;
  // Head width 3 takes the plain loops, 16 the register-blocked ones.
  for (const auto& [causal, Dh] : {std::pair{true, 3}, std::pair{false, 3}, std::pair{true, 16}}) {
    CAPTURE(causal);
    CAPTURE(Dh);
    auto qkv = torch::randn({2, 5, 3 * 2 * Dh}, torch::kDouble) * 2;
    auto upstream = torch::randn({2, 5, 2 * Dh}, torch::kDouble);
    auto loss = [&](const torch::Tensor& t) {
      return (cpu::packed_softmax_attention(t, 2, causal) * upstream).sum();
    };
    auto g = qkv.clone().requires_grad_(true);
    loss(g).backward();
    auto numeric = torch::empty_like(qkv);
    for (int64_t i = 0; i < qkv.numel(); ++i) {
      auto plus = qkv.clone(), minus = qkv.clone();
      plus.view({-1})[i] += h;
      minus.view({-1})[i] -= h;
      numeric.view({-1})[i] = (loss(plus).item<double>() - loss(minus).item<double>()) / (2 * h);
    }
    CHECK(max_rel_diff(g.grad(), numeric) < 1e-7);
  }
  CHECK_THROWS_WITH(cpu::packed_softmax_attention(torch::zeros({1, 4, 10}), 2, true),
                    doctest::Contains("3 * heads * Dh"));
}

TEST_CASE("dot attention takes the packed kernel on the CPU and computes what the reference does") {
  // The mechanism end to end: the same module with the kernels on and off (reference: LibTorch's
  // matmul/softmax chain in softmax_attention) gives the same output and parameter gradients,
  // without dropout and with it (in training, the same stream giving the same mask).
  torch::manual_seed(33);
  AttentionSpec spec;
  spec.d_model = 24;
  spec.heads = 3;
  auto module = make_dot_attention(spec);
  spec.dropout = 0.25;
  auto dropped = make_dot_attention(spec);
  dropped->train();
  auto x = torch::randn({2, 11, 24});
  auto run = [&](AttentionModule& m, bool fused) {
    set_fused_kernels_enabled(fused);
    torch::Generator stream = make_private_generator(torch::kCPU, 77);
    DropoutStreamScope scope(&stream);
    m.zero_grad();
    auto y = m.forward(x);
    (y * y).sum().backward();
    std::vector<torch::Tensor> out = {y.detach()};
    for (const auto& p : m.parameters()) out.push_back(p.grad().clone());
    set_fused_kernels_enabled(true);
    return out;
  };
  torch::Tensor dropped_output;
  for (AttentionModule* m : {module.get(), dropped.get()}) {
    CAPTURE(m == dropped.get());
    const auto fused = run(*m, true), reference = run(*m, false);
    if (m == dropped.get()) dropped_output = fused[0];
    REQUIRE(fused.size() == reference.size());
    for (size_t i = 0; i < fused.size(); ++i) {
      CAPTURE(i);
      CHECK(max_rel_diff(fused[i], reference[i]) < 3e-5);
    }
  }
  // The kernels-on output is the kernel's, not the reference's: the projections around
  // cpu::packed_softmax_attention give it bit for bit.
  auto params = module->named_parameters();
  torch::NoGradGuard no_grad;
  auto qkv = torch::nn::functional::linear(x, params["qkv.weight"], params["qkv.bias"]);
  auto direct = torch::nn::functional::linear(cpu::packed_softmax_attention(qkv, 3, true),
                                              params["out.weight"], params["out.bias"]);
  CHECK(torch::equal(module->forward(x), direct));
  dropped->eval();  // the mask did something: without it the output differs
  CHECK(max_rel_diff(dropped->forward(x), dropped_output) > 1e-2);
  // Recording the weights (the probe) takes the reference, which returns them.
  module->record_weights = true;
  module->forward(x);
  CHECK(module->recorded_weights.sizes() == torch::IntArrayRef({2, 3, 11, 11}));
  module->record_weights = false;
}

TEST_CASE("dot attention: an intervention that only captures takes the packed kernel") {
  // Attribution patching captures every head's output in the graph and differentiates a metric
  // with respect to it: on the kernel, the captured [B, H, L, Dh] outputs and their gradients
  // equal the reference path's, and the output still depends on them.
  torch::manual_seed(35);
  AttentionSpec spec;
  spec.d_model = 24;
  spec.heads = 3;
  auto module = make_dot_attention(spec);
  module->eval();
  auto x = torch::randn({2, 9, 24});
  auto run = [&](bool fused) {
    set_fused_kernels_enabled(fused);
    reset_fused_path_taken();
    module->intervention = std::make_shared<HeadIntervention>();
    module->intervention->capture = true;
    module->intervention->keep_graph = true;
    const torch::Tensor y = module->forward(x);
    const torch::Tensor z = module->intervention->captured;
    const torch::Tensor g = torch::autograd::grad({(y * y).sum()}, {z})[0];
    module->intervention.reset();
    const bool took = fused_path_taken();
    set_fused_kernels_enabled(true);
    return std::make_tuple(z.detach(), g, took);
  };
  const auto [z_fused, g_fused, took_fused] = run(true);
  const auto [z_ref, g_ref, took_ref] = run(false);
  CHECK(took_fused);
  CHECK_FALSE(took_ref);
  CHECK(z_fused.sizes() == torch::IntArrayRef({2, 3, 9, 8}));
  CHECK(max_rel_diff(z_fused, z_ref) < 3e-5);
  CHECK(max_rel_diff(g_fused, g_ref) < 3e-5);
  CHECK(g_fused.abs().sum().item<double>() > 0);
}

TEST_CASE("dot attention: zeroing or replacing heads takes the packed kernel, as the reference") {
  // Head importance zeroes a head and patching replaces one: on the kernel the output equals
  // the reference path's; uniform attention needs the values and keeps the reference path.
  torch::manual_seed(36);
  AttentionSpec spec;
  spec.d_model = 24;
  spec.heads = 3;
  auto module = make_dot_attention(spec);
  module->eval();
  torch::NoGradGuard no_grad;
  const auto x = torch::randn({2, 9, 24});
  const auto replacement = torch::randn({1, 3, 9, 8});
  using Kind = HeadIntervention::Kind;
  for (const Kind kind : {Kind::zero, Kind::replace, Kind::uniform}) {
    CAPTURE(static_cast<int>(kind));
    auto run = [&](bool fused) {
      set_fused_kernels_enabled(fused);
      reset_fused_path_taken();
      module->intervention = std::make_shared<HeadIntervention>();
      module->intervention->kinds = {Kind::keep, kind, Kind::keep};
      module->intervention->replacement = replacement;
      const torch::Tensor y = module->forward(x);
      module->intervention.reset();
      const bool took = fused_path_taken();
      set_fused_kernels_enabled(true);
      return std::make_pair(y, took);
    };
    const auto [y_fused, took_fused] = run(true);
    const auto [y_ref, took_ref] = run(false);
    CHECK(took_fused == (kind != Kind::uniform));
    CHECK_FALSE(took_ref);
    CHECK(max_rel_diff(y_fused, y_ref) < 3e-5);
    CHECK(max_rel_diff(y_fused, module->forward(x)) > 1e-3);  // the head did change
  }
}
