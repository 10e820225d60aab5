// Recorded views: what the panels draw on the probe at each recorded step (the attention maps of
// every layer and head, the probe's tokens, every layer's mechanism view, the probe image and
// class probabilities of image tasks, and the views of the whole model an architecture without
// attention layers publishes), appended to the run directory's views.rec so a run keeps its
// history, not only its last step. Torch-free. Fields added after the first version ("image",
// "probs", "model", "induction", "importance", "attribution", "dla") are optional in a record:
// older recordings read with them empty, and older readers skip the keys they do not know, so
// adding one keeps the record's version. Format (all integers little-endian):
//   version 2 (written since issue 46): "ATTNVIEWS2\n" (11 bytes), u32 n, n bytes of JSON
//   {"run_id", "run"} (the identity of the run that recorded the file,
//   core/runs/directory/run_files.h, and its directory then), u32 CRC-32 of those n bytes; then
//   records, each u32 magic 0x43455256 ("VREC"), u32 payload bytes, i64 step, u32 CRC-32 (IEEE) of
//   the payload bytes and step fields followed by the payload, payload: CBOR (RFC 8949) of the
//   record, float arrays as byte strings of little-endian float32. A record states its own version
//   under "v" (kViewRecordVersion): 2 holds the layers' mechanism views generically under
//   "mechanisms" (core/views/mechanism_view.h's layout); a record without "v" is version 1. A
//   mechanism's entries under its own key, in records written before it observed itself (version 1,
//   or version 2 for some), are read through its descriptor (legacy_view_readers,
//   core/attention/registry.h) into one view per layer. "model" holds the whole-model views (the
//   same layout); an architecture's entries under its own key, from before it published generic
//   views, are read through its row (ArchitectureDescriptor::legacy_record_view,
//   core/models/architectures/architecture.h). A record of a later version is refused, naming it.
//   The codec is view_record_codec.cpp, the checks against the run view_record_checks.cpp. version
//   1 (older runs): "ATTNVIEWS1\n", then records whose CRC covers the payload only. Such a file
//   carries no identity: it is checked against the run by the records' shape only, and a damaged
//   step field is not detected (a record read back says which step it holds).
// Contract:
//  - A file is read in place (pread), never whole: at most kMaxViewFileBytes (1 GiB, refused
//    above, naming the file), a record's payload at most kMaxViewPayload, and at most
//    kMaxViewRecordItems CBOR items (checked before the record is decoded).
//  - Readers take every whole record whose CRC matches and whose step exceeds the last one
//    taken. Bytes that are no such record (one damaged byte, a torn write in the middle) are
//    skipped to the next valid record (the reader looks for the next magic whose record
//    checks out) and listed as damaged; a torn tail (a killed writer, a full disk, a record
//    still being appended) is ignored, never read as data. The search is bounded (it stops
//    after checking 4x the file's bytes plus 64 MiB), so a hostile file cannot make it
//    quadratic.
//  - Records belong to one run: a version-2 file whose run_id is not the run's own is refused
//    naming both runs; every record read is checked against the run's config (ViewShape: its
//    layers and heads exactly, maps no wider than its longest probe, C of its slot count, ...)
//    before anything is built from it.
//  - ViewRecorder owns the file while a run records. Opening it checks everything first and
//    writes nothing when it refuses (plan_view_recording); then it never drops a valid record:
//    damaged bytes and a torn tail are moved to "views.rec.damaged-<n>" beside the file, and
//    records at or after the step it resumes from (a run resumed from an earlier checkpoint
//    records those steps again) to "views.rec.superseded-<n>" (a recording of the same format,
//    readable by index_view_records), each said in notes(). It appends one record per call and
//    keeps the file under its budget: when an append takes it over, the file is rewritten
//    atomically (core/base/atomic_file.h) with the first and last records and a spread of the
//    others (thin_steps) filling half the budget; thinning is the one deliberate loss, the
//    budget's (docs/guide/runs.md). Failures throw attn::Error naming the file; a failed append
//    leaves the file's whole records as they were.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/views/intervention_view.h"
#include "core/views/mechanism_view.h"
#include "core/views/snapshot.h"

namespace attn {

constexpr const char* kViewRecordsFile = "views.rec";
// Eval batches the recorded head importance uses by default (train.record_importance_batches):
// the run's first (it runs layers x heads + 1 passes at every recorded step).
constexpr int kRecordedImportanceBatches = 1;
constexpr uint64_t kDefaultViewBudget = uint64_t(64) << 20;  // 64 MiB
// The stated limits (docs/guide/hardening.md): a file, a record's payload, its CBOR items.
constexpr uint64_t kMaxViewFileBytes = uint64_t(1) << 30;  // 1 GiB
constexpr uint32_t kMaxViewPayload = uint32_t(1) << 29;    // 512 MiB
constexpr uint64_t kMaxViewRecordItems = uint64_t(1) << 20;
constexpr int kViewRecordVersion = 2;  // of a record's payload (see the format above)
// The recorded causal tables' stated limits (checked on the bytes before anything is built).
constexpr uint64_t kMaxRecordedHeads = uint64_t(1) << 16;       // attribution cells
constexpr uint64_t kMaxRecordedComponents = uint64_t(1) << 16;  // direct logit attribution rows

// Attribution patching at a recorded step (core/views/causal_view.h's AttributionTable, per head
// only), on the recorded probe and the task's corrupted twin of it (Task::corrupted_twin).
struct RecordedAttribution {
  std::string metric;             // as PatchTable::metric
  double clean = 0, corrupt = 0;  // the metric on the clean and the corrupted probe
  int layers = 0, heads = 0;
  std::vector<float> values;  // layer-major [layers x heads], metric units
  bool empty() const { return values.empty(); }
};
// Direct logit attribution at a recorded step (LogitAttribution) on the recorded probe.
struct RecordedLogitAttribution {
  std::string answer;  // the model's top prediction at the answer position
  double answer_logit = 0, held_out = 0;
  std::vector<std::string> names;  // "embed", "L0.H1", "L0.attn_bias", "L0.mlp", ...
  std::vector<float> values;       // per name, in logit units
  bool empty() const { return values.empty(); }
};

struct ViewRecord {
  int64_t step = 0;
  std::vector<std::string> probe_tokens;
  int layers = 0, heads = 0;
  std::vector<AttentionMap> maps;         // layer-major, as Snapshot::attention
  std::vector<MechanismView> mechanisms;  // the layers' views, as a MechanismFrame's
  ProbeImage image;                       // image tasks: the probe image
  std::vector<float> probabilities;       // classifiers: class probabilities on the probe
  // The whole-model views of an architecture without attention layers (its monitor's
  // record_views: the Connection Transformer's C and the spectrum of I + C).
  std::vector<MechanismView> model_views;
  // Token tasks: every head's induction score (map_induction, layer-major like `maps`) on the
  // induction probe (TrainingSession::induction_probe(): n random tokens, then the same n
  // again). Empty: not measured (image tasks, older records).
  std::vector<float> induction;
  // Models with attention heads: every head's zero ablation on the run's first
  // train.record_importance_batches eval batches (core/training/interventions/interventions.h).
  // Empty otherwise.
  ImportanceTable importance;
  // Token tasks with a corrupted twin, train.record_attribution: attribution patching of every
  // head on the probe and its twin, and the direct logit attribution on the probe (recorded by
  // core/training/recording/run_recorder.h's SessionViews). Empty otherwise and in older records.
  RecordedAttribution attribution;
  RecordedLogitAttribution dla;
};

// What every record of a run must look like, from the run's own config: the counts a record
// states (layers, heads, C's slots) must equal the model's, and the sizes it carries (probe
// tokens, map widths, images, class probabilities) stay within what the run's task can give.
struct ViewShape {
  int layers = 0;       // attention layers (model.layers; 0 for an architecture without them)
  int heads = 0;        // model.heads
  int max_tokens = 0;   // the longest probe the task gives, + a classifier's CLS token
  bool image = false;   // image tasks: records may carry the probe image
  int max_classes = 0;  // classifiers: class probabilities at most; 0: records hold none
  // Whole-model views at most (the architecture's row), and its check of each against the
  // run's config (throws attn::Error saying what the config refuses).
  int model_views = 0;
  std::string architecture;  // model.architecture, for messages
  std::function<void(const MechanismView&)> check_model_view;
};
ViewShape view_shape_of(const ExperimentConfig& config);

// The run a recording must belong to: its directory (for messages), identity and shape.
struct ViewRun {
  std::string dir;
  std::string run_id;  // core/runs/directory/run_files.h run_identity(); "" for a run without one
  ViewShape shape;
};
// From a run directory and its config (the identity read from the run's marker).
ViewRun view_run_of(const std::string& dir, const ExperimentConfig& config);

// Throws attn::Error saying which of the record's stated sizes the run's shape refuses.
void check_view_record(const ViewRecord& record, const ViewShape& shape);

// A head's diagnostic at a recorded step (core/analysis/head_metrics.h): metric is "entropy",
// "diagonal", "previous_token", "induction" (on the record's induction probe; a record without
// one, from before it was recorded: on the recorded probe's own tokens, NaN when none repeats)
// for every map, each per-head scalar of a mechanism view by its name (ky's "effective_window"),
// and each scalar of a whole-model view (the Connection Transformer's "spectral_radius",
// rho(I + C)), which is the model's, not a head's: layer and head are -1 there; a scalar whose
// unit is "step" says when something was measured and is none.
struct HeadMetric {
  int64_t step = 0;
  int layer = 0, head = 0;
  std::string metric;
  double value = 0;
};
// `rows` (non-empty): the map metrics average over those query rows only (the scored positions
// of `attnlab export --positions`), induction on the recorded probe's tokens; the mechanisms'
// and the model's scalars are left out (they are not per query).
std::vector<HeadMetric> head_metrics(const ViewRecord& record, const std::vector<int>& rows = {});

// The record's payload (CBOR) and back; decode throws attn::Error naming what is malformed
// (more than kMaxViewRecordItems items is refused before decoding), and with a shape what the
// run refuses (check_view_record).
std::string encode_view_record(const ViewRecord& record);
ViewRecord decode_view_record(const std::string& payload);
ViewRecord decode_view_record(const std::string& payload, const ViewShape& shape);

struct ViewIndexEntry {
  int64_t step = 0;
  uint64_t offset = 0;  // of the record's header in the file
  uint32_t bytes = 0;   // payload bytes
  int version = 2;      // the file's format (which bytes the CRC covers)
};
struct ViewByteRange {
  uint64_t begin = 0, end = 0;  // [begin, end) of the file
  int64_t after_step = -1;      // the step of the valid record before them (-1: none)
};
// A scan of a recording (see the contract).
struct ViewFile {
  int version = 0;      // 1 or 2; 0: no file, or one torn while its header was written
  std::string run_id;   // version 2: the identity of the run that recorded it
  std::string run_dir;  // version 2: where that run was when it started recording
  std::string header;   // the file header's bytes (records start after it)
  std::vector<ViewIndexEntry> records;
  std::vector<ViewByteRange> damaged;  // skipped between records
  uint64_t good_bytes = 0;             // where the last whole record ends (the tail starts)
  uint64_t size = 0;                   // the file's size when scanned
};
// Throws attn::Error naming the file: not a regular file, not a view recording, over 1 GiB, or
// a damaged header. A missing file scans as version 0 with no records.
ViewFile scan_view_file(const std::string& path);
// Throws attn::Error naming both runs when `file` was recorded by another run than `run`.
void check_view_owner(const ViewFile& file, const std::string& path, const ViewRun& run);

// The valid records of `path` in file order (scan_view_file); *good_bytes (when given) is where
// the last one ends. The first form checks no owner (a reader that only asks whether the file
// can be read); the second refuses another run's recording (check_view_owner).
std::vector<ViewIndexEntry> index_view_records(const std::string& path,
                                               uint64_t* good_bytes = nullptr);
std::vector<ViewIndexEntry> index_view_records(const std::string& path, const ViewRun& run,
                                               uint64_t* good_bytes = nullptr);
// Reads what a writer appended after *good_bytes (the end of the last whole record indexed):
// appends its valid records to *index and moves *good_bytes past them; true when any were
// added. The caller re-indexes from scratch when the file was replaced or shrank (a writer
// thinned it). *good_bytes below the file header indexes the whole file.
bool extend_view_index(const std::string& path, std::vector<ViewIndexEntry>* index,
                       uint64_t* good_bytes);
// The record at `entry`, its CRC checked again and its shape against the run's
// (check_view_record); throws attn::Error naming the file and the step.
ViewRecord read_view_record(const std::string& path, const ViewIndexEntry& entry,
                            const ViewShape& shape);
// The record at the largest step <= `step` (-1: the last); nullptr-like: throws attn::Error when
// the recording is empty or starts after `step`, naming the first recorded step.
const ViewIndexEntry& view_record_at(const std::vector<ViewIndexEntry>& index, int64_t step);

// Indices (ascending) of the records to keep out of records at `steps` (ascending) so that
// `keep` (>= 2) remain: the first and the last, then alternately the record nearest to the next
// log-spaced and the next linear-spaced step between them. All of them when they fit.
std::vector<size_t> thin_steps(const std::vector<int64_t>& steps, size_t keep);

// What opening `path` for recording `run` will do, decided by reading only: the file scanned,
// its owner and every record's shape checked (throws attn::Error, having written nothing, when
// the file cannot be recorded on), and the records at or after `from_step` that a resumed run
// supersedes.
struct ViewRecordingPlan {
  std::string path;
  ViewRun run;
  ViewFile file;
  int64_t from_step = std::numeric_limits<int64_t>::max();
};
ViewRecordingPlan plan_view_recording(const std::string& path, const ViewRun& run,
                                      int64_t from_step = std::numeric_limits<int64_t>::max());

class ViewRecorder {
 public:
  // Carries out the plan (the file created for the run, or what it must not keep moved aside,
  // see the contract) and opens the file for appending.
  explicit ViewRecorder(ViewRecordingPlan plan, uint64_t budget_bytes = kDefaultViewBudget);
  ViewRecorder(const std::string& path, const ViewRun& run,
               uint64_t budget_bytes = kDefaultViewBudget);
  ~ViewRecorder();
  ViewRecorder(const ViewRecorder&) = delete;
  ViewRecorder& operator=(const ViewRecorder&) = delete;

  // A record at a step at or before the last one first moves the records from that step on
  // aside (views.rec.superseded-<n>, said in notes()).
  void append(const ViewRecord& record);
  void sync();  // flushes the records to disk (at a save, so a power loss cannot lose them)
  const std::vector<ViewIndexEntry>& index() const { return index_; }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  int version() const { return version_; }
  // What opening and appending moved aside, one sentence each, for the run's log.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  void rewrite(const std::vector<size_t>& keep);
  void set_aside(const std::vector<size_t>& records, const char* kind, const std::string& why);
  void reopen();

  std::string path_;
  uint64_t budget_;
  int fd_ = -1;
  uint64_t size_ = 0;
  int version_ = 2;
  std::string header_;
  std::vector<ViewIndexEntry> index_;
  std::vector<std::string> notes_;
};

}  // namespace attn
