#include "app/panels/attention/heads_model.h"

#include <algorithm>
#include <cstdio>
#include <exception>

#include "app/figures/catalog/figures.h"
#include "app/figures/runs/causal_figures.h"
#include "core/base/decimal.h"
#include "core/training/interventions/run_interventions.h"

namespace attn::gui {
namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  return (h ^ v) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
}

}  // namespace

void HeadsModel::collect(ViewTimeline& records) {
  std::vector<std::string> sources;
  for (const TimelineSource& s : records.sources()) sources.push_back(s.dir);
  if (sources != sources_) {
    sources_ = sources;
    clear();
  }
  const std::vector<int64_t>& steps = records.steps();
  // Steps thinned away leave; new ones are read a few per call.
  for (auto it = by_step_.begin(); it != by_step_.end();) {
    if (std::binary_search(steps.begin(), steps.end(), it->first)) {
      ++it;
      continue;
    }
    attribution_.erase(it->first);
    it = by_step_.erase(it);
    dirty_ = true;
  }
  int budget = kRecordsPerFrame;
  for (const int64_t step : steps) {
    if (by_step_.count(step)) continue;
    if (budget-- == 0) break;
    const std::shared_ptr<const ViewRecord> r = records.record_at(step);
    if (!r || r->step != step) continue;
    put(*r);
  }
  update_rows();
}

void HeadsModel::clear() {
  by_step_.clear();
  attribution_.clear();
  dirty_ = true;
}

void HeadsModel::put(const ViewRecord& r) {
  std::vector<int> rows;
  if (rows_of_) try {
      rows = rows_of_(r.probe_tokens);
    } catch (const std::exception& e) {  // a probe the task does not know: every row, said
      positions_note_ = e.what();
    }
  by_step_[r.step] = head_metrics(r, rows);
  if (r.attribution.empty())
    attribution_.erase(r.step);
  else
    attribution_[r.step] = r.attribution;
  dirty_ = true;
}

void HeadsModel::add_step(int64_t step, std::vector<HeadMetric> metrics) {
  by_step_[step] = std::move(metrics);
  dirty_ = true;
  update_rows();
}

void HeadsModel::add_record(const ViewRecord& record) {
  put(record);
  update_rows();
}

const std::vector<std::string>& HeadsModel::position_labels() {
  static const std::vector<std::string> labels = {"answer", "query", "all"};
  return labels;
}

bool HeadsModel::set_positions(int which, const ExperimentConfig& config) {
  if (which < 0 || which >= static_cast<int>(position_labels().size())) return false;
  const int before = positions_;
  positions_note_.clear();
  try {
    rows_of_ = which == 2
                   ? RowsOf{}
                   : probe_rows(config, position_labels()[static_cast<size_t>(which)], "positions");
    positions_ = which;
  } catch (const std::exception& e) {  // an image task has no scored token positions
    positions_note_ = e.what();
    rows_of_ = {};
    positions_ = 2;
  }
  if (positions_ == before && which == 2) return false;
  clear();  // every step is read again over the new rows
  return true;
}

// The rows of every step, gathered again only when the steps held changed.
void HeadsModel::update_rows() {
  if (!dirty_) return;
  dirty_ = false;
  ++rows_key_;
  rows_.clear();
  for (const auto& [step, metrics] : by_step_)
    rows_.insert(rows_.end(), metrics.begin(), metrics.end());
}

int64_t HeadsModel::step_for(int64_t timeline_step) const {
  const int64_t wanted = timeline_step >= 0 ? timeline_step : by_step_.rbegin()->first;
  auto at = by_step_.upper_bound(wanted);
  return at == by_step_.begin() ? by_step_.begin()->first : std::prev(at)->first;
}

const std::string& HeadsModel::metric_label() const {
  return figures::head_metric_labels()[static_cast<size_t>(metric)].second;
}

void HeadsModel::build(int64_t step) {
  shown_step_ = step;
  const uint64_t key =
      mix(mix(mix(rows_key_, static_cast<uint64_t>(step)), static_cast<uint64_t>(metric)),
          shared_scale ? 1 : 0);
  if (key == built_key_) return;
  built_key_ = key;
  lines_figure_ = figures::heads_figure(rows_);
  try {
    grid_figure_ = figures::heads_at_step_figure(
        rows_, step, figures::head_metric_labels()[static_cast<size_t>(metric)].first,
        shared_scale);
    grid_ok_ = true;
  } catch (const std::exception& e) {
    grid_ok_ = false;
    grid_note_ = e.what();
  }
  build_attribution(step);
}

// The step's own recorded attribution, or a line saying it has none (never another step's).
void HeadsModel::build_attribution(int64_t step) {
  const auto at = attribution_.find(step);
  attribution_ok_ = at != attribution_.end();
  if (!attribution_ok_) {
    attribution_note_ = "no attribution recorded at step " + std::to_string(step) +
                        " (an older run, an image task, or train.record_attribution false)";
    return;
  }
  attribution_note_.clear();
  attribution_figure_ = figures::recorded_attribution_figure(at->second, step);
  // The figure's title says which step, recorded; the panel's the metric and its two values
  // (the metric alone where that does not fit).
  const RecordedAttribution& a = at->second;
  fig::Panel& p = attribution_figure_.panels.at(0);
  p.short_title = a.metric;
  p.title = a.metric + " (clean " + fixed_decimal(a.clean, 2) + ", corrupted " +
            fixed_decimal(a.corrupt, 2) + ")";
  attribution_figure_.title =
      "attribution patching at step " + std::to_string(step) + " (recorded)";
}

std::string HeadsModel::status() const {
  char status[96];
  std::snprintf(status, sizeof status, "%zu recorded steps; map at step %lld", by_step_.size(),
                static_cast<long long>(shown_step_));
  return status;
}

std::string HeadsModel::line_text(const std::string& name, const std::string& panel, double value,
                                  double step) {
  char text[256];
  std::snprintf(text, sizeof text, "%s  %s = %.4f\nstep %.0f", name.c_str(), panel.c_str(), value,
                step);
  return text;
}

std::string HeadsModel::cell_text(int layer, int head, float value) const {
  char text[160];
  std::snprintf(text, sizeof text, "layer %d head %d: %s = %.4f at step %lld", layer, head,
                metric_label().c_str(), value, static_cast<long long>(shown_step_));
  return text;
}

std::string HeadsModel::attribution_text(int layer, int head, float value) const {
  char text[200];
  std::snprintf(text, sizeof text,
                "layer %d head %d: attribution %+.4f (metric units: patching this head's output "
                "estimated to first order), recorded at step %lld",
                layer, head, value, static_cast<long long>(shown_step_));
  return text;
}

nlohmann::json HeadsModel::report() const {
  return {{"step", shown_step_},
          {"steps", by_step_.size()},
          {"metric", figures::head_metric_labels()[static_cast<size_t>(metric)].first},
          {"rows", rows_.size()},
          {"positions", position_labels()[static_cast<size_t>(positions_)]},
          {"shared_scale", shared_scale},
          {"attribution", attribution_ok_}};
}

const fig::Figure* HeadsModel::shown_figure(const std::string& name) const {
  if (name == "heads" && !rows_.empty()) return &lines_figure_;
  if (name == "heads-step" && grid_ok_) return &grid_figure_;
  if (name == "attribution" && attribution_ok_) return &attribution_figure_;
  return nullptr;
}

float HeadsModel::min_height(const fig::Figure& figure, float font_px) {
  const int rows = std::max(1, figure.rows);
  return font_px * (7.0f * static_cast<float>(rows) + 3.0f);  // + the x label and the legend
}

}  // namespace attn::gui
