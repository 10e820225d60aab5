// The Connection Transformer's monitor (model.architecture "conn"; private to core: includes
// torch): trainer-thread bookkeeping behind the generic ArchitectureMonitor
// (core/models/architectures/architecture_monitor.h). The stability control after every optimiser
// step, the spectral estimates of I + C every step, exact eigenvalues and C on slower cadences, the
// reasoning trace at probes; published as the generic view of core/models/conn/conn_view.h. Its run
// directory files: conn.json (histories, the exact spectrum of the final C, statistics) and
// C.csv (`attnlab spectral`'s input).
#pragma once
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/models/architectures/architecture_monitor.h"
#include "core/models/conn/conn_model.h"
#include "core/models/conn/conn_view.h"
#include "core/models/conn/spectral_tracker.h"
#include "core/views/history.h"

namespace attn {

class ConnMonitor : public ArchitectureMonitor {
 public:
  // Steps whose estimates wait on the device between read backs (as the graphed step's loss).
  static constexpr int64_t kReadBackEvery = 32;

  // step: the model's current step (0 for a new model; a checkpoint's step after loading).
  // parameters: the whole model's trainable parameters.
  ConnMonitor(std::shared_ptr<ConnModelImpl> model, int64_t parameters, int64_t step = 0);
  // After optimiser step `step`. last: the run's final step, where the eigenvalues and C are
  // always refreshed (their time budget would otherwise leave a short run with only the step-0
  // spectrum). Reads nothing back on most steps: the control decides on C's device, and the
  // step's rho / norm estimates, control event and (on the matrix cadence) a copy of C wait
  // there until the read back every kReadBackEvery steps, at the last step, at an eigen refresh
  // and before anything below reports them; the curves then hold every step's value.
  void after_step(int64_t step, bool last) override;
  // At an attention probe: the reasoning trace on the probe input (and C, if stale).
  void probe(const torch::Tensor& input, int64_t step) override;
  std::shared_ptr<const std::vector<MechanismView>> views() override;
  // C, the eigenvalues of I + C, rho and ||I + C||_2, computed now.
  std::vector<MechanismView> record_views(int64_t step) override;
  // summary.json's "conn": the final spectrum, the control and its events.
  nlohmann::json summary() override;
  // conn.json and C.csv.
  std::vector<ArchitectureFile> files() override;

  // What views() encodes (tests, benches); reads back what waits on the device first.
  std::shared_ptr<const ConnView> conn_view() const;
  // For conn.json: histories, the exact spectrum of the final C, stats.
  nlohmann::json to_json() const;
  // The effective C as CSV (N lines of N numbers, full float precision).
  static std::string matrix_csv(ConnModelImpl& model);
  // Seconds spent on tracking (estimates, eigenvalues, C copies), not on the control.
  double tracking_seconds() const { return tracking_seconds_; }
  // Steps whose estimates wait on the device now (tests).
  int64_t waiting_steps() const { return static_cast<int64_t>(pending_steps_.size()); }

 private:
  void record_eigen(const torch::Tensor& m, int64_t step);
  void record_matrix(const torch::Tensor& c, int64_t step) const;
  // Reads back what waits on the device into the curves, the event count and the C record.
  // const: reporting (conn_view) reads back first; the observable state is every step's.
  void read_back() const;

  std::shared_ptr<ConnModelImpl> model_;
  // Filled by read_back() (which const readers call), hence mutable.
  mutable ConnView base_;  // everything but the histories
  spectral::Tracker tracker_;
  mutable MetricHistory rho_, norm_;
  mutable spectral::Estimates last_estimate_;  // the latest step's, read back
  // Waiting on the model's device: [kReadBackEvery, 2] estimates (rho, norm) of pending_steps_,
  // the control events so far, and the C of pending_matrix_step_ (undefined: none).
  torch::Tensor pending_, events_;
  mutable std::vector<int64_t> pending_steps_;
  mutable torch::Tensor pending_matrix_;
  mutable int64_t pending_matrix_step_ = -1;
  mutable bool events_waiting_ = false;
  mutable std::shared_ptr<const std::vector<MechanismView>> views_;  // null: changed since built
  double tracking_seconds_ = 0;
  double eigen_seconds_ = 0;
  std::chrono::steady_clock::time_point last_eigen_;
};

}  // namespace attn
