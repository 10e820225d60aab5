// views.rec's record checks: what a run's config allows a record to hold (core/runs/
// view_records.h: ViewShape, check_view_record). Torch-free.
#include <algorithm>

#include "core/base/error.h"
#include "core/models/architectures/architecture.h"
#include "core/runs/directory/run_files.h"
#include "core/runs/records/view_records.h"

namespace attn {

ViewShape view_shape_of(const ExperimentConfig& c) {
  ViewShape s;
  const ArchitectureDescriptor& a = architecture_of(c.model);
  s.layers = a.attention_layers ? c.model.layers : 0;
  s.heads = c.model.heads;
  // The longest input any task makes of these settings (a sequence of 4 x length, a context
  // window and its target, a 28 x 28 image in 1 x 1 patches), plus a classifier's CLS token.
  const int64_t t =
      std::max<int64_t>({int64_t(4) * std::max(c.task.length, 0), int64_t(c.task.context) + 1, 3,
                         c.task.name == "fashion-mnist" ? 28 * 28 : 0});
  s.max_tokens = static_cast<int>(std::min<int64_t>(t + 1, 1 << 20));
  s.model_views = a.model_views;
  s.architecture = a.name;
  if (a.check_view)
    s.check_model_view = [check = a.check_view, m = c.model](const MechanismView& v) {
      check(v, m);
    };
  s.image = c.task.name == "fashion-mnist";
  s.max_classes =
      c.model.head == "classifier" ? (c.model.classes > 0 ? c.model.classes : 1 << 16) : 0;
  return s;
}

ViewRun view_run_of(const std::string& dir, const ExperimentConfig& config) {
  return {dir, run_identity(dir), view_shape_of(config)};
}

namespace {

// The whole-model views: as many as the architecture publishes, each as its row checks it.
void check_model_views(const ViewRecord& r, const ViewShape& s) {
  if (r.model_views.size() > static_cast<size_t>(s.model_views))
    throw Error("the record holds " +
                (r.model_views.size() == 1 ? std::string("a view")
                                           : std::to_string(r.model_views.size()) + " views") +
                " of the whole model (" + r.model_views.front().mechanism +
                "); the run's model (model.architecture \"" + s.architecture + "\") has " +
                (s.model_views ? "at most " + std::to_string(s.model_views) : std::string("none")));
  for (const MechanismView& v : r.model_views) {
    check_mechanism_view(v);
    if (!s.check_model_view) continue;
    try {
      s.check_model_view(v);
    } catch (const Error& e) {
      throw Error(std::string("the record ") + e.what());
    }
  }
}

}  // namespace

void check_view_record(const ViewRecord& r, const ViewShape& s) {
  auto refuse = [](const std::string& what) { throw Error("the record " + what); };
  auto count = [](int64_t n, const char* what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
  };
  if (r.layers != s.layers)
    refuse("states " + count(r.layers, "layer") + "; the run's model has " +
           std::to_string(s.layers) + " (model.layers)");
  if (r.heads != s.heads)
    refuse("states " + count(r.heads, "head") + "; the run's model has " + std::to_string(s.heads) +
           " (model.heads)");
  const size_t cells = static_cast<size_t>(s.layers) * static_cast<size_t>(s.heads);
  if (r.probe_tokens.size() > static_cast<size_t>(s.max_tokens))
    refuse("holds " + count(static_cast<int64_t>(r.probe_tokens.size()), "probe token") +
           "; the run's task gives at most " + std::to_string(s.max_tokens));
  for (const std::string& t : r.probe_tokens)
    if (t.size() > 4096) refuse("holds a probe token of " + std::to_string(t.size()) + " bytes");
  if (r.maps.size() > cells)
    refuse("holds " + count(static_cast<int64_t>(r.maps.size()), "map") + "; the run's " +
           std::to_string(s.layers) + " layers x " + std::to_string(s.heads) + " heads have " +
           std::to_string(cells));
  auto in_model = [&](int layer, int head, const char* what) {
    if (layer < 0 || layer >= s.layers || head < 0 || head >= s.heads)
      refuse(std::string("holds ") + what + " of layer " + std::to_string(layer) + ", head " +
             std::to_string(head) + "; the run's model has layers 0.." +
             std::to_string(s.layers - 1) + " and heads 0.." + std::to_string(s.heads - 1));
  };
  for (const AttentionMap& m : r.maps) {
    in_model(m.layer, m.head, "a map");
    if (m.size < 1 || m.size > s.max_tokens)
      refuse("holds a map of size " + std::to_string(m.size) + "; the run's probe is 1 to " +
             std::to_string(s.max_tokens) + " tokens");
  }
  if (r.mechanisms.size() > static_cast<size_t>(s.layers))
    refuse("holds mechanism views of " + std::to_string(r.mechanisms.size()) +
           " layers; the run's model has " + std::to_string(s.layers));
  for (const MechanismView& v : r.mechanisms) {
    in_model(v.layer, 0, "a mechanism view");
    check_mechanism_view(v);
    for (const ViewScalar& x : v.scalars)
      if (x.head >= s.heads)
        refuse("holds a mechanism view's scalar \"" + x.name + "\" of head " +
               std::to_string(x.head) + "; the run's model has " + std::to_string(s.heads) +
               " heads");
  }
  if (!r.image.empty() &&
      (!s.image || r.image.rows > 1024 || r.image.cols > 1024 || r.image.patch < 1))
    refuse("holds a probe image of " + std::to_string(r.image.rows) + " x " +
           std::to_string(r.image.cols) +
           (s.image ? " (at most 1024 x 1024)" : "; the run's task has no images"));
  if (r.probabilities.size() > static_cast<size_t>(s.max_classes))
    refuse("holds " + std::to_string(r.probabilities.size()) +
           " class probabilities; the run's model has " +
           (s.max_classes ? "at most " + std::to_string(s.max_classes) + " classes"
                          : std::string("no classifier head")));
  if (!r.importance.empty() && (r.importance.layers != s.layers || r.importance.heads != s.heads))
    refuse("holds a head importance table of " + std::to_string(r.importance.layers) + " x " +
           std::to_string(r.importance.heads) + "; the run's model has " +
           std::to_string(s.layers) + " layers x " + std::to_string(s.heads) + " heads");
  if (!r.attribution.empty() &&
      (r.attribution.layers != s.layers || r.attribution.heads != s.heads))
    refuse("holds an attribution table of " + std::to_string(r.attribution.layers) + " x " +
           std::to_string(r.attribution.heads) + "; the run's model has " +
           std::to_string(s.layers) + " layers x " + std::to_string(s.heads) + " heads");
  // embed, then per layer every head, the attention bias and the MLP.
  const size_t components = 1 + size_t(std::max(s.layers, 0)) * (size_t(std::max(s.heads, 0)) + 2);
  if (r.dla.names.size() > components)
    refuse("holds a direct logit attribution of " + std::to_string(r.dla.names.size()) +
           " components; the run's model has " + std::to_string(components));
  check_model_views(r, s);
}

}  // namespace attn
