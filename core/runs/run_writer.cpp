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

nlohmann::json run_summary_json(const ExperimentConfig& config, const RunSummary& s,
                                double wall_seconds) {
  nlohmann::json j = {{"mechanism", s.mechanism},
                      {"mechanisms", config.model.attention},
                      {"task", s.task},
                      {"steps", s.steps},
                      {"final_train_loss", s.final_train_loss},
                      {"eval_loss", s.eval_loss},
                      {"eval_accuracy", s.eval_accuracy},
                      {"parameters", s.parameters},
                      {"attention_parameters", s.attention_parameters},
                      {"steps_per_second", s.steps_per_second},
                      {"wall_seconds", wall_seconds},
                      {"seed", s.seed},
                      {"device", s.device},
                      {"diverged", s.diverged},
                      {"config_hash", config_hash(config)},
                      {"attnlab", version_string()}};
  if (s.baseline_loss > 0) j["unigram_baseline_loss"] = s.baseline_loss;
  return j;
}

void write_run_json(const std::string& dir, const std::string& name, const nlohmann::json& j,
                    bool pretty) {
  write_file_atomic((fs::path(dir) / name).string(), (pretty ? j.dump(2) : j.dump()) + "\n");
}

}  // namespace attn
