#include "app/panels/attention/heads_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/figures/figures.h"
#include "app/gui/plot/export_dialog.h"
#include "app/gui/timeline.h"

namespace attn::gui {
namespace {

constexpr int kRecordsPerFrame = 24;  // decoded per frame while a long run fills in

uint64_t mix(uint64_t h, uint64_t v) {
  return (h ^ v) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
}

}  // namespace

void HeadsPanel::collect(Timeline& timeline) {
  ViewTimeline& records = timeline.records();
  std::vector<std::string> sources;
  for (const TimelineSource& s : records.sources()) sources.push_back(s.dir);
  if (sources != sources_) {
    sources_ = sources;
    by_step_.clear();
  }
  const std::vector<int64_t>& steps = records.steps();
  // Steps thinned away leave; new ones are read a few per frame.
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
  uint64_t key = mix(by_step_.size(), sources_.size());
  if (!by_step_.empty())
    key = mix(mix(key, static_cast<uint64_t>(by_step_.begin()->first)),
              static_cast<uint64_t>(by_step_.rbegin()->first));
  if (key != rows_key_) {
    rows_key_ = key;
    rows_.clear();
    for (const auto& [step, metrics] : by_step_)
      rows_.insert(rows_.end(), metrics.begin(), metrics.end());
  }
}

void HeadsPanel::draw(FrameContext& frame) {
  ImFont* font = frame.small_font ? frame.small_font : ImGui::GetFont();
  if (!frame.timeline) return;
  collect(*frame.timeline);
  const auto& labels = figures::head_metric_labels();
  if (rows_.empty()) {
    ImGui::TextWrapped(
        "No recorded views yet. Runs record the probe's maps at every evaluation "
        "(train.record_every) into views.rec; the head metrics over training appear here as "
        "they are written. Open a recorded run (File > Open run) to see its history.");
    return;
  }
  // The heatmap's step: the timeline's, or the newest with metrics while it follows the model.
  const int64_t wanted =
      frame.ui.timeline_step >= 0 ? frame.ui.timeline_step : by_step_.rbegin()->first;
  auto at = by_step_.upper_bound(wanted);
  const int64_t step = at == by_step_.begin() ? by_step_.begin()->first : std::prev(at)->first;

  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 11);  // the longest metric name, any UI scale
  std::string preview = labels[static_cast<size_t>(metric_)].second;
  if (ImGui::BeginCombo("##metric", preview.c_str())) {
    for (size_t i = 0; i < labels.size(); ++i)
      if (ImGui::Selectable(labels[i].second.c_str(), static_cast<int>(i) == metric_))
        metric_ = static_cast<int>(i);
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("The metric of the layer x head map");
  ImGui::SameLine();
  if (ImGui::SmallButton("Export...")) request_figure_export(lines_figure_);
  ImGui::SameLine();
  ImGui::BeginDisabled(!grid_ok_);
  if (ImGui::SmallButton("Export map...")) request_figure_export(grid_figure_);
  ImGui::EndDisabled();
  // The status goes beside the buttons where it fits, else on its own line (never clipped).
  char status[96];
  std::snprintf(status, sizeof status, "%zu recorded steps; map at step %lld", by_step_.size(),
                static_cast<long long>(step));
  ImGui::SameLine();
  if (ImGui::GetContentRegionAvail().x < ImGui::CalcTextSize(status).x) ImGui::NewLine();
  ImGui::TextDisabled("%s", status);

  const uint64_t key =
      mix(mix(rows_key_, static_cast<uint64_t>(step)), static_cast<uint64_t>(metric_));
  if (key != built_key_) {
    built_key_ = key;
    lines_figure_ = figures::heads_figure(rows_);
    try {
      grid_figure_ =
          figures::heads_at_step_figure(rows_, step, labels[static_cast<size_t>(metric_)].first);
      grid_ok_ = true;
    } catch (const std::exception& e) {
      grid_ok_ = false;
      grid_note_ = e.what();
    }
  }
  shown_step_ = step;
  // Wide tiles: the lines with the map beside them. Narrow ones (a 1280x720 window's tile): the
  // map under the lines at the tile's width, so it is not squeezed to a strip.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float spacing = ImGui::GetStyle().ItemSpacing.y;
  const bool stacked = grid_ok_ && avail.x < 40 * ImGui::GetFontSize();
  const float grid_w = !grid_ok_ ? 0.0f
                       : stacked ? avail.x
                                 : std::clamp(avail.x * 0.3f, 160.0f, 420.0f);
  const float lines_w =
      stacked ? avail.x : std::max(120.0f, avail.x - grid_w - ImGui::GetStyle().ItemSpacing.x);
  const float h = std::max(120.0f, stacked ? std::floor(0.62f * (avail.y - spacing)) : avail.y);
  const float grid_h = stacked ? std::max(100.0f, avail.y - h - spacing) : h;
  ImGui::BeginGroup();
  lines_.draw(lines_figure_, ImVec2(lines_w, h), font);
  mark_timeline(lines_, frame.ui);
  if (const auto hv = lines_.hover(lines_figure_)) {
    ImGui::GetWindowDrawList()->AddCircle(hv->screen, 5.0f, IM_COL32(255, 255, 255, 220), 0, 1.5f);
    const fig::Panel& p = lines_figure_.panels[static_cast<size_t>(hv->panel)];
    ImGui::SetTooltip("%s  %s = %.4f\nstep %.0f", hv->name.c_str(), p.title.c_str(), hv->y, hv->x);
  }
  ImGui::EndGroup();
  if (grid_ok_) {
    if (!stacked) ImGui::SameLine();
    grid_.draw(grid_figure_, ImVec2(grid_w, grid_h), font);
    if (const auto c = grid_.hover_cell(grid_figure_)) {
      ImGui::GetWindowDrawList()->AddRect(c->min, c->max, IM_COL32(255, 80, 80, 255));
      ImGui::SetTooltip("layer %d head %d: %s = %.4f at step %lld", c->row, c->col,
                        labels[static_cast<size_t>(metric_)].second.c_str(), c->value,
                        static_cast<long long>(step));
    }
  } else if (!grid_note_.empty()) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", grid_note_.c_str());
  }
}

nlohmann::json HeadsPanel::report() const {
  return {{"step", shown_step_},
          {"steps", by_step_.size()},
          {"metric", figures::head_metric_labels()[static_cast<size_t>(metric_)].first},
          {"rows", rows_.size()}};
}

const fig::Figure* HeadsPanel::shown_figure(const std::string& name) const {
  if (name == "heads" && !rows_.empty()) return &lines_figure_;
  if (name == "heads-step" && grid_ok_) return &grid_figure_;
  return nullptr;
}

}  // namespace attn::gui
