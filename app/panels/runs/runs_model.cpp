#include "app/panels/runs/runs_model.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>

#include "app/figures/runs/compare_figures.h"
#include "app/panels/runs/config_diff_model.h"
#include "core/config/config.h"

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

}  // namespace

RunsModel::RunsModel(std::string runs_root)
    : root_(runs_root.empty() ? "" : normal_path(runs_root)) {
  if (!root_.empty()) watcher_.add_root(root_);
  if (const char* dir = std::getenv("ATTN_GUI_OPEN_RUN"); dir && *dir) {
    add_dir(dir, /*select=*/true);
    pending_open_.push_back(normal_path(dir));
  }
}

RunsModel::Entry* RunsModel::find(const std::string& dir) {
  const auto it = index_.find(dir);
  return it == index_.end() ? nullptr : it->second;
}

RunsModel::Entry& RunsModel::add_entry(const std::string& dir) {
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

RunsModel::Entry& RunsModel::ensure(const std::string& dir) {
  if (Entry* e = find(dir)) return *e;
  dropped_.erase(dir);
  watcher_.follow(dir);
  return add_entry(dir);
}

bool RunsModel::add_dir(const std::string& dir, bool select) {
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
void RunsModel::merge(const std::vector<RunView>& views) {
  for (const RunView& v : views) {
    if (dropped_.count(v.dir)) continue;  // a list published before the watcher saw the unfollow
    Entry* e = find(v.dir);
    if (!e) e = &add_entry(v.dir);
    e->run = v;
  }
  drop_placeholders();
  note_deleted();
}

// A folder added before its run existed: once runs appear under it, the placeholder goes (its
// tick passes to them).
void RunsModel::drop_placeholders() {
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
}

// Deleted runs: named once, their data kept and marked.
void RunsModel::note_deleted() {
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

std::vector<std::string> RunsModel::update(const Snapshot& snap, UiState& ui, double now) {
  // File > Open run / Recent runs: list and tick; a single run with a checkpoint is loaded
  // once the watcher has read it.
  for (const std::string& dir : ui.open_run_requests)
    if (add_dir(dir, /*select=*/true)) pending_open_.push_back(normal_path(dir));
  ui.open_run_requests.clear();
  if (!snap.run_dir.empty() && snap.run_dir != own_dir_raw_) {
    own_dir_raw_ = snap.run_dir;  // normalised once per new directory, not every frame
    own_dir_ = normal_path(own_dir_raw_);
    ensure(own_dir_);
  }
  std::vector<std::string> loads = merge_latest(snap);
  check_open(snap);
  if (now - last_recent_ >= kRecentSeconds) {
    last_recent_ = now;
    update_recent(ui);
  }
  return loads;
}

// The watcher's newest reading, when it has a new one; the pending and re-written opens.
std::vector<std::string> RunsModel::merge_latest(const Snapshot& snap) {
  std::vector<std::string> loads;
  if (watcher_.serial() == merged_serial_) return loads;
  merged_serial_ = watcher_.serial();
  merge(*watcher_.latest());
  update_differing();
  auto load = [&](Entry& e) {
    const std::string path = open_entry(e, snap);
    if (!path.empty()) loads.push_back(path);
  };
  for (auto it = pending_open_.begin(); it != pending_open_.end();) {
    Entry* e = find(*it);
    if (e && !e->run.readable && e->run.error.empty()) {
      ++it;  // not read yet
      continue;
    }
    if (e && e->run.readable && e->run.run->has_checkpoint) load(*e);
    it = pending_open_.erase(it);
  }
  // An opened run that wrote a new checkpoint: show that one.
  if (Entry* e = opened_dir_.empty() ? nullptr : find(opened_dir_))
    if (e->run.checkpoint_stamp != 0 && e->run.checkpoint_stamp != opened_stamp_) load(*e);
  return loads;
}

// File > Recent runs: the newest eight that can be read.
void RunsModel::update_recent(UiState& ui) {
  std::vector<const Entry*> recent;
  for (const auto& e : entries_)
    if (e->run.readable && !e->run.gone) recent.push_back(e.get());
  const size_t n = std::min<size_t>(recent.size(), 8);
  std::partial_sort(recent.begin(), recent.begin() + n, recent.end(),
                    [](const Entry* a, const Entry* b) {
                      return a->run.newest_change_ns > b->run.newest_change_ns;
                    });
  ui.recent_runs.clear();
  for (size_t i = 0; i < n; ++i) ui.recent_runs.push_back(recent[i]->run.dir);
}

std::string RunsModel::label(const Entry& e) const {
  return e.run.gone ? e.name + " (deleted)" : e.name;
}

void RunsModel::update_differing() {
  bool added = false;
  for (const auto& e : entries_)
    if (e->config.is_null() && e->run.readable) {
      e->config = to_json_every_key(e->run.run->config);
      added = true;
    }
  if (!added) return;
  std::vector<nlohmann::json> configs;
  for (const auto& e : entries_)
    if (!e->config.is_null()) configs.push_back(e->config);
  differing_ = gui::differing_keys(configs);
}

std::string RunsModel::differs(size_t i) const {
  const Entry& e = *entries_.at(i);
  return e.config.is_null() ? "" : differing_text(e.config, differing_);
}

bool RunsModel::can_open(size_t i) const {
  const RunView& f = entries_.at(i)->run;
  return f.readable && f.run->has_checkpoint && !f.gone && f.dir != own_dir_;
}

std::vector<int> RunsModel::color_indices() const {
  std::vector<int> colors(entries_.size(), -1);
  int index = 0;
  for (size_t i = 0; i < entries_.size(); ++i)
    if (entries_[i]->selected && entries_[i]->run.readable) colors[i] = index++;
  return colors;
}

std::string RunsModel::open(size_t i, const Snapshot& snap) {
  return open_entry(*entries_.at(i), snap);
}

std::string RunsModel::open_entry(Entry& e, const Snapshot& snap) {
  if (e.run.dir == own_dir_) {
    note_ = "this is the window's own run: it is already shown";
    return "";
  }
  if (!e.run.readable || !e.run.run->has_checkpoint) {
    error_ = "Open: " + e.run.dir +
             " has no checkpoint yet (its curves are shown; the views need a checkpoint)";
    return "";
  }
  error_.clear();
  open_path_ = (fs::path(e.run.dir) / "checkpoint").string();
  opened_dir_ = e.run.dir;
  opened_stamp_ = e.run.checkpoint_stamp;
  open_serial_ = snap.serial;
  open_message_ = snap.message;
  open_state_ = "loading";
  open_error_.clear();
  note_ = "opening " + label(e) + ": loading " + open_path_ + " ...";
  return open_path_;
}

// The trainer answers a load in its snapshot's message ("loaded checkpoint DIR" or "load failed:
// ..." naming the file); until then the panel says "loading".
void RunsModel::check_open(const Snapshot& snap) {
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

bool RunsModel::any_overlaid() const {
  for (const auto& e : entries_)
    if (e->selected && e->run.readable) return true;
  return false;
}

// A hash of (entry, version) of every ticked run: no allocation per frame. The labels name the
// window's own run, so its directory is part of the key.
uint64_t RunsModel::overlay_key() const {
  uint64_t key = (1469598103934665603ull ^ std::hash<std::string>{}(own_dir_)) +  // FNV-1a basis
                 static_cast<uint64_t>(seed_bands);
  for (const auto& e : entries_) {
    if (!e->selected || !e->run.readable) continue;
    for (const uint64_t part : {static_cast<uint64_t>(reinterpret_cast<uintptr_t>(e.get())),
                                static_cast<uint64_t>(e->run.version)})
      key = (key ^ part) * 1099511628211ull;
  }
  return key;
}

const fig::Figure& RunsModel::overlay() {
  const uint64_t key = overlay_key();
  if (key == overlay_key_) return overlay_;
  std::vector<figures::CompareCurve> curves;
  int color_index = 0;
  for (const auto& e : entries_)
    if (e->selected && e->run.readable)
      curves.push_back({e->run.run.get(), label(*e), figures::compare_color(color_index++), true});
  figures::CompareOptions options;
  options.seed_bands = static_cast<figures::SeedBands>(seed_bands);
  overlay_ = figures::loss_overlay(curves, "Runs", options);
  overlay_key_ = key;
  ++overlay_serial_;
  return overlay_;
}

nlohmann::json RunsModel::report() const {
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
                   {"open_error", opened ? open_error_ : ""},
                   {"differs", e->config.is_null() ? "" : differing_text(e->config, differing_)}});
  }
  return out;
}

}  // namespace attn::gui
