// Recorded views: what the panels draw on the probe at each recorded step (the attention maps of
// every layer and head, the probe's tokens, g_h(t) with beta for ky layers, the probe image and
// class probabilities of image tasks, and C with the spectrum of I + C for the Connection
// Transformer), appended to the run directory's views.rec so a run keeps its history, not only
// its last step. Torch-free. Fields added after the first version ("image", "probs", "conn",
// "induction", "neural",
// "importance") are optional in a record: older recordings read with them empty.
// Format (all integers little-endian):
//   "ATTNVIEWS1\n" (11 bytes), then records, each
//   u32 magic 0x43455256 ("VREC"), u32 payload bytes, i64 step, u32 CRC-32 (IEEE) of the payload,
//   payload: CBOR (RFC 8949) of the record, float arrays as byte strings of little-endian float32.
// Contract:
//  - Readers take the records from the start while each is whole and its CRC matches, and stop
//    at the first that is not: a torn or damaged tail (a killed writer, a full disk) is ignored,
//    never read as data. Steps increase from record to record.
//  - ViewRecorder owns the file while a run records. It cuts a torn tail on open, appends one
//    record per call, and keeps the file under its budget: when an append takes it over, the
//    file is rewritten atomically (core/base/atomic_file.h) with the first and last records and
//    a spread of the others (thin_steps) filling half the budget. An append at a step at or
//    before the last recorded one (a run resumed from an earlier checkpoint) first drops the
//    records from that step on. Failures throw attn::Error naming the file; a failed append
//    leaves the file's whole records as they were.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/views/intervention_view.h"
#include "core/views/neural_view.h"
#include "core/views/snapshot.h"

namespace attn {

constexpr const char* kViewRecordsFile = "views.rec";
// Eval batches the recorded head importance uses: the run's first (it runs layers x heads + 1
// passes at every recorded step, so it is kept to one batch).
constexpr int kRecordedImportanceBatches = 1;
constexpr uint64_t kDefaultViewBudget = uint64_t(64) << 20;  // 64 MiB

// The Connection Transformer's C and the spectrum of I + C at a recorded step.
struct ConnRecord {
  int slots = 0;                          // 0: not a conn model
  std::vector<float> matrix;              // effective C, slots x slots, row-major
  std::vector<float> eigen_re, eigen_im;  // every eigenvalue of I + C
  double spectral_radius = 0;             // rho(I + C), the largest |eigenvalue|
  double spectral_norm = 0;               // ||I + C||_2
  bool empty() const { return slots == 0; }
};

struct ViewRecord {
  int64_t step = 0;
  std::vector<std::string> probe_tokens;
  int layers = 0, heads = 0;
  std::vector<AttentionMap> maps;             // layer-major, as Snapshot::attention
  std::vector<ConnectionCurves> connections;  // ky layers, as a ConnectionFrame's
  ProbeImage image;                           // image tasks: the probe image
  std::vector<float> probabilities;           // classifiers: class probabilities on the probe
  ConnRecord conn;                            // model.architecture "conn"
  // Token tasks: every head's induction score (map_induction, layer-major like `maps`) on the
  // induction probe (TrainingSession::induction_probe(): n random tokens, then the same n
  // again). Empty: not measured (image tasks, older records).
  std::vector<float> induction;
  // Neural attention with d' = 2: every neural layer's every head's score surface and slice at
  // the Neural panel's default range (NeuralViewRequest{}), layer-major. Empty otherwise.
  std::vector<NeuralScoreSurface> neural;
  // Models with attention heads: every head's zero ablation on the run's first
  // kRecordedImportanceBatches eval batches (core/training/interventions/interventions.h). Empty otherwise.
  ImportanceTable importance;
};

// A head's diagnostic at a recorded step (core/analysis/head_metrics.h): metric is "entropy",
// "diagonal", "previous_token", "induction" (on the record's induction probe; a record without
// one, from before it was recorded: on the recorded probe's own tokens, NaN when none repeats)
// for every map, "effective_window" for every ky head, and "spectral_radius" (rho(I+C))
// for a conn model, which is the model's, not a head's: layer and head are -1 there.
struct HeadMetric {
  int64_t step = 0;
  int layer = 0, head = 0;
  std::string metric;
  double value = 0;
};
std::vector<HeadMetric> head_metrics(const ViewRecord& record);

// The record's payload (CBOR) and back; decode throws attn::Error naming what is malformed.
std::string encode_view_record(const ViewRecord& record);
ViewRecord decode_view_record(const std::string& payload);

struct ViewIndexEntry {
  int64_t step = 0;
  uint64_t offset = 0;  // of the record's header in the file
  uint32_t bytes = 0;   // payload bytes
};
// The whole, valid records of `path` in file order; *good_bytes (when given) is where the last
// one ends. A missing file has none; a file that is not a view recording throws attn::Error.
std::vector<ViewIndexEntry> index_view_records(const std::string& path,
                                               uint64_t* good_bytes = nullptr);
// Reads what a writer appended after *good_bytes (the end of the last whole record indexed):
// appends its whole, valid records to *index and moves *good_bytes past them; true when any
// were added. The caller re-indexes from scratch when the file was replaced or shrank (a
// writer thinned it). *good_bytes below the file header indexes the whole file.
bool extend_view_index(const std::string& path, std::vector<ViewIndexEntry>* index,
                       uint64_t* good_bytes);
ViewRecord read_view_record(const std::string& path, const ViewIndexEntry& entry);
// The record at the largest step <= `step` (-1: the last); nullptr-like: throws attn::Error when
// the recording is empty or starts after `step`, naming the first recorded step.
const ViewIndexEntry& view_record_at(const std::vector<ViewIndexEntry>& index, int64_t step);

// Indices (ascending) of the records to keep out of records at `steps` (ascending) so that
// `keep` (>= 2) remain: the first and the last, then alternately the record nearest to the next
// log-spaced and the next linear-spaced step between them. All of them when they fit.
std::vector<size_t> thin_steps(const std::vector<int64_t>& steps, size_t keep);

class ViewRecorder {
 public:
  explicit ViewRecorder(const std::string& path, uint64_t budget_bytes = kDefaultViewBudget);
  ~ViewRecorder();
  ViewRecorder(const ViewRecorder&) = delete;
  ViewRecorder& operator=(const ViewRecorder&) = delete;

  void append(const ViewRecord& record);
  void sync();  // flushes the records to disk (at a save, so a power loss cannot lose them)
  const std::vector<ViewIndexEntry>& index() const { return index_; }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  void rewrite(const std::vector<size_t>& keep);
  void reopen();

  std::string path_;
  uint64_t budget_;
  int fd_ = -1;
  uint64_t size_ = 0;
  std::vector<ViewIndexEntry> index_;
};

}  // namespace attn
