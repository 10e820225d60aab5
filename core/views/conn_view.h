// What the trainer publishes about a Connection Transformer (model.architecture "conn") for
// the UI and tests: spectral measurements of I + C over training, its eigenvalues, C itself,
// the reasoning trace of the probe input and connection statistics. Torch-free; computed on
// the trainer thread (core/models/conn_model.h, ConnMonitor) and shared read-only.
//
// rho(I + C) and ||I + C||_2 are measurements, not convergence guarantees: with a LayerNorm
// after every reasoning step H_K != H_0 (I + C)^K, and with rho < 1 the only fixed point of
// H = H (I + C) is 0 (docs/design/MECHANISMS.md section 2).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/views/snapshot.h"

namespace attn {

struct ConnLink {
  int from = 0, to = 0;  // C[from, to]: how much slot `from` influences slot `to`
  float value = 0;
};

// The seed's analyze_connections, on the effective C (the mean of the connection heads).
struct ConnStats {
  double threshold = 0.1;                // edge i -> j when C[i,j] > threshold
  std::vector<ConnLink> strongest;       // the largest entries of C, descending (up to 10)
  int inhibitory = 0;                    // entries with C < -threshold
  double sparsity = 0;                   // share of entries with |C| < 0.01
  int edges = 0;                         // entries with C > threshold
  int self_loops = 0;                    // C[i,i] > threshold
  int cyclic_components = 0;             // strongly connected components that contain a cycle
  int nodes_on_cycles = 0;               // slots in those components
  std::vector<std::vector<int>> cycles;  // a few shortest cycles (slot indices, from the smallest)
  double frobenius = 0;                  // ||C||_F
  double max_abs = 0;
};

// c: row-major n x n.
ConnStats compute_conn_stats(const float* c, int n, double threshold);

struct ConnView {
  int slots = 0, d_model = 0, steps = 0, heads = 1;
  std::string mixing, variant, control;
  double limit = 0;
  bool tracking = false;
  int64_t parameters = 0;      // this model's trainable parameters
  int64_t spec_formula = 0;    // the seed's N^2 + 8D^2 + S D + V D for the same N, D, S, V
  int64_t control_events = 0;  // optimiser steps after which the control changed C

  // Every step (tracking on): warm-started estimates of rho(I + C) and ||I + C||_2.
  Series spectral_radius, spectral_norm;
  // Exact, on the slow cadence: all eigenvalues of I + C, and the exact rho and norm there.
  int64_t eigen_step = -1;
  std::vector<float> eigen_re, eigen_im;
  double exact_radius = 0, exact_norm = 0;
  // The largest relative error of the per-step estimates seen at the eigen refreshes.
  double estimate_error = 0;
  // C (effective, row-major slots x slots) and its statistics, on the matrix cadence.
  int64_t matrix_step = -1;
  std::shared_ptr<const std::vector<float>> matrix;
  ConnStats stats;
  // Reasoning trace of the probe input (its last position, i.e. the whole probe): the norm of
  // every slot's state after compression (row 0) and after each of the K steps.
  int64_t trace_step = -1;
  std::vector<float> trace;  // (steps + 1) x slots
};

}  // namespace attn
