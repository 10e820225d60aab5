#include "core/runs/run_writer.h"

#include <filesystem>
#include <sstream>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/version.h"

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
  return config.model.architecture == "conn" ? "conn" : config.model.attention.at(0);
}

void write_run_config(const std::string& dir, const ExperimentConfig& config) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error("cannot create run directory " + dir + ": " + ec.message());
  write_run_json(dir, "config.json", to_json(config));
}

// summary.json's keys are RunSummary's field names (baseline_loss aside: see below).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RunSummary, mechanism, task, steps, final_train_loss, eval_loss,
                                   eval_accuracy, parameters, attention_parameters,
                                   steps_per_second, seed, device, diverged)

nlohmann::json run_summary_json(const ExperimentConfig& config, const RunSummary& s,
                                double wall_seconds) {
  nlohmann::json j = s;
  j["mechanisms"] = config.model.attention;
  j["wall_seconds"] = wall_seconds;
  j["config_hash"] = config_hash(config);
  j["attnlab"] = version_string();
  if (s.baseline_loss > 0) j["unigram_baseline_loss"] = s.baseline_loss;
  return j;
}

void write_run_json(const std::string& dir, const std::string& name, const nlohmann::json& j,
                    bool pretty) {
  write_file_atomic((fs::path(dir) / name).string(), (pretty ? j.dump(2) : j.dump()) + "\n");
}

}  // namespace attn
