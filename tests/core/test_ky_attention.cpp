// Neural KY-Attention against independent references, in double: the seed's literal
// alpha*beta/(sum+eps) algorithm with explicit loops, plain windowed attention, causal dot-product
// attention, and finite differences.
#include <doctest/doctest.h>

#include "core/attention/dot/dot_attention.h"
#include "core/attention/ky/ky_attention.h"
#include "core/attention/registry.h"
#include "core/base/error.h"
#include "core/config/config.h"
#include "core/models/model.h"
#include "core/training/session/session.h"
#include "tests/core/helpers.h"

using namespace attn;

namespace {

const auto kDouble = torch::TensorOptions().dtype(torch::kDouble);

// Eqs. 42-49 literally, one query at a time. Slot j holds key i - first + j. Masked edges: slots
// outside [0, L) are left out of alpha and of the final sum; zero-pad: they are zero keys and
// values (score 0) that take part in both softmaxes. beta is always over all W slots.
torch::Tensor literal_ky(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                         const torch::Tensor& g, int W, int first, bool masked, double eps) {
  const int64_t B = q.size(0), H = q.size(1), L = q.size(2), Dh = q.size(3);
  auto out = torch::zeros({B, H, L, Dh}, kDouble);
  auto qa = q.accessor<double, 4>(), ka = k.accessor<double, 4>(), va = v.accessor<double, 4>();
  auto ga = g.accessor<double, 2>();
  auto oa = out.accessor<double, 4>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      std::vector<double> beta(W);
      double zb = 0;
      for (int j = 0; j < W; ++j) zb += beta[j] = std::exp(ga[h][j]);
      for (auto& x : beta) x /= zb;
      for (int64_t i = 0; i < L; ++i) {
        std::vector<double> score(W, 0.0);
        std::vector<bool> real(W), used(W);
        for (int j = 0; j < W; ++j) {
          const int64_t key = i - first + j;
          real[j] = key >= 0 && key < L;
          used[j] = real[j] || !masked;
          if (real[j])
            for (int64_t d = 0; d < Dh; ++d) score[j] += qa[b][h][i][d] * ka[b][h][key][d];
          score[j] /= std::sqrt(static_cast<double>(Dh));
        }
        double za = 0;
        for (int j = 0; j < W; ++j)
          if (used[j]) za += std::exp(score[j]);
        std::vector<double> w(W, 0.0);
        double sum = 0;
        for (int j = 0; j < W; ++j)
          if (used[j]) sum += w[j] = std::exp(score[j]) / za * beta[j];
        for (int j = 0; j < W; ++j) {
          if (!real[j]) continue;  // a zero-pad slot's value is zero
          const int64_t key = i - first + j;
          for (int64_t d = 0; d < Dh; ++d) oa[b][h][i][d] += w[j] / (sum + eps) * va[b][h][key][d];
        }
      }
    }
  return out;
}

struct Qkv {
  torch::Tensor q, k, v;
};
Qkv random_qkv(int64_t B, int64_t H, int64_t L, int64_t Dh) {
  return {torch::randn({B, H, L, Dh}, kDouble), torch::randn({B, H, L, Dh}, kDouble),
          torch::randn({B, H, L, Dh}, kDouble)};
}

AttentionSpec spec(int D, int H, bool causal, nlohmann::json options) {
  AttentionSpec s;
  s.d_model = D;
  s.heads = H;
  s.causal = causal;
  s.options = std::move(options);
  return s;
}

}  // namespace

TEST_CASE("windowed_attention equals the seed's literal alpha*beta/(sum+eps) formula") {
  torch::manual_seed(7);
  for (const bool causal : {true, false})
    for (const bool masked : {true, false})
      for (const int W : {2, 3, 4, 8})
        for (const int L : {1, 3, 5, 8, 11}) {
          CAPTURE(causal);
          CAPTURE(masked);
          CAPTURE(W);
          CAPTURE(L);
          auto x = random_qkv(2, 3, L, 4);
          auto g = torch::randn({3, W}, kDouble);
          const int first = ky_first_offset(W, causal);
          auto got = windowed_attention(x.q, x.k, x.v, g, W, first, masked);
          // eps = 1e-8 (the seed leaves it open); it shifts w by eps / sum(alpha*beta) relative.
          auto want = literal_ky(x.q, x.k, x.v, g, W, first, masked, 1e-8);
          CHECK((got - want).abs().max().item<double>() < 1e-5);
          // And exactly (eps = 0), to rounding: the bias form is the literal one without eps.
          auto exact = literal_ky(x.q, x.k, x.v, g, W, first, masked, 0.0);
          CHECK((got - exact).abs().max().item<double>() < 1e-12);
        }
}

TEST_CASE("KY window: band weights sum to one and the dense probe map sits on the band") {
  torch::manual_seed(3);
  const int W = 4, L = 9;
  auto x = random_qkv(1, 2, L, 3);
  auto g = torch::randn({2, W}, kDouble);
  torch::Tensor band;
  windowed_attention(x.q, x.k, x.v, g, W, W - 1, true, 0.0, false, &band);
  CHECK((band.sum(-1) - 1).abs().max().item<double>() < 1e-12);
  auto dense = band_to_dense(band, W - 1);
  REQUIRE(dense.sizes() == torch::IntArrayRef({1, 2, L, L}));
  CHECK((dense.sum(-1) - 1).abs().max().item<double>() < 1e-12);
  for (int i = 0; i < L; ++i)
    for (int j = 0; j < L; ++j)
      if (j > i || j < i - W + 1) CHECK(dense[0][1][i][j].item<double>() == 0.0);
  // Slot W-1 is the query itself (t = 1).
  CHECK(dense[0][0][5][5].item<double>() == doctest::Approx(band[0][0][5][W - 1].item<double>()));
  CHECK(dense[0][0][5][3].item<double>() == doctest::Approx(band[0][0][5][W - 3].item<double>()));
}

namespace {

// Makes every g_h the constant c (w3 = 0, b3 = c).
void make_connection_constant(KyAttention& a, double c) {
  torch::NoGradGuard no_grad;
  a.connection()->w3.zero_();
  a.connection()->b3.fill_(c);
}

// Copies q/k/v and output projections between two modules that both have "qkv" and "out".
void copy_projections(torch::nn::Module& from, torch::nn::Module& to) {
  torch::NoGradGuard no_grad;
  auto src = from.named_parameters();
  auto dst = to.named_parameters();
  for (const char* name : {"qkv.weight", "qkv.bias", "out.weight", "out.bias"})
    dst[name].copy_(src[name]);
}

}  // namespace

TEST_CASE("constant g gives plain windowed softmax attention") {
  torch::manual_seed(11);
  const int W = 3, L = 7, H = 2;
  auto x = random_qkv(2, H, L, 4);
  auto zero = torch::zeros({H, W}, kDouble);
  auto plain = windowed_attention(x.q, x.k, x.v, zero, W, W - 1, true);
  auto lifted = windowed_attention(x.q, x.k, x.v, zero + 2.5, W, W - 1, true);
  CHECK((plain - lifted).abs().max().item<double>() < 1e-12);
  // The module with a constant connection network agrees with the plain window computed here.
  KyAttention ky(spec(8, H, true, {{"window", W}}));
  ky.to(torch::kDouble);
  make_connection_constant(ky, -1.3);
  auto bias = ky.bias_table();
  CHECK((bias - (-1.3)).abs().max().item<double>() < 1e-12);
  // And against brute-force windowed attention (the literal loop with beta uniform).
  auto want = literal_ky(x.q, x.k, x.v, zero, W, W - 1, true, 0.0);
  CHECK((plain - want).abs().max().item<double>() < 1e-12);
}

TEST_CASE("W >= L with masked edges equals causal dot-product attention") {
  torch::manual_seed(5);
  const int D = 8, H = 2, L = 6;
  for (const int W : {L, L + 3}) {
    KyAttention ky(spec(D, H, true, {{"window", W}}));
    DotAttention dot(spec(D, H, true, {}));
    ky.to(torch::kDouble);
    dot.to(torch::kDouble);
    copy_projections(dot, ky);
    make_connection_constant(ky, 0.7);
    auto x = torch::randn({3, L, D}, kDouble);
    CHECK((ky.forward(x) - dot.forward(x)).abs().max().item<double>() < 1e-12);

    // A learned (non-constant) g is dot-product attention plus the bias g_h(t) of offset i-j.
    torch::manual_seed(9);
    ky.reset_own_parameters();
    auto g = ky.bias_table();
    auto qkv = torch::randn({1, H, L, D / H}, kDouble);
    auto k = torch::randn({1, H, L, D / H}, kDouble), v = torch::randn({1, H, L, D / H}, kDouble);
    auto got = windowed_attention(qkv, k, v, g, W, W - 1, true);
    auto scores = torch::matmul(qkv, k.transpose(-1, -2)) / std::sqrt(D / H * 1.0);
    auto rel = torch::full({H, L, L}, -INFINITY, kDouble);
    for (int i = 0; i < L; ++i)
      for (int j = 0; j <= i; ++j)
        rel.select(1, i).select(1, j).copy_(g.select(1, W - 1 - (i - j)));
    auto want = torch::matmul(torch::softmax(scores + rel.unsqueeze(0), -1), v);
    CHECK((got - want).abs().max().item<double>() < 1e-12);
  }
}

TEST_CASE("KY language model is causal, with masked and zero-pad edges") {
  for (const char* edges : {"masked", "zero-pad"}) {
    CAPTURE(edges);
    ExperimentConfig c = test::tiny_config("copy");
    c.model.attention = {"ky", "dot"};  // mixed per layer
    c.model.attention_options = {{"ky", {{"window", 3}, {"edges", edges}}}};
    torch::manual_seed(1);
    Transformer model(c.model, 12, 10);
    model->to(torch::kDouble);
    model->eval();
    auto tokens = torch::randint(0, 12, {2, 10}, torch::kLong);
    auto base = model->forward(tokens);
    for (int p : {0, 4, 9}) {
      auto changed = tokens.clone();
      changed[0][p] = (changed[0][p].item<int64_t>() + 5) % 12;
      auto out = model->forward(changed);
      if (p > 0)
        CHECK((out[0].narrow(0, 0, p) - base[0].narrow(0, 0, p)).abs().max().item<double>() == 0.0);
      CHECK((out[0][p] - base[0][p]).abs().max().item<double>() > 0.0);
    }
  }
}

TEST_CASE("gradients of the connection network and of q, k, v match finite differences") {
  torch::manual_seed(21);
  const int D = 6, H = 2, L = 5;
  for (const char* edges : {"masked", "zero-pad"}) {
    CAPTURE(edges);
    KyAttention ky(spec(D, H, true, {{"window", 3}, {"hidden", 3}, {"edges", edges}}));
    ky.to(torch::kDouble);
    auto x = torch::randn({2, L, D}, kDouble);
    auto r = torch::randn({2, L, D}, kDouble);
    auto loss = [&] { return (ky.forward(x) * r).sum(); };
    ky.zero_grad();
    loss().backward();
    torch::NoGradGuard no_grad;
    const double h = 1e-6;
    int checked = 0;
    for (auto& p : ky.connection()->named_parameters()) {
      auto flat = p.value().view(-1);
      auto grad = p.value().grad().view(-1);
      for (int64_t e = 0; e < flat.numel(); ++e) {
        const double keep = flat[e].item<double>();
        flat[e] = keep + h;
        const double up = loss().item<double>();
        flat[e] = keep - h;
        const double down = loss().item<double>();
        flat[e] = keep;
        const double fd = (up - down) / (2 * h);
        CAPTURE(p.key());
        CHECK(grad[e].item<double>() == doctest::Approx(fd).epsilon(1e-6).scale(1.0));
        ++checked;
      }
    }
    CHECK(checked == 2 * 3 + 2 * 3 + 2 * 9 + 2 * 3 + 2 * 3 + 2);
  }
  // Through windowed_attention directly, for q, k, v and the bias table.
  auto qkv = random_qkv(1, 2, 7, 3);
  auto g = torch::randn({2, 4}, kDouble);
  for (auto* t : {&qkv.q, &qkv.k, &qkv.v, &g}) t->set_requires_grad(true);
  auto r = torch::randn({1, 2, 7, 3}, kDouble);
  (windowed_attention(qkv.q, qkv.k, qkv.v, g, 4, 3, true) * r).sum().backward();
  torch::NoGradGuard no_grad;
  for (auto* t : {&qkv.q, &qkv.k, &qkv.v, &g}) {
    auto flat = t->view(-1);
    for (int64_t e = 0; e < flat.numel(); e += 3) {
      const double keep = flat[e].item<double>(), h = 1e-6;
      flat[e] = keep + h;
      const double up =
          (windowed_attention(qkv.q, qkv.k, qkv.v, g, 4, 3, true) * r).sum().item<double>();
      flat[e] = keep - h;
      const double down =
          (windowed_attention(qkv.q, qkv.k, qkv.v, g, 4, 3, true) * r).sum().item<double>();
      flat[e] = keep;
      CHECK(t->grad().view(-1)[e].item<double>() ==
            doctest::Approx((up - down) / (2 * h)).epsilon(1e-6).scale(1.0));
    }
  }
}

TEST_CASE("ky options and placement are validated with the key path") {
  auto refuses = [](nlohmann::json ky, const std::string& fragment) {
    ExperimentConfig c = test::tiny_config();
    nlohmann::json j = to_json(c);
    j["model"]["attention"] = "ky";
    j["model"]["attention_options"] = {{"ky", ky}};
    try {
      parse_config(j, "cfg.json");
      FAIL("accepted " << ky.dump());
    } catch (const Error& e) {
      CAPTURE(e.what());
      CHECK(std::string(e.what()).find(fragment) != std::string::npos);
    }
  };
  refuses({{"window", 1}}, "model.attention_options.ky.window must be in [2, 4096]");
  refuses({{"window", "8"}}, "model.attention_options.ky.window must be an integer");
  refuses({{"edges", "reflect"}}, "model.attention_options.ky.edges must be one of");
  refuses({{"hidden", 0}}, "model.attention_options.ky.hidden");
  refuses({{"widow", 8}}, "unknown key 'model.attention_options.ky.widow'");
  refuses({{"placement", "centered"}}, "the very token it must predict");
  // The module refuses it too, if built directly.
  CHECK_THROWS_AS(KyAttention(spec(8, 2, true, {{"placement", "centered"}})), Error);
  // A bidirectional model may centre the window.
  CHECK_NOTHROW(KyAttention(spec(8, 2, false, {{"placement", "centered"}})));
}

TEST_CASE("a mixed ky/dot model trains: loss falls on copy") {
  ExperimentConfig c = test::tiny_config("copy");
  c.model.attention = {"ky", "dot"};
  c.model.attention_options = {{"ky", {{"window", 4}, {"hidden", 8}}}};
  c.train.steps = 300;
  c.train.lr = 1e-2;
  c = parse_config(to_json(c));
  torch::manual_seed(2);
  Transformer model(c.model, 12, 16);
  // The connection network kept its own init: GPT-2's N(0, 0.02) would make g nearly flat.
  auto* ky = dynamic_cast<KyAttention*>(model->attention_modules()[0].get());
  REQUIRE(ky != nullptr);
  CHECK(ky->connection()->w1.abs().max().item<float>() > 0.2f);
  CHECK(model->attention_parameter_count() ==
        2 * (16 * 48 + 48 + 16 * 16 + 16) + (2 * 8 + 2 * 8 + 2 * 64 + 2 * 8 + 2 * 8 + 2));

  TrainingSession session(c);
  const double first = session.train_step();
  double last = first;
  for (int s = 1; s < 300; ++s) last = session.train_step();
  CHECK(last < 0.7 * first);
}

TEST_CASE("ky init xavier: Glorot-uniform g_h layers and zero biases, after the model's init") {
  ExperimentConfig c = test::tiny_config("copy");
  c.model.attention.assign(2, "ky");
  c.model.attention_options = {{"ky", {{"window", 4}, {"hidden", 64}, {"init", "xavier"}}}};
  c = parse_config(to_json(c), "test");
  torch::manual_seed(6);
  Transformer model(c.model, 10, 16);
  auto& ky = dynamic_cast<KyAttention&>(*model->attention_modules()[0]);
  auto& g = ky.connection();
  auto within = [](const torch::Tensor& t, double bound) {
    const double top = t.abs().max().item<double>();
    CHECK(top <= bound);
    CHECK(top > 0.9 * bound);
  };
  within(g->w1, std::sqrt(6.0 / 65));   // 1 -> 64
  within(g->w2, std::sqrt(6.0 / 128));  // 64 -> 64
  within(g->w3, std::sqrt(6.0 / 65));   // 64 -> 1
  for (const auto* b : {&g->b1, &g->b2, &g->b3}) CHECK(b->abs().max().item<double>() == 0.0);
  // The default: nn.Linear's U(+-1/sqrt(fan_in)), biases included (b1's bound is 1).
  c.model.attention_options = {{"ky", {{"window", 4}, {"hidden", 64}}}};
  Transformer standard(c.model, 10, 16);
  auto& g2 = dynamic_cast<KyAttention&>(*standard->attention_modules()[0]).connection();
  within(g2->b1, 1.0);
  within(g2->w2, 1.0 / 8);
  CHECK_THROWS_WITH_AS(validate_attention_options("ky", {{"init", "he"}}),
                       doctest::Contains("model.attention_options.ky.init"), Error);
}

// Issue 34: connection "table", a free H x W slot bias in place of the g_h networks.
TEST_CASE("ky connection table: starts as the plain window, is the bias it holds, learns") {
  torch::manual_seed(21);
  const int D = 8, H = 2, W = 4, L = 7;
  KyAttention table(spec(D, H, true, {{"window", W}, {"connection", "table"}}));
  KyAttention none(spec(D, H, true, {{"window", W}, {"connection", "none"}}));
  table.to(torch::kDouble);
  none.to(torch::kDouble);
  copy_projections(none, table);
  CHECK(table.has_connection());
  CHECK(table.connection().is_empty());  // no networks
  // Parameters: the projections plus H * W, and the descriptor's count agrees.
  int64_t own = 0;
  for (const auto& p : table.parameters()) own += p.numel();
  CHECK(own == 4 * D * D + 4 * D + H * W);
  CHECK(attention_parameter_count("ky", D, H, {{"window", W}, {"connection", "table"}}) == own);
  // At zero the table is the plain window (connection "none").
  auto x = torch::randn({2, L, D}, kDouble);
  CHECK((table.forward(x) - none.forward(x)).abs().max().item<double>() < 1e-12);
  // Filled, it is exactly the bias windowed_attention adds, checked against the literal loop.
  auto values = torch::randn({H, W}, kDouble);
  {
    torch::NoGradGuard no_grad;
    table.bias_table().copy_(values);
  }
  CHECK((table.bias_table() - values).abs().max().item<double>() == 0.0);
  auto q = random_qkv(1, H, L, D / H);
  auto got = windowed_attention(q.q, q.k, q.v, table.bias_table(), W, W - 1, true);
  auto want = literal_ky(q.q, q.k, q.v, values, W, W - 1, true, 0.0);
  CHECK((got - want).abs().max().item<double>() < 1e-9);
  // The drawn curve passes through the slots and is straight between them.
  auto t = torch::tensor({0.0, 1.0 / 3, 0.5, 1.0}, kDouble);
  auto curve = table.connection_curve(t);
  CHECK(curve[1][0].item<double>() == doctest::Approx(values[1][0].item<double>()));
  CHECK(curve[1][1].item<double>() == doctest::Approx(values[1][1].item<double>()));
  CHECK(curve[0][2].item<double>() ==
        doctest::Approx(0.5 * (values[0][1].item<double>() + values[0][2].item<double>())));
  CHECK(curve[0][3].item<double>() == doctest::Approx(values[0][3].item<double>()));
  // Gradients reach the table.
  table.forward(x).pow(2).sum().backward();
  CHECK(table.bias_table().grad().abs().sum().item<double>() > 0);
  // reset zeroes it again.
  table.reset_own_parameters();
  CHECK(table.bias_table().abs().max().item<double>() == 0.0);
}
