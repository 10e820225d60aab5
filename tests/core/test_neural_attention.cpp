// Neural Attention against independent references, in double: the paper's concat-MLP score
// (eqs. 7-10) written as explicit loops, the literal [n, n, 2d'] tensor form, finite differences.
#include <doctest/doctest.h>

#include <cmath>

#include "core/attention/dot/dot_attention.h"
#include "core/attention/neural/neural_attention.h"
#include "core/attention/registry.h"
#include "core/base/error.h"
#include "core/config/config.h"
#include "core/models/model.h"
#include "core/random/run_random.h"
#include "core/training/session/session.h"
#include "tests/core/helpers.h"

using namespace attn;

namespace {

const auto kDouble = torch::TensorOptions().dtype(torch::kDouble);
const char* kActivations[] = {"relu", "gelu", "tanh"};

AttentionSpec spec(int D, int H, bool causal, nlohmann::json options) {
  AttentionSpec s;
  s.d_model = D;
  s.heads = H;
  s.causal = causal;
  s.options = std::move(options);
  return s;
}

double activation(const std::string& name, double z) {
  if (name == "relu") return z > 0 ? z : 0.0;
  if (name == "gelu") return 0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0)));
  return std::tanh(z);
}

struct LoopResult {
  torch::Tensor out;      // [B, L, D]
  torch::Tensor weights;  // [B, H, L, L]
};

// The module's forward written out from its parameters: the qkv projection, then for every
// (b, head, i, j) the down-projected q'_i and k'_j, their concatenation, the hidden layer
// W_h = [U V] unit by unit, the score, a softmax over j and the weighted sum of values.
// Shared scorers (a leading size 1) serve every head; keep (if defined, [B, H, L, L]) scales
// the weights before they meet the values (dropout), the returned weights are before it.
LoopResult loop_forward(NeuralAttention& m, const torch::Tensor& x, const std::string& act,
                        bool causal, const torch::Tensor& keep = torch::Tensor()) {
  torch::NoGradGuard no_grad;
  auto P = m.named_parameters();
  const int64_t B = x.size(0), L = x.size(1), D = x.size(2);
  const int64_t Dh = m.head_dim(), H = D / Dh, hidden = P["score_weight"].size(1);
  const bool shared = P["score_bias"].size(0) == 1 && H > 1;
  const bool down = P.find("query_down") != nullptr;
  const bool down_bias = P.find("query_down_bias") != nullptr;
  const int64_t d = down ? P["query_down"].size(2) : Dh;
  auto qkv = (torch::matmul(x, P["qkv.weight"].t()) + P["qkv.bias"]).contiguous();
  auto a = qkv.accessor<double, 3>();
  auto U = P["hidden_query"].accessor<double, 3>(), V = P["hidden_key"].accessor<double, 3>();
  auto bh = P["hidden_bias"].accessor<double, 2>(), wa = P["score_weight"].accessor<double, 2>();
  auto ba = P["score_bias"].accessor<double, 1>();
  auto y = torch::zeros({B, L, D}, kDouble);
  auto weights = torch::zeros({B, H, L, L}, kDouble);
  auto ya = y.accessor<double, 3>();
  auto wt = weights.accessor<double, 4>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t head = 0; head < H; ++head) {
      const int64_t hd = shared ? 0 : head;  // the scorer copy this head uses
      // q'_i, k'_j: q W_q' (+ b_q') (or q itself), from the [q | k | v] layout of the qkv
      // projection; the head's own slice of q, its scorer's projection.
      auto reduced = [&](int64_t token, int part, const char* proj, const char* bias) {
        std::vector<double> out(d, 0.0);
        for (int64_t e = 0; e < d; ++e)
          if (!down) {
            out[e] = a[b][token][part * D + head * Dh + e];
          } else {
            auto W = P[proj].accessor<double, 3>();
            for (int64_t t = 0; t < Dh; ++t)
              out[e] += a[b][token][part * D + head * Dh + t] * W[hd][t][e];
            if (down_bias) out[e] += P[bias].accessor<double, 2>()[hd][e];
          }
        return out;
      };
      for (int64_t i = 0; i < L; ++i) {
        const auto qi = reduced(i, 0, "query_down", "query_down_bias");
        std::vector<double> score(L, -INFINITY);
        for (int64_t j = 0; j < L; ++j) {
          if (causal && j > i) continue;
          const auto kj = reduced(j, 1, "key_down", "key_down_bias");
          std::vector<double> concat(qi);
          concat.insert(concat.end(), kj.begin(), kj.end());  // [q'_i ; k'_j], 2d'
          double s = ba[hd];
          for (int64_t c = 0; c < hidden; ++c) {
            double pre = bh[hd][c];
            for (int64_t e = 0; e < 2 * d; ++e)
              pre += (e < d ? U[hd][c][e] : V[hd][c][e - d]) * concat[e];
            s += wa[hd][c] * activation(act, pre);
          }
          score[j] = s / std::sqrt(static_cast<double>(Dh));
        }
        double top = -INFINITY, z = 0;
        for (double s : score) top = std::max(top, s);
        for (double s : score) z += std::exp(s - top);
        for (int64_t j = 0; j < L; ++j) {
          wt[b][head][i][j] = std::exp(score[j] - top) / z;
          const double kept =
              wt[b][head][i][j] * (keep.defined() ? keep[b][head][i][j].item<double>() : 1.0);
          for (int64_t t = 0; t < Dh; ++t)
            ya[b][i][head * Dh + t] += kept * a[b][j][2 * D + head * Dh + t];
        }
      }
    }
  return {torch::matmul(y, P["out.weight"].t()) + P["out.bias"], weights};
}

double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

}  // namespace

TEST_CASE("neural attention module equals the paper's concat-MLP score written as loops") {
  torch::manual_seed(17);
  const int D = 8, H = 2, L = 5;
  for (const char* act : kActivations)
    for (const nlohmann::json& down : {nlohmann::json(2), nlohmann::json("none")})
      for (const bool causal : {true, false}) {
        CAPTURE(act);
        CAPTURE(down.dump());
        CAPTURE(causal);
        NeuralAttention m(
            spec(D, H, causal, {{"down", down}, {"hidden", 3}, {"activation", act}, {"chunk", 2}}));
        m.to(torch::kDouble);
        m.record_weights = true;
        auto x = torch::randn({2, L, D}, kDouble);
        auto got = m.forward(x);
        auto want = loop_forward(m, x, act, causal);
        CHECK(max_abs_diff(got, want.out) < 1e-12);
        REQUIRE(m.recorded_weights.defined());
        CHECK(!m.recorded_weights.requires_grad());
        CHECK(max_abs_diff(m.recorded_weights, want.weights) < 1e-12);
      }
}

TEST_CASE(
    "neural_attention_reference equals the literal form at every chunk size, with gradients") {
  torch::manual_seed(23);
  const int64_t B = 2, H = 2, n = 7, d = 3, hidden = 4, Dv = 5;
  const double scale = 1.0 / std::sqrt(6.0);
  for (const char* act_name : kActivations)
    for (const bool causal : {true, false}) {
      CAPTURE(act_name);
      CAPTURE(causal);
      const auto act = parse_neural_activation(act_name);
      std::vector<torch::Tensor> inputs = {torch::randn({B, H, n, d}, kDouble),
                                           torch::randn({B, H, n, d}, kDouble),
                                           torch::randn({H, hidden, d}, kDouble),
                                           torch::randn({H, hidden, d}, kDouble),
                                           torch::randn({H, hidden}, kDouble),
                                           torch::randn({H, hidden}, kDouble),
                                           torch::randn({H}, kDouble),
                                           torch::randn({B, H, n, Dv}, kDouble)};
      for (auto& t : inputs) t.set_requires_grad(true);
      const auto &q = inputs[0], &k = inputs[1], &u = inputs[2], &v_w = inputs[3], &b_h = inputs[4],
                 &w_a = inputs[5], &b_a = inputs[6], &values = inputs[7];
      auto probe = torch::randn({B, H, n, Dv}, kDouble);
      auto gradients = [&](const torch::Tensor& out) {
        return torch::autograd::grad({(out * probe).sum()}, inputs, {}, false, false, true);
      };

      torch::Tensor literal_weights;
      auto literal = neural_attention_literal(q, k, u, v_w, b_h, w_a, b_a, values, act, scale,
                                              causal, &literal_weights);
      auto literal_grads = gradients(literal);
      // Autograd through the literal form leaves only rounding noise on b_a.
      CHECK(literal_grads[6].abs().max().item<double>() < 1e-12);

      for (const int64_t chunk : {int64_t(1), int64_t(3), n, n + 5}) {
        CAPTURE(chunk);
        auto p = torch::matmul(q, u.transpose(1, 2).unsqueeze(0)) + b_h.view({1, H, 1, hidden});
        auto r = torch::matmul(k, v_w.transpose(1, 2).unsqueeze(0));
        torch::Tensor weights;
        auto out =
            neural_attention_reference(p, r, w_a, b_a, values, act, scale, causal, chunk, &weights);
        CHECK(max_abs_diff(out, literal) < 1e-12);
        CHECK(max_abs_diff(weights, literal_weights) < 1e-12);
        auto grads = gradients(out);
        for (size_t g = 0; g < inputs.size(); ++g) {
          CAPTURE(g);
          REQUIRE(grads[g].defined());
          if (g == 6)
            CHECK(grads[g].abs().max().item<double>() == 0.0);  // b_a: exactly zero
          else
            CHECK(max_abs_diff(grads[g], literal_grads[g]) < 1e-11);
        }
      }
    }
}

TEST_CASE("neural attention language model is causal") {
  for (const char* act : kActivations) {
    CAPTURE(act);
    ExperimentConfig c = test::tiny_config("copy");
    c.model.attention = {"neural", "neural"};
    c.model.attention_options = {
        {"neural", {{"placement", "all-layers"}, {"activation", act}, {"chunk", 3}}}};
    torch::manual_seed(4);
    Transformer model(c.model, 12, 10);
    model->to(torch::kDouble);
    model->eval();
    REQUIRE(dynamic_cast<NeuralAttention*>(model->attention_modules()[1].get()) != nullptr);
    auto tokens = torch::randint(0, 12, {2, 10}, torch::kLong);
    auto base = model->forward(tokens);
    for (int p : {0, 4, 7, 9}) {
      auto changed = tokens.clone();
      changed[0][p] = (changed[0][p].item<int64_t>() + 5) % 12;
      auto out = model->forward(changed);
      if (p > 0) CHECK(max_abs_diff(out[0].narrow(0, 0, p), base[0].narrow(0, 0, p)) == 0.0);
      CHECK((out[0][p] - base[0][p]).abs().max().item<double>() > 0.0);
    }
  }
}

TEST_CASE("neural attention gradients match central finite differences; b_a's is exactly zero") {
  torch::manual_seed(31);
  const int D = 6, H = 2, L = 5, hidden = 3;
  for (const char* act : kActivations)
    for (const nlohmann::json& down : {nlohmann::json(2), nlohmann::json("none")}) {
      CAPTURE(act);
      CAPTURE(down.dump());
      NeuralAttention m(spec(
          D, H, true, {{"down", down}, {"hidden", hidden}, {"activation", act}, {"chunk", 2}}));
      m.to(torch::kDouble);
      auto x = torch::randn({2, L, D}, kDouble);
      auto probe = torch::randn({2, L, D}, kDouble);
      auto loss = [&] { return (m.forward(x) * probe).sum(); };
      m.zero_grad();
      loss().backward();
      REQUIRE(m.score_bias().grad().defined());
      CHECK(m.score_bias().grad().abs().max().item<double>() == 0.0);

      torch::NoGradGuard no_grad;
      const double h = 1e-6;
      std::map<std::string, int> checked;
      for (auto& p : m.named_parameters()) {
        if (p.key().rfind("out.", 0) == 0) continue;  // a plain linear layer after the mechanism
        auto flat = p.value().view(-1);
        auto grad = p.value().grad().view(-1);
        for (int64_t e = 0; e < flat.numel(); ++e) {
          const double keep = flat[e].item<double>();
          flat[e] = keep + h;
          const double up = loss().item<double>();
          flat[e] = keep - h;
          const double below = loss().item<double>();
          flat[e] = keep;
          const double fd = (up - below) / (2 * h);
          CAPTURE(p.key());
          CAPTURE(e);
          if (p.key() == "score_bias")
            CHECK(std::abs(fd) < 1e-8);  // the output does not depend on b_a
          else
            CHECK(grad[e].item<double>() == doctest::Approx(fd).epsilon(1e-6).scale(1.0));
          ++checked[p.key()];
        }
      }
      const int d = down.is_number() ? 2 : D / H;
      CHECK(checked["qkv.weight"] == D * 3 * D);
      CHECK(checked["query_down"] == (down.is_number() ? H * (D / H) * d : 0));
      CHECK(checked["key_down"] == (down.is_number() ? H * (D / H) * d : 0));
      CHECK(checked["hidden_query"] == H * hidden * d);
      CHECK(checked["hidden_key"] == H * hidden * d);
      CHECK(checked["hidden_bias"] == H * hidden);
      CHECK(checked["score_weight"] == H * hidden);
      CHECK(checked["score_bias"] == H);
    }
}

TEST_CASE("neural options: degenerate and bad settings are refused with the key path") {
  auto refuses = [](nlohmann::json neural, const std::string& fragment) {
    ExperimentConfig c = test::tiny_config();
    nlohmann::json j = to_json(c);
    j["model"]["attention"] = "neural";
    j["model"]["attention_options"] = {{"neural", neural}};
    try {
      parse_config(j, "cfg.json");
      FAIL("accepted " << neural.dump());
    } catch (const Error& e) {
      CAPTURE(e.what());
      CHECK(std::string(e.what()).find(fragment) != std::string::npos);
    }
  };
  refuses({{"hidden", 0}}, "model.attention_options.neural.hidden must not be 0: with no hidden");
  refuses({{"hidden", -3}}, "model.attention_options.neural.hidden must be in [1, 4096]");
  refuses({{"hidden", 2.5}}, "model.attention_options.neural.hidden must be an integer");
  refuses({{"down", 0}}, "model.attention_options.neural.down must not be 0: d' = 0 leaves");
  refuses({{"down", -2}}, "model.attention_options.neural.down must be in [1, 4096]");
  refuses({{"down", "full"}}, "model.attention_options.neural.down must be a positive integer");
  refuses({{"activation", "linear"}},
          "model.attention_options.neural.activation \"linear\" is refused: a linear scorer");
  refuses({{"activation", "identity"}}, "the attention would ignore the query");
  refuses({{"activation", "swish"}}, "model.attention_options.neural.activation must be one of");
  refuses({{"placement", "last-layer"}}, "model.attention_options.neural.placement must be one of");
  refuses({{"chunk", 0}}, "model.attention_options.neural.chunk must be in [1, ");
  refuses({{"hiden", 8}}, "unknown key 'model.attention_options.neural.hiden'");
  refuses(nlohmann::json::array(), "model.attention_options.neural must be an object");

  // d' beyond the head width is no down-projection: refused when the module knows Dh.
  CHECK_THROWS_WITH_AS(NeuralAttention(spec(8, 2, true, {{"down", 5}})),
                       doctest::Contains("model.attention_options.neural.down (5) must not "
                                         "exceed the head width Dh = d_model / heads = 4"),
                       Error);
  CHECK_NOTHROW(NeuralAttention(spec(8, 2, true, {{"down", 4}})));
  CHECK_THROWS_WITH_AS(parse_neural_activation("sigmoid"), doctest::Contains("sigmoid"), Error);
  for (const char* act : kActivations)
    CHECK(std::string(neural_activation_name(parse_neural_activation(act))) == act);
  CHECK(!attention_mechanism_options_help("neural").empty());
}

TEST_CASE("placement first-layer puts neural attention in layer 0 and dot attention after") {
  auto build = [](nlohmann::json options) {
    ExperimentConfig c = test::tiny_config("copy");  // 2 layers, d_model 16, 2 heads
    c.model.attention = {"neural"};
    c.model.attention_options = {{"neural", std::move(options)}};
    c = parse_config(to_json(c));
    return Transformer(c.model, 12, 8);
  };
  auto names = [](const std::shared_ptr<AttentionModule>& a) {
    std::vector<std::string> n;
    for (const auto& p : a->named_parameters()) n.push_back(p.key());
    std::sort(n.begin(), n.end());
    return n;
  };
  const std::vector<std::string> dot_names = {"out.bias", "out.weight", "qkv.bias", "qkv.weight"};
  const std::vector<std::string> neural_names = {
      "hidden_bias", "hidden_key", "hidden_query", "key_down",   "out.bias",    "out.weight",
      "qkv.bias",    "qkv.weight", "query_down",   "score_bias", "score_weight"};

  auto first = build(nlohmann::json::object());  // the default placement
  auto layers = first->attention_modules();
  REQUIRE(layers.size() == 2);
  CHECK(dynamic_cast<NeuralAttention*>(layers[0].get()) != nullptr);
  CHECK(dynamic_cast<DotAttention*>(layers[1].get()) != nullptr);
  CHECK(names(layers[0]) == neural_names);
  CHECK(names(layers[1]) == dot_names);
  // One neural layer (d' = 2, h = 64, 2 heads of 8) and one dot layer.
  const int64_t dot = 16 * 48 + 48 + 16 * 16 + 16;
  const int64_t scorer = 2 * (2 * 8 * 2) + 2 * (2 * 64 * 2) + 2 * 64 + 2 * 64 + 2;
  CHECK(first->attention_parameter_count() == 2 * dot + scorer);

  auto all = build({{"placement", "all-layers"}, {"down", "none"}});
  for (const auto& a : all->attention_modules()) {
    auto* neural = dynamic_cast<NeuralAttention*>(a.get());
    REQUIRE(neural != nullptr);
    CHECK(!neural->has_down_projection());
    CHECK(neural->reduced_dim() == 8);
  }
}

TEST_CASE("a model with neural attention trains: loss falls on copy, b_a never moves") {
  ExperimentConfig c = test::tiny_config("copy");
  c.model.attention = {"neural"};
  c.model.attention_options = {{"neural", {{"hidden", 16}}}};
  c.train.steps = 300;
  c.train.lr = 1e-2;
  c = parse_config(to_json(c));
  TrainingSession session(c);
  auto* neural = dynamic_cast<NeuralAttention*>(session.model()->attention_modules()[0].get());
  REQUIRE(neural != nullptr);
  // The scorer kept its own init: GPT-2's N(0, 0.02) would make every score nearly constant.
  CHECK(neural->named_parameters()["score_weight"].abs().max().item<float>() > 0.1f);
  const auto score_weight_before = neural->named_parameters()["score_weight"].clone();
  const auto score_bias_before = neural->score_bias().clone();

  const double first = session.train_step();
  double last = first;
  for (int s = 1; s < 300; ++s) last = session.train_step();
  CHECK(last < 0.7 * first);
  // The scorer learned; b_a, whose gradient is exactly zero, stayed where it started.
  CHECK(max_abs_diff(neural->named_parameters()["score_weight"], score_weight_before) > 1e-3);
  REQUIRE(neural->score_bias().grad().defined());
  CHECK(neural->score_bias().grad().abs().max().item<float>() == 0.0f);
  CHECK(max_abs_diff(neural->score_bias(), score_bias_before) == 0.0);
}

TEST_CASE("neural: share_across_heads and down_bias equal the loops; parameters counted by hand") {
  torch::manual_seed(31);
  const int D = 8, H = 2;  // Dh 4, d' 2, h 3
  // By hand: qkv + out = 4 D^2 + 4 D = 288; Wq', Wk' 2 x Dh x d' = 16 per copy; bq', bk'
  // 2 x d' = 4 per copy; U, V 2 x h x d' = 12, b_h 3, w_a 3, b_a 1: 19 per copy.
  struct Case {
    bool shared, bias;
    int64_t params;
  };
  for (const Case c :
       {Case{false, false, 288 + 2 * 16 + 2 * 19}, Case{false, true, 288 + 2 * (16 + 4) + 2 * 19},
        Case{true, false, 288 + 16 + 19}, Case{true, true, 288 + 16 + 4 + 19}}) {
    CAPTURE(c.shared);
    CAPTURE(c.bias);
    const nlohmann::json o = {{"down", 2},
                              {"hidden", 3},
                              {"chunk", 2},
                              {"share_across_heads", c.shared},
                              {"down_bias", c.bias}};
    NeuralAttention m(spec(D, H, true, o));
    m.to(torch::kDouble);
    int64_t numel = 0;
    for (const auto& p : m.parameters()) numel += p.numel();
    CHECK(numel == c.params);
    CHECK(attention_parameter_count("neural", D, H, o) == c.params);
    auto x = torch::randn({2, 5, D}, kDouble);
    CHECK(max_abs_diff(m.forward(x), loop_forward(m, x, "relu", true).out) < 1e-12);
    if (!c.shared) continue;
    // A second implementation: the per-head module with the shared copy in every head.
    nlohmann::json per_head = o;
    per_head["share_across_heads"] = false;
    NeuralAttention p(spec(D, H, true, per_head));
    p.to(torch::kDouble);
    torch::NoGradGuard no_grad;
    auto dst = p.named_parameters();
    for (const auto& src : m.named_parameters())
      dst[src.key()].copy_(src.value().expand_as(dst[src.key()]));
    CHECK(max_abs_diff(m.forward(x), p.forward(x)) < 1e-12);
  }
}

TEST_CASE("neural: dropout acts on the weights (the loops with the same mask), gradients too") {
  torch::manual_seed(32);
  const int D = 8, H = 2, L = 6;
  AttentionSpec s = spec(D, H, true, {{"down", 2}, {"hidden", 3}, {"chunk", 4}});
  s.dropout = 0.4;
  NeuralAttention m(s);
  m.to(torch::kDouble);
  m.train();
  auto gen = make_private_generator(torch::kCPU, 0);
  // Every draw reseeded: the module draws exactly one mask, the [B, H, L, L] weight scale.
  auto seeded_forward = [&](const torch::Tensor& x) {
    gen.set_current_seed(77);
    DropoutStreamScope scope(&gen);
    return m.forward(x);
  };
  auto x = torch::randn({2, L, D}, kDouble);
  torch::Tensor keep;
  {
    gen.set_current_seed(77);
    DropoutStreamScope scope(&gen);
    keep = run_dropout(torch::ones({2, H, L, L}, kDouble), 0.4);
  }
  const auto want = loop_forward(m, x, "relu", true, keep);
  CHECK(max_abs_diff(seeded_forward(x), want.out) < 1e-12);
  CHECK(max_abs_diff(seeded_forward(x), loop_forward(m, x, "relu", true).out) > 1e-3);
  m.eval();  // no dropout in evaluation
  CHECK(max_abs_diff(m.forward(x), loop_forward(m, x, "relu", true).out) < 1e-12);
  m.train();
  // The chunked backward with the mask against central differences of the same masked forward.
  auto xg = x.clone().requires_grad_(true);
  auto w = torch::randn({2, L, D}, kDouble);
  (seeded_forward(xg) * w).sum().backward();
  const double h = 1e-6;
  double worst = 0;
  torch::NoGradGuard no_grad;
  for (int64_t i = 0; i < x.numel(); ++i) {
    auto xp = x.clone(), xm = x.clone();
    xp.view(-1)[i] += h;
    xm.view(-1)[i] -= h;
    const double numeric = ((seeded_forward(xp) * w).sum().item<double>() -
                            (seeded_forward(xm) * w).sum().item<double>()) /
                           (2 * h);
    worst = std::max(worst, std::abs(numeric - xg.grad().view(-1)[i].item<double>()));
  }
  CHECK(worst < 1e-7);
}

TEST_CASE("neural: alibi adds -m_h (i - j) to the scaled scores, as the loops with the bias") {
  torch::manual_seed(33);
  AttentionSpec s = spec(8, 2, true, {{"down", 2}, {"hidden", 3}, {"chunk", 3}});
  s.position = "alibi";
  NeuralAttention with(s);
  with.to(torch::kDouble);
  s.position = "learned";
  NeuralAttention without(s);
  without.to(torch::kDouble);
  {
    torch::NoGradGuard no_grad;
    auto dst = without.named_parameters();
    for (const auto& p : with.named_parameters()) dst[p.key()].copy_(p.value());
  }
  // Equivalent: a bias -m_h (i - j) on the logits; here through the literal form's weights.
  with.record_weights = without.record_weights = true;
  auto x = torch::randn({1, 5, 8}, kDouble);
  with.forward(x);
  without.forward(x);
  const double slopes[2] = {1.0 / 16, 1.0 / 256};  // Press et al., 2 heads: 2^-4, 2^-8
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 5; ++i) {
      // softmax(s + b) from softmax(s): multiply by exp(b) and renormalise.
      double z = 0;
      for (int j = 0; j <= i; ++j)
        z += without.recorded_weights[0][h][i][j].item<double>() * std::exp(-slopes[h] * (i - j));
      for (int j = 0; j <= i; ++j)
        CHECK(with.recorded_weights[0][h][i][j].item<double>() ==
              doctest::Approx(without.recorded_weights[0][h][i][j].item<double>() *
                              std::exp(-slopes[h] * (i - j)) / z)
                  .epsilon(1e-12));
    }
}

TEST_CASE("neural: down_bias without a down-projection is refused naming the key") {
  CHECK_THROWS_WITH_AS(
      validate_attention_options("neural", {{"down", "none"}, {"down_bias", true}}),
      doctest::Contains("model.attention_options.neural.down_bias"), Error);
  CHECK_THROWS_WITH_AS(validate_attention_options("neural", {{"share_across_heads", "yes"}}),
                       doctest::Contains("model.attention_options.neural.share_across_heads"),
                       Error);
}

TEST_CASE(
    "neural: scorer literal (the paper's [T, T, 2d'] form) equals split in output and "
    "gradients; dropout and ALiBi refused") {
  torch::manual_seed(33);
  const int D = 8, H = 2;  // Dh 4
  for (const nlohmann::json down : {nlohmann::json(2), nlohmann::json("none")}) {
    CAPTURE(down.dump());
    nlohmann::json o = {{"down", down}, {"hidden", 3}, {"activation", "gelu"}};
    NeuralAttention split(spec(D, H, true, o));
    o["scorer"] = "literal";
    NeuralAttention literal(spec(D, H, true, o));
    split.to(torch::kDouble);
    literal.to(torch::kDouble);
    {
      torch::NoGradGuard no_grad;
      auto dst = literal.named_parameters();
      for (const auto& src : split.named_parameters()) dst[src.key()].copy_(src.value());
    }
    auto x = torch::randn({2, 6, D}, kDouble);
    const auto a = split.forward(x), b = literal.forward(x);
    CHECK(max_abs_diff(a, b) < 1e-12);
    CHECK(max_abs_diff(b, loop_forward(literal, x, "gelu", true).out) < 1e-12);
    (a * a).sum().backward();
    (b * b).sum().backward();
    for (const auto& p : split.named_parameters())
      if (p.key() != "score_bias")
        CHECK(max_abs_diff(p.value().grad(), literal.named_parameters()[p.key()].grad()) < 1e-10);
  }
  auto with_dropout = spec(D, H, true, {{"scorer", "literal"}});
  with_dropout.dropout = 0.1;
  CHECK_THROWS_WITH_AS(NeuralAttention{with_dropout}, doctest::Contains("scorer \"literal\""),
                       attn::Error);
  auto with_alibi = spec(D, H, true, {{"scorer", "literal"}});
  with_alibi.position = "alibi";
  CHECK_THROWS_WITH_AS(NeuralAttention{with_alibi}, doctest::Contains("no dropout and no ALiBi"),
                       attn::Error);
  CHECK_THROWS_WITH_AS(parse_neural_options({{"scorer", "dense"}}), doctest::Contains("scorer"),
                       attn::Error);
}
