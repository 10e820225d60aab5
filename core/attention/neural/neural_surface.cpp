#include "core/attention/neural/neural_surface.h"

#include <algorithm>
#include <cmath>

#include "core/base/error.h"

namespace attn {

namespace {

constexpr int kMinGrid = 3, kMaxGrid = 256;
constexpr int kSliceSamples = 201;

std::vector<float> to_floats(const torch::Tensor& t) {
  auto c = t.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

// A usable [lo, hi]: non-finite ends fall back to the defaults, an empty range is widened, so
// a half-typed range in the panel never fails the trainer.
void sanitize_range(float& lo, float& hi, float default_lo, float default_hi) {
  if (!std::isfinite(lo)) lo = default_lo;
  if (!std::isfinite(hi)) hi = default_hi;
  if (lo > hi) std::swap(lo, hi);
  if (!(hi - lo > 1e-6f)) hi = lo + 1.0f;
}

// The head's slice of a per-head parameter [H, ...] (and of its gradient) as one table row.
NeuralParameterStat stat(const char* name, const torch::Tensor& parameter, int64_t head,
                         bool scalar) {
  NeuralParameterStat s;
  s.name = name;
  s.scalar = scalar;
  auto value = parameter.detach()[head].to(torch::kCPU, torch::kFloat64);
  s.value = scalar ? value.item<double>() : value.norm().item<double>();
  const auto& grad = parameter.grad();
  s.has_gradient = grad.defined();
  if (s.has_gradient) {
    auto g = grad.detach()[head].to(torch::kCPU, torch::kFloat64);
    s.gradient = scalar ? g.item<double>() : g.norm().item<double>();
  }
  return s;
}

}  // namespace

NeuralLayerInfo neural_layer_info(const NeuralAttention& module, int layer) {
  torch::NoGradGuard no_grad;
  NeuralLayerInfo info;
  info.layer = layer;
  info.heads = static_cast<int>(module.score_bias().size(0));
  info.head_dim = module.head_dim();
  info.reduced_dim = module.reduced_dim();
  info.down_projection = module.has_down_projection();
  info.hidden = module.options().hidden;
  info.activation = neural_activation_name(module.options().activation);
  for (int64_t h = 0; h < info.heads; ++h) {
    std::vector<NeuralParameterStat> row;
    if (module.has_down_projection()) {
      row.push_back(stat("Wq'", module.query_down(), h, false));
      row.push_back(stat("Wk'", module.key_down(), h, false));
    }
    row.push_back(stat("U", module.hidden_query(), h, false));
    row.push_back(stat("V", module.hidden_key(), h, false));
    row.push_back(stat("b_h", module.hidden_bias(), h, false));
    row.push_back(stat("w_a", module.score_weight(), h, false));
    row.push_back(stat("b_a", module.score_bias(), h, true));
    info.parameters.push_back(std::move(row));
  }
  return info;
}

NeuralScoreSurface neural_score_surface(const NeuralAttention& module, int layer, int head,
                                        const NeuralViewRequest& request) {
  NeuralScoreSurface s;
  s.layer = layer;
  s.head = head;
  if (module.reduced_dim() != 2) {
    s.note = module.has_down_projection()
                 ? "the surface needs d' = 2; this layer down-projects to d' = " +
                       std::to_string(module.reduced_dim())
                 : "the surface needs d' = 2; this layer has no down-projection (d' = Dh = " +
                       std::to_string(module.reduced_dim()) + ")";
    return s;
  }
  const int64_t heads = module.score_bias().size(0);
  if (head < 0 || head >= heads)
    throw Error("neural view: head " + std::to_string(head) + " out of range [0, " +
                std::to_string(heads) + ")");
  torch::NoGradGuard no_grad;
  NeuralViewRequest r = request;
  sanitize_range(r.x_min, r.x_max, -3, 3);
  sanitize_range(r.y_min, r.y_max, -3, 3);
  sanitize_range(r.slice_min, r.slice_max, -3, 3);
  const int n = std::clamp(r.grid, kMinGrid, kMaxGrid);
  // The grid in double on the CPU, so the published coordinates are exact linspace values.
  const auto opts = torch::TensorOptions().dtype(torch::kFloat64);
  auto xs = torch::linspace(r.x_min, r.x_max, n, opts);
  auto ys = torch::linspace(r.y_min, r.y_max, n, opts);
  // Row r holds y = ys[r]: the points (xs[c], ys[r]) in row-major order.
  auto points = torch::stack({xs.repeat({n}), ys.repeat_interleave(n)}, 1);  // [n*n, 2]
  // The scorer runs where its parameters are (their device and dtype); only the points travel.
  const auto param_opts = module.score_weight().options();
  auto z = module.pair_scores(head, points.to(param_opts), points.to(param_opts));
  s.grid = n;
  s.xs = to_floats(xs);
  s.ys = to_floats(ys);
  s.learned = to_floats(z);
  s.paraboloid = to_floats((points * points).sum(1));

  s.query_x = std::isfinite(r.query_x) ? r.query_x : 0.0f;
  s.query_y = std::isfinite(r.query_y) ? r.query_y : 0.0f;
  s.key_angle = std::isfinite(r.key_angle) ? r.key_angle : 0.0f;
  auto t = torch::linspace(r.slice_min, r.slice_max, kSliceSamples, opts);
  auto keys = torch::stack({t * std::cos(s.key_angle), t * std::sin(s.key_angle)}, 1);
  auto query = torch::tensor({static_cast<double>(s.query_x), static_cast<double>(s.query_y)}, opts)
                   .expand({kSliceSamples, 2});
  s.slice_t = to_floats(t);
  s.slice_learned = to_floats(module.pair_scores(head, query.to(param_opts), keys.to(param_opts)));
  s.slice_dot = to_floats((query * keys).sum(1));
  s.available = true;
  return s;
}

void NeuralAttention::set_view_request(const nlohmann::json& request) {
  view_request_ = neural_request_from_json(request);
}

std::optional<MechanismView> NeuralAttention::observe() {
  torch::NoGradGuard no_grad;
  // The view's layer is the caller's (the session sets it); the table's is filled in by it too.
  NeuralLayerInfo info = neural_layer_info(*this, 0);
  std::vector<NeuralScoreSurface> surfaces;
  // At most the views' entry limit of heads with a surface (the table has every head).
  const int heads = std::min(info.heads, static_cast<int>(kMaxViewEntries) - 8);
  for (int head = 0; head < heads; ++head) {
    surfaces.push_back(neural_score_surface(*this, 0, head, view_request_));
    if (!surfaces.back().available) break;  // d' != 2: no head of this layer has one
  }
  return neural_mechanism_view(info, surfaces, view_request_);
}

}  // namespace attn
