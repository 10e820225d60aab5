#include "core/models/conn_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/base/error.h"

namespace attn {
namespace {
using Clock = std::chrono::steady_clock;

std::vector<float> to_floats(const torch::Tensor& t) {
  auto c = t.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}
}  // namespace

torch::Tensor mix_slots(const torch::Tensor& c, const torch::Tensor& h) {
  // sum_i c[i, j] h[..., i, :] = (c^T h)[..., j, :]; matmul broadcasts c^T over the batch.
  return torch::matmul(c.t(), h);
}

torch::Tensor mix_literal(const torch::Tensor& h, const torch::Tensor& c) {
  if (h.size(-1) != c.size(0))
    throw Error("model.conn.mixing \"literal\" computes H_state @ C, which needs N == D: C is " +
                std::to_string(c.size(0)) + " x " + std::to_string(c.size(1)) +
                " (N = " + std::to_string(c.size(0)) +
                ") but the slot states have D = " + std::to_string(h.size(-1)) + " features");
  return torch::matmul(h, c);
}

ConnModelImpl::ConnModelImpl(const ModelConfig& m, int vocab, int max_length)
    : o_(m.conn), d_(m.d_model), vocab_(vocab), max_length_(max_length) {
  if (o_.mixing == "literal" && o_.slots != d_)
    throw Error("model.conn.mixing \"literal\" needs model.conn.slots (N = " +
                std::to_string(o_.slots) + ") == model.d_model (D = " + std::to_string(d_) + ")");
  torch::NoGradGuard no_grad;
  token_ = register_module("token", torch::nn::Embedding(vocab, d_));
  position_ = register_parameter("position", torch::randn({max_length, d_}) * 0.02);
  torch::nn::init::normal_(token_->weight, 0.0, 0.02);
  slots = register_buffer("slots", torch::randn({o_.slots, d_}));
  connection = register_parameter(
      "connection", torch::randn({o_.connection_heads, o_.slots, o_.slots}) * o_.init_std);
  auto linear = [&](const char* name, int out) {
    auto l =
        register_module(name, torch::nn::Linear(torch::nn::LinearOptions(d_, out).bias(false)));
    return l;
  };
  wq_in_ = linear("wq_in", d_);
  wk_slots_ = linear("wk_slots", d_);
  wv_in_ = linear("wv_in", d_);
  wq_out_ = linear("wq_out", d_);
  wk_final_ = linear("wk_final", d_);
  wv_final_ = linear("wv_final", d_);
  vocab_head_ = linear("vocab_head", vocab);
  for (auto* l : {&wq_in_, &wk_slots_, &wv_in_, &wq_out_, &wk_final_, &wv_final_})
    torch::nn::init::xavier_uniform_((*l)->weight);
  torch::nn::init::normal_(vocab_head_->weight, 0.0, 0.02);
  for (int k = 0; k < o_.steps; ++k)
    norms_.push_back(register_module("norm" + std::to_string(k),
                                     torch::nn::LayerNorm(torch::nn::LayerNormOptions({d_}))));
}

torch::Tensor ConnModelImpl::embed(const torch::Tensor& tokens) {
  if (tokens.is_floating_point() || tokens.dim() != 2)
    throw Error("the conn model takes int64 tokens [B, L], got " + tokens.toString() + " " +
                c10::str(tokens.sizes()));
  const int64_t L = tokens.size(1);
  if (L > position_.size(0))
    throw Error("input of " + std::to_string(L) + " tokens is longer than the model's " +
                std::to_string(position_.size(0)) + " positions");
  return token_->forward(tokens) + position_.slice(0, 0, L).unsqueeze(0);
}

// Per-prefix H_0: [B, L, N, D], H_0[b, t] = H + sum_{s <= t} A[b, s, :]^T v[b, s].
torch::Tensor ConnModelImpl::compress(const torch::Tensor& x) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(d_));
  auto q = wq_in_->forward(x);                                   // [B, L, D]
  auto k = wk_slots_->forward(slots);                            // [N, D]
  auto v = wv_in_->forward(x);                                   // [B, L, D]
  auto a = torch::softmax(torch::matmul(q, k.t()) * scale, -1);  // [B, L, N]
  auto contrib = a.unsqueeze(-1) * v.unsqueeze(2);               // [B, L, N, D]
  return slots + torch::cumsum(contrib, 1);
}

torch::Tensor ConnModelImpl::effective_connection() const {
  return o_.connection_heads == 1 ? connection[0] : connection.mean(0);
}

torch::Tensor ConnModelImpl::reason(torch::Tensor h, std::vector<torch::Tensor>* trace) {
  auto c = effective_connection();
  const bool literal = o_.mixing == "literal";
  const bool gelu = o_.variant == "nonlinear";
  if (trace) trace->push_back(h);
  for (int k = 0; k < o_.steps; ++k) {
    auto infl = literal ? mix_literal(h, c) : mix_slots(c, h);
    h = norms_[k]->forward(h + (gelu ? torch::gelu(infl) : infl));
    if (trace) trace->push_back(h);
  }
  return h;
}

torch::Tensor ConnModelImpl::forward(const torch::Tensor& tokens) {
  auto x = embed(tokens);                 // [B, L, D]
  auto h = reason(compress(x), nullptr);  // [B, L, N, D]
  const double scale = 1.0 / std::sqrt(static_cast<double>(d_));
  auto kf = wk_final_->forward(h), vf = wv_final_->forward(h);             // [B, L, N, D]
  auto qo = wq_out_->forward(x).unsqueeze(-1);                             // [B, L, D, 1]
  auto a = torch::softmax(torch::matmul(kf, qo).squeeze(-1) * scale, -1);  // [B, L, N]
  auto y = torch::matmul(a.unsqueeze(-2), vf).squeeze(-2);                 // [B, L, D]
  return vocab_head_->forward(y);
}

std::vector<torch::Tensor> ConnModelImpl::reasoning_states(const torch::Tensor& tokens) {
  auto x = embed(tokens.slice(0, 0, 1));
  auto h0 = compress(x);  // [1, L, N, D]
  std::vector<torch::Tensor> trace;
  reason(h0[0][h0.size(1) - 1], &trace);
  return trace;
}

torch::Tensor ConnModelImpl::regularization() const {
  if (o_.regularization == 0) return torch::zeros({}, connection.options());
  return connection.pow(2).sum() * o_.regularization;
}

bool ConnModelImpl::apply_control() {
  const auto control = spectral::parse_control(o_.control);
  if (control == spectral::Control::None) return false;
  torch::NoGradGuard no_grad;
  bool changed = false;
  for (int64_t j = 0; j < connection.size(0); ++j) {
    auto cj = connection[j];
    changed = spectral::apply_control(cj, control, o_.limit) || changed;
  }
  return changed;
}

int64_t ConnModelImpl::spec_parameter_formula(int64_t n, int64_t d, int64_t s, int64_t v) {
  return n * n + 8 * d * d + s * d + v * d;
}

int64_t ConnModelImpl::parameter_formula(const ConnConfig& c, int64_t d, int64_t s, int64_t v) {
  const int64_t n = c.slots;
  return c.connection_heads * n * n + 6 * d * d + 2 * v * d + s * d + 2 * int64_t(c.steps) * d;
}

// ---------------------------------------------------------------------------------------------

ConnMonitor::ConnMonitor(ConnModelImpl& model, int64_t parameters, int64_t spec_formula,
                         int64_t step) {
  const auto& o = model.options();
  base_.slots = o.slots;
  base_.d_model = model.d_model();
  base_.steps = o.steps;
  base_.heads = o.connection_heads;
  base_.mixing = o.mixing;
  base_.variant = o.variant;
  base_.control = o.control;
  base_.limit = o.limit;
  base_.tracking = o.track;
  base_.parameters = parameters;
  base_.spec_formula = spec_formula;
  const auto t0 = Clock::now();
  auto m = spectral::shifted(model.effective_connection());
  record_eigen(m, step);
  record_matrix(model, step);
  if (o.track) {
    const auto e = tracker_.update(m, 8);  // a cold start: a few cycles
    rho_.add(step, static_cast<float>(e.spectral_radius));
    norm_.add(step, static_cast<float>(e.spectral_norm));
  }
  tracking_seconds_ += seconds_since(t0);
}

void ConnMonitor::record_eigen(const torch::Tensor& m, int64_t step) {
  const auto t0 = Clock::now();
  const auto eig = spectral::eigenvalues(m);
  base_.eigen_re.resize(eig.size());
  base_.eigen_im.resize(eig.size());
  base_.exact_radius = 0;
  for (size_t i = 0; i < eig.size(); ++i) {
    base_.eigen_re[i] = static_cast<float>(eig[i].real());
    base_.eigen_im[i] = static_cast<float>(eig[i].imag());
    base_.exact_radius = std::max(base_.exact_radius, std::abs(eig[i]));
  }
  base_.exact_norm = spectral::spectral_norm(m);
  base_.eigen_step = step;
  last_eigen_ = Clock::now();
  eigen_seconds_ = seconds_since(t0);
}

void ConnMonitor::record_matrix(ConnModelImpl& model, int64_t step) {
  auto c = std::make_shared<std::vector<float>>(to_floats(model.effective_connection()));
  base_.stats = compute_conn_stats(c->data(), base_.slots, model.options().link_threshold);
  base_.matrix = std::move(c);
  base_.matrix_step = step;
}

void ConnMonitor::after_step(ConnModelImpl& model, int64_t step, bool last) {
  if (model.apply_control()) ++base_.control_events;
  const auto& o = model.options();
  if (!o.track) return;
  const auto t0 = Clock::now();
  torch::NoGradGuard no_grad;
  auto m = spectral::shifted(model.effective_connection());
  const auto e = tracker_.update(m, 1);
  rho_.add(step, static_cast<float>(e.spectral_radius));
  norm_.add(step, static_cast<float>(e.spectral_norm));
  // All eigenvalues (O(N^3)): every eigen_every steps, and never more than 0.5% of the time
  // (at N = 512 one eigendecomposition costs about as much as a training step).
  if (last || (step % o.eigen_every == 0 && seconds_since(last_eigen_) * 0.005 >= eigen_seconds_)) {
    record_eigen(m, step);
    if (base_.exact_radius > 0 && base_.exact_norm > 0)
      base_.estimate_error =
          std::max({base_.estimate_error, std::abs(e.spectral_radius / base_.exact_radius - 1),
                    std::abs(e.spectral_norm / base_.exact_norm - 1)});
  }
  if (last || step % o.matrix_every == 0) record_matrix(model, step);
  tracking_seconds_ += seconds_since(t0);
}

void ConnMonitor::probe(ConnModelImpl& model, const torch::Tensor& input, int64_t step) {
  torch::NoGradGuard no_grad;
  auto states = model.reasoning_states(input);
  std::vector<float> trace;
  for (const auto& s : states) {
    auto norms = to_floats(s.norm(2, -1));
    trace.insert(trace.end(), norms.begin(), norms.end());
  }
  base_.trace = std::move(trace);
  base_.trace_step = step;
  if (base_.matrix_step != step) record_matrix(model, step);
}

std::shared_ptr<const ConnView> ConnMonitor::view() const {
  auto v = std::make_shared<ConnView>(base_);
  v->spectral_radius = rho_.series();
  v->spectral_norm = norm_.series();
  return v;
}

std::string ConnMonitor::matrix_csv(ConnModelImpl& model) {
  const auto c = to_floats(model.effective_connection());
  const int n = model.options().slots;
  std::string out;
  char buf[32];
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      std::snprintf(buf, sizeof buf, "%.9g", c[static_cast<size_t>(i) * n + j]);
      out += buf;
      out += j + 1 < n ? "," : "\n";
    }
  return out;
}

// conn.json's "stats" holds ConnStats by field name (frobenius and max_abs go under "final");
// a link is [from, to, value].
void to_json(nlohmann::json& j, const ConnLink& l) {
  j = nlohmann::json::array({l.from, l.to, l.value});
}
void from_json(const nlohmann::json& j, ConnLink& l) {
  j.at(0).get_to(l.from), j.at(1).get_to(l.to), j.at(2).get_to(l.value);
}
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ConnStats, threshold, strongest, inhibitory, sparsity, edges,
                                   self_loops, cyclic_components, nodes_on_cycles, cycles)

nlohmann::json ConnMonitor::to_json(ConnModelImpl& model) const {
  using nlohmann::json;
  auto series = [](const Series& s) {
    json out = json::array();
    for (size_t i = 0; i < s.steps.size(); ++i) out.push_back({s.steps[i], s.values[i]});
    return out;
  };
  auto m = spectral::shifted(model.effective_connection());
  json eig = json::array();
  double rho = 0;
  for (const auto& z : spectral::eigenvalues(m)) {
    eig.push_back({z.real(), z.imag()});
    rho = std::max(rho, std::abs(z));
  }
  auto c = to_floats(model.effective_connection());
  const auto stats = compute_conn_stats(c.data(), base_.slots, model.options().link_threshold);
  return json{{"slots", base_.slots},
              {"d_model", base_.d_model},
              {"steps", base_.steps},
              {"control", base_.control},
              {"limit", base_.limit},
              {"control_events", base_.control_events},
              {"parameters", base_.parameters},
              {"spec_formula_parameters", base_.spec_formula},
              {"final",
               {{"spectral_radius", rho},
                {"spectral_norm", spectral::spectral_norm(m)},
                {"frobenius", stats.frobenius},
                {"max_abs", stats.max_abs},
                {"eigenvalues", eig}}},
              {"stats", stats},
              {"tracking_seconds", tracking_seconds_},
              {"estimate_error_at_refreshes", base_.estimate_error},
              {"spectral_radius_estimate", series(rho_.series())},
              {"spectral_norm_estimate", series(norm_.series())}};
}

}  // namespace attn
