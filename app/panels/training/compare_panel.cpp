#include "app/panels/training/compare_panel.h"

#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "app/figures/compare_figures.h"
#include "app/gui/plot/export_dialog.h"
#include "app/gui/window/palette.h"
#include "app/gui/window/widgets.h"
#include "core/base/error.h"
#include "core/runs/run_writer.h"  // new_run_dir
#include "core/training/headless/sweep.h"
#include "core/training/trainer.h"
#include "render/plot/colormap.h"
#include "render/plot/plot_math.h"

namespace attn::gui {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct ComparePanel::Run {
  std::string label;
  float color[3] = {1, 1, 1};
  // Live: a trainer; saved: a run directory.
  std::unique_ptr<Trainer> trainer;
  ExperimentConfig config;
  std::shared_ptr<const Snapshot> snap;
  int threads = 0;         // a live run's torch threads (its fair share of the cores)
  std::string out_dir;     // where a live run is recorded (TrainerOptions::run_dir)
  bool saved = false;      // finished (or diverged) and recorded whole
  std::string save_error;  // the trainer's record_error: not (wholly) recorded
  RunDirectory dir;        // saved runs (and live runs once saved: empty otherwise)
  bool is_live() const { return trainer != nullptr; }
  const Series& eval_loss() const { return snap ? snap->eval_loss : dir.eval_loss; }
  const Series& eval_accuracy() const { return snap ? snap->eval_accuracy : dir.eval_accuracy; }
  const Series& train_loss() const { return snap ? snap->train_loss : dir.train_loss; }
};

namespace {

ImU32 to_u32(const float c[3], float alpha = 1.0f) {
  return ImGui::ColorConvertFloat4ToU32(ImVec4(c[0], c[1], c[2], alpha));
}

void set_color(float out[3], int index) {
  const render::Rgba8 c = render::okabe_ito(index);
  out[0] = c.r / 255.0f, out[1] = c.g / 255.0f, out[2] = c.b / 255.0f;
}

double summary_value(const RunDirectory& d, const char* key) {
  return d.finished && d.summary.contains(key) && d.summary[key].is_number()
             ? d.summary[key].get<double>()
             : NAN;
}

}  // namespace

ComparePanel::ComparePanel() = default;
ComparePanel::~ComparePanel() = default;  // each Trainer's destructor stops and joins

bool ComparePanel::start_runs(const ExperimentConfig& base, const std::string& key,
                              const std::string& values) {
  std::vector<std::unique_ptr<Run>> fresh;
  try {
    const VaryAxis axis = parse_vary(key + "=" + values);
    const nlohmann::json base_json = to_json(base);
    // Each value is validated before any run starts: a bad one names the key and what is allowed.
    const SweepPlan plan = plan_sweep({{"", base_json}}, {axis}, 1);
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const size_t live =
        std::count_if(runs_.begin(), runs_.end(),
                      [](const auto& r) {
                        return r->is_live() && r->snap && r->snap->state == TrainerState::Running;
                      }) +
        plan.cells.size();
    TrainerOptions options;
    // Fair shares: N runs on C cores get C / N threads each (at least one).
    options.threads = static_cast<int>(std::max<size_t>(1, cores / live));
    // run-<date-time>, with -2, -3, ... when two comparisons start in the same second.
    const std::string batch = new_run_dir(save_root_, "run");
    for (const auto& cell : plan.cells) {
      auto r = std::make_unique<Run>();
      r->label = cell.group;
      r->config = cell.config;
      r->out_dir = (fs::path(batch) / cell.group).string();
      fresh.push_back(std::move(r));
    }
    for (auto& r : fresh) {
      r->threads = options.threads;
      // Recorded like the window's own run (core/training/recording/run_recorder.h): a row per
      // evaluation, checkpoint and summary on finish, divergence, error and close.
      options.run_dir = r->out_dir;
      r->trainer = std::make_unique<Trainer>(r->config, options);
      r->trainer->start();
    }
  } catch (const std::exception& e) {
    error_ = e.what();
    return false;
  }
  for (auto& r : fresh) {
    set_color(r->color, static_cast<int>(runs_.size()));
    runs_.push_back(std::move(r));
  }
  error_.clear();
  return true;
}

bool ComparePanel::add_saved_run(const std::string& dir) {
  try {
    auto r = std::make_unique<Run>();
    r->dir = read_run_directory(dir);
    r->label = r->dir.id;
    // A sweep cell ("seed-5") is named with its group directory, as `attnlab compare` does.
    if (r->label.rfind("seed-", 0) == 0) {
      const std::string group =
          fs::path(r->dir.dir).lexically_normal().parent_path().filename().string();
      if (!group.empty()) r->label = group + "/" + r->label;
    }
    r->config = r->dir.config;
    r->saved = true;
    r->out_dir = dir;
    set_color(r->color, static_cast<int>(runs_.size()));
    runs_.push_back(std::move(r));
  } catch (const std::exception& e) {
    error_ = e.what();
    return false;
  }
  error_.clear();
  return true;
}

void ComparePanel::poll() {
  for (auto& r : runs_) {
    if (!r->is_live() || closed_) continue;
    r->snap = r->trainer->latest();
    // The trainer records the run itself; its summary is written before it reports Finished.
    r->save_error = r->snap->record_error;
    r->saved = r->save_error.empty() && (r->snap->state == TrainerState::Finished ||
                                         r->snap->state == TrainerState::Diverged);
  }
}

std::vector<std::string> ComparePanel::close() {
  std::vector<std::string> out;
  if (closed_) return out;
  closed_ = true;
  for (auto& r : runs_)
    if (r->is_live())
      for (const std::string& line : r->trainer->close())
        out.push_back("Compare run " + r->label + ": " + line);
  return out;
}

void ComparePanel::draw(FrameContext& frame) {
  ui_ = &frame.ui;
  const ExperimentConfig& base = frame.ui.pending;
  ImFont* small_font = frame.small_font;
  ImFont* font = small_font ? small_font : ImGui::GetFont();
  ImGui::TextUnformatted("Vary");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(150);
  ImGui::InputText("##key", key_, sizeof key_);
  ImGui::SameLine();
  ImGui::TextUnformatted("=");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(160);
  ImGui::InputText("##values", values_, sizeof values_);
  ImGui::SameLine();
  if (ImGui::Button("Start runs")) start_runs(base, key_, values_);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "One run per value from the Run panel's experiment: same seed, same data "
        "order. Recorded under %s as they train (the Runs panel lists them).",
        save_root_.c_str());
  ImGui::SetNextItemWidth(320);
  ImGui::InputTextWithHint("##dir", "run directory (attnlab train --out)", dir_, sizeof dir_);
  ImGui::SameLine();
  if (ImGui::Button("Add saved run") && dir_[0]) add_saved_run(dir_);
  if (!error_.empty()) ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1.0f), "%s", error_.c_str());
  if (runs_.empty()) {
    ImGui::TextDisabled("No runs yet: start some above, or add saved run directories.");
    return;
  }
  draw_table();
  ImGui::SetNextItemWidth(90);
  ImGui::Combo("y scale", &y_scale_, "auto\0linear\0log\0");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("auto: log when the loss curves span more than a decade");
  ImGui::SameLine();
  seed_bands_combo(&seed_bands_, "Runs");
  ImGui::SameLine();
  // Rebuilt only when a run publishes, is added, is saved or recoloured, or the scale changes:
  // the overlay copies every run's series.
  uint64_t key = 1469598103934665603ull ^ static_cast<uint64_t>(y_scale_) ^
                 (static_cast<uint64_t>(seed_bands_) << 8);
  auto mix = [&key](uint64_t v) { key = (key ^ v) * 1099511628211ull; };
  for (const auto& r : runs_) {
    mix(reinterpret_cast<uintptr_t>(r->snap.get()));
    mix(r->dir.finished);
    for (float c : r->color) mix(static_cast<uint64_t>(c * 1000));
  }
  if (key != overlay_key_ || runs_.size() != overlay_dirs_.size()) {
    overlay_ = overlay_figure();
    overlay_key_ = key;
  }
  const fig::Figure& figure = overlay_;
  if (ImGui::SmallButton("Export...")) request_figure_export(figure, false);
  // Saved runs have no attention maps: the curves then take the whole rest of the panel.
  bool maps = false;
  for (const auto& r : runs_) maps |= r->snap && !r->snap->attention_maps().empty();
  const float avail = ImGui::GetContentRegionAvail().y;
  draw_curves(figure, font, maps ? std::max(140.0f, avail * 0.45f) : std::max(140.0f, avail - 4));
  draw_maps(font);
}

void ComparePanel::draw_table() {
  // Scrolls both ways inside at most a third of the panel (at least three rows): long seed-group
  // labels and many runs then cost the table its width and height, never the plots theirs.
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollX |
                                ImGuiTableFlags_ScrollY;
  const float row = ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y + 1;
  // Header and rows, plus the horizontal scrollbar's own height (ScrollX draws it under the last
  // row; two-thirds of a row left the last row half hidden).
  const float wanted = (static_cast<float>(runs_.size()) + 1) * row +
                       ImGui::GetStyle().ScrollbarSize + ImGui::GetStyle().CellPadding.y;
  const float height =
      std::min(wanted, std::max(4 * row, ImGui::GetContentRegionAvail().y * 0.33f));
  if (!ImGui::BeginTable("runs", 10, flags, ImVec2(0, height))) return;
  ImGui::TableSetupScrollFreeze(2, 1);  // colour and run name stay while the rest scrolls
  for (const char* h : {"", "run", "state", "step", "eval loss", "eval acc", "parameters",
                        "attn params", "steps/s", "saved"})
    ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  int i = 0;
  for (auto& r : runs_) {
    ImGui::TableNextRow();
    ImGui::PushID(i++);
    ImGui::TableNextColumn();
    ImGui::ColorEdit3("##c", r->color, ImGuiColorEditFlags_NoInputs | ImGuiColorEditFlags_NoLabel);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(r->label.c_str());
    auto num = [](double v, const char* fmt) {
      ImGui::TableNextColumn();
      if (std::isfinite(v))
        ImGui::Text(fmt, v);
      else
        ImGui::TextDisabled("-");
    };
    ImGui::TableNextColumn();
    if (r->snap) {
      ImGui::TextUnformatted(to_string(r->snap->state));
      const auto& s = *r->snap;
      num(static_cast<double>(s.step), "%.0f");
      num(s.eval_loss.empty() ? NAN : s.eval_loss.values.back(), "%.4f");
      num(s.eval_accuracy.empty() ? NAN : s.eval_accuracy.values.back(), "%.4f");
      num(static_cast<double>(s.parameters), "%.0f");
      num(static_cast<double>(s.attention_parameters), "%.0f");
      num(s.steps_per_second, "%.1f");
    } else {
      ImGui::TextUnformatted(r->dir.finished ? "saved" : "saved (unfinished)");
      num(summary_value(r->dir, "steps"), "%.0f");
      num(summary_value(r->dir, "eval_loss"), "%.4f");
      num(summary_value(r->dir, "eval_accuracy"), "%.4f");
      num(summary_value(r->dir, "parameters"), "%.0f");
      num(summary_value(r->dir, "attention_parameters"), "%.0f");
      num(summary_value(r->dir, "steps_per_second"), "%.1f");
    }
    ImGui::TableNextColumn();
    if (!r->save_error.empty())
      ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1.0f), "%s", r->save_error.c_str());
    else if (r->saved || !r->is_live())
      ImGui::TextUnformatted(r->out_dir.c_str());
    else
      ImGui::TextDisabled("recording to %s", r->out_dir.c_str());
    ImGui::PopID();
  }
  ImGui::EndTable();
}

// The overlay of every run (live ones from their latest snapshot): figures::loss_overlay, the
// figure `attnlab compare` writes, with the y scale chosen here.
fig::Figure ComparePanel::overlay_figure() {
  overlay_dirs_.assign(runs_.size(), RunDirectory{});
  std::vector<figures::CompareCurve> curves;
  for (size_t i = 0; i < runs_.size(); ++i) {
    const Run& r = *runs_[i];
    RunDirectory& d = overlay_dirs_[i];
    d.id = r.label;
    d.dir = r.is_live() ? r.out_dir : r.dir.dir;  // names a seed group by its parent directory
    d.config = r.is_live() ? r.config : r.dir.config;
    d.finished = r.dir.finished;
    d.train_loss = r.train_loss();
    d.eval_loss = r.eval_loss();
    d.eval_accuracy = r.eval_accuracy();
    curves.push_back({&d, r.label, fig::Color::rgb(r.color[0], r.color[1], r.color[2]), true});
  }
  figures::CompareOptions options;
  options.y_scale = static_cast<figures::YScale>(y_scale_);  // the combo's order: auto, linear, log
  options.seed_bands = static_cast<figures::SeedBands>(seed_bands_);  // off, sd, ci95
  fig::Figure f = figures::loss_overlay(curves, "Comparison", options);
  log_y_shown_ = !f.panels.empty() && f.panels.front().y.log;
  return f;
}

void ComparePanel::draw_curves(const fig::Figure& figure, ImFont* font, float height) {
  bool any = false;
  for (const auto& r : runs_) any |= !r->eval_loss().empty() || !r->train_loss().empty();
  if (!any) {
    ImGui::TextDisabled("No metrics yet.");
    return;
  }
  curves_.draw(figure, ImVec2(ImGui::GetContentRegionAvail().x, height), font);
  mark_timeline(curves_, *ui_);
  if (const auto h = curves_.hover(figure)) {
    ImGui::GetWindowDrawList()->AddCircle(h->screen, 5.0f, IM_COL32(255, 255, 255, 220), 0, 1.5f);
    const fig::Panel& panel = figure.panels[static_cast<size_t>(h->panel)];
    ImGui::SetTooltip("%s\n%s: %.4g at step %.0f", h->name.empty() ? "(unnamed)" : h->name.c_str(),
                      panel.title.c_str(), h->y, h->x);
  }
}

void ComparePanel::draw_maps(ImFont* font) {
  int layers = 0, heads = 0;
  for (const auto& r : runs_)
    if (r->snap && !r->snap->attention_maps().empty())
      layers = std::max(layers, r->snap->layers), heads = std::max(heads, r->snap->heads);
  if (layers == 0) return;
  ImGui::SetNextItemWidth(120);
  ImGui::SliderInt("layer", &layer_, 0, layers - 1);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(120);
  ImGui::SliderInt("head", &head_, 0, std::max(0, heads - 1));
  ImGui::SameLine();
  ImGui::TextDisabled("probe input's attention (row = query, column = key)");
  const float side =
      std::clamp(ImGui::GetContentRegionAvail().y - font->FontSize * 2, 80.0f, 220.0f);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 p = ImGui::GetCursorScreenPos();
  const float x0 = p.x;
  int shown = 0;
  for (const auto& r : runs_) {
    if (!r->snap) continue;
    const AttentionMap* map = nullptr;
    for (const auto& m : r->snap->attention_maps())
      if (m.layer == layer_ && m.head == head_) map = &m;
    if (!map || map->size == 0) continue;
    if (shown > 0 && p.x + side > x0 + ImGui::GetContentRegionAvail().x) break;
    dl->AddText(font, font->FontSize, p, to_u32(r->color), r->label.c_str());
    const ImVec2 m0(p.x, p.y + font->FontSize + 2);
    const float cell = side / map->size;
    for (int i = 0; i < map->size; ++i)
      for (int j = 0; j < map->size; ++j) {
        const render::Rgba8 c = render::viridis(map->weights[i * map->size + j]);
        dl->AddRectFilled(ImVec2(m0.x + j * cell, m0.y + i * cell),
                          ImVec2(m0.x + (j + 1) * cell, m0.y + (i + 1) * cell),
                          IM_COL32(c.r, c.g, c.b, 255));
      }
    dl->AddRect(m0, ImVec2(m0.x + side, m0.y + side), to_u32(r->color), 0, 0, 2.0f);
    p.x += side + 14;
    ++shown;
  }
  ImGui::Dummy(ImVec2(ImGui::GetContentRegionAvail().x, side + font->FontSize + 6));
}

nlohmann::json ComparePanel::report() const {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& r : runs_) {
    nlohmann::json j = {{"label", r->label},
                        {"kind", r->is_live() ? "live" : "saved"},
                        {"color", {r->color[0], r->color[1], r->color[2]}},
                        {"saved", r->saved},
                        {"dir", r->out_dir},
                        {"threads", r->threads}};
    const Series& e = r->eval_loss();
    j["eval_loss"] = e.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.values.back());
    j["eval_points"] = e.steps.size();
    if (r->snap) {
      j["state"] = to_string(r->snap->state);
      j["step"] = r->snap->step;
      j["attention_maps"] = r->snap->attention_maps().size();
    }
    if (!r->save_error.empty()) j["save_error"] = r->save_error;
    runs.push_back(j);
  }
  // What the curves show: the eval panel's line names and its bands (seed groups).
  nlohmann::json lines = nlohmann::json::array(), bands = nlohmann::json::array();
  if (!overlay_.panels.empty()) {
    for (const auto& l : overlay_.panels.front().lines) lines.push_back(l.name);
    for (const auto& b : overlay_.panels.front().polygons) bands.push_back(b.name);
  }
  return {{"runs", runs},          {"error", error_},
          {"log_y", log_y_shown_}, {"seed_bands", seed_bands_},
          {"eval_lines", lines},   {"eval_bands", bands}};
}

}  // namespace attn::gui
