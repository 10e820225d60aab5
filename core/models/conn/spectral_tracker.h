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

// Applies the control to the [N, N] tensor c in place (any device or float dtype, no grad).
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

class Tracker {
 public:
  explicit Tracker(int m = 24) : rho_(m), norm_(m) {}
  // m: the matrix (double CPU [N, N]). cycles: restart cycles for each estimate.
  Estimates update(const torch::Tensor& m, int cycles = 1);
  void reset() {
    rho_.reset();
    norm_.reset();
  }

 private:
  RestartedArnoldi rho_, norm_;
};

}  // namespace attn::spectral
