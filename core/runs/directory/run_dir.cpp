#include "core/runs/directory/run_dir.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/attention/registry.h"
#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/json/json_reader.h"

namespace attn {
namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& p) {
  return read_regular_file(p.string());
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

}  // namespace

std::string RunDirectory::mechanism() const {
  // Only the transformer has attention layers (core/models/architectures/architecture.h, above this layer).
  if (config.model.architecture != "transformer") return config.model.architecture;
  std::string out;
  for (const auto& m : config.model.attention)
    if (out.empty() || out.find(m) == std::string::npos) out += (out.empty() ? "" : "+") + m;
  return out;
}

void StepOrder::next(int64_t step, int line) {
  if (last_line_ > 0 && step <= last_step_)
    throw Error(where_ + " line " + std::to_string(line) + ": step " + std::to_string(step) +
                (step == last_step_ ? " repeats" : " goes back from") + " step " +
                std::to_string(last_step_) + " of line " + std::to_string(last_line_) +
                ": rows must be in increasing step order (two runs mixed, or an edited file); "
                "remove the out-of-order rows");
  last_step_ = step;
  last_line_ = line;
}

void parse_metrics_csv(const std::string& text, const std::string& where, RunDirectory& run) {
  // A last line without its newline is being written (or was cut by a crash): not data yet.
  const size_t complete = text.empty() || text.back() == '\n' ? text.size() : text.rfind('\n') + 1;
  std::istringstream in(text.substr(0, complete));  // rfind's npos + 1 == 0: nothing complete
  std::string line;
  if (!std::getline(in, line)) throw Error(where + " is empty (expected a header line)");
  const auto header = split(line);
  auto column = [&](const char* name) {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return static_cast<int>(i);
    return -1;
  };
  const int c_step = column("step"), c_train = column("train_loss"), c_eval = column("eval_loss"),
            c_acc = column("eval_accuracy"), c_lr = column("lr");
  if (c_step < 0 || c_train < 0)
    throw Error(where + ": the header must name step and train_loss columns, found: " + line);
  run.train_loss = run.eval_loss = run.eval_accuracy = run.learning_rate = {};
  run.rows = 0;
  int line_no = 1;
  StepOrder order(where);
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    const auto cells = split(line);
    if (cells.size() < header.size())
      throw Error(where + " line " + std::to_string(line_no) + ": " + std::to_string(cells.size()) +
                  " fields, the header has " + std::to_string(header.size()));
    int64_t step = 0;
    try {
      size_t used = 0;
      step = std::stoll(cells[c_step], &used);
      if (used != cells[c_step].size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      throw Error(where + " line " + std::to_string(line_no) + ": step '" + cells[c_step] +
                  "' is not an integer");
    }
    order.next(step, line_no);
    auto add = [&](int c, Series& s, const char* name) {
      if (c < 0 || cells[c].empty()) return;
      try {
        s.values.push_back(std::stof(cells[c]));
        s.steps.push_back(step);
      } catch (const std::exception&) {
        throw Error(where + " line " + std::to_string(line_no) + ": " + name + " '" + cells[c] +
                    "' is not a number");
      }
    };
    add(c_train, run.train_loss, "train_loss");
    add(c_eval, run.eval_loss, "eval_loss");
    add(c_acc, run.eval_accuracy, "eval_accuracy");
    add(c_lr, run.learning_rate, "lr");
    ++run.rows;
  }
}

bool summary_finished(const std::string& dir, int64_t steps) {
  try {
    const std::string path = (fs::path(dir) / "summary.json").string();
    if (!regular_file_or_absent(path)) return false;
    const nlohmann::json j = read_json_file(path);
    return j.is_object() && !j.value("interrupted", false) &&
           (j.value("steps", int64_t(-1)) == steps || j.value("diverged", false));
  } catch (const std::exception&) {
    return false;
  }
}

RunDirectory read_run_directory(const std::string& dir) {
  const fs::path d(dir);
  std::error_code ec;
  if (!fs::is_directory(d, ec))
    throw Error("run directory " + dir +
                " does not exist (give a directory `attnlab train --out` wrote)");
  RunDirectory run;
  run.dir = dir;
  run.id = fs::weakly_canonical(d, ec).filename().string();
  if (run.id.empty()) run.id = d.filename().string();
  const fs::path config_path = d / "config.json";
  if (!fs::exists(config_path, ec))
    throw Error("run directory " + dir + " has no config.json (is it a run directory?)");
  const nlohmann::json cj = parse_json_strict(read_text(config_path), config_path.string());
  run.config = parse_config(cj, config_path.string());
  run.config_hash = config_hash(run.config);
  const fs::path metrics = d / "metrics.csv";
  if (!fs::exists(metrics, ec)) throw Error("run directory " + dir + " has no metrics.csv");
  parse_metrics_csv(read_text(metrics), metrics.string(), run);
  const fs::path summary = d / "summary.json";
  if (fs::exists(summary, ec)) {
    run.summary = parse_json_strict(read_text(summary), summary.string());
    if (!run.summary.is_object()) throw Error(summary.string() + " is not a JSON object");
    run.finished = true;
  }
  run.has_checkpoint = fs::exists(d / "checkpoint" / "state.json", ec);
  return run;
}

namespace {

constexpr uint64_t kMaxSideFileBytes = uint64_t(256) << 20;

nlohmann::json read_side_json(const fs::path& p) {
  try {
    return nlohmann::json::parse(read_regular_file(p.string(), kMaxSideFileBytes));
  } catch (const nlohmann::json::exception& e) {
    throw Error(p.string() + " is not valid JSON: " + e.what());
  }
}

// An old side file ({"frames": [{"step", "layers": [entries]}]}) through the mechanism's reader.
std::vector<MechanismFrame> read_legacy_frames(const fs::path& p, const LegacyViewReader& reader) {
  const nlohmann::json j = read_side_json(p);
  if (!j.is_object() || !j.contains("frames") || !j["frames"].is_array() ||
      j["frames"].size() > kMaxMechanismFrames)
    throw Error(p.string() + ": no \"frames\" array of at most " +
                std::to_string(kMaxMechanismFrames) + " frames");
  std::vector<MechanismFrame> frames;
  for (const nlohmann::json& f : j["frames"]) {
    if (!f.is_object() || !f.contains("step") || !f["step"].is_number_integer() ||
        !f.contains("layers") || !f["layers"].is_array())
      throw Error(p.string() + ": a frame without an integer \"step\" and a \"layers\" array");
    MechanismFrame frame{f["step"].get<int64_t>(), {}};
    try {
      for (const nlohmann::json& entry : f["layers"]) {
        frame.layers.push_back(reader.read(entry));
        frame.layers.back().mechanism = reader.mechanism;
      }
    } catch (const Error& e) {
      throw Error(p.string() + ": " + e.what());
    }
    frames.push_back(std::move(frame));
  }
  return frames;
}

}  // namespace

std::vector<MechanismFrame> read_mechanism_frames(const std::string& dir) {
  const fs::path file = fs::path(dir) / kMechanismViewsFile;
  if (regular_file_or_absent(file.string()))
    return mechanism_frames_from_json(read_side_json(file), file.string());
  for (const LegacyViewReader& reader : legacy_view_readers()) {
    if (reader.side_file.empty()) continue;
    const fs::path old = fs::path(dir) / reader.side_file;
    if (regular_file_or_absent(old.string())) return read_legacy_frames(old, reader);
  }
  return {};
}

}  // namespace attn
