// ViewTimeline: the window's reading of recorded views (views.rec, core/runs/records/view_records.h):
// the recorded steps of the run on screen and the record at any of them. Torch-free; one thread
// (the UI's).
// Contract:
//  - Sources are run directories in order: a run opened from disk (its records up to the step
//    it was loaded at), then the directory the window records that model into as it trains on.
//    A later source's records replace an earlier one's from its first step on.
//  - refresh() reads only what writers appended since the last call (the file is stat'ed; a
//    replaced or shorter file, as a writer's thinning leaves it, is indexed anew) and never
//    more often than every `min_interval_s` seconds of the caller's clock; a torn tail is not
//    read until it is whole (the writer's records carry a CRC).
//  - Each source's records are checked against its run (core/runs/records/view_records.h): a
//    recording of another run (its identity) is not indexed, and a record whose shape is not
//    the run's config.json's is not shown; both are said in error(). The run's config is read
//    when its views.rec is first indexed (retried while config.json is missing).
//  - record_at(step) is the record at the largest recorded step <= step; decoded records are
//    cached (a few dozen). A record that vanished under a reader (thinned) re-indexes its file
//    once and tries again; failures (std::bad_alloc included) are kept in error(), never thrown
//    at the UI. A source whose directory, or views.rec, is gone after it was read says so in
//    error() (the window shows the model it loaded, without a timeline).
//  - mechanism_frames(step): the layers' mechanism views of every recorded step <= step, oldest
//    first, as Snapshot::mechanism_views; each record is decoded once for them.
#pragma once
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/runs/records/view_records.h"
#include "core/views/snapshot.h"

namespace attn {

// `base` (the model's snapshot) as it was at the record's step: the probe's maps, tokens, image
// and class probabilities, attention_step, for a conn model C, its statistics and the
// spectrum of I + C. Histories and the reasoning trace stay the base's: they are not recorded.
// `frames`, when given, replaces the mechanism views' history (the recorded views of every
// mechanism); without it, a record holding views makes them the history's one frame.
Snapshot snapshot_at_record(const Snapshot& base, const ViewRecord& record,
                            std::shared_ptr<const std::vector<MechanismFrame>> frames = nullptr);

struct TimelineSource {
  std::string dir;  // a run directory; its views.rec is read
  bool operator==(const TimelineSource& o) const { return dir == o.dir; }
};

class ViewTimeline {
 public:
  // Unchanged sources keep their index and cache.
  void set_sources(const std::vector<TimelineSource>& sources);
  const std::vector<TimelineSource>& sources() const { return sources_; }
  // Reads what was appended; true when the steps changed. now_s: the caller's clock.
  bool refresh(double now_s, double min_interval_s = 0.5);
  const std::vector<int64_t>& steps() const { return steps_; }
  // The largest recorded step <= step (-1 when none).
  int64_t step_at_or_before(int64_t step) const;
  std::shared_ptr<const ViewRecord> record_at(int64_t step);
  std::shared_ptr<const std::vector<MechanismFrame>> mechanism_frames(int64_t step);
  const std::string& error() const { return error_; }

 private:
  struct File {
    TimelineSource source;
    std::string path;
    std::vector<ViewIndexEntry> index;
    uint64_t good_bytes = 0, seen_size = 0;
    uint64_t inode = 0, device = 0;
    ViewRun run;
    bool run_known = false;            // run read from the directory's config.json and marker
    bool seen_file = false;            // views.rec was there once (its loss is then an error)
    bool reindex(std::string* error);  // true when the index changed
    bool update(std::string* error);
  };
  struct Where {
    size_t file = 0, entry = 0;
  };
  void merge();
  std::shared_ptr<const ViewRecord> load(int64_t step, Where at);

  std::vector<TimelineSource> sources_;
  std::vector<File> files_;
  std::vector<int64_t> steps_;
  std::vector<Where> where_;  // beside steps_
  double last_refresh_ = -1e300;
  std::string error_;
  std::map<int64_t, std::shared_ptr<const ViewRecord>> cache_;
  std::vector<int64_t> cache_order_;         // oldest use first
  std::map<int64_t, MechanismFrame> views_;  // mechanism views of the records decoded for them
  bool has_views_ = true;                    // false once a record shows no mechanism view
  int64_t frames_key_ = -2;
  std::shared_ptr<const std::vector<MechanismFrame>> frames_;
};

}  // namespace attn
