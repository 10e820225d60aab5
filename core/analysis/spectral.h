// Spectra of I + C for the Connection Transformer's connection matrix C (seed 001), torch-free:
// the names of the stability controls, the Spectrum record and the CSV matrix reader used by
// the `attnlab spectral` command, tests and panels. The exact spectrum itself (LAPACK through
// LibTorch) is core/models/conn/spectrum.h; the training-time estimates (warm-started, O(N^2) per
// step) live in core/models/conn/spectral_tracker.h.
//
// Stability controls, applied to C after an optimiser step:
//  - none
//  - spec: the seed's enforce_spectral_radius, C *= r / rho(I + C) when rho(I + C) > r. The
//    eigenvalues of I + sC are 1 + s lambda(C): scaling C pulls them toward 1, never below it,
//    so whenever trace(C) >= 0 the mean eigenvalue is >= 1 and rho(I + sC) >= 1 > r for every
//    s. Kept so users can watch it fail: run every step it only decays C toward 0.
//  - norm-bound: if ||I + C||_2 > r, rescale I + C (not C) to spectral norm r, then
//    C = (I + C) - I. Since rho(M) <= ||M||_2, rho(I + C) <= r afterwards (up to rounding).
#pragma once
#include <array>
#include <string>
#include <vector>

namespace attn::spectral {

enum class Control { None, Spec, NormBound };
Control parse_control(const std::string& name);  // none | spec | norm-bound; throws attn::Error
const char* control_name(Control c);

struct Spectrum {
  int n = 0;
  double spectral_radius = 0;                      // rho(I + C)
  double spectral_norm = 0;                        // ||I + C||_2
  std::vector<std::array<double, 2>> eigenvalues;  // (re, im) of I + C, by decreasing modulus
};

// Parses an N x N matrix from CSV text (no header; commas, optional spaces; blank lines at
// the end ignored). Throws attn::Error naming the source, row and column (1-based) of a
// non-numeric or non-finite entry, or the row whose length differs, or a non-square shape.
std::vector<double> parse_matrix_csv(const std::string& text, const std::string& source, int& n);

}  // namespace attn::spectral
