#include "core/attention/ky/ky_attention.h"

#include <cmath>

#include "core/attention/fused_attention.h"
#include "core/attention/ky/ky_view.h"
#include "core/base/error.h"
#include "core/random/run_random.h"
#ifdef ATTN_WITH_CUDA
#include "core/attention/cuda_ops.h"
#endif

namespace attn {

std::shared_ptr<AttentionModule> make_ky_attention(const AttentionSpec& spec) {
  return std::make_shared<KyAttention>(spec);
}

torch::Tensor windowed_attention(const torch::Tensor& q, const torch::Tensor& k,
                                 const torch::Tensor& v, const torch::Tensor& bias, int window,
                                 int first_offset, bool masked_edges, double dropout, bool training,
                                 torch::Tensor* band_weights) {
#ifdef ATTN_WITH_CUDA
  // The kernel has no dropout and never forms the band weights (the probe asks for them).
  const bool fused = fused_kernels_enabled() && q.is_cuda() && !band_weights &&
                     !(dropout > 0 && training) && q.size(3) <= cuda::kKyMaxHeadDim &&
                     (q.scalar_type() == torch::kFloat || q.scalar_type() == torch::kDouble);
  if (fused) return cuda::ky_window(q, k, v, bias, window, first_offset, masked_edges);
#endif
  return windowed_attention_reference(q, k, v, bias, window, first_offset, masked_edges, dropout,
                                      training, band_weights);
}

torch::Tensor windowed_attention_reference(const torch::Tensor& q, const torch::Tensor& k,
                                           const torch::Tensor& v, const torch::Tensor& bias,
                                           int window, int first_offset, bool masked_edges,
                                           double dropout, bool training,
                                           torch::Tensor* band_weights) {
  const int64_t B = q.size(0), H = q.size(1), L = q.size(2), Dh = q.size(3);
  const int64_t W = window;
  const int64_t blocks = (L + W - 1) / W;
  const int64_t Lp = blocks * W;
  // Query block c (rows cW..cW+W-1) meets keys cW - first_offset .. cW - first_offset + 2W - 1:
  // pad keys/values with first_offset zeros in front and enough behind for the last block.
  auto qb = at::constant_pad_nd(q, {0, 0, 0, Lp - L}).view({B, H, blocks, W, Dh});
  const int64_t back = Lp + W - first_offset - L;
  auto kp = at::constant_pad_nd(k, {0, 0, first_offset, back});
  auto vp = at::constant_pad_nd(v, {0, 0, first_offset, back});
  auto kb = kp.unfold(2, 2 * W, W);                    // [B, H, blocks, Dh, 2W]
  auto vb = vp.unfold(2, 2 * W, W).transpose(-1, -2);  // [B, H, blocks, 2W, Dh]

  // Block scores [.., W, 2W]; row r's window is columns r..r+W-1. Skew: flattened, entry (r, c)
  // sits at r*2W + c; padding each block by W and viewing rows of 2W+1 puts (r, r+j) at (r, j).
  auto scores = torch::matmul(qb, kb) / std::sqrt(static_cast<double>(Dh));
  auto band = at::constant_pad_nd(scores.reshape({B, H, blocks, 2 * W * W}), {0, W})
                  .view({B, H, blocks, W, 2 * W + 1})
                  .narrow(-1, 0, W)
                  .reshape({B, H, Lp, W})
                  .narrow(2, 0, L);
  band = band + bias.view({1, H, 1, W});
  if (masked_edges) {
    // Slot j of query i holds key i - first_offset + j; drop keys outside [0, L).
    auto i = torch::arange(L, q.options().dtype(torch::kLong)).unsqueeze(1);
    auto j = torch::arange(W, q.options().dtype(torch::kLong)).unsqueeze(0);
    auto key = i - first_offset + j;
    band = band.masked_fill((key < 0).logical_or(key >= L), -INFINITY);
  }
  auto weights = torch::softmax(band, -1);  // [B, H, L, W]
  if (band_weights) *band_weights = weights;
  if (dropout > 0 && training) weights = run_dropout(weights, dropout);

  // Inverse skew: rows of W padded to 2W+1, flattened, cut to 2W*W, viewed as [W, 2W].
  auto wb = at::constant_pad_nd(weights, {0, W + 1, 0, Lp - L})
                .view({B, H, blocks, W * (2 * W + 1)})
                .narrow(-1, 0, 2 * W * W)
                .view({B, H, blocks, W, 2 * W});
  return torch::matmul(wb, vb).view({B, H, Lp, Dh}).narrow(2, 0, L);
}

torch::Tensor band_to_dense(const torch::Tensor& band, int first_offset) {
  const int64_t L = band.size(2), W = band.size(3);
  auto dense = torch::zeros({band.size(0), band.size(1), L, L}, band.options());
  for (int64_t j = 0; j < W; ++j) {
    const int64_t d = j - first_offset;  // key - query
    if (d >= L || -d >= L) continue;
    auto diag = dense.diagonal(d, -2, -1);
    if (d >= 0)
      diag.copy_(band.select(-1, j).narrow(-1, 0, L - d));
    else
      diag.copy_(band.select(-1, j).narrow(-1, -d, L + d));
  }
  return dense;
}

ConnectionNetImpl::ConnectionNetImpl(int heads, int hidden, bool xavier_init)
    : heads_(heads), hidden_(hidden), xavier_(xavier_init) {
  w1 = register_parameter("w1", torch::empty({heads, hidden}));
  b1 = register_parameter("b1", torch::empty({heads, hidden}));
  w2 = register_parameter("w2", torch::empty({heads, hidden, hidden}));
  b2 = register_parameter("b2", torch::empty({heads, hidden}));
  w3 = register_parameter("w3", torch::empty({heads, hidden}));
  b3 = register_parameter("b3", torch::empty({heads}));
  reset_parameters();
}

void ConnectionNetImpl::reset_parameters() {
  if (xavier_) {
    // Glorot uniform per head, U(+-sqrt(6 / (fan_in + fan_out))), zero biases: layer 1 is
    // 1 -> n, layer 2 n -> n, layer 3 n -> 1.
    torch::NoGradGuard no_grad;
    auto glorot = [](torch::Tensor& t, double fan_in, double fan_out) {
      const double bound = std::sqrt(6.0 / (fan_in + fan_out));
      t.uniform_(-bound, bound);
    };
    glorot(w1, 1, hidden_);
    glorot(w2, hidden_, hidden_);
    glorot(w3, hidden_, 1);
    for (auto* b : {&b1, &b2, &b3}) b->zero_();
    return;
  }
  // nn.Linear's default: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weights and biases.
  // Layer 1 maps the scalar t (fan-in 1), layers 2 and 3 the hidden width.
  for (auto* t : {&w1, &b1}) fan_in_uniform_(*t, 1.0);
  for (auto* t : {&w2, &b2, &w3, &b3}) fan_in_uniform_(*t, hidden_);
}

torch::Tensor ConnectionNetImpl::forward(const torch::Tensor& t) {
  auto x = t.to(w1.dtype()).view({1, -1, 1});                                      // [1, T, 1]
  auto h1 = torch::gelu(x * w1.unsqueeze(1) + b1.unsqueeze(1));                    // [H, T, n]
  auto h2 = torch::gelu(torch::matmul(h1, w2.transpose(1, 2)) + b2.unsqueeze(1));  // [H, T, n]
  return (h2 * w3.unsqueeze(1)).sum(-1) + b3.unsqueeze(1);                         // [H, T]
}

KyAttention::KyAttention(const AttentionSpec& spec)
    : options_(parse_ky_options(spec.options)), shape_(HeadShape::of(spec)), position_(spec) {
  check_ky_causality(options_, spec.causal);
  qkv_ = register_module("qkv", torch::nn::Linear(spec.d_model, 3 * spec.d_model));
  out_ = register_module("out", torch::nn::Linear(spec.d_model, spec.d_model));
  if (options_.connection == "learned")
    connection_ = register_module(
        "connection", ConnectionNet(spec.heads, options_.hidden, options_.init == "xavier"));
  if (options_.connection == "table")
    table_ = register_parameter("table", torch::zeros({spec.heads, options_.window}));
}

torch::Tensor KyAttention::slot_positions() const {
  return torch::linspace(0.0, 1.0, options_.window, qkv_->weight.options());
}

torch::Tensor KyAttention::bias_table() {
  if (table_.defined()) return table_;
  if (connection_.is_empty())
    return torch::zeros({shape_.heads, options_.window}, qkv_->weight.options());
  return connection_->forward(slot_positions());
}

torch::Tensor KyAttention::connection_curve(const torch::Tensor& t) {
  if (!connection_.is_empty()) return connection_->forward(t);
  TORCH_CHECK(table_.defined(), "ky: connection \"none\" has no curve");
  // Slot j sits at t = j / (W-1): interpolate between the two slots around each t.
  const int64_t W = options_.window;
  auto x = (t.to(table_.dtype()) * (W - 1)).clamp(0, W - 1);
  auto lo = x.floor().clamp(0, W - 2).to(torch::kLong);
  auto frac = (x - lo.to(x.dtype())).unsqueeze(0);
  return table_.index_select(1, lo) * (1 - frac) + table_.index_select(1, lo + 1) * frac;
}

torch::Tensor KyAttention::logit_bias_table() {
  auto table = bias_table();
  if (!position_.alibi()) return table;
  // Slot j holds key i - first_offset + j: distance |first_offset - j| (causal: >= 0).
  auto slot = torch::arange(options_.window, table.options());
  auto distance = (static_cast<double>(first_offset()) - slot).abs();
  return table - position_.slopes(table).view({shape_.heads, 1}) * distance.unsqueeze(0);
}

torch::Tensor KyAttention::forward(const torch::Tensor& x) {
  const int64_t B = x.size(0), L = x.size(1), D = x.size(2);
  auto qkv =
      qkv_->forward(x).view({B, L, 3, shape_.heads, shape_.head_dim}).permute({2, 0, 3, 1, 4});
  auto q = qkv[0], k = qkv[1];
  position_.rotate(q, k);  // rope: scores depend on i - j, as the window does
  torch::Tensor band;
  auto y = windowed_attention(q, k, qkv[2], logit_bias_table().to(x.dtype()), options_.window,
                              first_offset(), options_.edges == "masked", shape_.dropout,
                              is_training(), record_weights ? &band : nullptr);
  if (record_weights) recorded_weights = band_to_dense(band.detach(), first_offset());
  // Uniform over the window's slots with the run's edge rule: zero scores and no slot bias.
  y = intervene(y, [&] {
    return windowed_attention_reference(
        torch::zeros_like(q), k, qkv[2], torch::zeros({shape_.heads, options_.window}, q.options()),
        options_.window, first_offset(), options_.edges == "masked");
  });
  return out_->forward(y.transpose(1, 2).reshape({B, L, D}));
}

namespace {
std::vector<float> to_floats(const torch::Tensor& t) {
  auto c = t.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}
}  // namespace

std::optional<MechanismView> KyAttention::observe() {
  if (!has_connection()) return std::nullopt;  // plain windows have no curves to show
  torch::NoGradGuard no_grad;
  ConnectionCurves c;
  c.heads = shape_.heads;
  c.window = options_.window;
  c.query_slot = first_offset();
  c.causal = causal_window();
  c.edges = options_.edges;
  auto slots = bias_table();
  // Slot positions and the fine grid share t = 0 and t = 1 exactly.
  auto t = torch::linspace(0.0, 1.0, kCurveSamples, slots.options());
  c.t = to_floats(t);
  c.g = to_floats(connection_curve(t));
  c.slot_g = to_floats(slots);
  c.beta = to_floats(torch::softmax(slots, -1));
  return ky_view_of(c);
}

}  // namespace attn
