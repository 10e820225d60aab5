#include "app/panels/runs/runs_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>

#include "app/figures/compare_figures.h"
#include "app/gui/plot/export_dialog.h"
#include "app/gui/window/widgets.h"

namespace attn::gui {
namespace fs = std::filesystem;

namespace {

constexpr double kRecentSeconds = 0.5;

// One spelling per directory, so the root's scan and an added path name the same run once.
std::string normal_path(const std::string& p) {
  std::error_code ec;
  fs::path abs = fs::absolute(p, ec);
  if (ec) abs = p;
  std::string s = abs.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::string age_text(double seconds) {
  char buf[32];
  if (seconds < 90)
    std::snprintf(buf, sizeof buf, "%.0f s", seconds);
  else if (seconds < 90 * 60)
    std::snprintf(buf, sizeof buf, "%.0f min", seconds / 60);
  else if (seconds < 36 * 3600)
    std::snprintf(buf, sizeof buf, "%.1f h", seconds / 3600);
  else
    std::snprintf(buf, sizeof buf, "%.1f d", seconds / 86400);
  return buf;
}

ImVec4 state_color(const std::string& state) {
  if (state == "live") return ImVec4(0.45f, 0.85f, 0.45f, 1);
  if (state == "diverged" || state == "unreadable" || state == "deleted")
    return ImVec4(1.0f, 0.45f, 0.4f, 1);
  if (state == "finished") return ImVec4(0.8f, 0.8f, 0.85f, 1);
  return ImVec4(0.95f, 0.75f, 0.35f, 1);  // paused, stopped, incomplete
}

}  // namespace

RunsPanel::RunsPanel(std::string runs_root)
    : root_(runs_root.empty() ? "" : normal_path(runs_root)) {
  if (!root_.empty()) watcher_.add_root(root_);
  if (const char* dir = std::getenv("ATTN_GUI_OPEN_RUN"); dir && *dir) {
    add_dir(dir, /*select=*/true);
    pending_open_.push_back(normal_path(dir));
  }
}

RunsPanel::Entry* RunsPanel::find(const std::string& dir) {
  const auto it = index_.find(dir);
  return it == index_.end() ? nullptr : it->second;
}

RunsPanel::Entry& RunsPanel::add_entry(const std::string& dir) {
  entries_.push_back(std::make_unique<Entry>(dir));
  Entry& e = *entries_.back();
  index_[dir] = &e;
  if (!root_.empty() && dir.rfind(root_ + "/", 0) == 0) {
    e.name = dir.substr(root_.size() + 1);
  } else {
    const fs::path p(dir);
    e.name = (p.parent_path().filename() / p.filename()).string();
  }
  return e;
}

RunsPanel::Entry& RunsPanel::ensure(const std::string& dir) {
  if (Entry* e = find(dir)) return *e;
  dropped_.erase(dir);
  watcher_.follow(dir);
  return add_entry(dir);
}

bool RunsPanel::add_dir(const std::string& dir, bool select) {
  if (dir.empty()) {
    error_ = "Add: type a run directory or a folder of runs";
    return false;
  }
  const std::string path = normal_path(dir);
  std::error_code ec;
  if (fs::exists(path, ec) && !fs::is_directory(path, ec)) {
    error_ = "Add: " + dir + " is not a directory (give a run directory or a folder of runs)";
    return false;
  }
  error_.clear();
  watcher_.add_root(path);  // rescanned like the runs root
  const std::vector<std::string> runs = find_run_dirs(path);
  if (runs.empty()) {
    // Not a run yet (`attnlab train` may be about to start there): listed, and followed.
    Entry& e = ensure(path);
    e.selected |= select;
    note_ = dir +
            " holds no run yet; it is followed and appears once config.json and "
            "metrics.csv are written";
    return true;
  }
  for (const std::string& r : runs) ensure(normal_path(r)).selected |= select;
  return true;
}

// The watcher's newest reading: new runs listed, every entry's view replaced.
void RunsPanel::merge(const std::vector<RunView>& views) {
  for (const RunView& v : views) {
    if (dropped_.count(v.dir)) continue;  // a list published before the watcher saw the unfollow
    Entry* e = find(v.dir);
    if (!e) e = &add_entry(v.dir);
    e->run = v;
  }
  // A folder added before its run existed: once runs appear under it, the placeholder goes
  // (its tick passes to them).
  std::vector<const Entry*> replaced;
  for (const auto& e : entries_) {
    if (e->run.readable) continue;
    for (const auto& other : entries_)
      if (other != e && other->run.dir.rfind(e->run.dir + "/", 0) == 0) {
        other->selected |= e->selected;
        replaced.push_back(e.get());
        break;
      }
  }
  for (const Entry* e : replaced) {
    watcher_.unfollow(e->run.dir);
    dropped_.insert(e->run.dir);
    index_.erase(e->run.dir);
  }
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                [&](const std::unique_ptr<Entry>& e) {
                                  return std::find(replaced.begin(), replaced.end(), e.get()) !=
                                         replaced.end();
                                }),
                 entries_.end());
  // Deleted runs: named once, their data kept and marked.
  deleted_note_.clear();
  int deleted = 0;
  for (const auto& e : entries_)
    if (e->run.gone && deleted++ == 0) deleted_note_ = e->run.dir;
  if (deleted > 0)
    deleted_note_ =
        (deleted == 1 ? deleted_note_
                      : std::to_string(deleted) + " runs, " + deleted_note_ + " first,") +
        " deleted while followed: the last data read is kept, marked (deleted)";
}

void RunsPanel::update(FrameContext& frame) {
  const double now = ImGui::GetTime();
  // File > Open run / Recent runs: list and tick; a single run with a checkpoint is loaded
  // once the watcher has read it.
  for (const std::string& dir : frame.ui.open_run_requests)
    if (add_dir(dir, /*select=*/true)) pending_open_.push_back(normal_path(dir));
  frame.ui.open_run_requests.clear();
  if (!frame.snap.run_dir.empty() && frame.snap.run_dir != own_dir_raw_) {
    own_dir_raw_ = frame.snap.run_dir;  // normalised once per new directory, not every frame
    own_dir_ = normal_path(own_dir_raw_);
    ensure(own_dir_);
  }
  if (watcher_.serial() != merged_serial_) {
    merged_serial_ = watcher_.serial();
    merge(*watcher_.latest());
    for (auto it = pending_open_.begin(); it != pending_open_.end();) {
      Entry* e = find(*it);
      if (e && !e->run.readable && e->run.error.empty()) {
        ++it;  // not read yet
        continue;
      }
      if (e && e->run.readable && e->run.run->has_checkpoint)
        open_run(*e, frame.trainer, frame.snap);
      it = pending_open_.erase(it);
    }
    // An opened run that wrote a new checkpoint: show that one.
    if (Entry* e = opened_dir_.empty() ? nullptr : find(opened_dir_))
      if (e->run.checkpoint_stamp != 0 && e->run.checkpoint_stamp != opened_stamp_)
        open_run(*e, frame.trainer, frame.snap);
  }
  check_open(frame.snap);
  if (now - last_recent_ >= kRecentSeconds) {
    last_recent_ = now;
    // File > Recent runs: the newest eight that can be read.
    std::vector<const Entry*> recent;
    for (const auto& e : entries_)
      if (e->run.readable && !e->run.gone) recent.push_back(e.get());
    const size_t n = std::min<size_t>(recent.size(), 8);
    std::partial_sort(recent.begin(), recent.begin() + n, recent.end(),
                      [](const Entry* a, const Entry* b) {
                        return a->run.newest_change_ns > b->run.newest_change_ns;
                      });
    frame.ui.recent_runs.clear();
    for (size_t i = 0; i < n; ++i) frame.ui.recent_runs.push_back(recent[i]->run.dir);
  }
}

std::string RunsPanel::label(const Entry& e) const {
  return e.run.gone ? e.name + " (deleted)" : e.name;
}

void RunsPanel::open_run(Entry& e, Trainer& trainer, const Snapshot& snap) {
  if (e.run.dir == own_dir_) {
    note_ = "this is the window's own run: it is already shown";
    return;
  }
  if (!e.run.readable || !e.run.run->has_checkpoint) {
    error_ = "Open: " + e.run.dir +
             " has no checkpoint yet (its curves are shown; the views need a checkpoint)";
    return;
  }
  error_.clear();
  open_path_ = (fs::path(e.run.dir) / "checkpoint").string();
  trainer.load_checkpoint(open_path_);
  opened_dir_ = e.run.dir;
  opened_stamp_ = e.run.checkpoint_stamp;
  open_serial_ = snap.serial;
  open_message_ = snap.message;
  open_state_ = "loading";
  open_error_.clear();
  note_ = "opening " + label(e) + ": loading " + open_path_ + " ...";
}

// The trainer answers a load in its snapshot's message ("loaded checkpoint DIR" or "load failed:
// ..." naming the file); until then the panel says "loading".
void RunsPanel::check_open(const Snapshot& snap) {
  if (open_state_ != "loading" || snap.serial <= open_serial_) return;
  const std::string failed = "load failed: ";
  Entry* e = find(opened_dir_);
  if (snap.message == "loaded checkpoint " + open_path_) {
    open_state_ = "loaded";
    note_ = "opened " + (e ? label(*e) : opened_dir_) + ": its checkpoint at step " +
            std::to_string(snap.step) + " is loaded (a newer one is loaded when it is written)";
  } else if (snap.message.rfind(failed, 0) == 0 &&
             (snap.message.find(open_path_) != std::string::npos ||
              snap.message != open_message_)) {
    open_state_ = "failed";
    open_error_ = snap.message.substr(failed.size());
    if (open_error_.find(open_path_) == std::string::npos)
      open_error_ = open_path_ + ": " + open_error_;
    error_ = "Open: " + (e ? label(*e) : opened_dir_) + " did not load: " + open_error_ +
             " (the window keeps its model)";
    note_.clear();
  }
}

void RunsPanel::draw_table(FrameContext& frame) {
  // Open sits beside the tick, so it stays in view when the columns are wider than the tile.
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_ScrollX;
  const float rows = static_cast<float>(std::min<size_t>(entries_.size(), 8) + 1);
  const float height = ImGui::GetFrameHeightWithSpacing() * (rows + 0.5f);
  if (!ImGui::BeginTable("runs", 10, flags, ImVec2(0, height))) return;
  ImGui::TableSetupScrollFreeze(2, 1);
  for (const char* h :
       {"", "", "run", "mechanism", "task", "step", "eval loss", "eval acc", "state", "age"})
    ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  // Overlay colours in list order (the clipper below draws only the rows in view).
  std::vector<int> colors(entries_.size(), -1);
  int color_index = 0;
  for (size_t i = 0; i < entries_.size(); ++i)
    if (entries_[i]->selected && entries_[i]->run.readable) colors[i] = color_index++;
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(entries_.size()));
  while (clipper.Step())
    for (int row = clipper.DisplayStart; row < clipper.DisplayEnd; ++row) {
      Entry& e = *entries_[static_cast<size_t>(row)];
      const RunView& f = e.run;
      const RunDirectory* run = f.readable ? f.run.get() : nullptr;
      ImGui::TableNextRow();
      ImGui::PushID(row);
      ImGui::TableNextColumn();
      ImGui::Checkbox("##sel", &e.selected);
      if (colors[static_cast<size_t>(row)] >= 0) {
        ImGui::SameLine();
        const fig::Color c = figures::compare_color(colors[static_cast<size_t>(row)]);
        ImGui::ColorButton("##c", ImVec4(c.r, c.g, c.b, 1),
                           ImGuiColorEditFlags_NoTooltip | ImGuiColorEditFlags_NoPicker,
                           ImVec2(ImGui::GetFontSize(), ImGui::GetFontSize()));
      }
      ImGui::TableNextColumn();
      ImGui::BeginDisabled(!run || !run->has_checkpoint || f.gone || f.dir == own_dir_);
      if (ImGui::SmallButton("Open")) open_run(e, frame.trainer, frame.snap);
      if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("Load its checkpoint into the window (every view shows it)");
      ImGui::EndDisabled();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(label(e).c_str());
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", f.dir.c_str());
      if (f.dir == own_dir_) {
        ImGui::SameLine();
        ImGui::TextDisabled("(this window)");
      }
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(run ? run->mechanism().c_str() : "-");
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(run ? run->config.task.name.c_str() : "-");
      ImGui::TableNextColumn();
      if (run)
        ImGui::Text("%lld/%lld", static_cast<long long>(f.last_step),
                    static_cast<long long>(run->config.train.steps));
      else
        ImGui::TextDisabled("-");
      for (const Series* s :
           {run ? &run->eval_loss : nullptr, run ? &run->eval_accuracy : nullptr}) {
        ImGui::TableNextColumn();
        if (!s || s->values.empty())
          ImGui::TextDisabled("-");
        else
          ImGui::Text(s == &run->eval_loss ? "%.4f" : "%.3f", s->values.back());
      }
      ImGui::TableNextColumn();
      ImGui::TextColored(state_color(f.state), "%s", f.state.c_str());
      if (!f.error.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", f.error.c_str());
      ImGui::TableNextColumn();
      if (run)
        ImGui::TextUnformatted(age_text(seconds_since_file_time(f.newest_change_ns)).c_str());
      ImGui::PopID();
    }
  ImGui::EndTable();
}

void RunsPanel::draw(FrameContext& frame) {
  ImGui::TextDisabled("runs root: %s", root_.empty() ? "(none: not recorded)" : root_.c_str());
  ImGui::SetNextItemWidth(std::max(120.0f, ImGui::GetContentRegionAvail().x - 260));
  const bool enter =
      ImGui::InputTextWithHint("##add", "run directory or folder of runs", add_field_,
                               sizeof add_field_, ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if ((ImGui::Button("Add") || enter) && add_dir(add_field_, true)) add_field_[0] = '\0';
  ImGui::SameLine();
  if (ImGui::Button("Rescan")) watcher_.poke();
  if (!error_.empty()) ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1), "%s", error_.c_str());
  if (!deleted_note_.empty())
    ImGui::TextColored(ImVec4(0.95f, 0.75f, 0.35f, 1), "%s", deleted_note_.c_str());
  if (!note_.empty()) ImGui::TextDisabled("%s", note_.c_str());
  if (entries_.empty()) {
    ImGui::TextDisabled(
        "No runs yet: train one (Space), or add a directory that `attnlab train` "
        "writes.");
    return;
  }
  draw_table(frame);

  // The overlay of the ticked runs: rebuilt when the selection or a ticked run's files change.
  // The key is a hash of (entry, version) of every ticked run: no allocation per frame, the
  // curves and the figure are rebuilt only when it changes.
  // The labels name the window's own run, so its directory is part of the key.
  uint64_t key = (1469598103934665603ull ^ std::hash<std::string>{}(own_dir_)) +  // FNV-1a basis
                 static_cast<uint64_t>(seed_bands_);
  bool any = false;
  for (const auto& e : entries_) {
    if (!e->selected || !e->run.readable) continue;
    any = true;
    for (const uint64_t part : {static_cast<uint64_t>(reinterpret_cast<uintptr_t>(e.get())),
                                static_cast<uint64_t>(e->run.version)})
      key = (key ^ part) * 1099511628211ull;
  }
  if (!any) {
    ImGui::TextDisabled("Tick runs to overlay their curves.");
    return;
  }
  if (key != overlay_key_) {
    std::vector<figures::CompareCurve> curves;
    int color_index = 0;
    for (const auto& e : entries_)
      if (e->selected && e->run.readable)
        curves.push_back(
            {e->run.run.get(), label(*e), figures::compare_color(color_index++), true});
    figures::CompareOptions options;
    options.seed_bands = static_cast<figures::SeedBands>(seed_bands_);
    overlay_ = figures::loss_overlay(curves, "Runs", options);
    overlay_key_ = key;
    ++overlay_serial_;
  }
  if (ImGui::SmallButton("Export...")) request_figure_export(overlay_, false);
  ImGui::SameLine();
  seed_bands_combo(&seed_bands_, "Ticked runs");
  ImFont* font = frame.small_font ? frame.small_font : ImGui::GetFont();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  // Drawn into a texture while nothing changes: two thousand runs are six thousand lines.
  curves_.draw(overlay_, ImVec2(avail.x, std::max(140.0f, avail.y)), font, overlay_serial_);
  if (const auto h = curves_.hover(overlay_)) {
    ImGui::GetWindowDrawList()->AddCircle(h->screen, 5.0f, IM_COL32(255, 255, 255, 220), 0, 1.5f);
    const fig::Panel& panel = overlay_.panels[static_cast<size_t>(h->panel)];
    ImGui::SetTooltip("%s\n%s: %.4g at step %.0f", h->name.empty() ? "(unnamed)" : h->name.c_str(),
                      panel.title.c_str(), h->y, h->x);
  }
}

nlohmann::json RunsPanel::report() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : entries_) {
    const bool opened = !open_state_.empty() && e->run.dir == opened_dir_;
    out.push_back({{"path", e->run.dir},
                   {"metric_rows", e->run.rows},
                   {"state", e->run.state},
                   {"step", e->run.last_step},
                   {"selected", e->selected},
                   {"own", e->run.dir == own_dir_},
                   {"first_rows", e->run.first_rows},
                   {"reads", e->run.version},
                   {"error", e->run.error},
                   {"gone", e->run.gone},
                   {"open", opened ? open_state_ : ""},
                   {"open_error", opened ? open_error_ : ""}});
  }
  return out;
}

}  // namespace attn::gui
