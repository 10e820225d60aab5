// MechanismView: what one layer's attention mechanism wants shown at a step, in a form no reader
// needs to know the mechanism for: named curves, matrices (heatmaps) and scalars, each with its
// axes' names and units, and a few named texts. A mechanism fills one from its own state
// (AttentionModule::observe, core/attention/attention.h); the session keeps them over training
// (Snapshot::mechanism_views), views.rec and the run directory record them, and the figures draw
// them (app/figures/models/mechanism_view_figure.h) by their names. Torch-free.
//
// Codec: mechanism_view_to_json / _from_json give the layout views.rec's records (CBOR, floats
// as byte strings of little-endian float32) and mechanism_views.json (JSON, floats as numbers)
// share: {"mechanism", "layer", "curves": [{"name", "x": {"name", "unit"}, "y": {...}, "xs",
// "series", "ys"}], "matrices": [{"name", "rows": {...}, "cols": {...}, "value": {...},
// "row_count", "col_count", "row_labels", "col_labels", "values"}], "scalars": [{"name", "unit",
// "head", "value"}], "texts": [{"name", "value"}]}.
// Contract: every reader checks each size against the limits below before it allocates, and
// check_mechanism_view refuses a view whose sizes disagree (attn::Error naming the layer, the
// entry and the sizes).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attn {

// The stated limits (docs/guide/hardening.md): per view and per entry.
constexpr size_t kMaxViewEntries = 256;            // curves, matrices, scalars or texts of a view
constexpr size_t kMaxViewSamples = 1 << 16;        // x samples of one curve family
constexpr size_t kMaxViewSeries = 1 << 12;         // series of one curve family
constexpr size_t kMaxViewCells = size_t(1) << 24;  // values of one curve family or one matrix
constexpr size_t kMaxViewNameBytes = 256;          // a name, unit, label or text
constexpr size_t kMaxMechanismFrames = 4096;       // frames of mechanism_views.json

struct ViewAxis {
  std::string name;  // "t", "head", "key offset"
  std::string unit;  // "" when unitless
};

// A family of curves over one x grid: series s is ys[s * xs.size() + i] at xs[i].
struct ViewCurves {
  std::string name;  // what the mechanism calls it ("g", "beta"); unique within the view
  ViewAxis x, y;
  std::vector<float> xs;
  std::vector<std::string> series;  // one label per series ("head 0")
  std::vector<float> ys;
  const float* series_values(size_t s) const { return ys.data() + s * xs.size(); }
};

// A row_count x col_count grid of values, row-major, drawn as a heatmap.
struct ViewMatrix {
  std::string name;
  ViewAxis rows, cols, value;
  int row_count = 0, col_count = 0;
  std::vector<std::string> row_labels, col_labels;  // empty, or one per row / column
  std::vector<float> values;
};

// One number; head >= 0 when it is a head's (head metrics read those), -1 for the layer's.
struct ViewScalar {
  std::string name;
  std::string unit;
  int head = -1;
  double value = 0;
};

struct ViewText {
  std::string name;
  std::string value;
};

struct MechanismView {
  std::string mechanism;  // the registry's name of the layer's mechanism
  int layer = 0;
  std::vector<ViewCurves> curves;
  std::vector<ViewMatrix> matrices;
  std::vector<ViewScalar> scalars;
  std::vector<ViewText> texts;
  // By name; nullptr / the fallback when absent.
  const ViewCurves* find_curves(const std::string& name) const;
  const ViewMatrix* find_matrix(const std::string& name) const;
  const ViewScalar* find_scalar(const std::string& name, int head = -1) const;
  double scalar(const std::string& name, double fallback) const;
  std::string text(const std::string& name) const;
  bool empty() const {
    return curves.empty() && matrices.empty() && scalars.empty() && texts.empty();
  }
};

// Every layer's view (layers without one left out) at one step.
struct MechanismFrame {
  int64_t step = 0;
  std::vector<MechanismView> layers;
  const MechanismView* layer(int index) const;
};

// Throws attn::Error naming the layer and entry when a count, size or name is out of its limit
// or the sizes disagree (ys of a family not series x samples, a matrix not rows x cols).
void check_mechanism_view(const MechanismView& view);

// The shared layout (see the header comment). binary_floats: floats as byte strings (CBOR).
nlohmann::json mechanism_view_to_json(const MechanismView& view, bool binary_floats);
// Reads either float form; throws attn::Error naming `where` and the field (sizes are checked
// before anything is allocated, then check_mechanism_view).
MechanismView mechanism_view_from_json(const nlohmann::json& j, const std::string& where);

// Float arrays in the codec's two forms: a byte string of little-endian float32 (CBOR) or an
// array of numbers (JSON). float_array_of reads either, at most `limit` values (checked before
// it allocates); throws attn::Error naming `what` otherwise.
nlohmann::json float_array_json(const std::vector<float>& values, bool binary);
std::vector<float> float_array_of(const nlohmann::json& j, size_t limit, const std::string& what);

// mechanism_views.json: {"format": "attnlab-mechanism-views", "version": 1, "frames": [{"step",
// "layers": [views]}]}; from_json throws attn::Error naming `where`.
constexpr const char* kMechanismViewsFile = "mechanism_views.json";
nlohmann::json mechanism_frames_to_json(const std::vector<MechanismFrame>& frames);
std::vector<MechanismFrame> mechanism_frames_from_json(const nlohmann::json& j,
                                                       const std::string& where);

// Appends `frame` to `history` (oldest first), thinned to at most `keep` frames: when full,
// every other frame is dropped, the first and the latest kept.
void append_thinned(std::vector<MechanismFrame>& history, MechanismFrame frame, size_t keep);

}  // namespace attn
