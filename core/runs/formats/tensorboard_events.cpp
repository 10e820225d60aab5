#include "core/runs/formats/tensorboard_events.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/file_io.h"

namespace attn {
namespace fs = std::filesystem;

namespace {

constexpr const char* kEventFilePrefix = "events.out.tfevents.";
constexpr const char* kEventFileMark = ".attnlab";  // is_attnlab_event_file: the files we made

std::array<uint32_t, 256> crc32c_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[i] = c;
  }
  return t;
}

// Protobuf's wire format, the few pieces an Event needs.
void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void put_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_tag(std::string& out, int field, int wire_type) {
  put_varint(out, static_cast<uint64_t>(field) << 3 | static_cast<uint64_t>(wire_type));
}
void put_bytes(std::string& out, int field, const std::string& bytes) {  // wire type 2
  put_tag(out, field, 2);
  put_varint(out, bytes.size());
  out += bytes;
}
void put_double(std::string& out, int field, double v) {  // wire type 1
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  put_tag(out, field, 1);
  put_le(out, bits, 8);
}
void put_float(std::string& out, int field, float v) {  // wire type 5
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  put_tag(out, field, 5);
  put_le(out, bits, 4);
}

// Event{wall_time, step, summary{values}}.
std::string summary_event(double wall_time, int64_t step, const std::string& values) {
  std::string event;
  put_double(event, 1, wall_time);
  put_tag(event, 2, 0);
  put_varint(event, static_cast<uint64_t>(step));
  put_bytes(event, 5, values);  // Summary{value=1 ...}: `values` holds its field-1 entries
  return event;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells;
  size_t at = 0;
  while (true) {
    const size_t comma = line.find(',', at);
    cells.push_back(line.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) return cells;
    at = comma + 1;
  }
}

// One metrics.csv row in `columns` (the first is the step); throws naming `where`.
TensorBoardRow parse_metrics_row(std::string line, const std::vector<std::string>& columns,
                                 const std::string& where) {
  if (!line.empty() && line.back() == '\n') line.pop_back();
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const std::vector<std::string> cells = split_csv_line(line);
  auto bad = [&](const std::string& why) { return Error(where + ": row '" + line + "': " + why); };
  if (cells.size() != columns.size())
    throw bad(std::to_string(cells.size()) + " cells where the header has " +
              std::to_string(columns.size()));
  TensorBoardRow row;
  char* end = nullptr;
  errno = 0;
  row.step = std::strtoll(cells[0].c_str(), &end, 10);
  if (cells[0].empty() || *end != '\0' || errno != 0 || row.step < 0)
    throw bad("the step '" + cells[0] + "' is not a whole number >= 0");
  for (size_t i = 1; i < cells.size(); ++i) {
    if (cells[i].empty()) continue;  // not measured at this row
    const double v = std::strtod(cells[i].c_str(), &end);
    if (*end != '\0') throw bad(columns[i] + " '" + cells[i] + "' is not a number");
    row.values.emplace_back(metrics_column_tag(columns[i]), static_cast<float>(v));
  }
  return row;
}

}  // namespace

uint32_t crc32c(const void* data, size_t size, uint32_t crc) {
  static const std::array<uint32_t, 256> table = crc32c_table();
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

uint32_t masked_crc32c(const void* data, size_t size) {
  const uint32_t c = crc32c(data, size);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

std::string tensorboard_record(const std::string& event) {
  std::string record;
  put_le(record, event.size(), 8);
  put_le(record, masked_crc32c(record.data(), 8), 4);
  record += event;
  put_le(record, masked_crc32c(event.data(), event.size()), 4);
  return record;
}

std::string tensorboard_version_event(double wall_time) {
  std::string event;
  put_double(event, 1, wall_time);
  put_bytes(event, 3, "brain.Event:2");
  return event;
}

std::string tensorboard_scalars_event(double wall_time, int64_t step,
                                      const TensorBoardScalars& values) {
  std::string summary;
  for (const auto& [tag, v] : values) {
    std::string value;
    put_bytes(value, 1, tag);
    put_float(value, 2, v);
    put_bytes(summary, 1, value);
  }
  return summary_event(wall_time, step, summary);
}

std::string tensorboard_text_event(double wall_time, int64_t step, const std::string& tag,
                                   const std::string& text) {
  std::string plugin, metadata, tensor, value, summary;
  put_bytes(plugin, 1, "text");    // PluginData{plugin_name}
  put_bytes(metadata, 1, plugin);  // SummaryMetadata{plugin_data}
  put_tag(tensor, 1, 0);
  put_varint(tensor, 7);       // dtype DT_STRING
  put_bytes(tensor, 2, "");    // tensor_shape: a scalar
  put_bytes(tensor, 8, text);  // string_val
  put_bytes(value, 1, tag);
  put_bytes(value, 8, tensor);
  put_bytes(value, 9, metadata);
  put_bytes(summary, 1, value);
  return summary_event(wall_time, step, summary);
}

std::string metrics_column_tag(const std::string& column) {
  static const std::map<std::string, std::string> tags = {{"train_loss", "loss/train"},
                                                          {"eval_loss", "loss/eval"},
                                                          {"eval_accuracy", "accuracy/eval"},
                                                          {"lr", "train/lr"},
                                                          {"steps_per_s", "train/steps_per_s"}};
  const auto it = tags.find(column);
  return it != tags.end() ? it->second : "metrics/" + column;
}

std::string head_metric_tag(const HeadMetric& m) {
  if (m.layer < 0) return "model/" + m.metric;
  return "heads_" + m.metric + "/layer" + std::to_string(m.layer) + "/head" +
         std::to_string(m.head);
}

std::vector<TensorBoardRow> metrics_csv_scalars(const std::string& csv, const std::string& where) {
  std::vector<TensorBoardRow> rows;
  const size_t header_end = csv.find('\n');
  if (header_end == std::string::npos) return rows;  // a header being written: no rows
  const std::vector<std::string> columns = split_csv_line(csv.substr(0, header_end));
  if (columns.empty() || columns[0] != "step")
    throw Error(where + ": the header does not start with 'step'");
  size_t at = header_end + 1;
  for (size_t nl; (nl = csv.find('\n', at)) != std::string::npos; at = nl + 1)
    rows.push_back(parse_metrics_row(csv.substr(at, nl - at), columns, where));
  return rows;
}

TensorBoardEvents::TensorBoardEvents(const std::string& dir) {
  char host[256] = "localhost";
  if (::gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "localhost");
  host[sizeof host - 1] = '\0';
  const std::string base =
      (fs::path(dir) / (kEventFilePrefix + std::to_string(static_cast<int64_t>(now_seconds())) +
                        "." + host + "." + std::to_string(::getpid()) + kEventFileMark))
          .string();
  for (int n = 0; !fd_.valid(); ++n) {
    path_ = n == 0 ? base : base + "." + std::to_string(n);
    fd_.reset(::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644));
    if (!fd_.valid() && (errno != EEXIST || n >= 1000))
      throw Error("cannot create the TensorBoard event file " + path_ + ": " +
                  std::strerror(errno));
  }
  write_event(tensorboard_version_event(now_seconds()));
}

void TensorBoardEvents::write_event(const std::string& event) {
  const std::string record = tensorboard_record(event);
  if (const int err = write_all(fd_.get(), record.data(), record.size())) {
    const int cut = ::ftruncate(fd_.get(), static_cast<off_t>(good_size_));  // best effort
    (void)cut;
    throw Error("cannot append to " + path_ + ": " + std::strerror(err));
  }
  good_size_ += static_cast<int64_t>(record.size());
}

void TensorBoardEvents::add_scalars(int64_t step, const TensorBoardScalars& values) {
  if (!values.empty()) write_event(tensorboard_scalars_event(now_seconds(), step, values));
}

void TensorBoardEvents::add_text(int64_t step, const std::string& tag, const std::string& text) {
  write_event(tensorboard_text_event(now_seconds(), step, tag, text));
}

void TensorBoardEvents::add_config(const std::string& config_json) {
  std::string text = config_json;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  add_text(0, "config", "```json\n" + text + "\n```");
}

void TensorBoardEvents::add_head_metrics(const std::vector<HeadMetric>& metrics) {
  TensorBoardScalars values;
  for (size_t i = 0; i < metrics.size(); ++i) {
    if (std::isfinite(metrics[i].value))
      values.emplace_back(head_metric_tag(metrics[i]), static_cast<float>(metrics[i].value));
    if (i + 1 == metrics.size() || metrics[i + 1].step != metrics[i].step) {
      add_scalars(metrics[i].step, values);
      values.clear();
    }
  }
}

void TensorBoardEvents::begin_metrics(const std::string& metrics_path) {
  if (metrics_begun_) return;
  const std::string csv = read_regular_file(metrics_path);
  columns_ = split_csv_line(csv.substr(0, csv.find('\n')));
  const std::string config = (fs::path(metrics_path).parent_path() / "config.json").string();
  if (regular_file_or_absent(config)) add_config(read_regular_file(config));
  for (const TensorBoardRow& row : metrics_csv_scalars(csv, metrics_path))
    add_scalars(row.step, row.values);
  metrics_begun_ = true;
}

void TensorBoardEvents::add_metrics_row(const std::string& row) {
  const TensorBoardRow r = parse_metrics_row(row, columns_, "metrics row");
  add_scalars(r.step, r.values);
}

void TensorBoardEvents::sync() {
  if (::fsync(fd_.get()) != 0 && errno != EINVAL)
    throw Error("cannot flush " + path_ + " to disk: " + std::strerror(errno));
}

std::shared_ptr<TensorBoardEvents> run_events(const std::string& dir) {
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<TensorBoardEvents>> opened;
  std::error_code ec;
  std::string key = fs::weakly_canonical(fs::absolute(dir, ec), ec).string();
  if (key.empty()) key = dir;
  const std::lock_guard<std::mutex> lock(mutex);
  if (auto events = opened[key].lock()) return events;
  auto events = std::make_shared<TensorBoardEvents>(dir);
  opened[key] = events;
  return events;
}

bool is_attnlab_event_file(const std::string& name) {
  if (name.rfind(kEventFilePrefix, 0) != 0) return false;
  const size_t mark = name.rfind(kEventFileMark);
  if (mark == std::string::npos || mark <= std::strlen(kEventFilePrefix)) return false;
  // "<time>.<host>.<pid>" before the mark: the pid's digits after a dot.
  const size_t pid = name.find_last_not_of("0123456789", mark - 1);
  if (pid == mark - 1 || name[pid] != '.') return false;
  const size_t end = mark + std::strlen(kEventFileMark);
  if (end == name.size()) return true;
  // ".<n>": a second file of the same second, host and process.
  return name[end] == '.' && end + 1 < name.size() &&
         name.find_first_not_of("0123456789", end + 1) == std::string::npos;
}

std::vector<std::string> remove_attnlab_event_files(const std::string& dir) {
  std::vector<std::string> removed;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code type_ec;
    if (!is_attnlab_event_file(name) || !it->is_regular_file(type_ec) || it->is_symlink(type_ec))
      continue;
    std::error_code rm;
    if (!fs::remove(it->path(), rm) && rm)
      throw Error("cannot remove the replaced run's event file " + it->path().string() + ": " +
                  rm.message());
    removed.push_back(name);
  }
  return removed;
}

std::string rewrite_run_events(const std::string& dir) {
  const std::string metrics = (fs::path(dir) / "metrics.csv").string();
  // Read before anything is removed: a damaged metrics.csv throws with the old file still there.
  metrics_csv_scalars(read_regular_file(metrics), metrics);
  remove_attnlab_event_files(dir);
  TensorBoardEvents events(dir);
  events.begin_metrics(metrics);
  events.sync();
  return events.path();
}

std::string write_run_events(const std::string& dir, const std::string& config_json,
                             const std::string& metrics_csv,
                             const std::vector<HeadMetric>& head_metrics) {
  // Parsed before the file is made: a refused run leaves no file behind.
  const auto rows = metrics_csv_scalars(metrics_csv, (fs::path(dir) / "metrics.csv").string());
  TensorBoardEvents events(dir);
  if (!config_json.empty()) events.add_config(config_json);
  for (const TensorBoardRow& row : rows) events.add_scalars(row.step, row.values);
  events.add_head_metrics(head_metrics);
  events.sync();
  return events.path();
}

}  // namespace attn
