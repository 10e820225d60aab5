// The conn monitor without per-step host reads (issue 50, item 2): the control decided by
// tensors against the host formula it replaces, the device path's estimates of rho(I + C) and
// ||I + C||_2 against exact eigenvalues and SVD (and that they read nothing back: they run on
// the meta device, where any read throws), and the buffered monitor against the per-step path
// it replaces, bit for bit on the CPU.
#include <doctest/doctest.h>

#include <cmath>

#include "core/models/conn/conn_model.h"
#include "core/models/conn/conn_monitor.h"
#include "core/models/conn/conn_view.h"
#include "core/models/conn/spectral_tracker.h"
#include "core/models/model.h"
#include "core/training/session/session.h"
#include "helpers.h"

using namespace attn;
using namespace attn::spectral;

namespace {

// An n x n N(0, std^2) matrix in double, from its own generator.
torch::Tensor gaussian(int64_t n, double std, uint64_t seed) {
  return at::normal(0.0, std, {n, n}, at::detail::createCPUGenerator(seed)).to(torch::kFloat64);
}

// The control as it was before it was decided on the device (conn_model.cpp and
// spectral_tracker.cpp before issue 50): exact values on the host, a host branch, C rescaled.
bool host_control(torch::Tensor& c, Control control, double limit) {
  if (control == Control::None) return false;
  torch::NoGradGuard no_grad;
  auto m = shifted(c);
  if (control == Control::Spec) {
    const double rho = spectral_radius(m);
    if (!(rho > limit)) return false;
    c.mul_(limit / rho);
    return true;
  }
  const double s = spectral_norm(m);
  if (!(s > limit)) return false;
  auto bounded = m * (limit / s) - torch::eye(m.size(0), torch::kFloat64);
  c.copy_(bounded.to(c.options()));
  return true;
}

// Sets force_device_path for one scope.
struct DevicePath {
  explicit DevicePath(bool on) { force_device_path(on); }
  ~DevicePath() { force_device_path(false); }
};

ModelConfig model_config(const std::string& control) {
  ModelConfig m;
  m.architecture = "conn";
  m.d_model = 8;
  m.heads = 1;
  m.conn.slots = 40;  // more than the tracker's 24 Krylov vectors
  m.conn.steps = 2;
  m.conn.init_std = 0.03;
  m.conn.control = control;
  m.conn.connection_heads = 2;
  m.conn.eigen_every = 1000;  // the eigen refresh (which reads back) only at the last step
  return m;
}

ConnModel make_model(const ModelConfig& m) {
  torch::manual_seed(5);
  return ConnModel(m, 7, 6);
}

// The optimiser's stand-in: the same deterministic change of C at every step, growing C so
// that the control has work on some steps and none on others.
void perturb(ConnModelImpl& model, int64_t step) {
  torch::NoGradGuard no_grad;
  const int64_t n = model.connection.size(1);
  for (int64_t j = 0; j < model.connection.size(0); ++j) {
    const double grow = (step / 5) % 2 == 0 ? 0.01 : -0.01;  // work for the control, then none
    auto d = gaussian(n, 0.01, 100 * step + j) + grow * torch::eye(n, torch::kFloat64);
    model.connection[j].add_(d.to(torch::kFloat32));
  }
}

struct Reference {
  std::vector<float> rho, norm;
  int64_t events = 0;
};

// The per-step path: the host control on every head, then the tracker's estimates read at once.
Reference per_step_path(ConnModelImpl& model, int64_t steps) {
  Reference r;
  Tracker tracker;
  const auto control = parse_control(model.options().control);
  auto e = tracker.update(shifted(model.effective_connection()), 8);
  r.rho.push_back(static_cast<float>(e.spectral_radius));
  r.norm.push_back(static_cast<float>(e.spectral_norm));
  for (int64_t step = 1; step <= steps; ++step) {
    perturb(model, step);
    bool changed = false;
    for (int64_t j = 0; j < model.connection.size(0); ++j) {
      auto cj = model.connection[j];
      changed = host_control(cj, control, model.options().limit) || changed;
    }
    r.events += changed ? 1 : 0;
    e = tracker.update(shifted(model.effective_connection()), 1);
    r.rho.push_back(static_cast<float>(e.spectral_radius));
    r.norm.push_back(static_cast<float>(e.spectral_norm));
  }
  return r;
}

void check_same_curve(const Series& s, const std::vector<float>& expected, int64_t steps) {
  REQUIRE(s.steps.size() == static_cast<size_t>(steps + 1));
  for (int64_t k = 0; k <= steps; ++k) {
    CAPTURE(k);
    CHECK(s.steps[k] == k);
    CHECK(s.values[k] == expected[k]);  // bit for bit
  }
}

}  // namespace

TEST_CASE("conn readback: the control decided by tensors equals the host formula bit for bit") {
  for (const auto control : {Control::Spec, Control::NormBound}) {
    for (uint64_t seed = 1; seed <= 12; ++seed) {
      CAPTURE(seed);
      const double std = 0.02 * static_cast<double>(seed);  // within the limit and past it
      auto a = gaussian(24, std, seed).to(torch::kFloat32);
      auto b = a.clone();
      const bool host = host_control(a, control, 0.95);
      const auto device = apply_control_tensor(b, control, 0.95);
      CHECK(device.dim() == 0);
      CHECK(device.item<bool>() == host);
      CHECK(torch::equal(a, b));
    }
  }
}

TEST_CASE("conn readback: the device path's rho and norm equal the exact ones") {
  DevicePath on(true);
  std::vector<std::pair<std::string, torch::Tensor>> cases;
  cases.emplace_back("gaussian 60", gaussian(60, 1.0 / std::sqrt(60.0), 11));
  {  // dominant complex pair 1.2 e^{+-0.9 i}, the rest |lambda| <= 0.8, non-normal basis
    const int64_t n = 40;
    auto d = torch::zeros({n, n}, torch::kFloat64);
    d[0][0] = 1.2 * std::cos(0.9), d[0][1] = -1.2 * std::sin(0.9);
    d[1][0] = 1.2 * std::sin(0.9), d[1][1] = 1.2 * std::cos(0.9);
    for (int64_t i = 2; i < n; ++i) d[i][i] = 0.8 * std::cos(0.37 * i);
    auto s = std::get<0>(torch::linalg_qr(gaussian(n, 1.0, 12))) + 0.3 * gaussian(n, 0.16, 15);
    cases.emplace_back("rotation pair", torch::matmul(torch::matmul(s, d), torch::inverse(s)));
  }
  cases.emplace_back("diagonal, dominant last",
                     torch::diag(torch::linspace(0.1, 0.9, 30, torch::kFloat64)));
  cases.emplace_back("I + N(0, 0.01) C, N 64", shifted(gaussian(64, 0.01, 13)));
  cases.emplace_back("I + C, trace > 0",
                     shifted(gaussian(32, 0.1, 14) + 0.1 * torch::eye(32, torch::kFloat64)));
  for (int64_t k = 0; k < 20; ++k)  // a training-like C: small, drifting
    cases.emplace_back("drift " + std::to_string(k),
                       shifted(gaussian(48, 0.02, 40) + gaussian(48, 0.002, 41) * double(k)));
  double worst_rho = 0, worst_norm = 0;
  for (const auto& [name, m] : cases) {
    CAPTURE(name);
    REQUIRE(device_path(m));
    const double rho = radius_estimate(m).item<double>(), s = norm_estimate(m).item<double>();
    worst_rho = std::max(worst_rho, std::abs(rho / spectral_radius(m) - 1));
    worst_norm = std::max(worst_norm, std::abs(s / spectral_norm(m) - 1));
    CHECK(rho == doctest::Approx(spectral_radius(m)).epsilon(1e-9));
    CHECK(s == doctest::Approx(spectral_norm(m)).epsilon(1e-9));
    CHECK(s <= spectral_norm(m) * (1 + 1e-12));  // a Rayleigh quotient: from below
  }
  MESSAGE("device path, worst relative error: rho " << worst_rho << ", norm " << worst_norm);
}

TEST_CASE("conn readback: the device path reads nothing back (it runs on the meta device)") {
  // A meta tensor has no data: .item(), a copy to the host or a host-side solver throws.
  auto m =
      torch::empty({16, 16}, torch::TensorOptions().device(torch::kMeta).dtype(torch::kFloat64));
  REQUIRE(device_path(m));
  CHECK(radius_estimate(m).dim() == 0);
  CHECK(norm_estimate(m).dim() == 0);
  auto c = torch::empty({16, 16}, torch::TensorOptions().device(torch::kMeta));
  for (const auto control : {Control::Spec, Control::NormBound})
    CHECK(apply_control_tensor(c, control, 0.95).device().is_meta());
  Tracker t;
  CHECK(t.update_tensors(m).spectral_radius.device().is_meta());
  // The host path on the same tensor does read: the check above could fail.
  CHECK_THROWS(spectral_norm(m));
}

TEST_CASE("conn readback: every 32 steps, curves, events and C equal the per-step path") {
  for (const std::string control : {"norm-bound", "spec", "none"}) {
    CAPTURE(control);
    const auto mc = model_config(control);
    const int64_t steps = 70;  // two read backs at the cadence, the rest at the last step
    auto reference_model = make_model(mc);
    const Reference r = per_step_path(*reference_model, steps);
    auto model = make_model(mc);
    ConnMonitor monitor(model.ptr(), 1, 0);
    for (int64_t step = 1; step <= steps; ++step) {
      perturb(*model, step);
      monitor.after_step(step, step == steps);
      // Waiting on the device between read backs (nothing is read on those steps).
      CHECK(monitor.waiting_steps() == (step == steps ? 0 : step % ConnMonitor::kReadBackEvery));
    }
    const auto v = monitor.conn_view();
    check_same_curve(v->spectral_radius, r.rho, steps);
    check_same_curve(v->spectral_norm, r.norm, steps);
    CHECK(v->control_events == r.events);
    if (control == "norm-bound") CHECK(r.events > 5);
    if (control == "norm-bound") CHECK(r.events < steps);  // steps without work too
    CHECK(torch::equal(model->connection, reference_model->connection));
    CHECK(v->matrix_step == steps);
    CHECK(monitor.summary()["control_events"] == r.events);
  }
}

TEST_CASE("conn readback: views, conn_view and summary mid-buffer see every step so far") {
  const auto mc = model_config("norm-bound");
  auto reference_model = make_model(mc);
  const Reference r = per_step_path(*reference_model, 46);
  auto model = make_model(mc);
  ConnMonitor monitor(model.ptr(), 1, 0);
  for (int64_t step = 1; step <= 40; ++step) {
    perturb(*model, step);
    monitor.after_step(step, false);
  }
  REQUIRE(monitor.waiting_steps() == 8);
  const auto views = monitor.views();  // what the snapshot publishes
  CHECK(monitor.waiting_steps() == 0);
  REQUIRE(views);
  const ConnView decoded = conn_view_from(views->at(0));
  CHECK(decoded.spectral_radius.steps.back() == 40);
  CHECK(decoded.spectral_radius.values.back() == r.rho[40]);
  CHECK(decoded.matrix_step == 40);  // C of step 40 (the matrix cadence), read back with them
  for (int64_t step = 41; step <= 45; ++step) {
    perturb(*model, step);
    monitor.after_step(step, false);
  }
  CHECK(monitor.waiting_steps() == 5);
  const auto v = monitor.conn_view();
  check_same_curve(v->spectral_norm, r.norm, 45);
  CHECK(monitor.waiting_steps() == 0);
  perturb(*model, 46);
  monitor.after_step(46, false);
  CHECK(monitor.waiting_steps() == 1);
  const auto s = monitor.summary();
  CHECK(monitor.waiting_steps() == 0);
  CHECK(s["control_events"].get<int64_t>() == r.events);
}

TEST_CASE("conn readback: the monitor on the device path keeps norm-bound and tracks") {
  DevicePath on(true);
  const auto mc = model_config("norm-bound");
  auto model = make_model(mc);
  ConnMonitor monitor(model.ptr(), 1, 0);
  double worst_norm = 0, worst_error = 0;
  for (int64_t step = 1; step <= 40; ++step) {
    perturb(*model, step);
    monitor.after_step(step, step == 40);
    const auto m = shifted(model->effective_connection());
    worst_norm = std::max(worst_norm, spectral_norm(m));
    const auto v = monitor.conn_view();
    worst_error =
        std::max({worst_error, std::abs(v->spectral_radius.values.back() / spectral_radius(m) - 1),
                  std::abs(v->spectral_norm.values.back() / spectral_norm(m) - 1)});
  }
  MESSAGE("device path: max ||I + C||_2 " << worst_norm << ", worst estimate error "
                                          << worst_error);
  CHECK(monitor.conn_view()->control_events > 5);
  CHECK(worst_norm <= mc.conn.limit * (1 + 1e-6));
  CHECK(worst_error < 1e-6);
}

TEST_CASE("conn readback: a recall run on the device path holds norm-bound and tracks exactly") {
  DevicePath on(true);  // what a GPU runs, here on the CPU
  ExperimentConfig c = test::tiny_config("recall");
  c.model = model_config("norm-bound");  // N 40 slots, two heads
  c.model.d_model = 32;
  c.model.conn.init_std = 0.01;
  c.train.steps = 100, c.train.batch_size = 32, c.train.lr = 3e-3, c.train.warmup = 20;
  TrainingSession s(c);
  const auto* monitor = dynamic_cast<const ConnMonitor*>(s.architecture_monitor());
  REQUIRE(monitor);
  double worst_rho = 0, worst_error = 0;
  for (int i = 0; i < 100; ++i) {
    s.train_step();
    const auto m = shifted(s.model()->conn()->effective_connection());
    worst_rho = std::max(worst_rho, spectral_radius(m));
    const auto v = monitor->conn_view();
    worst_error =
        std::max({worst_error, std::abs(v->spectral_radius.values.back() / spectral_radius(m) - 1),
                  std::abs(v->spectral_norm.values.back() / spectral_norm(m) - 1)});
  }
  MESSAGE("device path, recall: max rho(I+C) " << worst_rho << ", worst estimate error "
                                               << worst_error);
  CHECK(monitor->conn_view()->control_events > 0);
  CHECK(worst_rho <= c.model.conn.limit + 1e-6);
  CHECK(worst_error < 1e-6);  // float curves: float rounding
}
