#include "app/gui/timeline.h"

#include <imgui.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>

namespace attn::gui {
namespace {

// The last item's rectangle [x, y, w, h] in window pixels (for the report).
std::array<float, 4> item_rect() {
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  return {a.x, a.y, b.x - a.x, b.y - a.y};
}

std::string canonical(const std::string& dir) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::weakly_canonical(dir, ec);
  return ec ? dir : p.string();
}

}  // namespace

void Timeline::start_at(const std::string& dir, int64_t step) {
  pending_dir_ = canonical(dir);
  pending_step_ = step;
}

int Timeline::index_of(int64_t step) const {
  const auto& steps = records_.steps();
  auto it = std::upper_bound(steps.begin(), steps.end(), step);
  return it == steps.begin() ? 0 : static_cast<int>(it - steps.begin()) - 1;
}

void Timeline::choose(int64_t step) {
  const auto& steps = records_.steps();
  if (steps.empty()) return;
  latest_ = false;
  step_ = steps[static_cast<size_t>(index_of(step))];
}

void Timeline::update(const Snapshot& live, UiState& ui, double now_s) {
  now_ = now_s;
  std::vector<TimelineSource> sources;
  // The opened run's records (all of them: a run another process still writes keeps adding),
  // then the window's own recording of the model, which replaces them from its first step.
  if (!live.source_dir.empty()) sources.push_back({live.source_dir});
  if (!live.run_dir.empty()) sources.push_back({live.run_dir});
  records_.set_sources(sources);
  records_.refresh(now_s);
  live_step_ = live.attention_step;
  opened_ = live.source_dir;
  const auto& steps = records_.steps();

  if (!pending_dir_.empty() && !live.source_dir.empty() && !steps.empty() &&
      canonical(live.source_dir) == pending_dir_) {
    choose(pending_step_);
    pending_dir_.clear();
  }
  if (ui.timeline_request >= 0) {
    choose(ui.timeline_request);
    playing_ = false;
    ui.timeline_request = -1;
  }
  if (scrub_every_frame_ && pending_dir_.empty() && !steps.empty()) {
    const int i = latest_ ? -1 : index_of(step_);
    choose(steps[static_cast<size_t>((i + 1) % static_cast<int>(steps.size()))]);
  }
  if (!latest_ && steps.empty()) latest_ = true;  // a new model without records yet
  if (!latest_ && !steps.empty() && step_ > steps.back()) step_ = steps.back();  // thinned
  if (playing_ && !latest_ && now_s >= next_play_) {
    const int i = index_of(step_);
    if (i + 1 < static_cast<int>(steps.size())) {
      step_ = steps[static_cast<size_t>(i + 1)];
      next_play_ = now_s + 1.0 / std::max(0.25f, speed_);
    } else {
      playing_ = false;  // stays on the last record
    }
  }
  ui.timeline_step = latest_ ? -1 : step_;
  ui.timeline_playing = playing_;
}

float Timeline::draw(float x, float y, float width, float ui_scale) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float height = ImGui::GetFrameHeight() + 2 * style.WindowPadding.y * 0.5f;
  ImGui::SetNextWindowPos(ImVec2(x, y));
  ImGui::SetNextWindowSize(ImVec2(width, height));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding,
                      ImVec2(style.WindowPadding.x, style.WindowPadding.y * 0.5f));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0);
  const ImGuiWindowFlags flags =
      ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
      ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoScrollWithMouse;
  if (ImGui::Begin("##timeline", nullptr, flags)) {
    const auto& steps = records_.steps();
    const int n = static_cast<int>(steps.size());
    const bool have = n > 0;
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Timeline");
    ImGui::SameLine();
    ImGui::BeginDisabled(!have);
    const int at = latest_ ? n - 1 : index_of(step_);
    if (ImGui::SmallButton("|<")) choose(have ? steps.front() : 0), playing_ = false;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The first recorded step");
    ImGui::SameLine();
    if (ImGui::ArrowButton("##back", ImGuiDir_Left) && have)
      choose(steps[static_cast<size_t>(std::max(0, at - 1))]), playing_ = false;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The previous recorded step");
    ImGui::SameLine();
    if (ImGui::ArrowButton("##forward", ImGuiDir_Right) && have)
      choose(steps[static_cast<size_t>(std::min(n - 1, at + 1))]), playing_ = false;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The next recorded step");
    ImGui::SameLine();
    if (ImGui::SmallButton(playing_ ? "Pause" : "Play")) {
      playing_ = !playing_;
      if (playing_) {
        if (latest_ || at >= n - 1) choose(steps.front());  // play from the start
        next_play_ = now_ + 1.0 / std::max(0.25f, speed_);
      }
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Play the recorded steps in order");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(70 * ui_scale);
    ImGui::SliderFloat("##speed", &speed_, 0.5f, 30.0f, "%.1f/s", ImGuiSliderFlags_Logarithmic);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Playback speed: recorded steps per second");
    ImGui::SameLine();
    // Popped on the value it was pushed on: the click changes latest_ in between (a pop without
    // its push aborted the window, issue 46).
    const bool highlighted = latest_;
    if (highlighted) ImGui::PushStyleColor(ImGuiCol_Button, style.Colors[ImGuiCol_ButtonActive]);
    if (ImGui::SmallButton("Latest")) latest_ = true, playing_ = false;
    if (highlighted) ImGui::PopStyleColor();
    latest_rect_ = item_rect();
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Follow the live model (every panel shows its newest probe)");
    ImGui::SameLine();
    // The slider over recorded steps; its label is the step shown.
    char label[160];
    if (!have && !records_.error().empty())  // a run gone or a recording refused: say which
      std::snprintf(label, sizeof label, "no timeline: %s", records_.error().c_str());
    else if (!have && !records_.sources().empty() && records_.sources().front().dir == opened_)
      std::snprintf(label, sizeof label,
                    "this run recorded no views: no timeline, its last step only");
    else if (!have)
      std::snprintf(label, sizeof label, "no recorded steps yet");
    else if (latest_)
      std::snprintf(label, sizeof label, "latest: step %lld (live)",
                    static_cast<long long>(live_step_));
    else
      std::snprintf(label, sizeof label, "step %lld  (%d/%d)", static_cast<long long>(step_),
                    at + 1, n);
    int index = std::max(0, at);
    ImGui::SetNextItemWidth(std::max(80.0f, ImGui::GetContentRegionAvail().x));
    if (ImGui::SliderInt("##step", &index, 0, std::max(0, n - 1), label,
                         ImGuiSliderFlags_AlwaysClamp) &&
        have) {
      latest_ = false;
      playing_ = false;
      step_ = steps[static_cast<size_t>(std::clamp(index, 0, n - 1))];
    }
    slider_rect_ = item_rect();
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Every panel shows the model at the chosen recorded step (views.rec: the probe's maps,\n"
          "ky curves, C and its eigenvalues, the probe image); Loss and Compare mark it, and a\n"
          "click on a loss curve moves here. %s",
          records_.error().empty() ? "" : records_.error().c_str());
    ImGui::EndDisabled();
  }
  ImGui::End();
  ImGui::PopStyleVar(2);
  return height;
}

std::shared_ptr<const Snapshot> Timeline::view(const std::shared_ptr<const Snapshot>& live) {
  const int64_t key = latest_ ? -1 : step_;
  const size_t recorded = records_.steps().size();
  if (built_ && built_live_serial_ == live->serial && built_step_ == key &&
      built_records_ == recorded)
    return built_;
  std::shared_ptr<const ViewRecord> record = latest_ ? nullptr : records_.record_at(step_);
  auto s = std::make_shared<Snapshot>(
      record ? snapshot_at_record(*live, *record, records_.mechanism_frames(step_)) : *live);
  if (!record && !live->source_dir.empty() && recorded > 0) {
    // An opened run at its latest step: its mechanism views' history is the recording's (the
    // loaded model's own starts at the checkpoint), then what the window trained since.
    if (auto frames = records_.mechanism_frames(records_.steps().back())) {
      auto merged = std::make_shared<std::vector<MechanismFrame>>(*frames);
      for (const MechanismFrame& f : live->mechanism_history())
        if (merged->empty() || f.step > merged->back().step) merged->push_back(f);
      s->mechanism_views = std::move(merged);
    }
  }
  // Increases with the live serial and with every rebuild (panels compare serials).
  s->serial = (live->serial << 20) | (++counter_ & 0xFFFFF);
  built_ = std::move(s);
  built_live_serial_ = live->serial;
  built_step_ = key;
  built_records_ = recorded;
  return built_;
}

std::shared_ptr<const ViewRecord> Timeline::causal_record() {
  const auto& steps = records_.steps();
  if (steps.empty()) return nullptr;
  return records_.record_at(latest_ ? steps.back() : step_);
}

nlohmann::json Timeline::report() const {
  const auto& steps = records_.steps();
  nlohmann::json sources = nlohmann::json::array();
  for (const TimelineSource& s : records_.sources()) sources.push_back(s.dir);
  return {{"step", latest_ ? live_step_ : step_},
          {"steps", steps},
          {"latest", latest_},
          {"playing", playing_},
          {"sources", sources},
          {"error", records_.error()},
          {"latest_rect", latest_rect_},
          {"slider_rect", slider_rect_}};
}

}  // namespace attn::gui
