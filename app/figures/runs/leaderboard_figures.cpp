#include "app/figures/runs/leaderboard_figures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/figures/runs/compare_figures.h"
#include "core/base/error.h"
#include "core/json/json_member.h"
#include "render/plot/colormap.h"

namespace attn::figures {
namespace {

using nlohmann::json;

const json* find_cell(const json& board, const std::string& task, const std::string& mechanism) {
  for (const auto& c : board.at("cells"))
    if (c.value("task", "") == task && c.value("mechanism", "") == mechanism) return &c;
  return nullptr;
}

double number_or_nan(const json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : std::nan("");
}

// The mean eval accuracy over the cell's seeds that reached `threshold` (NaN when none did).
double solved_mean(const json& cell, double threshold) {
  double sum = 0;
  int n = 0;
  for (const auto& v : json_member(cell, "values", json::array()))
    if (v.is_number() && v.get<double>() >= threshold) sum += v.get<double>(), ++n;
  return n ? sum / n : std::nan("");
}

}  // namespace

fig::Figure leaderboard_figure(const json& board) {
  const auto& tasks = board.at("tasks");
  const auto& mechanisms = board.at("mechanisms");
  if (tasks.empty() || mechanisms.empty()) throw Error("the leaderboard has no cells to draw");
  const int rows = static_cast<int>(tasks.size()), cols = static_cast<int>(mechanisms.size());
  fig::Panel p = fig::matrix_panel("mechanism", "task");
  for (int k = 0; k < cols; ++k)
    p.x.ticks.push_back({k + 0.5, mechanisms[k].at("name").get<std::string>()});
  for (int t = 0; t < rows; ++t)
    p.y.ticks.push_back({t + 0.5, tasks[t].at("name").get<std::string>()});
  std::vector<float> values;
  for (int t = 0; t < rows; ++t)
    for (int k = 0; k < cols; ++k) {
      const json* c = find_cell(board, tasks[t]["name"], mechanisms[k]["name"]);
      const double v = c ? 100 * number_or_nan(*c, "mean") : std::nan("");
      values.push_back(static_cast<float>(v));
      if (std::isfinite(v)) {
        char text[16];
        std::snprintf(text, sizeof text, "%.0f", v);
        // Light text on the dark (low) end of viridis, dark on the bright end.
        const fig::Color ink =
            v < 55 ? fig::Color::rgb(0.97f, 0.97f, 0.97f) : fig::Color::rgb(0.08f, 0.08f, 0.08f);
        p.annotations.push_back({k + 0.5, t + 0.5, text, fig::Anchor::Center, ink});
      } else {
        // A gray cell says why it has no value: gated off by the reference ("-", as the title
        // says; "not trained" overflows a cell of 8 columns), or not finished yet.
        const bool gated = c && c->value("status", "") == "not_trained";
        p.annotations.push_back({k + 0.5, t + 0.5, gated ? "-" : "pending", fig::Anchor::Center,
                                 fig::Color::rgb(0.08f, 0.08f, 0.08f)});
      }
    }
  bool any = false;
  for (float v : values) any = any || std::isfinite(v);
  if (!any) throw Error("no cell of the leaderboard has finished: nothing to draw");
  fig::Heatmap m;
  m.name = "eval_accuracy_percent";
  m.rows = rows;
  m.cols = cols;
  m.x0 = 0, m.x1 = cols, m.y0 = 0, m.y1 = rows;
  m.values = std::move(values);
  m.colormap = render::Colormap::Viridis;
  m.vmin = 0;
  m.vmax = 100;
  m.colorbar_label = "accuracy (%)";
  p.heatmaps.push_back(std::move(m));
  fig::Figure f;
  f.name = "leaderboard";
  bool gated = false;
  for (const auto& c : board.at("cells")) gated = gated || c.value("status", "") == "not_trained";
  f.title =
      "eval accuracy (%) at the training length, mean over seeds, each mechanism at its own "
      "learning rate";
  if (gated) f.title += "; gray -: not trained (the task's reference did not learn it)";
  f.panels.push_back(std::move(p));
  f.aspect = std::clamp(0.12 + 0.07 * rows, 0.3, 0.9);
  return f;
}

bool has_extrapolation(const json& board) {
  for (const auto& t : board.at("tasks"))
    if (!json_member(t, "extrapolate", json::array()).empty()) return true;
  return false;
}

fig::Figure extrapolation_figure(const json& board) {
  std::vector<const json*> tasks;
  for (const auto& t : board.at("tasks"))
    if (!json_member(t, "extrapolate", json::array()).empty()) tasks.push_back(&t);
  if (tasks.empty()) throw Error("no task of the leaderboard is evaluated beyond its length");
  fig::Figure f;
  f.name = "extrapolation";
  f.title =
      "train short, test long: eval accuracy against length, over the seeds that solved the task "
      "at its training length (squares)";
  const auto& mechanisms = board.at("mechanisms");
  for (const json* t : tasks) {
    const std::string task = t->at("name");
    fig::Panel p = fig::axes_panel(t->value("key", "length"), "eval accuracy", true);
    p.title = task;
    p.x.log = true;
    const double trained = t->value("trained_length", 0);
    for (size_t k = 0; k < mechanisms.size(); ++k) {
      const json* c = find_cell(board, task, mechanisms[k]["name"]);
      // Only the seeds that solved the task at the training length, at every length alike: the
      // longer lengths' means are over those seeds (leaderboard_stats.h), so the square is too.
      const double at_trained = c ? solved_mean(*c, board.value("threshold", 0.9)) : std::nan("");
      if (!std::isfinite(at_trained)) continue;
      fig::LineSeries line;
      line.name = mechanisms[k]["name"];
      // Past the palette's 7 colours grey, not a repeat of the first (dot and conn were one blue).
      line.color = static_cast<int>(k) < render::okabe_ito_count()
                       ? compare_color(static_cast<int>(k))
                       : fig::Color::rgb(0.45f, 0.45f, 0.45f);
      line.x.push_back(trained);
      line.y.push_back(at_trained);
      for (const auto& l : json_member(*c, "length_eval", json::array()))
        if (json_member(l, "mean", json()).is_number()) {
          line.x.push_back(l["length"].get<double>());
          line.y.push_back(l["mean"].get<double>());
        }
      fig::ScatterSeries s;
      s.x = {trained};
      s.y = {line.y.front()};
      s.marker = fig::Marker::Square;
      s.color = line.color;
      p.scatters.push_back(s);
      p.lines.push_back(std::move(line));
    }
    if (p.lines.empty()) {  // an empty frame would read as "not measured"
      p.x.min = trained / 2, p.x.max = 4.0 * trained;
      p.y.min = 0, p.y.max = 1;
      p.annotations.push_back({std::sqrt(p.x.min * p.x.max), 0.5,
                               "no model solved it at length " + std::to_string(int(trained)),
                               fig::Anchor::Center, fig::Color::rgb(0.3f, 0.3f, 0.3f)});
    }
    f.panels.push_back(std::move(p));
  }
  f.cols = static_cast<int>(std::min<size_t>(3, tasks.size()));
  f.rows = static_cast<int>((tasks.size() + f.cols - 1) / f.cols);
  f.shared_legend = true;
  f.aspect = 0.38 * f.rows;
  return f;
}

}  // namespace attn::figures
