#include "core/runs/view_records.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/analysis/head_metrics.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/file_io.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "views.rec is written little-endian with memcpy: a big-endian host needs byte swaps"
#endif

namespace attn {
namespace {

using nlohmann::json;

constexpr char kFileMagic[] = "ATTNVIEWS1\n";
constexpr size_t kFileMagicBytes = sizeof kFileMagic - 1;
constexpr uint32_t kRecordMagic = 0x43455256;  // "VREC"
constexpr size_t kHeaderBytes = 4 + 4 + 8 + 4;
constexpr uint32_t kMaxPayload = uint32_t(1) << 30;

uint32_t crc32(const void* data, size_t n) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

json floats(const std::vector<float>& v) {
  std::vector<uint8_t> bytes(v.size() * sizeof(float));
  if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
  return json::binary(std::move(bytes));
}

std::vector<float> floats_of(const json& j, const char* what) {
  if (!j.is_binary() || j.get_binary().size() % sizeof(float) != 0)
    throw Error(std::string("views.rec: ") + what + " is not an array of float32");
  const auto& b = j.get_binary();
  std::vector<float> v(b.size() / sizeof(float));
  if (!v.empty()) std::memcpy(v.data(), b.data(), b.size());
  return v;
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

std::vector<HeadMetric> head_metrics(const ViewRecord& r) {
  std::vector<HeadMetric> out;
  const bool labelled = r.probe_tokens.size() > 0;
  for (const AttentionMap& m : r.maps) {
    auto add = [&](const char* name, double v) {
      out.push_back({r.step, m.layer, m.head, name, v});
    };
    add("entropy", map_entropy(m.weights, m.size));
    add("diagonal", map_diagonal(m.weights, m.size));
    add("previous_token", map_previous_token(m.weights, m.size));
    const size_t index = static_cast<size_t>(&m - r.maps.data());
    if (r.induction.size() == r.maps.size())
      add("induction", r.induction[index]);
    else if (labelled && r.probe_tokens.size() == static_cast<size_t>(m.size))
      add("induction", map_induction(m.weights, m.size, r.probe_tokens));
  }
  for (const ConnectionCurves& c : r.connections)
    for (int h = 0; h < c.heads; ++h)
      if (c.beta.size() >= static_cast<size_t>(c.heads) * c.window)
        out.push_back({r.step, c.layer, h, "effective_window",
                       static_cast<double>(effective_window(c.beta_values(h), c.window))});
  if (!r.conn.empty()) out.push_back({r.step, -1, -1, "spectral_radius", r.conn.spectral_radius});
  return out;
}

std::string encode_view_record(const ViewRecord& r) {
  json maps = json::array();
  for (const AttentionMap& m : r.maps)
    maps.push_back(
        {{"layer", m.layer}, {"head", m.head}, {"size", m.size}, {"w", floats(m.weights)}});
  json ky = json::array();
  for (const ConnectionCurves& c : r.connections)
    ky.push_back({{"layer", c.layer},
                  {"heads", c.heads},
                  {"window", c.window},
                  {"query_slot", c.query_slot},
                  {"causal", c.causal},
                  {"edges", c.edges},
                  {"t", floats(c.t)},
                  {"g", floats(c.g)},
                  {"slot_g", floats(c.slot_g)},
                  {"beta", floats(c.beta)}});
  json j = {{"step", r.step},     {"tokens", r.probe_tokens},
            {"layers", r.layers}, {"heads", r.heads},
            {"maps", maps},       {"ky", ky}};
  if (!r.image.empty())
    j["image"] = {{"rows", r.image.rows},
                  {"cols", r.image.cols},
                  {"patch", r.image.patch},
                  {"index", r.image.index},
                  {"label", r.image.label},
                  {"label_name", r.image.label_name},
                  {"pixels", floats(r.image.pixels)}};
  if (!r.probabilities.empty()) j["probs"] = floats(r.probabilities);
  if (!r.induction.empty()) j["induction"] = floats(r.induction);
  if (!r.neural.empty()) {
    json list = json::array();
    for (const NeuralScoreSurface& n : r.neural)
      list.push_back({{"layer", n.layer},
                      {"head", n.head},
                      {"grid", n.grid},
                      {"xs", floats(n.xs)},
                      {"ys", floats(n.ys)},
                      {"z", floats(n.learned)},
                      {"qx", n.query_x},
                      {"qy", n.query_y},
                      {"angle", n.key_angle},
                      {"t", floats(n.slice_t)},
                      {"slice", floats(n.slice_learned)}});
    j["neural"] = std::move(list);
  }
  if (!r.importance.empty()) {
    const ImportanceTable& t = r.importance;
    j["importance"] = {{"mode", ablation_mode_name(t.mode)},
                       {"batches", t.batches},
                       {"layers", t.layers},
                       {"heads", t.heads},
                       {"base_loss", t.baseline.loss},
                       {"base_acc", t.baseline.accuracy},
                       {"loss", floats(t.loss)},
                       {"acc", floats(t.accuracy)}};
  }
  if (!r.conn.empty())
    j["conn"] = {{"slots", r.conn.slots},
                 {"c", floats(r.conn.matrix)},
                 {"eig_re", floats(r.conn.eigen_re)},
                 {"eig_im", floats(r.conn.eigen_im)},
                 {"rho", r.conn.spectral_radius},
                 {"norm", r.conn.spectral_norm}};
  const std::vector<uint8_t> cbor = json::to_cbor(j);
  return std::string(cbor.begin(), cbor.end());
}

ViewRecord decode_view_record(const std::string& payload) {
  json j;
  try {
    j = json::from_cbor(payload);
  } catch (const std::exception& e) {
    throw Error(std::string("views.rec: a record is not valid CBOR: ") + e.what());
  }
  ViewRecord r;
  try {
    r.step = j.at("step").get<int64_t>();
    r.probe_tokens = j.at("tokens").get<std::vector<std::string>>();
    r.layers = j.at("layers").get<int>();
    r.heads = j.at("heads").get<int>();
    for (const json& m : j.at("maps")) {
      AttentionMap a;
      a.layer = m.at("layer").get<int>();
      a.head = m.at("head").get<int>();
      a.size = m.at("size").get<int>();
      a.weights = floats_of(m.at("w"), "a map's weights");
      if (a.size < 0 || a.weights.size() != static_cast<size_t>(a.size) * a.size)
        throw Error("views.rec: a map of size " + std::to_string(a.size) + " holds " +
                    std::to_string(a.weights.size()) + " weights");
      r.maps.push_back(std::move(a));
    }
    for (const json& k : j.at("ky")) {
      ConnectionCurves c;
      c.layer = k.at("layer").get<int>();
      c.heads = k.at("heads").get<int>();
      c.window = k.at("window").get<int>();
      c.query_slot = k.at("query_slot").get<int>();
      c.causal = k.at("causal").get<bool>();
      c.edges = k.at("edges").get<std::string>();
      c.t = floats_of(k.at("t"), "t");
      c.g = floats_of(k.at("g"), "g");
      c.slot_g = floats_of(k.at("slot_g"), "slot_g");
      c.beta = floats_of(k.at("beta"), "beta");
      r.connections.push_back(std::move(c));
    }
    if (j.contains("image")) {
      const json& m = j.at("image");
      ProbeImage& im = r.image;
      im.rows = m.at("rows").get<int>();
      im.cols = m.at("cols").get<int>();
      im.patch = m.at("patch").get<int>();
      im.index = m.at("index").get<int>();
      im.label = m.at("label").get<int>();
      im.label_name = m.at("label_name").get<std::string>();
      im.pixels = floats_of(m.at("pixels"), "the probe image");
      if (im.rows <= 0 || im.cols <= 0 || im.pixels.size() != size_t(im.rows) * size_t(im.cols))
        throw Error("views.rec: a probe image of " + std::to_string(im.rows) + " x " +
                    std::to_string(im.cols) + " holds " + std::to_string(im.pixels.size()) +
                    " pixels");
    }
    if (j.contains("probs")) r.probabilities = floats_of(j.at("probs"), "the class probabilities");
    if (j.contains("induction")) {
      r.induction = floats_of(j.at("induction"), "the induction scores");
      if (r.induction.size() != r.maps.size())
        throw Error("views.rec: " + std::to_string(r.induction.size()) + " induction scores for " +
                    std::to_string(r.maps.size()) + " maps");
    }
    if (j.contains("neural")) {
      for (const json& e : j.at("neural")) {
        NeuralScoreSurface n;
        n.available = true;
        n.layer = e.at("layer").get<int>();
        n.head = e.at("head").get<int>();
        n.grid = e.at("grid").get<int>();
        n.xs = floats_of(e.at("xs"), "a neural surface's x");
        n.ys = floats_of(e.at("ys"), "a neural surface's y");
        n.learned = floats_of(e.at("z"), "a neural surface");
        n.query_x = e.at("qx").get<float>();
        n.query_y = e.at("qy").get<float>();
        n.key_angle = e.at("angle").get<float>();
        n.slice_t = floats_of(e.at("t"), "a neural slice's t");
        n.slice_learned = floats_of(e.at("slice"), "a neural slice");
        const size_t g = static_cast<size_t>(std::max(n.grid, 0));
        if (n.grid < 2 || n.xs.size() != g || n.ys.size() != g || n.learned.size() != g * g ||
            n.slice_t.size() != n.slice_learned.size())
          throw Error("views.rec: a neural surface of grid " + std::to_string(n.grid) + " holds " +
                      std::to_string(n.learned.size()) + " values");
        // The references are formulas of the coordinates: recomputed, not stored.
        n.paraboloid.resize(g * g);
        for (size_t r = 0; r < g; ++r)
          for (size_t c = 0; c < g; ++c)
            n.paraboloid[r * g + c] = n.xs[c] * n.xs[c] + n.ys[r] * n.ys[r];
        const float ux = std::cos(n.key_angle), uy = std::sin(n.key_angle);
        for (const float t : n.slice_t)
          n.slice_dot.push_back(n.query_x * t * ux + n.query_y * t * uy);
        r.neural.push_back(std::move(n));
      }
    }
    if (j.contains("importance")) {
      const json& e = j.at("importance");
      ImportanceTable& t = r.importance;
      t.step = r.step;
      t.mode = parse_ablation_mode(e.at("mode").get<std::string>(), "views.rec: importance mode");
      t.batches = e.at("batches").get<int>();
      t.layers = e.at("layers").get<int>();
      t.heads = e.at("heads").get<int>();
      t.baseline = {e.at("base_loss").get<double>(), e.at("base_acc").get<double>()};
      t.loss = floats_of(e.at("loss"), "the head importance losses");
      t.accuracy = floats_of(e.at("acc"), "the head importance accuracies");
      const size_t cells = static_cast<size_t>(std::max(t.layers, 0)) * std::max(t.heads, 0);
      if (t.layers <= 0 || t.heads <= 0 || t.loss.size() != cells || t.accuracy.size() != cells)
        throw Error("views.rec: a head importance table of " + std::to_string(t.layers) + " x " +
                    std::to_string(t.heads) + " holds " + std::to_string(t.loss.size()) +
                    " values");
    }
    if (j.contains("conn")) {
      const json& c = j.at("conn");
      r.conn.slots = c.at("slots").get<int>();
      r.conn.matrix = floats_of(c.at("c"), "C");
      r.conn.eigen_re = floats_of(c.at("eig_re"), "the eigenvalues");
      r.conn.eigen_im = floats_of(c.at("eig_im"), "the eigenvalues");
      r.conn.spectral_radius = c.at("rho").get<double>();
      r.conn.spectral_norm = c.at("norm").get<double>();
      const size_t n = static_cast<size_t>(std::max(r.conn.slots, 0));
      if (r.conn.slots <= 0 || r.conn.matrix.size() != n * n ||
          r.conn.eigen_re.size() != r.conn.eigen_im.size())
        throw Error("views.rec: a conn record of " + std::to_string(r.conn.slots) +
                    " slots holds " + std::to_string(r.conn.matrix.size()) + " entries of C");
    }
  } catch (const json::exception& e) {
    throw Error(std::string("views.rec: a record lacks a field or has the wrong type: ") +
                e.what());
  }
  return r;
}

namespace {

// Appends the whole, valid records of data (the file's bytes from `base` on) to *index, after
// the ones it holds; returns the file offset where the last whole record ends.
uint64_t scan_records(const std::string& data, uint64_t base, std::vector<ViewIndexEntry>* index) {
  uint64_t at = 0;
  int64_t last_step = index->empty() ? INT64_MIN : index->back().step;
  while (at + kHeaderBytes <= data.size()) {
    uint32_t magic, bytes, crc;
    int64_t step;
    std::memcpy(&magic, &data[at], 4);
    std::memcpy(&bytes, &data[at + 4], 4);
    std::memcpy(&step, &data[at + 8], 8);
    std::memcpy(&crc, &data[at + 16], 4);
    if (magic != kRecordMagic || bytes > kMaxPayload) break;
    if (at + kHeaderBytes + bytes > data.size()) break;  // torn
    if (crc32(&data[at + kHeaderBytes], bytes) != crc || step <= last_step) break;
    index->push_back({step, base + at, bytes});
    last_step = step;
    at += kHeaderBytes + bytes;
  }
  return base + at;
}

}  // namespace

std::vector<ViewIndexEntry> index_view_records(const std::string& path, uint64_t* good_bytes) {
  std::vector<ViewIndexEntry> index;
  if (good_bytes) *good_bytes = 0;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return index;
  const std::string data = read_regular_file(path, uint64_t(1) << 34);
  if (data.size() < kFileMagicBytes) return index;  // torn while its header was written
  if (data.compare(0, kFileMagicBytes, kFileMagic) != 0)
    throw Error(path + " is not an attnlab view recording (its first bytes are not \"" +
                std::string(kFileMagic, kFileMagicBytes - 1) + "\")");
  const uint64_t end = scan_records(data.substr(kFileMagicBytes), kFileMagicBytes, &index);
  if (good_bytes) *good_bytes = end;
  return index;
}

bool extend_view_index(const std::string& path, std::vector<ViewIndexEntry>* index,
                       uint64_t* good_bytes) {
  if (*good_bytes < kFileMagicBytes) {
    *index = index_view_records(path, good_bytes);
    return !index->empty();
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot read " + path + ": " + std::strerror(errno));
  std::string data;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(*good_bytes + data.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  const size_t before = index->size();
  *good_bytes = scan_records(data, *good_bytes, index);
  return index->size() != before;
}

ViewRecord read_view_record(const std::string& path, const ViewIndexEntry& e) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot read " + path + ": " + std::strerror(errno));
  std::string data(kHeaderBytes + e.bytes, '\0');
  size_t got = 0;
  while (got < data.size()) {
    const ssize_t n =
        ::pread(fd, &data[got], data.size() - got, static_cast<off_t>(e.offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  uint32_t bytes = 0, crc = 0;
  int64_t step = 0;
  if (got == data.size()) {
    std::memcpy(&bytes, &data[4], 4);
    std::memcpy(&step, &data[8], 8);
    std::memcpy(&crc, &data[16], 4);
  }
  if (got != data.size() || bytes != e.bytes || step != e.step ||
      crc32(&data[kHeaderBytes], e.bytes) != crc)
    throw Error(path + ": the record at step " + std::to_string(e.step) +
                " changed or was cut since the file was indexed (a writer thinned it: read the "
                "index again)");
  ViewRecord r = decode_view_record(data.substr(kHeaderBytes));
  if (r.step != e.step)
    throw Error(path + ": the record indexed at step " + std::to_string(e.step) + " says step " +
                std::to_string(r.step));
  return r;
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

ViewRecorder::ViewRecorder(const std::string& path, uint64_t budget_bytes)
    : path_(path), budget_(std::max<uint64_t>(budget_bytes, 4096)) {
  uint64_t good = 0;
  index_ = index_view_records(path_, &good);
  std::error_code ec;
  if (!std::filesystem::exists(path_, ec) || good < kFileMagicBytes) {
    write_file_atomic(path_, std::string(kFileMagic, kFileMagicBytes));
    good = kFileMagicBytes;
  }
  reopen();
  if (static_cast<uint64_t>(::lseek(fd_, 0, SEEK_END)) != good &&
      ::ftruncate(fd_, static_cast<off_t>(good)) != 0)  // a torn tail from a killed writer
    throw Error("cannot cut the torn end of " + path_ + ": " + std::strerror(errno));
  size_ = good;
}

ViewRecorder::~ViewRecorder() {
  if (fd_ >= 0) ::close(fd_);
}

void ViewRecorder::reopen() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd_ < 0) throw Error("cannot append to " + path_ + ": " + std::strerror(errno));
}

void ViewRecorder::append(const ViewRecord& record) {
  if (!index_.empty() && record.step <= index_.back().step) {  // resumed from an earlier step
    std::vector<size_t> keep;
    for (size_t i = 0; i < index_.size() && index_[i].step < record.step; ++i) keep.push_back(i);
    rewrite(keep);
  }
  const std::string payload = encode_view_record(record);
  if (payload.size() > kMaxPayload) throw Error(path_ + ": a view record over 1 GiB");
  const uint32_t bytes = static_cast<uint32_t>(payload.size());
  const std::string data =
      header(bytes, record.step, crc32(payload.data(), payload.size())) + payload;
  if (const int err = write_all(fd_, data.data(), data.size())) {
    const int cut = ::ftruncate(fd_, static_cast<off_t>(size_));  // best effort: whole records
    (void)cut;
    throw Error("cannot append to " + path_ + ": " + std::strerror(err));
  }
  index_.push_back({record.step, size_, bytes});
  size_ += data.size();
  if (size_ <= budget_ || index_.size() <= 2) return;
  // Over budget: keep a spread filling half of it (by the mean record size).
  const uint64_t mean = (size_ - kFileMagicBytes) / index_.size();
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
  const std::string data = read_regular_file(path_, uint64_t(1) << 34);
  std::string out(kFileMagic, kFileMagicBytes);
  std::vector<ViewIndexEntry> index;
  for (size_t i : keep) {
    const ViewIndexEntry& e = index_.at(i);
    if (e.offset + kHeaderBytes + e.bytes > data.size())
      throw Error(path_ + " was cut while recording (the record at step " + std::to_string(e.step) +
                  " is gone)");
    index.push_back({e.step, out.size(), e.bytes});
    out.append(data, e.offset, kHeaderBytes + e.bytes);
  }
  write_file_atomic(path_, out);
  index_ = std::move(index);
  size_ = out.size();
  reopen();
}

}  // namespace attn
