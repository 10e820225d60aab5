// Snapshots of every kind of run the figure builders know, built by hand (no torch, no training):
// a dot model on the copy task (13 digit tokens) and on a character task (48 characters), a ky
// model with connection curves, a Connection Transformer, a neural layer with d' = 2 and an
// image task. Values are smooth deterministic functions, shaped like real ones (attention rows
// sum to 1, the loss falls, the accuracy reaches exactly 1).
#pragma once
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "app/figures/catalog/figures.h"
#include "app/figures/runs/compare_figures.h"
#include "core/analysis/connections.h"
#include "core/attention/ky/ky_view.h"
#include "core/attention/neural/neural_view.h"
#include "core/models/conn/conn_view.h"
#include "core/runs/directory/run_dir.h"
#include "core/views/snapshot.h"
#include "render/plot/export/figure_export.h"
#include "render/plot/figure_font.h"

namespace attn::fig::testing {

// The export font (the same file the window and the exports use), loaded once.
inline const FigureFont& font() {
  static const auto f = FigureFont::load(default_font_path());
  return *f;
}

// The page `attnlab export --width-in w` gives (default font size, natural height).
inline Page page_at(const Figure& f, double width_in) {
  ExportRequest r;
  r.width_in = width_in;
  return page_for(f, r, font());
}

inline Series curve(int points, int64_t every, double start, double end, double rate) {
  Series s;
  for (int i = 1; i <= points; ++i) {
    const double t = static_cast<double>(i) / points;
    s.steps.push_back(i * every);
    const double v = end + (start - end) * std::exp(-rate * t);
    s.values.push_back(static_cast<float>(v * (1 + 0.04 * std::sin(7.0 * i))));
  }
  return s;
}

// Causal attention rows that sum to 1, peaked at a head-dependent offset.
inline std::vector<AttentionMap> attention_maps(int layers, int heads, int size, bool causal) {
  std::vector<AttentionMap> maps;
  for (int l = 0; l < layers; ++l)
    for (int h = 0; h < heads; ++h) {
      AttentionMap m{l, h, size, std::vector<float>(static_cast<size_t>(size) * size, 0.0f)};
      for (int i = 0; i < size; ++i) {
        double sum = 0;
        const int last = causal ? i : size - 1;
        for (int j = 0; j <= last; ++j) {
          const double w = std::exp(-std::fabs(i - j - (h + l) % 4) / (1.0 + h));
          m.weights[static_cast<size_t>(i) * size + j] = static_cast<float>(w);
          sum += w;
        }
        for (int j = 0; j <= last; ++j) m.weights[static_cast<size_t>(i) * size + j] /= sum;
      }
      maps.push_back(std::move(m));
    }
  return maps;
}

inline void add_training(Snapshot& s, bool accuracy) {
  s.step = 6000;
  s.train_loss = curve(120, 50, 2.4, 0.05, 5.0);
  s.eval_loss = curve(12, 500, 2.5, 0.08, 5.0);
  if (accuracy) {
    s.eval_accuracy = curve(12, 500, 0.1, 1.0, 6.0);
    for (float& v : s.eval_accuracy.values) v = std::min(v, 1.0f);
    s.eval_accuracy.values.back() = 1.0f;  // a solved task
  }
}

// A dot model on the copy task: 2 layers x 4 heads over 13 tokens.
inline Snapshot copy_snapshot() {
  Snapshot s;
  s.task = "copy";
  s.mechanisms = {"dot", "dot"};
  add_training(s, true);
  s.layers = 2, s.heads = 4;
  s.probe_tokens = {"4", "9", "2", "8", "4", "7", "|", "4", "9", "2", "8", "4", "7"};
  s.attention_step = 6000;
  s.attention = std::make_shared<std::vector<AttentionMap>>(attention_maps(2, 4, 13, true));
  return s;
}

// A dot model on a character task: 48 characters of context, a unigram baseline.
inline Snapshot text_snapshot() {
  Snapshot s;
  s.task = "text";
  s.mechanisms = {"dot", "dot"};
  add_training(s, false);
  s.baseline_loss = 3.1;
  s.layers = 2, s.heads = 4;
  const std::string text = "The quick brown fox jumps over the lazy dog again";
  for (int i = 0; i < 48; ++i)
    s.probe_tokens.push_back(text[i] == ' ' ? "\xe2\x90\xa3" : text.substr(i, 1));
  s.attention_step = 6000;
  s.attention = std::make_shared<std::vector<AttentionMap>>(attention_maps(2, 4, 48, true));
  return s;
}

// Condor's ky layers: connection curves of 2 layers x 4 heads (window 8), and their maps.
inline Snapshot ky_snapshot() {
  Snapshot s = copy_snapshot();
  s.mechanisms = {"ky", "ky"};
  auto frames = std::make_shared<std::vector<MechanismFrame>>();
  for (int64_t step : {0, 3000, 6000}) {
    MechanismFrame f;
    f.step = step;
    for (int l = 0; l < 2; ++l) {
      ConnectionCurves c;
      c.layer = l, c.heads = 4, c.window = 8, c.query_slot = 7, c.causal = true;
      c.edges = "masked";
      for (int i = 0; i < 64; ++i) c.t.push_back(i / 63.0f);
      for (int h = 0; h < 4; ++h) {
        for (float t : c.t)
          c.g.push_back(static_cast<float>(0.4 * std::sin(3 * t + h) * (step + 1) / 6001));
        for (int j = 0; j < 8; ++j) {
          c.slot_g.push_back(
              static_cast<float>(0.4 * std::sin(3 * j / 7.0 + h) * (step + 1) / 6001));
          c.beta.push_back(1.0f / 8);
        }
      }
      f.layers.push_back(ky_view_of(c));
    }
    frames->push_back(std::move(f));
  }
  s.mechanism_views = frames;
  return s;
}

// A Connection Transformer with 32 slots, norm-bound control at r = 0.95.
inline Snapshot conn_snapshot() {
  Snapshot s;
  s.task = "recall";
  s.mechanisms = {"conn"};
  add_training(s, true);
  s.layers = 1, s.heads = 1;
  s.probe_tokens = {"3", "1", "4", "1", "5", "?"};
  s.attention_step = 6000;
  s.attention = std::make_shared<std::vector<AttentionMap>>(attention_maps(1, 1, 6, false));
  auto v = std::make_shared<ConnView>();
  v->slots = 32, v->d_model = 64, v->steps = 2;
  v->control = "norm-bound";
  v->limit = 0.95;
  v->tracking = true;
  v->spectral_radius = curve(120, 50, 0.3, 0.93, 3.0);
  v->spectral_norm = curve(120, 50, 0.5, 0.95, 3.0);
  v->eigen_step = 6000;
  for (int i = 0; i < 32; ++i) {
    v->eigen_re.push_back(static_cast<float>(0.9 * std::cos(0.7 * i) * (0.5 + i / 64.0)));
    v->eigen_im.push_back(static_cast<float>(0.9 * std::sin(0.7 * i) * (0.5 + i / 64.0)));
  }
  v->exact_radius = 0.93;
  v->matrix_step = 6000;
  auto c = std::make_shared<std::vector<float>>();
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 32; ++j) c->push_back(static_cast<float>(0.3 * std::sin(0.37 * i * j)));
  v->matrix = c;
  s.model_views = conn_model_views(*v);
  return s;
}

// A neural layer with d' = 2: the score surface over [-3, 3]^2 and a slice.
inline Snapshot neural_snapshot() {
  Snapshot s = copy_snapshot();
  s.mechanisms = {"neural", "neural"};
  auto v = std::make_shared<NeuralView>();
  v->step = 6000;
  NeuralScoreSurface& sf = v->surface;
  sf.available = true;
  sf.layer = 1, sf.head = 2, sf.grid = 31;
  for (int i = 0; i < 31; ++i) sf.xs.push_back(-3 + 6 * i / 30.0f), sf.ys.push_back(sf.xs.back());
  for (float y : sf.ys)
    for (float x : sf.xs) {
      sf.learned.push_back(x * x + 0.5f * y * y + 0.3f * x * y);
      sf.paraboloid.push_back(x * x + y * y);
    }
  for (int i = 0; i < 61; ++i) {
    const float t = -3 + 6 * i / 60.0f;
    sf.slice_t.push_back(t);
    sf.slice_learned.push_back(t * t - 0.5f);
    sf.slice_dot.push_back(t);
  }
  s.mechanism_views = std::make_shared<const std::vector<MechanismFrame>>(
      std::vector<MechanismFrame>{neural_frame_of(*v)});
  return s;
}

// An image task: a 28 x 28 picture in 7 x 7 patches (a 4 x 4 grid plus CLS: 17 tokens).
inline Snapshot image_snapshot() {
  Snapshot s;
  s.task = "fashion-mnist";
  s.mechanisms = {"dot", "dot"};
  add_training(s, true);
  s.layers = 2, s.heads = 4;
  ProbeImage& img = s.probe_image;
  img.rows = img.cols = 28;
  img.patch = 7;
  img.index = 4321;
  img.label = 9;
  img.label_name = "Ankle boot";
  for (int r = 0; r < 28; ++r)
    for (int c = 0; c < 28; ++c)
      img.pixels.push_back(static_cast<float>(0.5 + 0.5 * std::sin(r * 0.3) * std::cos(c * 0.2)));
  s.probe_probabilities.assign(10, 0.02f);
  s.probe_probabilities[9] = 0.82f;
  s.attention_step = 6000;
  s.attention = std::make_shared<std::vector<AttentionMap>>(attention_maps(2, 4, 17, false));
  for (int i = 0; i < 17; ++i) s.probe_tokens.push_back(i == 0 ? "CLS" : std::to_string(i - 1));
  return s;
}

// The geometry lab's default-like scene: five tokens, a rotation-and-scale W^Q, W^K = I.
inline figures::GeometryFigureInput geometry_input() {
  figures::GeometryFigureInput in;
  in.scene.tokens = {{1.2, 0.3}, {-0.8, 1.1}, {-0.4, -1.3}, {0.9, -0.7}, {0.1, 0.05}};
  in.scene.wq = {0.8, -0.6, 0.6, 0.8};
  in.scene.wv = {1.0, 0.2, -0.1, 0.9};
  in.query = {0.7, 0.4};
  in.grid.lines = 17;
  in.grid.samples = 65;
  return in;
}

// A compared run as `attnlab compare` reads it (curves and config only, no files).
inline RunDirectory compared_run(const std::string& id, const std::string& task, double scale) {
  RunDirectory r;
  r.dir = "/nonexistent/" + id;
  r.id = id;
  r.config.task.name = task;
  r.train_loss = curve(60, 100, 2.4 * scale, 0.02 * scale, 6.0);
  r.eval_loss = curve(12, 500, 2.5 * scale, 0.03 * scale, 6.0);
  r.eval_accuracy = curve(12, 500, 0.1, 1.0, 6.0);
  for (float& v : r.eval_accuracy.values) v = std::min(v, 1.0f);
  return r;
}

}  // namespace attn::fig::testing
