// Neural Attention's views (seed 003, Figure 1; docs/design/MECHANISMS.md §4), torch-free:
// the request the Neural panel sends to the trainer as JSON (Trainer::request_mechanism_view,
// NeuralAttention::set_view_request), and the view the Neural panel and the neural-surface figure
// read back from the generic mechanism views (NeuralAttention::observe, Snapshot::mechanism_views).
//  - The score surface restricts the scorer to d' = 2 and q' = k' = (x, y), as the paper's
//    Figure 1 does: z(x, y) = w_a^T act(U (x, y) + V (x, y) + b_h) + b_a, beside the
//    dot product's paraboloid x^2 + y^2. Scores are raw: before the 1/sqrt(d) softmax scale.
//  - The slice fixes the query q' and moves the key along a line through the origin,
//    k'(t) = t (cos a, sin a), against the dot product q'.k'(t) (a straight line in t).
//  - The parameter table holds, per head, the norms of U, V, w_a, b_h (and Wq', Wk' when there
//    is a down-projection), b_a's value, and the same of their last gradients. b_a's gradient
//    is exactly zero (softmax is shift-invariant): it is published, never filtered out.
// Surface and slice need d' = 2; for other d' they are left empty and `note` says why.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/views/mechanism_view.h"

namespace attn {

struct NeuralViewRequest {
  int layer = 0;  // model layer; when it is not a neural layer, the first neural layer is used
  int head = 0;   // clamped to the layer's heads
  float x_min = -3, x_max = 3, y_min = -3, y_max = 3;  // the surface's range in (x, y)
  int grid = 61;                                       // samples per axis, clamped to [3, 256]
  float query_x = 1, query_y = 0;                      // the slice's fixed query q'
  float key_angle = 0;                                 // the slice's key direction a, radians
  float slice_min = -3, slice_max = 3;                 // t range of the slice
  bool operator==(const NeuralViewRequest& o) const {
    return layer == o.layer && head == o.head && x_min == o.x_min && x_max == o.x_max &&
           y_min == o.y_min && y_max == o.y_max && grid == o.grid && query_x == o.query_x &&
           query_y == o.query_y && key_angle == o.key_angle && slice_min == o.slice_min &&
           slice_max == o.slice_max;
  }
  bool operator!=(const NeuralViewRequest& o) const { return !(*this == o); }
};

// The request as the JSON object the trainer passes on ({"layer", "head", "x_min", ...}, the
// field names); from_json reads the keys present over the defaults and throws attn::Error naming
// the key for a value of the wrong type or an unknown key.
nlohmann::json neural_request_to_json(const NeuralViewRequest& request);
NeuralViewRequest neural_request_from_json(const nlohmann::json& j);

// One parameter of one head. For tensors, value and gradient are Frobenius norms of the head's
// slice; for a scalar (b_a) they are the signed value and gradient themselves.
struct NeuralParameterStat {
  std::string name;  // "U", "V", "w_a", "b_h", "b_a", "Wq'", "Wk'"
  bool scalar = false;
  double value = 0;
  double gradient = 0;
  bool has_gradient = false;  // false before the first backward pass
};

struct NeuralLayerInfo {
  int layer = 0;
  int heads = 0;
  int head_dim = 0;     // Dh (the softmax divides by sqrt(Dh))
  int reduced_dim = 0;  // d' (= Dh without a down-projection)
  bool down_projection = false;
  int hidden = 0;
  std::string activation;
  std::vector<std::vector<NeuralParameterStat>> parameters;  // [head][parameter]
};

struct NeuralScoreSurface {
  bool available = false;
  std::string note;  // why it is empty (d' != 2); empty when available
  int layer = 0, head = 0;
  int grid = 0;
  std::vector<float> xs, ys;      // the grid's coordinates, increasing
  std::vector<float> learned;     // grid x grid, row-major: row r is ys[r], column c is xs[c]
  std::vector<float> paraboloid;  // x^2 + y^2 at the same points
  float query_x = 0, query_y = 0, key_angle = 0;
  std::vector<float> slice_t;        // increasing
  std::vector<float> slice_learned;  // score(q', k'(t))
  std::vector<float> slice_dot;      // q'.k'(t)
};

struct NeuralView {
  int64_t step = 0;
  NeuralViewRequest request;            // the request it was computed for
  std::vector<NeuralLayerInfo> layers;  // every neural layer, in layer order
  NeuralScoreSurface surface;
  // The info of `layer`, or nullptr when that layer is not neural.
  const NeuralLayerInfo* layer_info(int layer) const {
    for (const auto& l : layers)
      if (l.layer == layer) return &l;
    return nullptr;
  }
};

// The generic layout of one neural layer's view (NeuralAttention::observe), named so that any
// reader can draw it: matrices "parameters" and "gradients" (head x tensor parameter, Frobenius
// norms; gradients NaN before the first backward pass), scalars "b_a" and "grad b_a" per head,
// scalars "heads", "head_dim", "reduced_dim", "down_projection", "hidden" and "request.<field>"
// (the request it was computed for), text "activation"; with d' = 2 every head's surface
// (matrix "learned head <h>", "paraboloid", curves "grid" whose xs are the x samples and whose
// one series "y" the y samples, curves "slice head <h>" with series "learned" and "dot"), else
// text "note" saying why there is none.
MechanismView neural_mechanism_view(const NeuralLayerInfo& info,
                                    const std::vector<NeuralScoreSurface>& surfaces,
                                    const NeuralViewRequest& request);

// The Neural panel's view of one frame of mechanism views: every neural layer's table, and the
// surface of `request`'s layer and head (the first neural layer when that one is not neural; the
// head clamped); with no request, of the layer and head the views were computed for. The view's
// `request` is the one the views were computed for (its range, query and angle). nullptr when no
// layer of the frame is neural. Throws attn::Error naming the entry when a view's layout is not
// the one above. The history form reads its last frame (Snapshot::mechanism_history()).
std::shared_ptr<const NeuralView> neural_view_of(const MechanismFrame& frame,
                                                 const NeuralViewRequest* request = nullptr);
std::shared_ptr<const NeuralView> neural_view_of(const std::vector<MechanismFrame>& history,
                                                 const NeuralViewRequest* request = nullptr);

// `view` as the frame of generic views it is read from (neural_view_of(neural_frame_of(v))
// gives v's surface and tables back): for tests and fixtures that start from the panel's data.
MechanismFrame neural_frame_of(const NeuralView& view);

// An entry of views.rec's "neural" list, recorded before Neural Attention observed itself (one
// head's surface at the default request) as the generic layout (the codec merges a layer's
// heads). Throws attn::Error naming the field.
MechanismView neural_legacy_view(const nlohmann::json& entry);

}  // namespace attn
