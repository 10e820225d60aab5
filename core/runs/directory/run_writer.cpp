#include "core/runs/directory/run_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <sstream>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/version.h"
#include "core/runs/formats/tensorboard_events.h"
#include "core/runs/directory/run_files.h"

namespace attn {

namespace fs = std::filesystem;

std::string metrics_row(int64_t step, std::optional<double> train_loss,
                        std::optional<double> eval_loss, std::optional<double> eval_accuracy,
                        std::optional<double> lr, std::optional<double> steps_per_s) {
  std::ostringstream row;
  row.precision(7);
  row << step;
  for (const auto& v : {train_loss, eval_loss, eval_accuracy, lr, steps_per_s}) {
    row << ",";
    if (v) row << *v;
  }
  row << "\n";
  return row.str();
}

std::string run_mechanism(const ExperimentConfig& config) {
  // Only the transformer has attention layers (core/models/architectures/architecture.h, above this layer).
  if (config.model.architecture != "transformer") return config.model.architecture;
  return config.model.attention.at(0);
}

void write_run_config(const std::string& dir, const ExperimentConfig& config) {
  mark_run_directory(dir);  // first: from here on the directory is attnlab's run
  write_run_json(dir, "config.json", to_json(config));
}

nlohmann::json run_summary_json(const ExperimentConfig& config, const RunSummary& s,
                                double wall_seconds) {
  // summary.json's keys are RunSummary's field names (baseline_loss aside: see below).
  auto measured = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nullptr; };
  nlohmann::json j = {{"mechanism", s.mechanism},
                      {"task", s.task},
                      {"steps", s.steps},
                      {"final_train_loss", measured(s.final_train_loss)},
                      {"eval_loss", measured(s.eval_loss)},
                      {"eval_accuracy", measured(s.eval_accuracy)},
                      {"parameters", s.parameters},
                      {"attention_parameters", s.attention_parameters},
                      {"steps_per_second", s.steps_per_second},
                      {"seed", s.seed},
                      {"device", s.device},
                      {"diverged", s.diverged}};
  j["mechanisms"] = config.model.attention;
  j["wall_seconds"] = wall_seconds;
  j["config_hash"] = config_hash(config);
  j["attnlab"] = version_string();
  j["commit"] = commit_string();
  if (s.baseline_loss > 0) j["unigram_baseline_loss"] = s.baseline_loss;
  return j;
}

void write_run_json(const std::string& dir, const std::string& name, const nlohmann::json& j,
                    bool pretty) {
  write_file_atomic((fs::path(dir) / name).string(), (pretty ? j.dump(2) : j.dump()) + "\n");
}

MetricsAppender::MetricsAppender(const std::string& path) : path_(path) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd_ < 0) throw Error("cannot append to " + path_ + ": " + std::strerror(errno));
  const off_t end = ::lseek(fd_, 0, SEEK_END);
  good_size_ = end < 0 ? 0 : end;
  try {  // TensorBoard's copy of the rows
    events_ = run_events(fs::path(path_).parent_path().string());
    events_->begin_metrics(path_);
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

MetricsAppender::~MetricsAppender() {
  if (fd_ >= 0) ::close(fd_);
}

void MetricsAppender::append(const std::string& row) {
  if (const int err = write_all(fd_, row.data(), row.size())) {
    const int cut = ::ftruncate(fd_, static_cast<off_t>(good_size_));  // best effort
    (void)cut;
    throw Error("cannot append to " + path_ + ": " + std::strerror(err));
  }
  good_size_ += static_cast<int64_t>(row.size());
  events_->add_metrics_row(row);
}

void MetricsAppender::sync() {
  if (::fsync(fd_) != 0 && errno != EINVAL)
    throw Error("cannot flush " + path_ + " to disk: " + std::strerror(errno));
  events_->sync();
}

std::string default_runs_root() {
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg)
    return (fs::path(xdg) / "attnlab" / "runs").string();
  if (const char* home = std::getenv("HOME"); home && *home)
    return (fs::path(home) / ".local" / "share" / "attnlab" / "runs").string();
  return "";
}

std::string new_run_dir(const std::string& root, const std::string& name) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
  const std::string base =
      (fs::path(root) / ((name.empty() ? "run" : name) + "-" + stamp)).string();
  std::error_code ec;
  std::string dir = base;
  for (int n = 2; fs::exists(dir, ec); ++n) dir = base + "-" + std::to_string(n);
  return dir;
}

}  // namespace attn
