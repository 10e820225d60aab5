#include "app/panels/mechanisms/conn_transformer_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <numeric>

#include "app/panels/mechanisms/conn_transformer_figures.h"
#include "core/base/error.h"

namespace attn::gui {
namespace {

// Slots ordered by total |influence| in and out, strongest first (ties keep slot order).
std::vector<int> strength_order(const std::vector<float>& c, int n) {
  std::vector<int> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::vector<double> strength(static_cast<size_t>(n), 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double x = std::abs(c[static_cast<size_t>(i) * n + j]);
      if (!std::isfinite(x)) continue;
      strength[i] += x;
      strength[j] += x;
    }
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return strength[a] > strength[b]; });
  return order;
}

// The matrix figure with its slots in display order: the heatmap's rows and columns permuted by
// `order` (display position -> slot), the ticks of both axes at the cells labelled with the real
// slot indices (the layout thins them to fit), and the title saying so.
void reorder_matrix(fig::Figure& f, const std::vector<int>& order) {
  fig::Panel& p = f.panels.at(0);
  fig::Heatmap& h = p.heatmaps.at(0);
  const int n = h.rows;
  if (n != h.cols || static_cast<int>(order.size()) != n) return;
  std::vector<float> shown(h.values.size());
  for (int r = 0; r < n; ++r)
    for (int q = 0; q < n; ++q)
      shown[static_cast<size_t>(r) * n + q] =
          h.values[static_cast<size_t>(order[r]) * n + order[q]];
  h.values = std::move(shown);
  h.name = "C (slots reordered by total |C|)";
  std::vector<fig::Tick> ticks;
  for (int k = 0; k < n; ++k) ticks.push_back({k + 0.5, std::to_string(order[k])});
  p.x.ticks = p.y.ticks = ticks;
  f.title += " (slots reordered by total |C|)";
}

template <class Make>
void build(ConnTransformerModel::Plot& plot, Make&& make) {
  try {
    plot.figure = make();
    plot.ok = !plot.figure.panels.empty();
    plot.note.clear();
  } catch (const std::exception& e) {
    plot.figure = fig::Figure{};
    plot.ok = false;
    plot.note = e.what();
  }
}

}  // namespace

void ConnTransformerModel::update(const Snapshot& snap) {
  if (!shows(snap) || (snap.serial == built_serial_ && reorder_ == built_reorder_)) return;
  if (snap.serial != built_serial_ || !view_) view_ = conn_view_of(snap);
  const ConnView& v = *view_;
  build(plots_[kMatrix], [&] {
    fig::Figure f = figures::conn_matrix_figure(snap);
    order_.resize(static_cast<size_t>(v.slots));
    std::iota(order_.begin(), order_.end(), 0);
    if (reorder_) {
      order_ = strength_order(*v.matrix, v.slots);
      reorder_matrix(f, order_);
    }
    return f;
  });
  build(plots_[kEigenvalues], [&] { return figures::conn_eigenvalues_figure(snap); });
  build(plots_[kSpectral], [&] {
    if (v.spectral_radius.empty()) throw Error("spectral tracking is off (model.conn.track)");
    return figures::conn_spectral_figure(snap);
  });
  build(plots_[kTrace], [&] {
    if (!figures::has_conn_trace(snap)) throw Error("no probe yet");
    return figures::conn_trace_figure(snap);
  });
  built_serial_ = snap.serial;
  built_reorder_ = reorder_;
  built_step_ = snap.step;
}

std::vector<std::string> ConnTransformerModel::figures(const Snapshot& snap) const {
  if (!shows(snap)) return {};
  std::vector<std::string> out = {"conn-matrix", "conn-eigenvalues", "conn-spectral"};
  if (figures::has_conn_trace(snap)) out.push_back("conn-trace");
  return out;
}

const fig::Figure* ConnTransformerModel::shown_figure(const std::string& name) const {
  for (const Plot& p : plots_)
    if (p.ok && p.figure.name == name) return &p.figure;
  return nullptr;
}

std::string ConnTransformerModel::summary(const ConnView& v) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "N %d slots, D %d, K %d steps, %d connection head%s, mixing %s, %s; control %s, "
                "r = %.3g (changed C after %lld steps)",
                v.slots, v.d_model, v.steps, v.heads, v.heads == 1 ? "" : "s", v.mixing.c_str(),
                v.variant.c_str(), v.control.c_str(), v.limit,
                static_cast<long long>(v.control_events));
  return buf;
}

std::string ConnTransformerModel::parameters_note(const ConnView& v) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "parameters %lld (seed's formula N^2 + 8D^2 + SD + VD: %lld); estimates within "
                "%.1e of the exact values at eigen refreshes. rho and ||.||_2 are measurements: "
                "with LayerNorm after each step they guarantee no convergence.",
                static_cast<long long>(v.parameters), static_cast<long long>(v.spec_formula),
                v.estimate_error);
  return buf;
}

std::vector<std::string> ConnTransformerModel::stats_lines(const ConnView& v) {
  const ConnStats& s = v.stats;
  char buf[256];
  std::vector<std::string> out;
  std::snprintf(
      buf, sizeof buf,
      "||C||_F %.4g, max |C| %.4g; inhibitory (C < -%.2g): %d; sparsity (|C| < 0.01): %.1f%%",
      s.frobenius, s.max_abs, s.threshold, s.inhibitory, 100.0 * s.sparsity);
  out.push_back(buf);
  std::snprintf(buf, sizeof buf,
                "graph C > %.2g: %d edges, %d self-loops, %d cyclic components over %d slots",
                s.threshold, s.edges, s.self_loops, s.cyclic_components, s.nodes_on_cycles);
  out.push_back(buf);
  std::string cycles;
  for (const auto& c : s.cycles) {
    if (c.empty()) continue;
    cycles += cycles.empty() ? "" : ";  ";
    for (size_t k = 0; k < c.size(); ++k) cycles += std::to_string(c[k]) + " -> ";
    cycles += std::to_string(c.front());
  }
  out.push_back("shortest cycles: " + (cycles.empty() ? std::string("none") : cycles));
  std::string links;
  for (const auto& l : s.strongest) {
    std::snprintf(buf, sizeof buf, "%s%d->%d %.3g", links.empty() ? "" : ", ", l.from, l.to,
                  l.value);
    links += buf;
  }
  out.push_back("strongest links: " + links);
  return out;
}

nlohmann::json ConnTransformerModel::report() const {
  nlohmann::json shown = nlohmann::json::object();
  const char* names[kPlots] = {"matrix", "eigenvalues", "spectral", "trace"};
  for (int k = 0; k < kPlots; ++k)
    shown[names[k]] = plots_[k].ok ? plots_[k].figure.name : "none: " + plots_[k].note;
  return {{"reorder", reorder_}, {"step", built_step_}, {"figures", shown}};
}

}  // namespace attn::gui
