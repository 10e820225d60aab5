#include "app/panels/attention/heads_model.h"

#include <algorithm>
#include <cstdio>
#include <exception>

#include "app/figures/catalog/figures.h"

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
    by_step_.clear();
  }
  const std::vector<int64_t>& steps = records.steps();
  // Steps thinned away leave; new ones are read a few per call.
  for (auto it = by_step_.begin(); it != by_step_.end();)
    it = std::binary_search(steps.begin(), steps.end(), it->first) ? std::next(it)
                                                                   : by_step_.erase(it);
  int budget = kRecordsPerFrame;
  for (const int64_t step : steps) {
    if (by_step_.count(step)) continue;
    if (budget-- == 0) break;
    const std::shared_ptr<const ViewRecord> r = records.record_at(step);
    if (!r || r->step != step) continue;
    by_step_[step] = head_metrics(*r);
  }
  update_rows();
}

void HeadsModel::add_step(int64_t step, std::vector<HeadMetric> metrics) {
  by_step_[step] = std::move(metrics);
  update_rows();
}

// The rows of every step, gathered again only when the steps held changed.
void HeadsModel::update_rows() {
  uint64_t key = mix(by_step_.size(), sources_.size());
  if (!by_step_.empty())
    key = mix(mix(key, static_cast<uint64_t>(by_step_.begin()->first)),
              static_cast<uint64_t>(by_step_.rbegin()->first));
  if (key == rows_key_) return;
  rows_key_ = key;
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
      mix(mix(rows_key_, static_cast<uint64_t>(step)), static_cast<uint64_t>(metric));
  if (key == built_key_) return;
  built_key_ = key;
  lines_figure_ = figures::heads_figure(rows_);
  try {
    grid_figure_ = figures::heads_at_step_figure(
        rows_, step, figures::head_metric_labels()[static_cast<size_t>(metric)].first);
    grid_ok_ = true;
  } catch (const std::exception& e) {
    grid_ok_ = false;
    grid_note_ = e.what();
  }
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

nlohmann::json HeadsModel::report() const {
  return {{"step", shown_step_},
          {"steps", by_step_.size()},
          {"metric", figures::head_metric_labels()[static_cast<size_t>(metric)].first},
          {"rows", rows_.size()}};
}

const fig::Figure* HeadsModel::shown_figure(const std::string& name) const {
  if (name == "heads" && !rows_.empty()) return &lines_figure_;
  if (name == "heads-step" && grid_ok_) return &grid_figure_;
  return nullptr;
}

float HeadsModel::min_height(const fig::Figure& figure, float font_px) {
  const int rows = std::max(1, figure.rows);
  return font_px * (7.0f * static_cast<float>(rows) + 3.0f);  // + the x label and the legend
}

}  // namespace attn::gui
