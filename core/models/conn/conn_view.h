// What the trainer publishes about a Connection Transformer (model.architecture "conn") for
// the UI and tests: spectral measurements of I + C over training, its eigenvalues, C itself,
// the reasoning trace of the probe input and connection statistics. Torch-free; measured on
// the trainer thread (core/models/conn/conn_monitor.h) and published as a generic MechanismView
// (core/views/mechanism_view.h, mechanism "conn", layer 0) in Snapshot::model_views, views.rec
// and the run directory, so nothing outside conn's own files knows this struct: its panel and
// figures decode the view back (conn_view_of).
//
// rho(I + C) and ||I + C||_2 are measurements, not convergence guarantees: with a LayerNorm
// after every reasoning step H_K != H_0 (I + C)^K, and with rho < 1 the only fixed point of
// H = H (I + C) is 0 (docs/design/MECHANISMS.md section 2).
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/views/mechanism_view.h"
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

// The view's layout (mechanism "conn", layer 0; names are the codec):
//   scalars  slots, d_model, steps, heads, limit, tracking (0/1), parameters, spec_formula,
//            control_events, estimate_error, link_threshold; spectral_radius and spectral_norm
//            (exact, of I + C at eigen_step); eigen_step, matrix_step, trace_step (unit "step":
//            when each was measured, not measurements: they are no run metrics)
//   texts    mixing, variant, control
//   curves   spectral_radius_estimate, spectral_norm_estimate (x: step), eigenvalues (x: Re,
//            one series "I + C": Im)
//   matrices C (slots x slots), trace ((steps + 1) x slots)
// conn_record_view is the part a views.rec record holds at its step: C, the eigenvalues,
// spectral_radius, spectral_norm and their steps.
MechanismView conn_mechanism_view(const ConnView& v);
MechanismView conn_record_view(const ConnView& v);
// Snapshot::model_views holding conn_mechanism_view(v) only.
std::shared_ptr<const std::vector<MechanismView>> conn_model_views(const ConnView& v);
// Back from a view of that layout (entries it lacks stay at ConnView's defaults); the
// statistics are computed from C (with link_threshold). Throws attn::Error when C is not
// slots x slots.
ConnView conn_view_from(const MechanismView& view);
// The snapshot's conn view (Snapshot::model_view("conn")) decoded; nullptr when it has none.
std::shared_ptr<const ConnView> conn_view_of(const Snapshot& s);
// Whether the snapshot holds a conn view with C (cheap: nothing decoded).
bool has_conn_matrix(const Snapshot& s);

// The architecture row's hooks (core/models/architectures/architecture.h):
// a recorded view checked against the run's config (C of model.conn.slots, at most as many
// eigenvalues); throws attn::Error saying what the config refuses.
void check_conn_view(const MechanismView& view, const ModelConfig& m);
// views.rec records written before the view was generic held {"slots", "c", "eig_re",
// "eig_im", "rho", "norm"} under "conn": read into the record view of `step` (every size
// checked before anything is allocated); throws attn::Error naming the field.
MechanismView conn_legacy_record_view(const nlohmann::json& field, int64_t step);
// A saved run's histories that a checkpoint does not hold (they restart at a load), from the
// run directory's conn.json: the spectral estimates over training, and the final eigenvalues
// when the view has none. A run without conn.json is left as it is.
void restore_conn_views(std::vector<MechanismView>& views, const std::string& run_dir,
                        int64_t step);

}  // namespace attn
