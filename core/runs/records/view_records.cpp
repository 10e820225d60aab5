#include "core/runs/records/view_records.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/runs/directory/run_files.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "views.rec is written little-endian with memcpy: a big-endian host needs byte swaps"
#endif

namespace attn {
namespace {

using nlohmann::json;

constexpr uint32_t kRecordMagic = 0x43455256;  // "VREC"
constexpr size_t kHeaderBytes = 4 + 4 + 8 + 4;

// CRC-32 (IEEE) of n bytes continuing from `crc` (0 to start), as zlib's crc32().
uint32_t crc32_update(uint32_t crc, const void* data, size_t n) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = crc ^ 0xFFFFFFFFu;
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t crc32(const void* data, size_t n) {
  return crc32_update(0, data, n);
}

std::string header(uint32_t bytes, int64_t step, uint32_t crc) {
  std::string h(kHeaderBytes, '\0');
  std::memcpy(&h[0], &kRecordMagic, 4);
  std::memcpy(&h[4], &bytes, 4);
  std::memcpy(&h[8], &step, 8);
  std::memcpy(&h[16], &crc, 4);
  return h;
}

}  // namespace

namespace {

constexpr char kMagicV1[] = "ATTNVIEWS1\n";
constexpr char kMagicV2[] = "ATTNVIEWS2\n";
constexpr size_t kFileMagicBytes = sizeof kMagicV1 - 1;
constexpr uint32_t kMaxIdentityBytes = 4096;
constexpr size_t kChunk = size_t(1) << 20;

// The CRC a record's header carries: of the payload (version 1), or of its length and step
// fields followed by the payload (version 2), so that a damaged step is a damaged record.
uint32_t record_crc_start(int version, uint32_t bytes, int64_t step) {
  if (version < 2) return 0;
  char fields[12];
  std::memcpy(fields, &bytes, 4);
  std::memcpy(fields + 4, &step, 8);
  return crc32_update(0, fields, sizeof fields);
}

// A recording opened for reading in place: a regular file (symlinks followed; opened
// non-blocking, so a FIFO never hangs), its size taken once.
class RecordingFile {
 public:
  explicit RecordingFile(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd_ < 0) throw Error("cannot read " + path + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd_);
      throw Error("cannot read " + path + ": not a regular file (a view recording is one)");
    }
    size_ = static_cast<uint64_t>(st.st_size);
  }
  ~RecordingFile() { ::close(fd_); }
  RecordingFile(const RecordingFile&) = delete;
  RecordingFile& operator=(const RecordingFile&) = delete;
  uint64_t size() const { return size_; }
  // Exactly n bytes at offset, or false.
  bool read(uint64_t offset, void* out, size_t n) const {
    auto* p = static_cast<char*>(out);
    size_t got = 0;
    while (got < n) {
      const ssize_t r = ::pread(fd_, p + got, n - got, static_cast<off_t>(offset + got));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      got += static_cast<size_t>(r);
    }
    return true;
  }
  std::string bytes(uint64_t offset, uint64_t n) const {
    std::string s(static_cast<size_t>(n), '\0');
    if (n && !read(offset, &s[0], s.size()))
      throw Error("cannot read " + path_ + ": it changed while it was read");
    return s;
  }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Parses the file header: version, identity, header bytes. A file shorter than its magic that
// begins like one was torn while its header was written: version 0.
void read_file_header(const RecordingFile& f, const std::string& path, ViewFile* out) {
  out->size = f.size();
  if (f.size() > kMaxViewFileBytes)
    throw Error(path + " is " + std::to_string(f.size()) +
                " bytes, over attnlab's limit of 1 GiB for a view recording (it keeps its own "
                "under 64 MiB): move it away");
  char magic[kFileMagicBytes] = {};
  const size_t have = static_cast<size_t>(std::min<uint64_t>(f.size(), kFileMagicBytes));
  if (have && !f.read(0, magic, have)) throw Error("cannot read " + path);
  const bool v1 = std::memcmp(magic, kMagicV1, have) == 0;
  const bool v2 = std::memcmp(magic, kMagicV2, have) == 0;
  if (!v1 && !v2)
    throw Error(path + " is not an attnlab view recording (its first bytes are not \"" +
                std::string(kMagicV2, kFileMagicBytes - 1) + "\")");
  if (have < kFileMagicBytes) return;  // torn while its header was written
  if (v1) {
    out->version = 1;
    out->header.assign(kMagicV1, kFileMagicBytes);
    out->good_bytes = kFileMagicBytes;
    return;
  }
  uint32_t n = 0, crc = 0;
  const bool whole = f.read(kFileMagicBytes, &n, 4) && n <= kMaxIdentityBytes &&
                     kFileMagicBytes + 8 + uint64_t(n) <= f.size() &&
                     f.read(kFileMagicBytes + 4 + n, &crc, 4);
  const std::string identity = whole ? f.bytes(kFileMagicBytes + 4, n) : "";
  if (!whole || crc32(identity.data(), identity.size()) != crc)
    throw Error(path +
                ": the file's header (the identity of the run that recorded it) is "
                "damaged, so its records cannot be told to be this run's: move it away");
  try {
    const json j = json::parse(identity);
    out->run_id = j.at("run_id").get<std::string>();
    out->run_dir = j.at("run").get<std::string>();
  } catch (const json::exception&) {
    throw Error(path + ": the file's header names no run");
  }
  out->version = 2;
  out->header.assign(kMagicV2, kFileMagicBytes);
  out->header += f.bytes(kFileMagicBytes, 4 + uint64_t(n) + 4);
  out->good_bytes = out->header.size();
}

// Finds the records of f from `at` on (see the contract): valid ones go to *index, skipped
// bytes to *damaged; returns where the last valid record ends.
class RecordScanner {
 public:
  RecordScanner(const RecordingFile& f, int version)
      : f_(f), version_(version), budget_(4 * f.size() + (uint64_t(64) << 20)) {}

  uint64_t scan(uint64_t at, std::vector<ViewIndexEntry>* index,
                std::vector<ViewByteRange>* damaged) {
    int64_t last = index->empty() ? -1 : index->back().step;
    while (at + kHeaderBytes <= f_.size()) {
      ViewIndexEntry e;
      if (!valid_at(at, last, &e, false)) {
        const uint64_t next = next_valid(at + 1, last);
        if (next == kNone) break;  // the tail: torn, or being written
        if (damaged) damaged->push_back({at, next, last});
        at = next;
        continue;
      }
      index->push_back(e);
      last = e.step;
      at += kHeaderBytes + e.bytes;
    }
    return at;
  }

 private:
  static constexpr uint64_t kNone = ~uint64_t(0);

  bool valid_at(uint64_t at, int64_t last, ViewIndexEntry* e, bool searching) {
    uint32_t h[5];
    if (at + kHeaderBytes > f_.size() || !f_.read(at, h, kHeaderBytes)) return false;
    uint32_t magic = h[0], bytes = h[1], crc = h[4];
    int64_t step;
    std::memcpy(&step, &h[2], 8);
    if (magic != kRecordMagic || bytes > kMaxViewPayload || step < 0 || step <= last) return false;
    if (at + kHeaderBytes + bytes > f_.size()) return false;
    if (searching) {
      if (budget_ < bytes) return false;
      budget_ -= bytes;
    }
    uint32_t c = record_crc_start(version_, bytes, step);
    buffer_.resize(std::min<size_t>(kChunk, std::max<size_t>(bytes, 1)));
    for (uint64_t done = 0; done < bytes;) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(buffer_.size(), bytes - done));
      if (!f_.read(at + kHeaderBytes + done, buffer_.data(), n)) return false;
      c = crc32_update(c, buffer_.data(), n);
      done += n;
    }
    if (c != crc) return false;
    *e = {step, at, bytes, version_};
    return true;
  }

  // The offset of the next valid record at or after `from`, or kNone.
  uint64_t next_valid(uint64_t from, int64_t last) {
    const char magic[4] = {'V', 'R', 'E', 'C'};
    std::vector<char> chunk;
    for (uint64_t base = from; base + 4 <= f_.size() && budget_ > 0;) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, f_.size() - base));
      chunk.resize(n);
      if (!f_.read(base, chunk.data(), n)) return kNone;
      budget_ -= std::min<uint64_t>(budget_, n);
      for (size_t i = 0; i + 4 <= n; ++i) {
        if (std::memcmp(&chunk[i], magic, 4) != 0) continue;
        ViewIndexEntry e;
        if (valid_at(base + i, last, &e, true)) return base + i;
      }
      if (base + n >= f_.size()) break;
      base += n - 3;  // a magic across the chunk's end is found in the next
    }
    return kNone;
  }

  const RecordingFile& f_;
  int version_;
  uint64_t budget_;
  std::vector<char> buffer_;
};

}  // namespace

ViewFile scan_view_file(const std::string& path) {
  ViewFile out;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) && !std::filesystem::is_symlink(path, ec)) return out;
  const RecordingFile f(path);
  read_file_header(f, path, &out);
  if (out.version == 0) return out;
  RecordScanner scanner(f, out.version);
  out.good_bytes = scanner.scan(out.header.size(), &out.records, &out.damaged);
  return out;
}

void check_view_owner(const ViewFile& file, const std::string& path, const ViewRun& run) {
  if (file.version < 2 || file.run_id == run.run_id) return;
  throw Error(path + " was recorded by another run (" + file.run_dir + ", run id " + file.run_id +
              ") than " + run.dir +
              (run.run_id.empty() ? " (which has no run id)" : " (run id " + run.run_id + ")") +
              ": a recording copied from another run is not shown as this run's; move it away, "
              "or open the run it came from");
}

std::vector<ViewIndexEntry> index_view_records(const std::string& path, uint64_t* good_bytes) {
  ViewFile f = scan_view_file(path);
  if (good_bytes) *good_bytes = f.good_bytes;
  return std::move(f.records);
}

std::vector<ViewIndexEntry> index_view_records(const std::string& path, const ViewRun& run,
                                               uint64_t* good_bytes) {
  ViewFile f = scan_view_file(path);
  check_view_owner(f, path, run);
  if (good_bytes) *good_bytes = f.good_bytes;
  return std::move(f.records);
}

bool extend_view_index(const std::string& path, std::vector<ViewIndexEntry>* index,
                       uint64_t* good_bytes) {
  const RecordingFile f(path);
  ViewFile head;
  read_file_header(f, path, &head);
  if (head.version == 0) return false;
  if (*good_bytes < head.header.size()) {
    RecordScanner scanner(f, head.version);
    index->clear();
    *good_bytes = scanner.scan(head.header.size(), index, nullptr);
    return !index->empty();
  }
  const size_t before = index->size();
  RecordScanner scanner(f, head.version);
  *good_bytes = scanner.scan(*good_bytes, index, nullptr);
  return index->size() != before;
}

ViewRecord read_view_record(const std::string& path, const ViewIndexEntry& e,
                            const ViewShape& shape) {
  const std::string where = path + ": the record at step " + std::to_string(e.step);
  if (e.bytes > kMaxViewPayload) throw Error(where + " is over the record limit");
  const RecordingFile f(path);
  uint32_t h[5] = {};
  int64_t step = -1;
  std::string payload;
  if (e.offset + kHeaderBytes + e.bytes <= f.size() && f.read(e.offset, h, kHeaderBytes)) {
    std::memcpy(&step, &h[2], 8);
    if (h[0] == kRecordMagic && h[1] == e.bytes && step == e.step) {
      payload.resize(e.bytes);
      if (e.bytes && !f.read(e.offset + kHeaderBytes, &payload[0], e.bytes)) payload.clear();
    }
  }
  if (payload.size() != e.bytes || h[1] != e.bytes || step != e.step ||
      crc32_update(record_crc_start(e.version, e.bytes, e.step), payload.data(), payload.size()) !=
          h[4])
    throw Error(where +
                " changed or was cut since the file was indexed (a writer thinned it: read the "
                "index again)");
  try {
    ViewRecord r = decode_view_record(payload, shape);
    if (r.step != e.step) throw Error("the record says step " + std::to_string(r.step));
    return r;
  } catch (const Error& err) {
    std::string why = err.what();
    if (why.rfind("views.rec: ", 0) == 0) why = why.substr(11);
    if (why.rfind("the record ", 0) == 0) throw Error(where + " " + why.substr(11));
    throw Error(where + ": " + why);
  }
}

const ViewIndexEntry& view_record_at(const std::vector<ViewIndexEntry>& index, int64_t step) {
  if (index.empty()) throw Error("the run has no recorded views (no timeline)");
  if (step < 0) return index.back();
  auto it = std::upper_bound(index.begin(), index.end(), step,
                             [](int64_t s, const ViewIndexEntry& e) { return s < e.step; });
  if (it == index.begin())
    throw Error("step " + std::to_string(step) + " is before the first recorded step, " +
                std::to_string(index.front().step));
  return *(it - 1);
}

std::vector<size_t> thin_steps(const std::vector<int64_t>& steps, size_t keep) {
  const size_t n = steps.size();
  std::vector<size_t> out;
  if (n <= keep || n <= 2) {
    for (size_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  keep = std::max<size_t>(keep, 2);
  std::vector<bool> chosen(n, false);
  chosen[0] = chosen[n - 1] = true;
  size_t count = 2;
  const double first = static_cast<double>(steps.front()), last = static_cast<double>(steps.back());
  const double span = std::max(1.0, last - first);
  // Targets: log-spaced (early training, where heads form, gets most) and linear-spaced (the
  // rest of the run), interleaved so that any prefix of them spreads over both.
  const size_t inner = keep - 2;
  std::vector<double> targets;
  const size_t half = (inner + 1) / 2;
  for (size_t k = 1; k <= inner; ++k) {
    const size_t i = (k + 1) / 2;
    const double u = static_cast<double>(i) / (half + 1);
    targets.push_back(k % 2 == 1 ? first + std::expm1(u * std::log1p(span))  // log
                                 : first + u * span);                        // linear
  }
  for (double t : targets) {
    if (count >= keep) break;
    // The nearest record not yet chosen (either side).
    size_t j = static_cast<size_t>(
        std::lower_bound(steps.begin(), steps.end(), static_cast<int64_t>(std::llround(t))) -
        steps.begin());
    size_t best = n;
    double best_d = 0;
    for (size_t d = 0; d < n && best == n; ++d) {
      for (const size_t c : {j >= d ? j - d : n, j + d}) {
        if (c >= n || chosen[c]) continue;
        const double dist = std::abs(static_cast<double>(steps[c]) - t);
        if (best == n || dist < best_d) best = c, best_d = dist;
      }
    }
    if (best == n) break;
    chosen[best] = true;
    ++count;
  }
  for (size_t i = 0; i < n; ++i)
    if (chosen[i]) out.push_back(i);
  return out;
}

namespace {

// "<path>.<kind>-<n>" for the first n from 1 that names nothing yet: never over a file.
std::string free_sibling(const std::string& path, const char* kind) {
  for (int n = 1;; ++n) {
    const std::string p = path + "." + kind + "-" + std::to_string(n);
    std::error_code ec;
    if (!std::filesystem::exists(std::filesystem::symlink_status(p, ec))) return p;
  }
}

std::string file_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// The file header of a new version-2 recording of `run`.
std::string new_header(const ViewRun& run) {
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::absolute(run.dir, ec);
  const std::string identity =
      json{{"run_id", run.run_id}, {"run", ec ? run.dir : dir.string()}}.dump();
  std::string h(kMagicV2, kFileMagicBytes);
  const uint32_t n = static_cast<uint32_t>(identity.size());
  const uint32_t crc = crc32(identity.data(), identity.size());
  h.append(reinterpret_cast<const char*>(&n), 4);
  h += identity;
  h.append(reinterpret_cast<const char*>(&crc), 4);
  return h;
}

}  // namespace

ViewRecordingPlan plan_view_recording(const std::string& path, const ViewRun& run,
                                      int64_t from_step) {
  ViewRecordingPlan plan{path, run, scan_view_file(path), from_step};
  check_view_owner(plan.file, path, run);
  // Every record this run will keep recording after must be of its model (a version-1 file
  // has no identity: its shape is all there is to check).
  for (const ViewIndexEntry& e : plan.file.records) read_view_record(path, e, run.shape);
  return plan;
}

ViewRecorder::ViewRecorder(const std::string& path, const ViewRun& run, uint64_t budget_bytes)
    : ViewRecorder(plan_view_recording(path, run), budget_bytes) {}

ViewRecorder::ViewRecorder(ViewRecordingPlan plan, uint64_t budget_bytes)
    : path_(plan.path),
      budget_(std::max<uint64_t>(std::min(budget_bytes, kMaxViewFileBytes / 2), 4096)) {
  ViewFile& f = plan.file;
  if (f.version == 0) {  // none yet (or torn while its header was written): this run's
    header_ = new_header(plan.run);
    write_file_atomic(path_, header_);
    version_ = 2;
    size_ = header_.size();
    reopen();
    return;
  }
  header_ = f.header;
  version_ = f.version;
  index_ = f.records;
  size_ = f.size;
  // Bytes that are no record (damage, a torn tail) go beside the file, never away.
  std::vector<ViewByteRange> aside = f.damaged;
  if (f.good_bytes < f.size)
    aside.push_back({f.good_bytes, f.size, index_.empty() ? -1 : index_.back().step});
  if (!aside.empty()) {
    const RecordingFile in(path_);
    for (const ViewByteRange& r : aside) {
      const std::string to = free_sibling(path_, "damaged");
      write_file_atomic(to, in.bytes(r.begin, r.end - r.begin));
      notes_.push_back(
          path_ + ": " + std::to_string(r.end - r.begin) + " bytes that are no valid record (" +
          (r.end == f.size ? "a torn end" : "damaged") +
          (r.after_step < 0 ? ", before the first record"
                            : ", after the record at step " + std::to_string(r.after_step)) +
          ") moved to " + file_name(to));
    }
  }
  std::vector<size_t> keep, later;
  for (size_t i = 0; i < index_.size(); ++i)
    (index_[i].step < plan.from_step ? keep : later).push_back(i);
  if (!later.empty())
    set_aside(later, "superseded",
              "after the checkpoint's step " + std::to_string(plan.from_step) +
                  ": the resumed run records those steps again");
  if (!aside.empty() && later.empty()) rewrite(keep);  // set_aside rewrote it otherwise
  if (fd_ < 0) reopen();
}

ViewRecorder::~ViewRecorder() {
  if (fd_ >= 0) ::close(fd_);
}

void ViewRecorder::reopen() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd_ < 0) throw Error("cannot append to " + path_ + ": " + std::strerror(errno));
}

void ViewRecorder::set_aside(const std::vector<size_t>& records, const char* kind,
                             const std::string& why) {
  std::string out = header_;
  std::vector<size_t> keep;
  {
    const RecordingFile in(path_);
    size_t r = 0;
    for (size_t i = 0; i < index_.size(); ++i) {
      if (r < records.size() && records[r] == i) {
        const ViewIndexEntry& e = index_[i];
        out += in.bytes(e.offset, kHeaderBytes + e.bytes);
        ++r;
      } else {
        keep.push_back(i);
      }
    }
  }
  const std::string to = free_sibling(path_, kind);
  write_file_atomic(to, out);  // first: the records exist twice, never nowhere
  notes_.push_back(
      path_ + ": the records at steps " + std::to_string(index_[records.front()].step) +
      (records.size() > 1 ? " to " + std::to_string(index_[records.back()].step) : "") + " (" +
      why + ") moved to " + file_name(to));
  rewrite(keep);
}

void ViewRecorder::append(const ViewRecord& record) {
  if (!index_.empty() && record.step <= index_.back().step) {  // resumed from an earlier step
    std::vector<size_t> later;
    for (size_t i = 0; i < index_.size(); ++i)
      if (index_[i].step >= record.step) later.push_back(i);
    set_aside(later, "superseded",
              "at or after step " + std::to_string(record.step) + ", which the run records again");
  }
  const std::string payload = encode_view_record(record);
  if (payload.size() > kMaxViewPayload) throw Error(path_ + ": a view record over 512 MiB");
  const uint32_t bytes = static_cast<uint32_t>(payload.size());
  const uint32_t crc =
      crc32_update(record_crc_start(version_, bytes, record.step), payload.data(), payload.size());
  const std::string data = header(bytes, record.step, crc) + payload;
  if (const int err = write_all(fd_, data.data(), data.size())) {
    const int cut = ::ftruncate(fd_, static_cast<off_t>(size_));  // best effort: whole records
    (void)cut;
    throw Error("cannot append to " + path_ + ": " + std::strerror(err));
  }
  index_.push_back({record.step, size_, bytes, version_});
  size_ += data.size();
  if (size_ <= budget_ || index_.size() <= 2) return;
  // Over budget: keep a spread filling half of it (by the mean record size).
  const uint64_t mean = (size_ - header_.size()) / index_.size();
  const size_t fit =
      static_cast<size_t>(std::max<uint64_t>(2, budget_ / 2 / std::max<uint64_t>(mean, 1)));
  std::vector<int64_t> steps;
  for (const auto& e : index_) steps.push_back(e.step);
  rewrite(thin_steps(steps, fit));
}

void ViewRecorder::sync() {
  if (::fsync(fd_) != 0 && errno != EINVAL)
    throw Error("cannot flush " + path_ + " to disk: " + std::strerror(errno));
}

void ViewRecorder::rewrite(const std::vector<size_t>& keep) {
  std::string out = header_;
  std::vector<ViewIndexEntry> index;
  {
    const RecordingFile in(path_);
    for (size_t i : keep) {
      const ViewIndexEntry& e = index_.at(i);
      if (e.offset + kHeaderBytes + e.bytes > in.size())
        throw Error(path_ + " was cut while recording (the record at step " +
                    std::to_string(e.step) + " is gone)");
      index.push_back({e.step, out.size(), e.bytes, e.version});
      out += in.bytes(e.offset, kHeaderBytes + e.bytes);
    }
  }
  write_file_atomic(path_, out);
  index_ = std::move(index);
  size_ = out.size();
  reopen();
}

}  // namespace attn
