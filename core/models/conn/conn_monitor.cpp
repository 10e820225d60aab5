// The Connection Transformer's monitor (core/models/conn/conn_monitor.h).
#include "core/models/conn/conn_monitor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/models/model.h"

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

std::unique_ptr<ArchitectureMonitor> conn_monitor(TransformerImpl& model, int64_t step) {
  return std::make_unique<ConnMonitor>(model.conn().ptr(), model.parameter_count(), step);
}

ConnMonitor::ConnMonitor(std::shared_ptr<ConnModelImpl> model, int64_t parameters, int64_t step)
    : model_(std::move(model)) {
  const ConnModelImpl& c = *model_;
  const auto& o = c.options();
  base_.slots = o.slots;
  base_.d_model = c.d_model();
  base_.steps = o.steps;
  base_.heads = o.connection_heads;
  base_.mixing = o.mixing;
  base_.variant = o.variant;
  base_.control = o.control;
  base_.limit = o.limit;
  base_.tracking = o.track;
  base_.parameters = parameters;
  base_.spec_formula =
      ConnModelImpl::spec_parameter_formula(o.slots, c.d_model(), c.max_length(), c.vocab());
  const auto t0 = Clock::now();
  torch::NoGradGuard no_grad;
  const auto device = torch::TensorOptions().device(c.connection.device());
  pending_ = torch::zeros({kReadBackEvery, 2}, device.dtype(torch::kFloat64));
  events_ = torch::zeros({}, device.dtype(torch::kInt64));
  auto m = spectral::shifted_on_device(c.effective_connection());
  record_eigen(m, step);
  record_matrix(c.effective_connection(), step);
  if (o.track) {
    const auto e = tracker_.update_tensors(m, 8);  // a cold start: a few cycles
    last_estimate_ = {e.spectral_radius.item<double>(), e.spectral_norm.item<double>()};
    rho_.add(step, static_cast<float>(last_estimate_.spectral_radius));
    norm_.add(step, static_cast<float>(last_estimate_.spectral_norm));
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
  views_.reset();
  last_eigen_ = Clock::now();
  eigen_seconds_ = seconds_since(t0);
}

void ConnMonitor::record_matrix(const torch::Tensor& c, int64_t step) const {
  auto values = std::make_shared<std::vector<float>>(to_floats(c));
  base_.stats = compute_conn_stats(values->data(), base_.slots, model_->options().link_threshold);
  base_.matrix = std::move(values);
  base_.matrix_step = step;
  views_.reset();
}

void ConnMonitor::read_back() const {
  if (!pending_steps_.empty()) {
    const auto n = static_cast<int64_t>(pending_steps_.size());
    const auto host = pending_.slice(0, 0, n).to(torch::kCPU).contiguous();
    const double* p = host.data_ptr<double>();
    for (int64_t i = 0; i < n; ++i) {
      rho_.add(pending_steps_[i], static_cast<float>(p[2 * i]));
      norm_.add(pending_steps_[i], static_cast<float>(p[2 * i + 1]));
    }
    last_estimate_ = {p[2 * (n - 1)], p[2 * (n - 1) + 1]};
    pending_steps_.clear();
    views_.reset();
  }
  if (events_waiting_) {
    base_.control_events = events_.item<int64_t>();
    events_waiting_ = false;
    views_.reset();
  }
  if (pending_matrix_.defined()) {
    record_matrix(pending_matrix_, pending_matrix_step_);
    pending_matrix_ = torch::Tensor();
  }
}

void ConnMonitor::after_step(int64_t step, bool last) {
  ConnModelImpl& model = *model_;
  const auto& o = model.options();
  if (o.control != "none") {
    events_.add_(model.apply_control());
    events_waiting_ = true;
  }
  views_.reset();
  if (!o.track) {
    if (last) read_back();
    return;
  }
  const auto t0 = Clock::now();
  torch::NoGradGuard no_grad;
  auto m = spectral::shifted_on_device(model.effective_connection());
  const auto e = tracker_.update_tensors(m, 1);
  const auto slot = static_cast<int64_t>(pending_steps_.size());
  pending_[slot][0].copy_(e.spectral_radius);
  pending_[slot][1].copy_(e.spectral_norm);
  pending_steps_.push_back(step);
  if (last || step % o.matrix_every == 0) {
    pending_matrix_ = model.effective_connection().detach().clone();
    pending_matrix_step_ = step;
  }
  // All eigenvalues (O(N^3)): every eigen_every steps, and never more than 0.5% of the time
  // (at N = 512 one eigendecomposition costs about as much as a training step).
  if (last || (step % o.eigen_every == 0 && seconds_since(last_eigen_) * 0.005 >= eigen_seconds_)) {
    read_back();  // this step's estimates, to compare with the exact values
    record_eigen(m, step);
    const auto& est = last_estimate_;
    if (base_.exact_radius > 0 && base_.exact_norm > 0)
      base_.estimate_error =
          std::max({base_.estimate_error, std::abs(est.spectral_radius / base_.exact_radius - 1),
                    std::abs(est.spectral_norm / base_.exact_norm - 1)});
  }
  if (static_cast<int64_t>(pending_steps_.size()) == kReadBackEvery) read_back();
  tracking_seconds_ += seconds_since(t0);
}

void ConnMonitor::probe(const torch::Tensor& input, int64_t step) {
  read_back();
  torch::NoGradGuard no_grad;
  auto states = model_->reasoning_states(input);
  std::vector<float> trace;
  for (const auto& s : states) {
    auto norms = to_floats(s.norm(2, -1));
    trace.insert(trace.end(), norms.begin(), norms.end());
  }
  base_.trace = std::move(trace);
  base_.trace_step = step;
  views_.reset();
  if (base_.matrix_step != step) record_matrix(model_->effective_connection(), step);
}

std::shared_ptr<const ConnView> ConnMonitor::conn_view() const {
  read_back();
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

nlohmann::json ConnMonitor::to_json() const {
  read_back();
  ConnModelImpl& model = *model_;
  torch::NoGradGuard no_grad;
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

std::shared_ptr<const std::vector<MechanismView>> ConnMonitor::views() {
  if (!views_) views_ = conn_model_views(*conn_view());
  return views_;
}

std::vector<MechanismView> ConnMonitor::record_views(int64_t step) {
  read_back();
  torch::NoGradGuard no_grad;
  const torch::Tensor c = model_->effective_connection();
  ConnView r;
  r.slots = static_cast<int>(c.size(0));
  r.matrix = std::make_shared<const std::vector<float>>(to_floats(c));
  const torch::Tensor shifted = spectral::shifted(c);
  r.exact_norm = spectral::spectral_norm(shifted);
  for (const std::complex<double>& e : spectral::eigenvalues(shifted)) {
    r.eigen_re.push_back(static_cast<float>(e.real()));
    r.eigen_im.push_back(static_cast<float>(e.imag()));
    r.exact_radius = std::max(r.exact_radius, std::abs(e));
  }
  r.matrix_step = r.eigen_step = step;
  return {conn_record_view(r)};
}

nlohmann::json ConnMonitor::summary() {
  const nlohmann::json c = to_json();
  return {{"spectral_radius", c["final"]["spectral_radius"]},
          {"spectral_norm", c["final"]["spectral_norm"]},
          {"frobenius", c["final"]["frobenius"]},
          {"control", c["control"]},
          {"control_events", c["control_events"]},
          {"spec_formula_parameters", c["spec_formula_parameters"]}};
}

std::vector<ArchitectureFile> ConnMonitor::files() {
  return {{"conn.json", to_json(), ""}, {"C.csv", nullptr, matrix_csv(*model_)}};
}

}  // namespace attn
