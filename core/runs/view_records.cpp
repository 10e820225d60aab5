#include "core/runs/view_records.h"

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

#include "core/analysis/head_metrics.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/runs/run_files.h"

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

namespace {

// Counts a CBOR document's items without building it (nlohmann's SAX interface); stops past the
// limit.
struct ItemCounter {
  uint64_t items = 0;
  bool more() { return ++items <= kMaxViewRecordItems; }
  bool null() { return more(); }
  bool boolean(bool) { return more(); }
  bool number_integer(json::number_integer_t) { return more(); }
  bool number_unsigned(json::number_unsigned_t) { return more(); }
  bool number_float(json::number_float_t, const json::string_t&) { return more(); }
  bool string(json::string_t&) { return more(); }
  bool binary(json::binary_t&) { return more(); }
  bool start_object(std::size_t) { return more(); }
  bool key(json::string_t&) { return more(); }
  bool end_object() { return true; }
  bool start_array(std::size_t) { return more(); }
  bool end_array() { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    error = e.what();
    return false;
  }
  std::string error;
};

}  // namespace

ViewShape view_shape_of(const ExperimentConfig& c) {
  ViewShape s;
  const bool conn = c.model.architecture == "conn";
  s.layers = conn ? 0 : c.model.layers;
  s.heads = c.model.heads;
  // The longest input any task makes of these settings (a sequence of 4 x length, a context
  // window and its target, a 28 x 28 image in 1 x 1 patches), plus a classifier's CLS token.
  const int64_t t =
      std::max<int64_t>({int64_t(4) * std::max(c.task.length, 0), int64_t(c.task.context) + 1, 3,
                         c.task.name == "fashion-mnist" ? 28 * 28 : 0});
  s.max_tokens = static_cast<int>(std::min<int64_t>(t + 1, 1 << 20));
  s.conn_slots = conn ? c.model.conn.slots : 0;
  s.image = c.task.name == "fashion-mnist";
  s.max_classes =
      c.model.head == "classifier" ? (c.model.classes > 0 ? c.model.classes : 1 << 16) : 0;
  return s;
}

ViewRun view_run_of(const std::string& dir, const ExperimentConfig& config) {
  return {dir, run_identity(dir), view_shape_of(config)};
}

void check_view_record(const ViewRecord& r, const ViewShape& s) {
  auto refuse = [](const std::string& what) { throw Error("the record " + what); };
  auto count = [](int64_t n, const char* what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
  };
  if (r.layers != s.layers)
    refuse("states " + count(r.layers, "layer") + "; the run's model has " +
           std::to_string(s.layers) + " (model.layers)");
  if (r.heads != s.heads)
    refuse("states " + count(r.heads, "head") + "; the run's model has " + std::to_string(s.heads) +
           " (model.heads)");
  const size_t cells = static_cast<size_t>(s.layers) * static_cast<size_t>(s.heads);
  if (r.probe_tokens.size() > static_cast<size_t>(s.max_tokens))
    refuse("holds " + count(static_cast<int64_t>(r.probe_tokens.size()), "probe token") +
           "; the run's task gives at most " + std::to_string(s.max_tokens));
  for (const std::string& t : r.probe_tokens)
    if (t.size() > 4096) refuse("holds a probe token of " + std::to_string(t.size()) + " bytes");
  if (r.maps.size() > cells)
    refuse("holds " + count(static_cast<int64_t>(r.maps.size()), "map") + "; the run's " +
           std::to_string(s.layers) + " layers x " + std::to_string(s.heads) + " heads have " +
           std::to_string(cells));
  auto in_model = [&](int layer, int head, const char* what) {
    if (layer < 0 || layer >= s.layers || head < 0 || head >= s.heads)
      refuse(std::string("holds ") + what + " of layer " + std::to_string(layer) + ", head " +
             std::to_string(head) + "; the run's model has layers 0.." +
             std::to_string(s.layers - 1) + " and heads 0.." + std::to_string(s.heads - 1));
  };
  for (const AttentionMap& m : r.maps) {
    in_model(m.layer, m.head, "a map");
    if (m.size < 1 || m.size > s.max_tokens)
      refuse("holds a map of size " + std::to_string(m.size) + "; the run's probe is 1 to " +
             std::to_string(s.max_tokens) + " tokens");
  }
  if (r.connections.size() > static_cast<size_t>(s.layers))
    refuse("holds ky curves of " + std::to_string(r.connections.size()) +
           " layers; the run's model has " + std::to_string(s.layers));
  for (const ConnectionCurves& c : r.connections) {
    in_model(c.layer, 0, "ky curves");
    const size_t heads = static_cast<size_t>(std::max(c.heads, 0));
    const size_t window = static_cast<size_t>(std::max(c.window, 0));
    if (c.heads != s.heads || c.window < 1 || c.window > s.max_tokens || c.t.empty() ||
        c.t.size() > 4096 || c.g.size() != heads * c.t.size() ||
        c.slot_g.size() != heads * window || c.beta.size() != heads * window)
      refuse("holds ky curves of layer " + std::to_string(c.layer) + " for " +
             count(c.heads, "head") + " and a window of " + std::to_string(c.window) +
             " that its " + std::to_string(c.t.size()) + " samples and " +
             std::to_string(c.beta.size()) + " betas do not fit (the run's model has " +
             std::to_string(s.heads) + " heads)");
  }
  if (!r.image.empty() &&
      (!s.image || r.image.rows > 1024 || r.image.cols > 1024 || r.image.patch < 1))
    refuse("holds a probe image of " + std::to_string(r.image.rows) + " x " +
           std::to_string(r.image.cols) +
           (s.image ? " (at most 1024 x 1024)" : "; the run's task has no images"));
  if (r.probabilities.size() > static_cast<size_t>(s.max_classes))
    refuse("holds " + std::to_string(r.probabilities.size()) +
           " class probabilities; the run's model has " +
           (s.max_classes ? "at most " + std::to_string(s.max_classes) + " classes"
                          : std::string("no classifier head")));
  if (r.neural.size() > cells) refuse("holds more neural surfaces than the run's heads");
  for (const NeuralScoreSurface& n : r.neural) {
    in_model(n.layer, n.head, "a neural surface");
    if (n.grid > 1024 || n.slice_t.size() > 65536)
      refuse("holds a neural surface of grid " + std::to_string(n.grid) + " (at most 1024)");
  }
  if (!r.importance.empty() && (r.importance.layers != s.layers || r.importance.heads != s.heads))
    refuse("holds a head importance table of " + std::to_string(r.importance.layers) + " x " +
           std::to_string(r.importance.heads) + "; the run's model has " +
           std::to_string(s.layers) + " layers x " + std::to_string(s.heads) + " heads");
  if (!r.conn.empty() && r.conn.slots != s.conn_slots)
    refuse("holds C of " + std::to_string(r.conn.slots) + " slots; " +
           (s.conn_slots
                ? "the run's model has " + std::to_string(s.conn_slots) + " (model.conn.slots)"
                : std::string("the run's model is no Connection Transformer")));
  if (!r.conn.empty() && r.conn.eigen_re.size() > static_cast<size_t>(r.conn.slots))
    refuse("holds more eigenvalues than C has slots");
}

// Refuses a payload of more than kMaxViewRecordItems CBOR items, counted without building it:
// the decoded tree costs tens of bytes per item, whatever the payload's size.
static void check_item_count(const std::string& payload) {
  ItemCounter counter;
  bool counted = false;
  try {
    counted = json::sax_parse(payload, &counter, json::input_format_t::cbor);
  } catch (const std::exception& e) {
    throw Error(std::string("views.rec: a record is not valid CBOR: ") + e.what());
  }
  if (counter.items > kMaxViewRecordItems)
    throw Error("views.rec: a record of more than " + std::to_string(kMaxViewRecordItems) +
                " items (attnlab's limit; its own records hold a few per map)");
  if (!counted) throw Error("views.rec: a record is not valid CBOR: " + counter.error);
}

ViewRecord decode_view_record(const std::string& payload) {
  check_item_count(payload);
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
      if (a.size < 1)
        throw Error("views.rec: a map of size " + std::to_string(a.size) +
                    " (a map is at least 1 x 1)");
      if (a.weights.size() != static_cast<size_t>(a.size) * a.size)
        throw Error("views.rec: a map of size " + std::to_string(a.size) + " holds " +
                    std::to_string(a.weights.size()) + " weights, not " +
                    std::to_string(static_cast<size_t>(a.size) * a.size));
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

ViewRecord decode_view_record(const std::string& payload, const ViewShape& shape) {
  ViewRecord r = decode_view_record(payload);
  check_view_record(r, shape);
  return r;
}

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
