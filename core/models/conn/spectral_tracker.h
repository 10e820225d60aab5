// Torch side of core/analysis/spectral.h (private to core): exact spectra of a square tensor, the
// stability controls on a parameter, and the warm-started estimates tracked every step.
//
// Estimates (Tracker), O(m N^2) per update with m = 24, warm-started across updates:
//  - rho(M): one cycle of restarted Arnoldi (m Krylov vectors, Gram-Schmidt twice), the
//    Ritz values of the m x m Hessenberg matrix, the largest modulus taken. Plain power
//    iteration oscillates when the dominant eigenvalues are a complex pair (M^k v rotates);
//    the Krylov subspace contains the pair's real 2-D invariant subspace, and its Ritz values
//    come in conjugate pairs, so the pair's modulus is found. The next cycle restarts from
//    Re(y) + Im(y) of the dominant Ritz vector y (a real vector in that 2-D subspace).
//  - ||M||_2: the same on the symmetric M^T M (Lanczos), sqrt of its largest Ritz value (a
//    lower bound that converges to the norm).
// A matrix that changes slowly (C during training) keeps both within a small error with one
// cycle per step; tests compare them with full eigenvalues and SVD.
//
// The device path (a matrix on a GPU): the Arnoldi cycle above needs host reads (breakdown
// tests, the small Hessenberg eigenproblem) and torch's eigen/SVD solvers synchronise a CUDA
// device with the host, so there every estimate is made by tensor ops only, with no read back:
//  - ||M||_2: A = M^T M squared kSquarings times (P = A^(2^k), each square divided by its
//    Frobenius norm), q = P g / |P g| for a fixed generic g, the estimate |M q|. Error
//    ~ (s_2 / s_1)^(2^(k+1)); a lower bound.
//  - rho(M): P = M^(2^k) the same way, Q = an orthonormal basis of P [g1 g2], and the larger
//    modulus of the eigenvalues of the 2 x 2 Q^T M Q (closed form). P's range is the dominant
//    1-D or 2-D (complex pair) invariant subspace up to (|l_3| / |l_1|)^(2^k), where those
//    Ritz values are exact. A third eigenvalue of the same modulus as the top two (a tie
//    that squaring cannot separate) is the case it misses.
// Stateless (no warm start), so they cost the same every step and a CUDA graph could hold them.
#pragma once
#include <torch/torch.h>

#include <complex>
#include <vector>

#include "core/models/conn/spectrum.h"

namespace attn::spectral {

// All eigenvalues of a square tensor (computed in double on the CPU), by decreasing modulus.
std::vector<std::complex<double>> eigenvalues(const torch::Tensor& m);
double spectral_radius(const torch::Tensor& m);
double spectral_norm(const torch::Tensor& m);  // largest singular value
// I + c as a double CPU tensor.
torch::Tensor shifted(const torch::Tensor& c);
// I + c as a double tensor on c's device (on the CPU: equal to shifted(c)).
torch::Tensor shifted_on_device(const torch::Tensor& c);

// Whether estimates and controls for the matrix m take the device path (see above): m is not on
// the CPU, or the test switch below is on.
bool device_path(const torch::Tensor& m);
// Tests only: the CPU takes the device path too (to check its values and that it reads nothing
// back). Process-wide; not for concurrent use.
void force_device_path(bool on);
// The device path's estimates of rho(m) and ||m||_2 (m: [N, N] double): 0-dim double tensors
// on m's device, computed without reading anything back to the host.
torch::Tensor radius_estimate(const torch::Tensor& m);
torch::Tensor norm_estimate(const torch::Tensor& m);

// Applies the control to the [N, N] tensor c in place (any device or float dtype, no grad).
// Returns whether c changed as a 0-dim bool tensor on c's device; nothing is read back: the
// decision is a torch::where on the device. The value compared with the limit is exact (eigen
// values / SVD on the host) on the CPU path and the device path's estimate otherwise. On the CPU
// c ends bit-identical to the host formula C *= r / rho (spec), C = (I + C) r / s - I (norm).
torch::Tensor apply_control_tensor(torch::Tensor& c, Control control, double limit);
// The same, returning the decision as a bool (a read back on a GPU).
bool apply_control(torch::Tensor& c, Control control, double limit);

// Restarted Arnoldi on a linear operator; keeps its start vector between calls.
class RestartedArnoldi {
 public:
  explicit RestartedArnoldi(int m = 24) : m_(m) {}
  // One cycle; returns the Ritz values (by decreasing modulus). op maps [n] -> [n] (double).
  std::vector<std::complex<double>> cycle(
      const std::function<torch::Tensor(const torch::Tensor&)>& op, int64_t n);
  void reset() { start_ = torch::Tensor(); }

 private:
  int m_;
  torch::Tensor start_;
};

struct Estimates {
  double spectral_radius = 0;
  double spectral_norm = 0;
};
// The same as 0-dim double tensors on the matrix's device.
struct TensorEstimates {
  torch::Tensor spectral_radius, spectral_norm;
};

class Tracker {
 public:
  explicit Tracker(int m = 24) : rho_(m), norm_(m) {}
  // m: the matrix (double CPU [N, N]). cycles: restart cycles for each estimate.
  Estimates update(const torch::Tensor& m, int cycles = 1);
  // m: double [N, N] on any device. On the CPU path update()'s values (the warm start
  // advances the same way); on the device path radius_estimate / norm_estimate (cycles
  // unused, no warm start), read back by nobody here.
  TensorEstimates update_tensors(const torch::Tensor& m, int cycles = 1);
  void reset() {
    rho_.reset();
    norm_.reset();
  }

 private:
  RestartedArnoldi rho_, norm_;
};

}  // namespace attn::spectral
