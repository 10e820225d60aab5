// The Connection Transformer's row of core/models/architectures/architectures.def: what it answers
// for the code around the model (core/models/architectures/architecture.h). Its modules:
// core/models/conn/conn_model.h.
#include <algorithm>

#include "core/models/architectures/architecture.h"
#include "core/models/conn/conn_view.h"

namespace attn {

namespace {

// Token embedding V x D, position table S x D, C per connection head N x N, six D x D
// projections, the vocabulary head D x V (no bias) and K LayerNorms (ConnModelImpl's
// parameter_formula is the same sum; tests/core/test_conn_model.cpp checks both against the
// built model).
int64_t conn_parameter_count(const ModelConfig& m, int vocab, int max_length) {
  const int64_t D = m.d_model, N = m.conn.slots, V = vocab, S = max_length;
  return m.conn.connection_heads * N * N + 6 * D * D + 2 * V * D + S * D +
         2 * static_cast<int64_t>(m.conn.steps) * D;
}

// Its [slots, D] states of every step, per token; no layers, no score tensors. Its parameters
// are the exact count above at the estimate's T tokens and V outputs (a conn model is a causal
// token model: V is its vocabulary); the slots buffer (N x D floats) is page noise.
ArchitectureMemory conn_memory(const ModelConfig& m, double T, double V) {
  const ConnConfig& c = m.conn;
  const double D = m.d_model, N = c.slots;
  // Bounded like the layers' count (core/models/memory_estimate.cpp): int arguments.
  const auto clamp = [](double v) {
    return static_cast<int>(std::min(std::max(v, 1.0), double(1 << 30)));
  };
  ArchitectureMemory r;
  r.parameters = static_cast<double>(conn_parameter_count(m, clamp(V), clamp(T)));
  r.train_token = N * D * (3.0 * c.steps + 8);
  r.eval_token = N * D * 6;
  r.sizes = "model.conn.slots " + std::to_string(c.slots) + " x model.d_model " +
            std::to_string(m.d_model) + " per token";
  r.shrink = {"model.conn.slots", "model.d_model"};
  return r;
}

// Its config section (model.conn; docs/design/MECHANISMS.md): what a conn model has instead of
// heads, layers and attention mechanisms.
std::vector<ArchitectureField> conn_fields() {
  return {
      integer_field("d_model", "", [](ModelConfig& m) { return &m.d_model; }),
      integer_field("slots", "N: fixed slots H [N, D]; C is N x N",
                    [](ModelConfig& m) { return &m.conn.slots; }),
      integer_field("steps K", "Reasoning steps H <- H + Influence(H)",
                    [](ModelConfig& m) { return &m.conn.steps; }),
      choice_field("mixing",
                   "slots: Influence[b,j] = sum_i C[i,j] H[b,i] (mixes slots, what the seed "
                   "means)\nliteral: H @ C as printed (mixes features; needs slots == d_model)",
                   [](ModelConfig& m) { return &m.conn.mixing; }, {"slots", "literal"}),
      choice_field("variant", "", [](ModelConfig& m) { return &m.conn.variant; },
                   {"linear", "nonlinear"}),
      integer_field("connection heads", "",
                    [](ModelConfig& m) { return &m.conn.connection_heads; }),
      choice_field("control",
                   "After each optimiser step. spec rescales only when rho(I+C) > r (the seed's "
                   "rule);\nnorm-bound keeps ||I+C||_2 <= r, which bounds rho too.",
                   [](ModelConfig& m) { return &m.conn.control; }, {"none", "spec", "norm-bound"}),
      real_field("limit r", "", [](ModelConfig& m) { return &m.conn.limit; }),
      real_field(
          "regularization", "", [](ModelConfig& m) { return &m.conn.regularization; }, "%.3g"),
      real_field(
          "init std", "", [](ModelConfig& m) { return &m.conn.init_std; }, "%.3g"),
      integer_field("eigen every", "", [](ModelConfig& m) { return &m.conn.eigen_every; }),
      integer_field("matrix every", "", [](ModelConfig& m) { return &m.conn.matrix_every; }),
  };
}

}  // namespace

const ArchitectureDescriptor& conn_architecture() {
  static const ArchitectureDescriptor d = [] {
    ArchitectureDescriptor a;
    a.name = "conn";
    a.summary = "the Connection Transformer";
    a.attention_layers = false;
    a.no_heads_reason =
        "model.architecture \"conn\": the Connection Transformer's connection heads only "
        "reparametrise one matrix C (their mean), so no head has an output of its own to ablate "
        "or patch; interventions take models with attention heads";
    a.position_table = true;  // its position embedding is learned, whatever model.position says
    a.memory = conn_memory;
    a.parameter_count = conn_parameter_count;
    a.fields = conn_fields();
    a.model_views = 1;  // C, the spectrum of I + C and its history (core/models/conn/conn_view.h)
    a.check_view = check_conn_view;
    a.legacy_record_key = "conn";
    a.legacy_record_view = conn_legacy_record_view;
    a.restore_views = restore_conn_views;
    return a;
  }();
  return d;
}

}  // namespace attn
