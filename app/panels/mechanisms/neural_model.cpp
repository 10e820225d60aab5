#include "app/panels/mechanisms/neural_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>

#include "app/figures/catalog/figures.h"
#include "app/panels/mechanisms/neural_figures.h"
#include "render/plot/colormap.h"

namespace attn::gui {
namespace {

// The builder's panels (figures::neural_surface_figure): learned surface, paraboloid, slice.
constexpr int kBuiltSlicePanel = 2;

// Segments of a NaN-separated contour series (each segment is two points and a NaN).
int count_segments(const fig::LineSeries& l) {
  int n = 0;
  for (double x : l.x) n += std::isnan(x) ? 1 : 0;
  return n;
}

bool all_finite(const std::vector<float>& v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

// "4.2e-03" style with three significant digits, for the parameter table.
std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(NeuralModel::Report, drawn, surface_available, surface_finite,
                                   layer, head, grid, step, contour_segments, slice_points,
                                   table_heads, gradients_present, score_bias_gradient_zero, note)

nlohmann::json NeuralModel::report_json() const {
  return report_;
}

int NeuralModel::shown_layer(const NeuralView& view) const {
  return view.layer_info(request_.layer) ? request_.layer : view.surface.layer;
}

std::optional<NeuralViewRequest> NeuralModel::take_request() {
  if (request_ == sent_) return std::nullopt;
  sent_ = request_;
  return request_;
}

void NeuralModel::rebuild() {
  contour_segments_ = 0;
  slice_panel_ = kBuiltSlicePanel;
  try {
    figure_ = figures::neural_surface_figure(*view_);
    figure_ok_ = figure_.panels.size() == 3;
    figure_note_.clear();
  } catch (const std::exception& e) {
    figure_ = fig::Figure{};
    figure_ok_ = false;
    figure_note_ = e.what();
    return;
  }
  const NeuralScoreSurface& s = view_->surface;
  // The slice in the panel's colours (learned score orange, dot product sky blue; the builder's
  // series order is learned, dot), and the figure's title stating its query and key direction.
  fig::Panel& slice = figure_.panels[kBuiltSlicePanel];
  if (slice.lines.size() == 2) {
    slice.lines[0].color = fig::Color::from(render::okabe_ito(1));
    slice.lines[1].color = fig::Color::from(render::okabe_ito(4));
    slice.lines[0].width_pt = slice.lines[1].width_pt = 1.5;
  }
  char where[96];
  std::snprintf(where, sizeof where, "; slice at q' = (%.2f, %.2f), a = %.0f\xc2\xb0", s.query_x,
                s.query_y, s.key_angle * 180.0 / M_PI);
  figure_.title += where;
  for (int k = 0; k < kBuiltSlicePanel; ++k)
    for (const fig::LineSeries& l : figure_.panels[k].lines) contour_segments_ += count_segments(l);
}

void NeuralModel::arrange(bool two_by_two) {
  if (!figure_ok_) return;
  const int slice_at = two_by_two ? 1 : kBuiltSlicePanel;
  if (slice_at != slice_panel_) {
    std::swap(figure_.panels[1], figure_.panels[2]);
    slice_panel_ = slice_at;
  }
  figure_.rows = two_by_two ? 2 : 1;
  figure_.cols = two_by_two ? 2 : 3;
}

void NeuralModel::update(const Snapshot& snap) {
  report_ = Report{};
  if (snap.mechanism_views != frames_ || request_.layer != view_layer_ ||
      request_.head != view_head_) {
    frames_ = snap.mechanism_views;
    view_layer_ = request_.layer, view_head_ = request_.head;
    try {
      view_ = neural_view_of(snap.mechanism_history(), &request_);
      view_error_.clear();
    } catch (const std::exception& e) {  // a malformed view read from a run's files
      view_.reset();
      view_error_ = e.what();
    }
    if (view_) rebuild();
  }
  if (!view_) return;
  const NeuralLayerInfo* info = view_->layer_info(shown_layer(*view_));
  request_.head = std::clamp(request_.head, 0, std::max(0, (info ? info->heads : 1) - 1));
  fill_report(*view_);
}

void NeuralModel::fill_report(const NeuralView& view) {
  const NeuralScoreSurface& s = view.surface;
  report_.drawn = true;
  report_.layer = s.layer;
  report_.head = s.head;
  report_.step = view.step;
  report_.note = s.note;
  if (figure_ok_ && s.grid >= 2 && !s.xs.empty() && !s.slice_t.empty()) {
    report_.surface_available = true;
    report_.grid = s.grid;
    report_.surface_finite = all_finite(s.learned) && all_finite(s.slice_learned);
    report_.contour_segments = contour_segments_;
    const std::vector<fig::LineSeries>& slice = figure_.panels[slice_panel_].lines;
    report_.slice_points = slice.empty() ? 0 : static_cast<int>(slice[0].x.size());
  }
  const NeuralLayerInfo* info = view.layer_info(s.layer);
  if (!info) return;
  report_.table_heads = static_cast<int>(info->parameters.size());
  bool all_gradients = !info->parameters.empty(), bias_zero = !info->parameters.empty();
  for (const auto& head : info->parameters)
    for (const NeuralParameterStat& p : head) {
      all_gradients = all_gradients && p.has_gradient;
      if (p.name == "b_a") bias_zero = bias_zero && p.has_gradient && p.gradient == 0.0;
    }
  report_.gradients_present = all_gradients;
  report_.score_bias_gradient_zero = bias_zero;
}

std::string NeuralModel::missing_note(const NeuralView& view) const {
  if (!view.surface.note.empty()) return view.surface.note;
  if (!figure_note_.empty()) return figure_note_;
  return "nothing computed yet";
}

NeuralModel::Table NeuralModel::parameter_table(const NeuralLayerInfo& info) {
  Table t;
  t.layer = info.layer;
  if (info.parameters.empty()) return t;
  t.columns.push_back("head");
  for (const NeuralParameterStat& p : info.parameters.front()) {
    t.columns.push_back(p.scalar ? p.name : "|" + p.name + "|");
    t.columns.push_back(p.scalar ? "grad " + p.name : "|grad " + p.name + "|");
  }
  for (size_t h = 0; h < info.parameters.size(); ++h) {
    std::vector<Cell> row = {{std::to_string(h), Cell::Kind::Number}};
    for (const NeuralParameterStat& p : info.parameters[h]) {
      row.push_back({number(p.value), Cell::Kind::Number});
      if (!p.has_gradient)
        row.push_back({"-", Cell::Kind::NoGradient});
      else if (p.name == "b_a" && p.gradient == 0.0)
        row.push_back({"0 (exact)", Cell::Kind::ExactZero});
      else
        row.push_back({number(p.gradient), Cell::Kind::Number});
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::vector<std::string> NeuralModel::figures(const Snapshot& snap) const {
  for (const figures::FigureSpec& spec : figures::figures_for(snap))
    if (spec.name == "neural-surface") return {spec.name};
  return {};
}

}  // namespace attn::gui
