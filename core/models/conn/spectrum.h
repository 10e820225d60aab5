// The exact spectrum of I + C and the stability controls on plain matrices (torch-free
// interface; computed with LAPACK through LibTorch in core/models/conn/spectral_tracker.cpp). For
// the `attnlab spectral` command, tests and panels. Controls and the Spectrum record:
// core/analysis/spectral.h.
#pragma once
#include <vector>

#include "core/analysis/spectral.h"

namespace attn::spectral {

// c: row-major n x n. Exact (eigvals + SVD in double).
Spectrum shifted_spectrum(const std::vector<double>& c, int n);

// Applies the control to C (row-major n x n, in place). Returns whether C changed.
bool apply_control(std::vector<double>& c, int n, Control control, double limit);

}  // namespace attn::spectral
