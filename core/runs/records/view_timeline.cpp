#include "core/runs/records/view_timeline.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <limits>

#include "core/base/error.h"
#include "core/views/intervention_view.h"

namespace attn {
namespace {

constexpr size_t kCachedRecords = 48;

// The base's whole-model views with the record's entries in place of those of the same name
// (what the record measured at its step; the histories it does not hold stay the base's).
std::vector<MechanismView> overlay_views(const std::vector<MechanismView>& base,
                                         const std::vector<MechanismView>& recorded) {
  std::vector<MechanismView> out = base;
  for (const MechanismView& r : recorded) {
    auto same = std::find_if(out.begin(), out.end(), [&](const MechanismView& v) {
      return v.mechanism == r.mechanism && v.layer == r.layer;
    });
    if (same == out.end()) {
      out.push_back(r);
      continue;
    }
    auto put = [](auto& to, const auto& from) {
      for (const auto& e : from) {
        auto at =
            std::find_if(to.begin(), to.end(), [&](const auto& t) { return t.name == e.name; });
        if (at == to.end())
          to.push_back(e);
        else
          *at = e;
      }
    };
    put(same->curves, r.curves);
    put(same->matrices, r.matrices);
    put(same->scalars, r.scalars);
    put(same->texts, r.texts);
  }
  return out;
}

}  // namespace

Snapshot snapshot_at_record(const Snapshot& base, const ViewRecord& r,
                            std::shared_ptr<const std::vector<MechanismFrame>> frames) {
  Snapshot s = base;
  s.attention = std::make_shared<const std::vector<AttentionMap>>(r.maps);
  s.probe_tokens = r.probe_tokens;
  s.layers = r.layers;
  s.heads = r.heads;
  s.attention_step = r.step;
  if (!r.image.empty()) s.probe_image = r.image;
  if (!r.probabilities.empty()) s.probe_probabilities = r.probabilities;
  if (frames)
    s.mechanism_views = std::move(frames);
  else if (!r.mechanisms.empty())  // the record's own views, as the latest frame
    s.mechanism_views = std::make_shared<const std::vector<MechanismFrame>>(
        std::vector<MechanismFrame>{MechanismFrame{r.step, r.mechanisms}});
  if (!r.importance.empty()) {
    // The recorded importance; the ablation and patch the panel asked for stay the model's.
    auto iv = base.interventions ? std::make_shared<InterventionView>(*base.interventions)
                                 : std::make_shared<InterventionView>();
    iv->importance = r.importance;
    s.interventions = std::move(iv);
  }
  if (!r.model_views.empty())
    s.model_views = std::make_shared<const std::vector<MechanismView>>(overlay_views(
        base.model_views ? *base.model_views : std::vector<MechanismView>(), r.model_views));
  return s;
}

bool ViewTimeline::File::reindex(std::string* error) {
  const size_t before = index.size();
  index.clear();
  good_bytes = 0;
  try {
    if (!run_known) {  // whose records these must be: the run's identity and config
      run = view_run_of(
          source.dir,
          load_config_file((std::filesystem::path(source.dir) / "config.json").string()));
      run_known = true;
    }
    index = index_view_records(path, run, &good_bytes);
  } catch (const std::exception& e) {
    index.clear();
    good_bytes = 0;
    *error = e.what();
  }
  return before != 0 || !index.empty();
}

bool ViewTimeline::File::update(std::string* error) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    const bool had = !index.empty();
    std::error_code ec;
    if (!std::filesystem::is_directory(source.dir, ec))
      *error = "the run's directory is gone (deleted or moved): " + source.dir +
               "; its recorded views cannot be read, the model loaded from it stays on screen";
    else if (seen_file)
      *error = path + " is gone (deleted or moved since it was read): no timeline";
    index.clear();
    good_bytes = seen_size = inode = device = 0;
    return had;
  }
  seen_file = true;
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const bool replaced = static_cast<uint64_t>(st.st_ino) != inode ||
                        static_cast<uint64_t>(st.st_dev) != device || size < good_bytes;
  inode = static_cast<uint64_t>(st.st_ino);
  device = static_cast<uint64_t>(st.st_dev);
  if (replaced) {
    seen_size = size;
    run_known = false;  // a new file, perhaps of a new run in the directory: read it again
    return reindex(error);
  }
  if (size == seen_size) return false;
  seen_size = size;
  try {
    return extend_view_index(path, &index, &good_bytes);
  } catch (const std::exception& e) {
    *error = e.what();
    return false;
  }
}

void ViewTimeline::set_sources(const std::vector<TimelineSource>& sources) {
  if (sources == sources_) return;
  sources_ = sources;
  std::vector<File> files;
  for (const TimelineSource& s : sources) {
    auto same = std::find_if(files_.begin(), files_.end(),
                             [&](const File& f) { return f.source.dir == s.dir; });
    File f = same != files_.end() ? std::move(*same) : File{};
    f.source = s;
    f.path = (std::filesystem::path(s.dir) / kViewRecordsFile).string();
    files.push_back(std::move(f));
  }
  files_ = std::move(files);
  cache_.clear();
  cache_order_.clear();
  views_.clear();
  has_views_ = true;
  frames_key_ = -2;
  frames_.reset();
  last_refresh_ = -1e300;  // read the new sources at once
  merge();
}

bool ViewTimeline::refresh(double now_s, double min_interval_s) {
  if (now_s - last_refresh_ < min_interval_s) return false;
  last_refresh_ = now_s;
  bool changed = false;
  std::string error;
  for (File& f : files_) changed |= f.update(&error);
  error_ = error;
  if (!changed) return false;
  const std::vector<int64_t> before = steps_;
  merge();
  frames_key_ = -2;  // new frames may belong to the history
  return steps_ != before;
}

void ViewTimeline::merge() {
  steps_.clear();
  where_.clear();
  for (size_t i = 0; i < files_.size(); ++i) {
    const File& f = files_[i];
    // A later source's records replace this one's from its first step on.
    int64_t until = std::numeric_limits<int64_t>::max();
    for (size_t j = i + 1; j < files_.size(); ++j)
      if (!files_[j].index.empty()) {
        until = std::min(until, files_[j].index.front().step - 1);
        break;
      }
    for (size_t e = 0; e < f.index.size(); ++e) {
      const int64_t step = f.index[e].step;
      if (step > until) break;
      if (!steps_.empty() && step <= steps_.back()) continue;
      steps_.push_back(step);
      where_.push_back({i, e});
    }
  }
  // Records no longer indexed (thinned away) leave the cache.
  for (auto it = cache_.begin(); it != cache_.end();)
    it = std::binary_search(steps_.begin(), steps_.end(), it->first) ? std::next(it)
                                                                     : cache_.erase(it);
  cache_order_.erase(std::remove_if(cache_order_.begin(), cache_order_.end(),
                                    [&](int64_t s) { return cache_.count(s) == 0; }),
                     cache_order_.end());
}

int64_t ViewTimeline::step_at_or_before(int64_t step) const {
  auto it = std::upper_bound(steps_.begin(), steps_.end(), step);
  return it == steps_.begin() ? -1 : *(it - 1);
}

std::shared_ptr<const ViewRecord> ViewTimeline::load(int64_t step, Where at) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    File& f = files_[at.file];
    try {
      auto record = std::make_shared<const ViewRecord>(
          read_view_record(f.path, f.index[at.entry], f.run.shape));
      return record;
    } catch (const std::exception& e) {
      if (attempt == 1) {
        error_ = e.what();
        return nullptr;
      }
      // Thinned under us: index the file anew and look the step up again.
      std::string error;
      f.reindex(&error);
      merge();
      auto it = std::lower_bound(steps_.begin(), steps_.end(), step);
      if (it == steps_.end() || *it != step) return nullptr;
      at = where_[static_cast<size_t>(it - steps_.begin())];
    }
  }
  return nullptr;
}

std::shared_ptr<const ViewRecord> ViewTimeline::record_at(int64_t step) {
  const int64_t s = step_at_or_before(step);
  if (s < 0) return nullptr;
  if (auto it = cache_.find(s); it != cache_.end()) {
    cache_order_.erase(std::find(cache_order_.begin(), cache_order_.end(), s));
    cache_order_.push_back(s);
    return it->second;
  }
  const size_t i =
      static_cast<size_t>(std::lower_bound(steps_.begin(), steps_.end(), s) - steps_.begin());
  std::shared_ptr<const ViewRecord> record = load(s, where_[i]);
  if (!record) return nullptr;
  cache_[s] = record;
  cache_order_.push_back(s);
  while (cache_order_.size() > kCachedRecords) {
    cache_.erase(cache_order_.front());
    cache_order_.erase(cache_order_.begin());
  }
  return record;
}

std::shared_ptr<const std::vector<MechanismFrame>> ViewTimeline::mechanism_frames(int64_t step) {
  const int64_t s = step_at_or_before(step);
  if (s < 0 || !has_views_) return nullptr;
  if (s == frames_key_) return frames_;
  auto frames = std::make_shared<std::vector<MechanismFrame>>();
  for (size_t i = 0; i < steps_.size() && steps_[i] <= s; ++i) {
    auto it = views_.find(steps_[i]);
    if (it == views_.end()) {
      std::shared_ptr<const ViewRecord> r = record_at(steps_[i]);
      if (!r) continue;
      if (r->mechanisms.empty()) {
        has_views_ = false;  // a run's layers do not change: no record has views
        return nullptr;
      }
      it = views_.emplace(steps_[i], MechanismFrame{r->step, r->mechanisms}).first;
    }
    frames->push_back(it->second);
  }
  frames_key_ = s;
  frames_ = std::move(frames);
  return frames_;
}

}  // namespace attn
