// The kernel attention family (pseudo, semi-fusion, gaussian, linear-sim) against independent
// references in double: each formula as explicit loops over s, r, d; the Gaussian map as the
// literal [B, H, S, S, Dh, Dh] tensor; finite differences for every parameter and the input.
#include <doctest/doctest.h>

#include <functional>
#include <set>

#include "core/attention/fused_attention.h"
#include "core/attention/kernel_family/kernel_attention.h"
#include "core/attention/registry.h"
#include "core/base/error.h"
#include "core/config/config.h"
#include "core/models/model.h"
#include "core/training/session/session.h"
#include "tests/core/helpers.h"

using namespace attn;

namespace {

const auto kDouble = torch::TensorOptions().dtype(torch::kDouble);
const char* const kFamily[] = {"pseudo", "semi-fusion", "gaussian", "linear-sim"};

AttentionSpec spec(int D, int H, bool causal, nlohmann::json options = nlohmann::json::object()) {
  AttentionSpec s;
  s.d_model = D;
  s.heads = H;
  s.causal = causal;
  s.options = std::move(options);
  return s;
}

std::shared_ptr<AttentionModule> make(const std::string& name, const AttentionSpec& s) {
  auto m = make_attention(name, s);
  m->to(torch::kDouble);
  return m;
}

// y[b][l][e] = sum_k x[b][l][k] W[e][k] (+ bias[e]), torch::nn::Linear's convention, by loops.
torch::Tensor linear_by_loops(const torch::Tensor& x, const torch::Tensor& W,
                              const torch::Tensor& bias) {
  const int64_t B = x.size(0), L = x.size(1), In = x.size(2), Out = W.size(0);
  auto y = torch::zeros({B, L, Out}, kDouble);
  auto xa = x.accessor<double, 3>();
  auto wa = W.accessor<double, 2>();
  auto ya = y.accessor<double, 3>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t l = 0; l < L; ++l)
      for (int64_t e = 0; e < Out; ++e) {
        double acc = bias.defined() ? bias[e].item<double>() : 0.0;
        for (int64_t k = 0; k < In; ++k) acc += xa[b][l][k] * wa[e][k];
        ya[b][l][e] = acc;
      }
  return y;
}

using ScoreFn = std::function<double(int64_t b, int h, int64_t s, int64_t r)>;
using ValueFn = std::function<double(int64_t b, int h, int64_t r, int64_t d)>;

struct BruteForce {
  torch::Tensor out;      // [B, L, D]
  torch::Tensor weights;  // [B, H, L, L]
};

// out = concat_h(sum_r softmax_r(score / Dh) value) P^T + b2, keys r <= s only when causal.
BruteForce brute_attention(int64_t B, int64_t L, int H, int Dh, bool causal, const ScoreFn& score,
                           const ValueFn& value, const torch::Tensor& P, const torch::Tensor& b2) {
  auto heads = torch::zeros({B, L, H * Dh}, kDouble);
  auto weights = torch::zeros({B, H, L, L}, kDouble);
  auto ha = heads.accessor<double, 3>();
  auto wa = weights.accessor<double, 4>();
  for (int64_t b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int64_t s = 0; s < L; ++s) {
        const int64_t last = causal ? s : L - 1;
        std::vector<double> w(last + 1);
        double mx = -1e300, z = 0;
        for (int64_t r = 0; r <= last; ++r) mx = std::max(mx, w[r] = score(b, h, s, r) / Dh);
        for (auto& e : w) z += (e = std::exp(e - mx));
        for (int64_t r = 0; r <= last; ++r) wa[b][h][s][r] = w[r] / z;
        for (int64_t d = 0; d < Dh; ++d) {
          double acc = 0;
          for (int64_t r = 0; r <= last; ++r) acc += wa[b][h][s][r] * value(b, h, r, d);
          ha[b][s][h * Dh + d] = acc;
        }
      }
  return {linear_by_loops(heads, P, b2), weights};
}

// The module's parameters, by name, and the brute-force evaluation of its formula on x.
BruteForce brute_force(const std::string& name, AttentionModule& m, const torch::Tensor& x, int H,
                       bool causal, double sigma = 1.0) {
  auto p = m.named_parameters();
  const int64_t B = x.size(0), L = x.size(1), D = x.size(2);
  const int Dh = static_cast<int>(D / H);
  const bool has_b1 = p.contains("input_proj.bias");
  auto xt =
      linear_by_loops(x, p["input_proj.weight"], has_b1 ? p["input_proj.bias"] : torch::Tensor());
  auto xa = xt.accessor<double, 3>();
  auto feature = [&, Dh](int64_t b, int h, int64_t t, int64_t d) { return xa[b][t][h * Dh + d]; };

  ScoreFn score;
  ValueFn value = [&](int64_t b, int h, int64_t r, int64_t d) { return feature(b, h, r, d); };
  torch::Tensor A, Wv, W;
  if (name == "pseudo" || name == "semi-fusion") {
    A = p["head_kernel"];
    score = [&, Dh](int64_t b, int h, int64_t s, int64_t r) {
      auto Aa = A.accessor<double, 3>();
      double acc = 0;
      for (int d1 = 0; d1 < Dh; ++d1)
        for (int d2 = 0; d2 < Dh; ++d2)
          acc += feature(b, h, s, d1) * Aa[h][d1][d2] * feature(b, h, r, d2);
      return acc;
    };
  }
  if (name == "semi-fusion") {
    Wv = p["head_value"];
    value = [&, Dh](int64_t b, int h, int64_t r, int64_t d) {
      auto Va = Wv.accessor<double, 3>();
      double acc = 0;
      for (int e = 0; e < Dh; ++e) acc += feature(b, h, r, e) * Va[h][e][d];
      return acc;
    };
  }
  if (name == "gaussian") {
    score = [&, Dh, sigma](int64_t b, int h, int64_t s, int64_t r) {
      double acc = 0;
      for (int d1 = 0; d1 < Dh; ++d1)
        for (int d2 = 0; d2 < Dh; ++d2) {
          const double diff = feature(b, h, s, d1) - feature(b, h, r, d2);
          acc += std::exp(-diff * diff / (2 * sigma * sigma));
        }
      return acc;
    };
  }
  if (name == "linear-sim") {
    W = p["slot_kernel"];
    score = [&, Dh, L, causal](int64_t b, int h, int64_t s, int64_t o) {
      auto Wa = W.accessor<double, 4>();
      const int64_t pooled = causal ? s + 1 : L;  // the reference tokens 0..pooled-1
      std::vector<double> pool(Dh, 0.0);
      for (int f = 0; f < Dh; ++f) {
        for (int64_t r = 0; r < pooled; ++r) pool[f] += feature(b, h, r, f);
        pool[f] /= std::sqrt(static_cast<double>(pooled));
      }
      double acc = 0;
      for (int e = 0; e < Dh; ++e)
        for (int f = 0; f < Dh; ++f) acc += feature(b, h, s, e) * Wa[o][h][e][f] * pool[f];
      return acc;
    };
  }
  REQUIRE(static_cast<bool>(score));
  return brute_attention(B, L, H, Dh, causal, score, value, p["out.weight"], p["out.bias"]);
}

double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

// The Gaussian map as the literal [B, H, S, S, Dh, Dh] tensor, summed.
torch::Tensor gaussian_map_literal(const torch::Tensor& x, double sigma) {
  auto k = x.unsqueeze(3).unsqueeze(5) - x.unsqueeze(2).unsqueeze(4);  // [B,H,S,S,Dh,Dh]
  return torch::exp(-k.pow(2) / (2 * sigma * sigma)).sum({4, 5});
}

// The Gaussian map by explicit loops.
torch::Tensor gaussian_map_loops(const torch::Tensor& x, double sigma) {
  const int64_t B = x.size(0), H = x.size(1), S = x.size(2), Dh = x.size(3);
  auto map = torch::zeros({B, H, S, S}, kDouble);
  auto xa = x.accessor<double, 4>();
  auto ma = map.accessor<double, 4>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t r = 0; r < S; ++r)
          for (int64_t d1 = 0; d1 < Dh; ++d1)
            for (int64_t d2 = 0; d2 < Dh; ++d2) {
              const double diff = xa[b][h][s][d1] - xa[b][h][r][d2];
              ma[b][h][s][r] += std::exp(-diff * diff / (2 * sigma * sigma));
            }
  return map;
}

// Central differences of loss() in `count` random entries of t, against t's autograd gradient.
// Returns how many entries were compared.
int check_gradient_entries(torch::Tensor t, const torch::Tensor& grad,
                           const std::function<double()>& loss, int count,
                           const std::string& what) {
  torch::NoGradGuard no_grad;
  auto flat = t.view(-1);
  auto g = grad.reshape(-1);
  auto picks = torch::randperm(flat.numel(), torch::kLong)
                   .narrow(0, 0, std::min<int64_t>(count, flat.numel()));
  const double h = 1e-6;
  int compared = 0;
  for (int64_t i = 0; i < picks.numel(); ++i) {
    const int64_t e = picks[i].item<int64_t>();
    const double keep = flat[e].item<double>();
    flat[e] = keep + h;
    const double up = loss();
    flat[e] = keep - h;
    const double down = loss();
    flat[e] = keep;
    CAPTURE(what);
    CAPTURE(e);
    CHECK(g[e].item<double>() == doctest::Approx((up - down) / (2 * h)).epsilon(1e-6).scale(1.0));
    ++compared;
  }
  return compared;
}

std::set<std::string> parameter_names(torch::nn::Module& m) {
  std::set<std::string> names;
  for (const auto& p : m.named_parameters()) names.insert(p.key());
  return names;
}

}  // namespace

TEST_CASE("kernel family: each forward equals its formula as explicit loops") {
  torch::manual_seed(17);
  const int B = 2, L = 5, D = 8, H = 2;
  for (const std::string name : kFamily)
    for (const bool causal : {true, false}) {
      CAPTURE(name);
      CAPTURE(causal);
      const double sigma = 0.8;
      nlohmann::json options = nlohmann::json::object();
      if (name == "gaussian") options = {{"sigma", sigma}};
      if (name == "linear-sim") options = {{"max_len", 7}};
      auto m = make(name, spec(D, H, causal, options));
      m->record_weights = true;
      auto x = 1.5 * torch::randn({B, L, D}, kDouble);
      auto got = m->forward(x);
      auto want = brute_force(name, *m, x, H, causal, sigma);
      REQUIRE(got.sizes() == want.out.sizes());
      CHECK(max_abs_diff(got, want.out) < 1e-12);
      REQUIRE(m->recorded_weights.sizes() == want.weights.sizes());
      CHECK(max_abs_diff(m->recorded_weights, want.weights) < 1e-12);
      CHECK_FALSE(m->recorded_weights.requires_grad());
      // The maps are far from uniform (which would make the checks above weak): the last
      // query sees all L keys in both modes.
      auto last_row = want.weights.select(2, L - 1);
      CHECK((last_row - 1.0 / L).abs().max().item<double>() > 0.05);
    }
}

TEST_CASE("kernel family: linear-sim uses the first L of max_len slots for any length") {
  torch::manual_seed(23);
  const int D = 8, H = 2;
  for (const bool causal : {true, false})
    for (const int L : {1, 3, 6}) {
      CAPTURE(causal);
      CAPTURE(L);
      auto m = make("linear-sim", spec(D, H, causal, {{"max_len", 6}}));
      auto x = torch::randn({2, L, D}, kDouble);
      CHECK(max_abs_diff(m->forward(x), brute_force("linear-sim", *m, x, H, causal).out) < 1e-12);
    }
  auto m = make("linear-sim", spec(D, H, true, {{"max_len", 6}}));
  CHECK_THROWS_WITH_AS(m->forward(torch::randn({1, 7, D}, kDouble)),
                       doctest::Contains("model.attention_options.linear-sim.max_len (6)"), Error);
}

TEST_CASE("kernel family: the config refuses linear-sim slots shorter than the task's input") {
  auto c = test::tiny_config("copy");
  c.model.attention.assign(2, "linear-sim");
  const int tokens = TrainingSession(c).task().sequence_length();  // max_len 256 fits
  c.model.attention_options["linear-sim"]["max_len"] = tokens - 1;
  const std::string message = "linear-sim.max_len (" + std::to_string(tokens - 1) +
                              ") is shorter than the model's input: task \"copy\" gives " +
                              std::to_string(tokens) + " tokens";
  // Refused when the config is resolved (linear-sim's descriptor), before any model is built.
  CHECK_THROWS_WITH_AS(parse_config(to_json(c)), doctest::Contains(message.c_str()), Error);
  c.model.attention_options["linear-sim"]["max_len"] = tokens;
  CHECK_NOTHROW(TrainingSession{parse_config(to_json(c))}.train_step());
}

TEST_CASE("kernel family: gaussian_kernel_map_reference equals the literal 5-D sum, any chunking") {
  torch::manual_seed(29);
  // B=2, H=2 (N=4 maps), S=5, Dh=3: one (n, s, d1) triple covers S*Dh = 15 elements. The chunk
  // budgets give d1 chunks of 1 and 2 (not dividing 3), row chunks of 1, 2 (not dividing 5) and
  // 5, map chunks of 3 (not dividing 4), and one chunk for everything.
  auto x = torch::randn({2, 2, 5, 3}, kDouble);
  for (const double sigma : {0.6, 1.0, 2.5}) {
    auto literal = gaussian_map_literal(x, sigma);
    auto loops = gaussian_map_loops(x, sigma);
    REQUIRE(max_abs_diff(literal, loops) < 1e-12);
    for (const int64_t chunk : {int64_t(1), int64_t(14), int64_t(30), int64_t(45), int64_t(100),
                                int64_t(300), int64_t(700), int64_t(1) << 24}) {
      CAPTURE(sigma);
      CAPTURE(chunk);
      auto got = gaussian_kernel_map_reference(x, sigma, chunk);
      REQUIRE(got.sizes() == literal.sizes());
      CHECK(max_abs_diff(got, literal) < 1e-12);
    }
  }
  // The dispatcher computes the same map, and float32 works too.
  CHECK(max_abs_diff(gaussian_kernel_map(x, 0.6), gaussian_map_literal(x, 0.6)) < 1e-12);
  auto f32 = gaussian_kernel_map_reference(x.to(torch::kFloat), 0.6, 40).to(torch::kDouble);
  CHECK(max_abs_diff(f32, gaussian_map_literal(x, 0.6)) < 1e-4);
  CHECK_THROWS_AS(gaussian_kernel_map_reference(x, 0.0), Error);
  CHECK_THROWS_AS(gaussian_kernel_map_reference(x[0], 1.0), Error);
}

TEST_CASE("kernel family: the Gaussian map's chunked backward equals autograd of the 5-D sum") {
  torch::manual_seed(31);
  auto x = torch::randn({2, 2, 5, 3}, kDouble).requires_grad_(true);
  auto upstream = torch::randn({2, 2, 5, 5}, kDouble);
  (gaussian_map_literal(x, 0.9) * upstream).sum().backward();
  const auto want = x.grad().clone();
  for (const int64_t chunk :
       {int64_t(1), int64_t(30), int64_t(100), int64_t(700), int64_t(1) << 24}) {
    CAPTURE(chunk);
    x.grad().zero_();
    (gaussian_kernel_map_reference(x, 0.9, chunk) * upstream).sum().backward();
    CHECK(max_abs_diff(x.grad(), want) < 1e-12);
  }
  // And against central differences, through the chunked forward.
  x.grad().zero_();
  (gaussian_kernel_map_reference(x, 0.9, 30) * upstream).sum().backward();
  const int compared = check_gradient_entries(
      x.detach(), x.grad(),
      [&] {
        return (gaussian_kernel_map_reference(x.detach(), 0.9, 30) * upstream).sum().item<double>();
      },
      12, "x");
  CHECK(compared == 12);
}

TEST_CASE("kernel family: gradients of every parameter and of the input match finite differences") {
  torch::manual_seed(37);
  const int D = 8, H = 2, L = 5;
  const std::map<std::string, std::set<std::string>> expected = {
      {"pseudo", {"input_proj.weight", "input_proj.bias", "head_kernel", "out.weight", "out.bias"}},
      {"semi-fusion", {"input_proj.weight", "head_kernel", "head_value", "out.weight", "out.bias"}},
      {"gaussian", {"input_proj.weight", "input_proj.bias", "out.weight", "out.bias"}},
      {"linear-sim",
       {"input_proj.weight", "input_proj.bias", "slot_kernel", "out.weight", "out.bias"}}};
  for (const std::string name : kFamily)
    for (const bool causal : {true, false}) {
      CAPTURE(name);
      CAPTURE(causal);
      nlohmann::json options = nlohmann::json::object();
      if (name == "gaussian") options = {{"sigma", 0.8}};
      if (name == "linear-sim") options = {{"max_len", 6}};
      auto m = make(name, spec(D, H, causal, options));
      CHECK(parameter_names(*m) == expected.at(name));
      auto x = torch::randn({2, L, D}, kDouble).requires_grad_(true);
      auto r = torch::randn({2, L, D}, kDouble);
      auto loss = [&] { return (m->forward(x.detach()) * r).sum().item<double>(); };
      m->zero_grad();
      (m->forward(x) * r).sum().backward();
      int compared = 0;
      for (auto& p : m->named_parameters())
        compared += check_gradient_entries(p.value(), p.value().grad(), loss, 4, p.key());
      compared += check_gradient_entries(x.detach(), x.grad(), loss, 8, "x");
      CHECK(compared == 4 * static_cast<int>(expected.at(name).size()) + 8);
    }
}

TEST_CASE("kernel family: causal modules ignore future tokens, bidirectional ones do not") {
  torch::manual_seed(41);
  const int D = 8, H = 2, L = 6;
  for (const std::string name : kFamily)
    for (const bool causal : {true, false}) {
      CAPTURE(name);
      CAPTURE(causal);
      auto m = make(name, spec(D, H, causal));
      auto x = torch::randn({2, L, D}, kDouble);
      auto base = m->forward(x);
      for (const int p : {1, 3, 5}) {
        CAPTURE(p);
        auto changed = x.clone();
        changed[0][p] += torch::randn({D}, kDouble);
        auto out = m->forward(changed);
        const double before = max_abs_diff(out[0].narrow(0, 0, p), base[0].narrow(0, 0, p));
        if (causal)
          CHECK(before == 0.0);
        else
          CHECK(before > 1e-8);
        CHECK(max_abs_diff(out[0][p], base[0][p]) > 1e-8);
        CHECK(max_abs_diff(out[1], base[1]) == 0.0);  // batch rows stay independent
      }
    }
}

TEST_CASE("kernel family: a language model mixing all four mechanisms is causal") {
  ExperimentConfig c = test::tiny_config("copy");
  c.model.layers = 4;
  c.model.attention = {"pseudo", "semi-fusion", "gaussian", "linear-sim"};
  c = parse_config(to_json(c));
  torch::manual_seed(1);
  Transformer model(c.model, 12, 10);
  model->to(torch::kDouble);
  model->eval();
  auto tokens = torch::randint(0, 12, {2, 10}, torch::kLong);
  auto base = model->forward(tokens);
  for (int p : {0, 4, 9}) {
    CAPTURE(p);
    auto changed = tokens.clone();
    changed[0][p] = (changed[0][p].item<int64_t>() + 5) % 12;
    auto out = model->forward(changed);
    if (p > 0) CHECK(max_abs_diff(out[0].narrow(0, 0, p), base[0].narrow(0, 0, p)) == 0.0);
    CHECK(max_abs_diff(out[0][p], base[0][p]) > 0.0);
  }
  // The model's GPT-2 initialisation and naming leave each module its closed-form size.
  int64_t closed_form = 0;
  for (const auto& name : c.model.attention)
    closed_form +=
        attention_parameter_count(name, c.model.d_model, c.model.heads, nlohmann::json::object());
  CHECK(model->attention_parameter_count() == closed_form);
}

TEST_CASE("kernel family: dropout acts on the weights in training only") {
  torch::manual_seed(43);
  for (const std::string name : kFamily) {
    CAPTURE(name);
    AttentionSpec s = spec(8, 2, true);
    s.dropout = 0.5;
    auto m = make(name, s);
    auto x = torch::randn({2, 5, 8}, kDouble);
    m->eval();
    m->record_weights = true;
    const auto evaluated = m->forward(x);
    const auto eval_weights = m->recorded_weights;
    CHECK(max_abs_diff(evaluated, brute_force(name, *m, x, 2, true).out) < 1e-12);
    m->train();
    const auto trained = m->forward(x);
    CHECK(max_abs_diff(trained, evaluated) > 1e-6);
    // The recorded weights are the softmax before dropout.
    CHECK(max_abs_diff(m->recorded_weights, eval_weights) < 1e-12);
  }
}

TEST_CASE("kernel family: modules have exactly the closed-form parameter counts") {
  const std::vector<std::pair<std::string, nlohmann::json>> cases = {
      {"dot", nlohmann::json::object()},         {"ky", {{"window", 4}, {"hidden", 5}}},
      {"ky", {{"connection", "none"}}},          {"pseudo", nlohmann::json::object()},
      {"semi-fusion", nlohmann::json::object()}, {"gaussian", {{"sigma", 2.0}}},
      {"linear-sim", nlohmann::json::object()},  {"linear-sim", {{"max_len", 9}}},
      {"neural", {{"down", 2}, {"hidden", 5}}},  {"neural", {{"down", "none"}, {"hidden", 3}}}};
  for (const auto& [name, options] : cases)
    for (const auto& [D, H] : std::vector<std::pair<int, int>>{{8, 1}, {8, 2}, {12, 3}, {16, 4}}) {
      CAPTURE(name);
      CAPTURE(options.dump());
      CAPTURE(D);
      CAPTURE(H);
      auto m = make_attention(name, spec(D, H, true, options));
      int64_t numel = 0;
      for (const auto& p : m->parameters()) numel += p.numel();
      CHECK(numel == attention_parameter_count(name, D, H, options));
    }
  // The paper's "nearly 50%": 2D^2 + n Dh^2 + 2D against 4D^2 + 4D at D = 256, n = 8.
  const auto none = nlohmann::json::object();
  const double ratio = double(attention_parameter_count("pseudo", 256, 8, none)) /
                       double(attention_parameter_count("dot", 256, 8, none));
  CHECK(ratio == doctest::Approx(0.53).epsilon(0.01));
  CHECK_THROWS_AS(attention_parameter_count("nope", 8, 2, none), Error);
  CHECK_THROWS_AS(attention_parameter_count("pseudo", 8, 3, none), Error);
}

TEST_CASE("kernel family: the closed forms reproduce the paper's Table 1 differences") {
  // Table 1 (D = 256, 8 heads, 6 encoder layers, 64 patches + CLS = 65 tokens): Standard 3.20M,
  // Param-Fusion 2.45M, Semi-Fusion 2.50M, Linear-Sim 5.60M. Only the attention modules differ,
  // so six times the per-module difference must match the table's, to its 0.01M rounding.
  const auto none = nlohmann::json::object();
  auto six_layers = [&](const std::string& name, const nlohmann::json& o) {
    return 6.0 * double(attention_parameter_count(name, 256, 8, o)) / 1e6;
  };
  const double dot = six_layers("dot", none), pseudo = six_layers("pseudo", none);
  const double semi = six_layers("semi-fusion", none);
  const double linear = six_layers("linear-sim", {{"max_len", 65}});
  CHECK(std::abs((dot - pseudo) - (3.20 - 2.45)) < 0.01);
  CHECK(std::abs((semi - pseudo) - (2.50 - 2.45)) < 0.01);
  CHECK(std::abs((linear - dot) - (5.60 - 3.20)) < 0.01);
}

TEST_CASE("kernel family: options are validated with the key path") {
  auto refuses = [](const std::string& name, nlohmann::json options, const std::string& fragment) {
    ExperimentConfig c = test::tiny_config();
    nlohmann::json j = to_json(c);
    j["model"]["attention"] = name;
    j["model"]["attention_options"] = {{name, options}};
    try {
      parse_config(j, "cfg.json");
      FAIL("accepted " << name << " " << options.dump());
    } catch (const Error& e) {
      CAPTURE(e.what());
      CHECK(std::string(e.what()).find(fragment) != std::string::npos);
    }
  };
  const std::string sigma = "model.attention_options.gaussian.sigma must be a finite number > 0";
  refuses("gaussian", {{"sigma", 0}}, sigma);
  refuses("gaussian", {{"sigma", -1.5}}, sigma);
  refuses("gaussian", {{"sigma", "1"}}, sigma);
  refuses("gaussian", {{"sigma", nullptr}}, sigma);
  refuses("gaussian", {{"sigmaa", 1.0}}, "unknown key 'model.attention_options.gaussian.sigmaa'");
  const std::string max_len = "model.attention_options.linear-sim.max_len must be";
  refuses("linear-sim", {{"max_len", 0}}, max_len + " in [1, 4096], got 0");
  refuses("linear-sim", {{"max_len", 5000}}, max_len + " in [1, 4096], got 5000");
  refuses("linear-sim", {{"max_len", "64"}}, max_len + " an integer in [1, 4096]");
  refuses("linear-sim", {{"max_len", 2.5}}, max_len + " an integer in [1, 4096]");
  refuses("linear-sim", {{"window", 8}}, "unknown key 'model.attention_options.linear-sim.window'");
  refuses("pseudo", {{"sigma", 1.0}}, "unknown key 'model.attention_options.pseudo.sigma'");
  refuses("semi-fusion", {{"max_len", 8}},
          "unknown key 'model.attention_options.semi-fusion.max_len'");
  // Good values pass, and reach the module.
  CHECK_NOTHROW(validate_attention_options("gaussian", {{"sigma", 0.25}}));
  CHECK_NOTHROW(validate_attention_options("linear-sim", {{"max_len", 4096}}));
  auto g = make_attention("gaussian", spec(8, 2, true, {{"sigma", 0.25}}));
  CHECK(dynamic_cast<GaussianAttention&>(*g).sigma() == 0.25);
  auto ls = make_attention("linear-sim", spec(8, 2, true, {{"max_len", 12}}));
  CHECK(dynamic_cast<LinearSimAttention&>(*ls).max_len() == 12);
  CHECK(dynamic_cast<LinearSimAttention&>(*ls).slot_kernel.size(0) == 12);
  // The help lines name the options the validators accept.
  CHECK(attention_mechanism_options_help("gaussian").find("sigma") != std::string::npos);
  CHECK(attention_mechanism_options_help("linear-sim").find("max_len") != std::string::npos);
  CHECK(attention_mechanism_options_help("pseudo").find("init") != std::string::npos);
  CHECK(attention_mechanism_options_help("semi-fusion").find("init") != std::string::npos);
  refuses("pseudo", {{"init", "he"}}, "model.attention_options.pseudo.init must be one of");
}

TEST_CASE("kernel family: tiny models with the mechanisms train (loss falls on copy)") {
  const std::vector<std::vector<std::string>> layouts = {
      {"pseudo", "dot"}, {"semi-fusion", "gaussian"}, {"linear-sim", "linear-sim"}};
  for (const auto& layout : layouts) {
    CAPTURE(layout[0]);
    CAPTURE(layout[1]);
    ExperimentConfig c = test::tiny_config("copy");
    c.model.attention = layout;
    c.train.steps = 300;
    c.train.lr = 1e-2;
    c = parse_config(to_json(c));
    torch::manual_seed(2);
    TrainingSession session(c);
    const double first = session.train_step();
    double last = first;
    for (int s = 1; s < 300; ++s) last = session.train_step();
    CHECK(last < 0.25 * first);
  }
}

TEST_CASE("kernel family: init xavier reaches the model after its GPT-2 init (Glorot bounds)") {
  // Glorot uniform U(+-sqrt(6 / (fan_in + fan_out))): every entry within the bound, the largest
  // of many near it (N(0, 0.02) would stay far below), biases zero.
  auto uniform_to = [](const torch::Tensor& t, double bound) {
    const double top = t.abs().max().item<double>();
    CHECK(top <= bound);
    CHECK(top > 0.9 * bound);
  };
  for (const std::string name : kFamily) {
    CAPTURE(name);
    ExperimentConfig c = test::tiny_config("copy");
    c.model.d_model = 64;
    c.model.heads = 4;  // Dh 16
    c.model.attention.assign(2, name);
    c.model.attention_options = {{name, {{"init", "xavier"}}}};
    c = parse_config(to_json(c), "test");
    torch::manual_seed(5);
    Transformer model(c.model, 10, 16);
    auto& a = dynamic_cast<KernelAttentionBase&>(*model->attention_modules()[0]);
    uniform_to(a.in->weight, std::sqrt(6.0 / 128));
    uniform_to(a.out->weight, std::sqrt(6.0 / 128));
    if (a.in->bias.defined()) CHECK(a.in->bias.abs().max().item<double>() == 0.0);
    CHECK(a.out->bias.abs().max().item<double>() == 0.0);
    if (auto* p = dynamic_cast<PseudoAttention*>(&a))
      uniform_to(p->head_kernel, std::sqrt(6.0 / 32));
    if (auto* s = dynamic_cast<SemiFusionAttention*>(&a))
      uniform_to(s->head_value, std::sqrt(6.0 / 32));
    // The default keeps GPT-2's N(0, 0.02) on U: far below the Glorot bound.
    c.model.attention_options = nlohmann::json::object();
    Transformer standard(c.model, 10, 16);
    auto& b = dynamic_cast<KernelAttentionBase&>(*standard->attention_modules()[0]);
    CHECK(b.in->weight.abs().max().item<double>() < 0.5 * std::sqrt(6.0 / 128));
  }
}
