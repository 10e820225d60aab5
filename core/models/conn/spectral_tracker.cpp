#include "core/models/conn/spectral_tracker.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <sstream>

#include "core/base/error.h"

namespace attn::spectral {
namespace {

torch::Tensor to_cpu_double(const torch::Tensor& t) {
  return t.detach().to(torch::kCPU, torch::kFloat64).contiguous();
}

torch::Tensor from_vector(const std::vector<double>& c, int n) {
  if (n <= 0 || static_cast<int64_t>(c.size()) != static_cast<int64_t>(n) * n)
    throw Error("spectral: expected " + std::to_string(n) + " x " + std::to_string(n) +
                " values, got " + std::to_string(c.size()));
  return torch::from_blob(const_cast<double*>(c.data()), {n, n}, torch::kFloat64).clone();
}

void sort_by_modulus(std::vector<std::complex<double>>& v) {
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    if (std::abs(a) != std::abs(b)) return std::abs(a) > std::abs(b);
    if (a.real() != b.real()) return a.real() > b.real();
    return a.imag() > b.imag();
  });
}

// Deterministic, generic start vector (no global RNG: tracking must not disturb training).
torch::Tensor default_start(int64_t n) {
  auto v = torch::empty({n}, torch::kFloat64);
  auto* p = v.data_ptr<double>();
  for (int64_t i = 0; i < n; ++i)
    p[i] = 1.0 + 0.5 * std::sin(1.7 * i + 0.3) + 0.25 * std::cos(0.37 * i * i);
  return v / v.norm();
}

constexpr int64_t kRestartVectors = 1;

std::atomic<bool> g_force_device{false};  // force_device_path (tests only)

// The device path (spectral_tracker.h): squarings of M and of M^T M.
constexpr int kSquarings = 16;
constexpr double kTiny = 1e-300;

// a^(2^kSquarings) up to a positive factor, for a [n, n] or a stack [k, n, n] (one batched
// product per squaring): every second square is divided by its Frobenius norm (two squares of a
// matrix of norm 1 neither overflow nor underflow), so nothing is read back.
torch::Tensor scaled_power(const torch::Tensor& a) {
  const auto unit = [](const torch::Tensor& p) {
    return p / p.norm(2, {-2, -1}, /*keepdim=*/true).clamp_min(kTiny);
  };
  auto p = unit(a);
  for (int i = 0; i < kSquarings; ++i) {
    p = torch::matmul(p, p);
    if (i % 2 == 1 || i + 1 == kSquarings) p = unit(p);
  }
  return p;
}

// cond ? a : b for a 0-dim bool cond, by selection (no arithmetic on the branch not taken): a
// torch::where that also runs on the meta device (LibTorch 1.13 has no meta where), which is
// how the tests prove that the device path reads nothing back.
torch::Tensor choose(const torch::Tensor& cond, const torch::Tensor& a, const torch::Tensor& b) {
  auto both = torch::stack({b, a});
  std::vector<int64_t> shape(both.sizes().begin(), both.sizes().end());
  shape[0] = 1;
  auto index = cond.to(torch::kLong).reshape(std::vector<int64_t>(shape.size(), 1)).expand(shape);
  return torch::gather(both, 0, index).squeeze(0);
}

torch::Tensor inner_product(const torch::Tensor& a, const torch::Tensor& b) {
  return (a * b).sum();
}

// Two fixed generic vectors [n, 2], made on the device (copying them there from the host would
// synchronise a CUDA device).
torch::Tensor start_vectors(int64_t n, const torch::TensorOptions& options) {
  auto i = torch::arange(n, options);
  return torch::stack({torch::sin(1.7 * i) * 0.5 + 1.0, torch::cos(0.91 * i + 0.7)}, 1);
}

}  // namespace

std::vector<std::complex<double>> eigenvalues(const torch::Tensor& m) {
  auto e = torch::linalg_eigvals(to_cpu_double(m)).contiguous();
  auto re = torch::real(e).contiguous(), im = torch::imag(e).contiguous();
  std::vector<std::complex<double>> out(e.numel());
  for (int64_t i = 0; i < e.numel(); ++i)
    out[i] = {re.data_ptr<double>()[i], im.data_ptr<double>()[i]};
  sort_by_modulus(out);
  return out;
}

double spectral_radius(const torch::Tensor& m) {
  double r = 0;
  for (const auto& z : eigenvalues(m)) r = std::max(r, std::abs(z));
  return r;
}

double spectral_norm(const torch::Tensor& m) {
  return torch::linalg_svdvals(to_cpu_double(m)).max().item<double>();
}

torch::Tensor shifted(const torch::Tensor& c) {
  auto m = to_cpu_double(c);
  return m + torch::eye(m.size(0), torch::kFloat64);
}

torch::Tensor shifted_on_device(const torch::Tensor& c) {
  auto m = c.detach().to(torch::kFloat64).contiguous();
  return m + torch::eye(m.size(0), m.options());
}

bool device_path(const torch::Tensor& m) {
  return !m.device().is_cpu() || g_force_device;
}

void force_device_path(bool on) {
  g_force_device = on;
}

// rho(m) from p = m^(2^k) (scaled): the 2 x 2 Rayleigh-Ritz on the range of p [g1 g2].
torch::Tensor radius_from_power(const torch::Tensor& m, const torch::Tensor& p) {
  auto x = torch::matmul(p, start_vectors(m.size(0), m.options()));  // [n, 2]
  auto x1 = x.select(1, 0), x2 = x.select(1, 1);
  auto q1 = x1 / x1.norm().clamp_min(kTiny);
  auto w = x2 - q1 * inner_product(q1, x2);
  w = w - q1 * inner_product(q1, w);  // twice, as in the Arnoldi cycle
  auto wn = w.norm();
  // P of rank 1 (a real dominant eigenvalue): what is left of x2 is rounding; drop it.
  auto q2 = choose(wn > 1e-10 * x2.norm(), w / wn.clamp_min(kTiny), torch::zeros_like(w));
  auto q = torch::stack({q1, q2}, 1);
  auto h = torch::matmul(q.t(), torch::matmul(m, q));  // [2, 2]
  auto half = (h[0][0] + h[1][1]) * 0.5;
  auto det = h[0][0] * h[1][1] - h[0][1] * h[1][0];
  auto disc = half * half - det;
  // Real eigenvalues half +- sqrt(disc), the larger modulus |half| + sqrt(disc); a complex
  // pair has modulus sqrt(det).
  return choose(disc >= 0, torch::maximum(half, -half) + disc.clamp_min(0).sqrt(),
                det.clamp_min(0).sqrt());
}

// ||m||_2 from p = (m^T m)^(2^k) (scaled): |m q| for q = p g / |p g|.
torch::Tensor norm_from_power(const torch::Tensor& m, const torch::Tensor& p) {
  auto x = torch::mv(p, start_vectors(m.size(0), m.options()).select(1, 0));
  return torch::mv(m, x / x.norm().clamp_min(kTiny)).norm();
}

torch::Tensor radius_estimate(const torch::Tensor& m) {
  torch::NoGradGuard no_grad;
  return radius_from_power(m, scaled_power(m));
}

torch::Tensor norm_estimate(const torch::Tensor& m) {
  torch::NoGradGuard no_grad;
  return norm_from_power(m, scaled_power(torch::matmul(m.t(), m)));
}

torch::Tensor apply_control_tensor(torch::Tensor& c, Control control, double limit) {
  torch::NoGradGuard no_grad;
  if (control == Control::None) return torch::zeros({}, c.options().dtype(torch::kBool));
  auto m = shifted_on_device(c);
  const bool device = device_path(m);
  const auto scalar = [&](double v) { return torch::full({}, v, m.options()); };
  torch::Tensor value;  // rho or s, 0-dim double on c's device
  if (control == Control::Spec)
    value = device ? radius_estimate(m) : scalar(spectral_radius(m));
  else
    value = device ? norm_estimate(m) : scalar(spectral_norm(m));
  // The host formula's !(value > limit) test and r / value, as tensors (NaN: no change), and
  // the choice made on the device.
  auto over = value > limit;
  auto factor = scalar(limit).div(value);
  auto changed = control == Control::Spec
                     ? c * factor
                     : (m * factor - torch::eye(m.size(0), m.options())).to(c.options());
  c.copy_(choose(over, changed, c));
  return over;
}

bool apply_control(torch::Tensor& c, Control control, double limit) {
  return apply_control_tensor(c, control, limit).item<bool>();
}

Spectrum shifted_spectrum(const std::vector<double>& c, int n) {
  auto m = from_vector(c, n) + torch::eye(n, torch::kFloat64);
  Spectrum s;
  s.n = n;
  for (const auto& z : eigenvalues(m)) {
    s.eigenvalues.push_back({z.real(), z.imag()});
    s.spectral_radius = std::max(s.spectral_radius, std::abs(z));
  }
  s.spectral_norm = spectral_norm(m);
  return s;
}

bool apply_control(std::vector<double>& c, int n, Control control, double limit) {
  auto t = from_vector(c, n);
  const bool changed = apply_control(t, control, limit);
  std::copy(t.data_ptr<double>(), t.data_ptr<double>() + c.size(), c.begin());
  return changed;
}

std::vector<std::complex<double>> RestartedArnoldi::cycle(
    const std::function<torch::Tensor(const torch::Tensor&)>& op, int64_t n) {
  torch::NoGradGuard no_grad;
  const int64_t m = std::min<int64_t>(m_, n);
  if (!start_.defined() || start_.size(0) != n) start_ = default_start(n);
  auto V = torch::zeros({m + 1, n}, torch::kFloat64);
  auto H = torch::zeros({m + 1, m}, torch::kFloat64);
  V[0].copy_(start_ / start_.norm());
  int64_t k = m;
  double scale = 0;
  for (int64_t j = 0; j < m; ++j) {
    auto w = op(V[j]);
    auto basis = V.slice(0, 0, j + 1);
    scale = std::max(scale, w.norm().item<double>());
    for (int pass = 0; pass < 2; ++pass) {  // classical Gram-Schmidt, twice
      auto h = torch::mv(basis, w);
      w = w - torch::mv(basis.t(), h);
      H.slice(0, 0, j + 1).select(1, j).add_(h);
    }
    const double beta = w.norm().item<double>();
    H[j + 1][j] = beta;
    if (beta <= 1e-13 * std::max(scale, 1e-300)) {  // invariant subspace: Ritz values exact
      k = j + 1;
      break;
    }
    V[j + 1].copy_(w / beta);
  }
  auto Hk = H.slice(0, 0, k).slice(1, 0, k);
  auto eig = torch::linalg_eig(Hk);
  auto values = std::get<0>(eig), vectors = std::get<1>(eig);
  auto re = torch::real(values).contiguous(), im = torch::imag(values).contiguous();
  std::vector<std::complex<double>> ritz(k);
  std::vector<int64_t> order(k);
  for (int64_t i = 0; i < k; ++i) {
    ritz[i] = {re.data_ptr<double>()[i], im.data_ptr<double>()[i]};
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return std::abs(ritz[a]) > std::abs(ritz[b]); });
  // Restart from Re(y) + Im(y) of the dominant Ritz vector y = V_k s (a real vector in the
  // dominant pair's 2-D invariant subspace when it is complex). Restarting from a combination
  // of the top 2, 4 or 8 Ritz vectors, or mixing in a generic vector, was measured: each
  // followed a training run's C worse than the single dominant vector.
  auto combined = torch::zeros({k}, torch::kFloat64);
  for (int64_t r = 0; r < std::min<int64_t>(kRestartVectors, k); ++r) {
    auto s = vectors.select(1, order[r]);
    auto part = (torch::real(s) + torch::imag(s)).contiguous();
    const double pn = part.norm().item<double>();
    if (pn > 0) combined += part / pn;
  }
  auto next = torch::mv(V.slice(0, 0, k).t(), combined);
  const double nn = next.norm().item<double>();
  if (std::isfinite(nn) && nn > 0) start_ = next / nn;
  sort_by_modulus(ritz);
  return ritz;
}

TensorEstimates Tracker::update_tensors(const torch::Tensor& m, int cycles) {
  if (device_path(m)) {  // both squarings in one batched product per step
    torch::NoGradGuard no_grad;
    const auto p = scaled_power(torch::stack({m, torch::matmul(m.t(), m)}));
    return {radius_from_power(m, p[0]), norm_from_power(m, p[1])};
  }
  const Estimates e = update(m, cycles);
  const auto options = torch::TensorOptions().dtype(torch::kFloat64);
  return {torch::full({}, e.spectral_radius, options), torch::full({}, e.spectral_norm, options)};
}

Estimates Tracker::update(const torch::Tensor& m, int cycles) {
  torch::NoGradGuard no_grad;
  const int64_t n = m.size(0);
  auto mt = m.t().contiguous();
  Estimates e;
  for (int c = 0; c < std::max(1, cycles); ++c) {
    auto r = rho_.cycle([&](const torch::Tensor& v) { return torch::mv(m, v); }, n);
    e.spectral_radius = r.empty() ? 0.0 : std::abs(r[0]);
    auto s = norm_.cycle([&](const torch::Tensor& v) { return torch::mv(mt, torch::mv(m, v)); }, n);
    e.spectral_norm = s.empty() ? 0.0 : std::sqrt(std::max(0.0, s[0].real()));
  }
  return e;
}

}  // namespace attn::spectral
