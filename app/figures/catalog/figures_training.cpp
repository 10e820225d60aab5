// Builders for what every run has (loss curves, attention maps) and for Condor's connection
// functions and image attention; the dispatch table (with the mechanisms' registered figures,
// app/figures/catalog/mechanism_figures.h).
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "app/figures/models/connections_figure.h"
#include "app/figures/catalog/figures.h"
#include "app/figures/runs/intervention_figures.h"
#include "app/figures/catalog/mechanism_figures.h"
#include "app/figures/models/mechanism_view_figure.h"
#include "core/base/error.h"
#include "core/base/version.h"
#include "core/training/session/image_probe.h"
#include "core/views/intervention_view.h"
#include "render/plot/plot_math.h"

namespace attn::figures {
fig::LineSeries line_from(const Series& s, const std::string& name) {
  fig::LineSeries l;
  l.name = name;
  for (size_t i = 0; i < s.steps.size() && i < s.values.size(); ++i) {
    l.x.push_back(static_cast<double>(s.steps[i]));
    l.y.push_back(s.values[i]);
  }
  return l;
}

namespace {

std::vector<int> layers_to_show(const Snapshot& s, int layer) {
  std::vector<int> out;
  for (int l = 0; l < s.layers; ++l)
    if (layer < 0 || layer == l) out.push_back(l);
  if (out.empty() && s.layers <= 0)
    throw Error("the model has no attention layers (" + std::to_string(s.layers) +
                "): no attention maps to draw");
  if (out.empty())
    throw Error("layer " + std::to_string(layer) + " is out of range: the model has " +
                std::to_string(s.layers) + " layers (0.." + std::to_string(s.layers - 1) + ")");
  return out;
}

float finite_max(const std::vector<float>& v) {
  float m = 0;
  for (float w : v)
    if (std::isfinite(w)) m = std::max(m, w);
  return m;
}

// A weight heatmap's range under a scale mode (vmin 0), and the colorbar's words for it.
void apply_scale(fig::Heatmap& h, AttentionScale scale, float shared_max, const std::string& what) {
  const float own = finite_max(h.values);
  h.vmin = 0;
  h.vmax = scale == AttentionScale::Fixed    ? 1.0
           : scale == AttentionScale::Shared ? shared_max
                                             : own;
  if (!(h.vmax > 0)) h.vmax = 1;
  h.colorbar = true;
  h.colorbar_relative = scale == AttentionScale::PerMap;
  h.colorbar_label = what + (scale == AttentionScale::Shared   ? " (shared scale)"
                             : scale == AttentionScale::PerMap ? " (per map)"
                                                               : "");
}

}  // namespace

fig::Figure loss_figure(const Snapshot& s, const FigureOptions& o) {
  if (!(o.smoothing >= 0 && o.smoothing < 1))
    throw Error("smoothing " + std::to_string(o.smoothing) + " is out of range: allowed [0, 1)");
  const fig::Color train_color = fig::Color::from(render::okabe_ito(0));
  fig::Figure f;
  f.name = "loss";
  fig::Panel loss;
  loss.title = "Loss";
  loss.x.label = "step";
  loss.y.label = "cross-entropy (nats)";
  loss.y.log = o.log_y;
  loss.grid = true;
  // A saved run's metrics.csv holds the mean train loss of each evaluation interval.
  auto train = line_from(s.train_loss, "train");
  train.width_pt = 0.75;
  train.color = train_color;
  if (o.smoothing > 0) {
    // As on screen: the raw curve faded under its debiased EMA.
    train.color.a = 0.35f;
    loss.lines.push_back(train);
    auto ema = train;
    ema.name = "train (EMA)";
    ema.y.clear();
    for (float v : render::ema_debiased(s.train_loss.values, o.smoothing)) ema.y.push_back(v);
    ema.y.resize(ema.x.size(), NAN);
    ema.color = train_color;
    ema.width_pt = 1.0;
    loss.lines.push_back(ema);
  } else {
    loss.lines.push_back(train);
  }
  if (!s.eval_loss.empty()) {
    auto eval = line_from(s.eval_loss, "eval");
    eval.width_pt = 1.25;
    eval.color = fig::Color::from(render::okabe_ito(1));
    loss.lines.push_back(eval);
  }
  if (s.baseline_loss > 0 && !s.train_loss.empty()) {
    fig::LineSeries base{"unigram baseline",
                         {double(s.train_loss.steps.front()), double(s.train_loss.steps.back())},
                         {s.baseline_loss, s.baseline_loss},
                         fig::Color::rgb(0.45f, 0.45f, 0.45f),
                         0.75,
                         fig::LineStyle::Dashed};
    loss.lines.push_back(base);
  }
  f.panels.push_back(loss);
  if (o.show_accuracy && !s.eval_accuracy.empty()) {
    fig::Panel acc;
    acc.title = "Accuracy";
    acc.x.label = "step";
    acc.y.label = "eval accuracy";
    // Padded past 0 and 1: a solved task's curve at exactly 1.0 stays off the frame.
    acc.y.min = -0.03, acc.y.max = 1.05;
    acc.grid = true;
    acc.legend = false;
    auto a = line_from(s.eval_accuracy, "eval accuracy");
    a.color = fig::Color::from(render::okabe_ito(2));
    a.width_pt = 1.25;
    acc.lines.push_back(a);
    f.panels.push_back(acc);
    f.cols = 2;
    f.aspect = 0.45;
  }
  return f;
}

fig::Figure attention_figure(const Snapshot& s, const FigureOptions& o) {
  const auto& maps = s.attention_maps();
  if (maps.empty()) throw Error("the run has no attention maps yet (no probe has run)");
  const std::vector<int> layers = layers_to_show(s, o.layer == kAllLayers ? -1 : o.layer);
  fig::Figure f;
  f.name = "attention";
  f.step = s.attention_step;
  // The title names what was trained: the task and the mechanism of each distinct layer.
  std::string what = s.task;
  std::vector<std::string> kinds;
  for (const std::string& m : s.mechanisms)
    if (std::find(kinds.begin(), kinds.end(), m) == kinds.end()) kinds.push_back(m);
  for (size_t i = 0; i < kinds.size(); ++i)
    what += (i == 0 ? (what.empty() ? "" : ", ") : "+") + kinds[i];
  // And which run: the directory it is recorded in, else the one it was opened from.
  const std::string& dir = s.run_dir.empty() ? s.source_dir : s.run_dir;
  const std::string run = std::filesystem::path(dir).filename().string();
  f.title = "Attention on the probe input" + (what.empty() ? "" : " (" + what + ")") +
            (run.empty() ? "" : ", run " + run) + ", step " + std::to_string(s.attention_step) +
            (s.token_legend.empty() ? "" : "; " + s.token_legend);
  f.rows = static_cast<int>(layers.size());
  f.cols = std::max(1, s.heads);
  f.aspect = std::min(1.6, 0.2 + 0.9 * f.rows / f.cols);
  // Every map covers the same tokens: one x and one y range, labelled once for the grid.
  f.share_x = f.share_y = true;
  float shared = 0;
  for (const auto& m : maps)
    if (std::find(layers.begin(), layers.end(), m.layer) != layers.end())
      shared = std::max(shared, finite_max(m.weights));
  for (int layer : layers)
    for (int head = 0; head < f.cols; ++head) {
      fig::Panel p = fig::matrix_panel("key", "query");
      p.title = "layer " + std::to_string(layer) + ", head " + std::to_string(head);
      p.short_title = "L" + std::to_string(layer) + " H" + std::to_string(head);
      for (const auto& m : maps) {
        if (m.layer != layer || m.head != head) continue;
        fig::Heatmap h = fig::square_heatmap(
            "layer" + std::to_string(layer) + "_head" + std::to_string(head), m.size, m.weights);
        h.colormap = o.colormap;
        h.layer = layer, h.head = head;
        apply_scale(h, o.scale, shared, "weight");
        p.x.ticks = fig::token_ticks(s.probe_tokens, m.size);
        p.y.ticks = p.x.ticks;
        p.heatmaps.push_back(h);
      }
      f.panels.push_back(p);
    }
  return f;
}

fig::Figure connections_figure(const Snapshot& s, const FigureOptions& o) {
  ConnectionsOptions c;
  c.layer = o.layer >= 0 ? o.layer : -1;
  c.step = o.step;
  c.overlaid = o.connections_overlaid;
  c.beta = o.connections_beta;
  c.history = o.connections_history;
  c.cols = o.connections_cols;
  return build_connections_figure(s.mechanism_history(), c).figure;
}

fig::Heatmap picture_heatmap(const ProbeImage& img, const std::string& name) {
  fig::Heatmap h;
  h.name = name;
  h.rows = img.rows, h.cols = img.cols;
  h.values = img.pixels;
  h.x1 = img.cols, h.y1 = img.rows;
  h.colormap = render::Colormap::Gray;
  h.vmin = 0, h.vmax = 1;
  h.colorbar = false;
  return h;
}

fig::Figure image_attention_figure(const Snapshot& s, const FigureOptions& o) {
  const ProbeImage& img = s.probe_image;
  if (img.empty()) throw Error("image-attention needs an image task (task.name fashion-mnist)");
  if (!(o.overlay_alpha >= 0 && o.overlay_alpha <= 1))
    throw Error("overlay alpha " + std::to_string(o.overlay_alpha) +
                " is out of range: allowed [0, 1]");
  const std::vector<int> layers = layers_to_show(s, o.layer == kAllLayers ? -1
                                                    : o.layer < 0         ? s.layers - 1
                                                                          : o.layer);
  const int grid = img.patch > 0 ? img.rows / img.patch : 0;
  fig::Figure f;
  f.name = "image-attention";
  f.step = s.attention_step;
  f.title = "CLS attention over test image " + std::to_string(img.index) + " (" + img.label_name +
            "), step " + std::to_string(s.attention_step);
  f.rows = static_cast<int>(layers.size());
  f.cols = s.heads + 1 + (o.show_mean ? 1 : 0);
  f.aspect = 0.2 + 1.0 * f.rows / f.cols;
  // Per layer: each head's CLS row over the patches, then (optionally) their mean.
  std::vector<std::vector<std::vector<float>>> rows;
  float shared = 0;
  for (int layer : layers) {
    std::vector<std::vector<float>> heads;
    for (const auto& m : s.attention_maps())
      if (m.layer == layer) heads.push_back(cls_patch_weights(m));
    if (o.show_mean) heads.push_back(elementwise_mean(heads));
    for (const auto& h : heads) shared = std::max(shared, finite_max(h));
    rows.push_back(std::move(heads));
  }
  for (size_t r = 0; r < layers.size(); ++r) {
    const int layer = layers[r];
    fig::Panel pic;
    pic.title = "layer " + std::to_string(layer);
    pic.short_title = "L" + std::to_string(layer);
    pic.y.inverted = true;
    pic.x.visible = pic.y.visible = false;
    pic.equal_aspect = true;
    pic.heatmaps.push_back(picture_heatmap(img, "image"));
    f.panels.push_back(pic);
    const auto& heads = rows[r];
    for (size_t h = 0; h < heads.size(); ++h) {
      const bool mean = o.show_mean && h + 1 == heads.size();
      fig::Panel p = pic;
      p.title = mean ? "mean" : "head " + std::to_string(h);
      p.short_title = mean ? "mean" : "h" + std::to_string(h);
      if (static_cast<int>(heads[h].size()) == grid * grid && grid > 0) {
        fig::Heatmap over;
        over.name =
            "layer" + std::to_string(layer) + (mean ? "_mean" : "_head" + std::to_string(h));
        over.rows = over.cols = grid;
        over.values = heads[h];
        over.x1 = img.cols, over.y1 = img.rows;
        over.colormap = o.overlay_colormap;
        over.alpha = o.overlay_alpha;
        apply_scale(over, o.scale, shared, "CLS weight");
        p.heatmaps.push_back(over);
      }
      f.panels.push_back(p);
    }
  }
  return f;
}

fig::Provenance provenance_for(const Snapshot& s, const ExperimentConfig& config,
                               const std::string& run_id) {
  fig::Provenance p;
  p.program_version = version_string();
  p.run_id = run_id;
  p.config_hash = config_hash(config);
  p.seed = config.seed;
  p.step = s.step;
  for (const auto& m : s.mechanisms)
    if (p.mechanism.find(m) == std::string::npos)
      p.mechanism += (p.mechanism.empty() ? "" : "+") + m;
  return p;
}

std::vector<FigureSpec> figures_for(const Snapshot& s) {
  std::vector<FigureSpec> out = {{"loss", "train and eval loss (and accuracy) over steps"}};
  if (!s.attention_maps().empty())
    out.push_back({"attention", "attention maps of every layer and head on the probe input"});
  if (connections_available(s.mechanism_history()))
    out.push_back({"connections", "Condor's learned connection functions g_h(t) per head"});
  if (!s.mechanism_history().empty())
    out.push_back(
        {"mechanism-views", "what each layer's mechanism shows of itself (any mechanism)"});
  for (const MechanismFigure& m : mechanism_figures())
    if (m.available(s)) out.push_back({m.name, m.description});
  if (!s.probe_image.empty())
    out.push_back({"image-attention", "CLS attention over the probe image, per head"});
  if (s.interventions && !s.interventions->importance.empty())
    out.push_back({"importance", "each head ablated alone: the eval loss change, layer x head"});
  return out;
}

fig::Figure build_figure(const std::string& name, const Snapshot& s, const FigureOptions& o) {
  bool known = false;
  std::string names;
  for (const auto& spec : figures_for(s)) {
    known = known || spec.name == name;
    names += (names.empty() ? "" : ", ") + spec.name;
  }
  if (!known) throw Error("unknown figure '" + name + "' for this run; it has: " + names);
  if (name == "loss") return loss_figure(s, o);
  if (name == "attention") return attention_figure(s, o);
  if (name == "connections") return connections_figure(s, o);
  if (name == "mechanism-views")
    return build_mechanism_view_figure(s.mechanism_history(), {o.layer, o.step});
  for (const MechanismFigure& m : mechanism_figures())
    if (name == m.name) return m.build(s, o);
  if (name == "importance") return importance_figure(s.interventions->importance);
  return image_attention_figure(s, o);
}

}  // namespace attn::figures
