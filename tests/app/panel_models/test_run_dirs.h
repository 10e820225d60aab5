// Saved runs written by hand for the panel model tests (test_compare.cpp, test_runs.cpp): a
// temporary folder removed at the end of the test, and run directories in the format that
// core/runs/run_dir.h reads (config.json through core's writer, metrics.csv rows given here).
#pragma once
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/runs/run_writer.h"

namespace attn::test {

class TempDir {
 public:
  explicit TempDir(const std::string& tag)
      : path_(std::filesystem::temp_directory_path() /
              ("attnlab-" + tag + "-" + std::to_string(std::random_device{}()))) {
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A small copy-task experiment with `attention` in its one layer and `seed`.
inline ExperimentConfig small_config(const std::string& attention, uint64_t seed) {
  const std::string text = R"({"name": "t", "seed": )" + std::to_string(seed) +
                           R"(, "task": {"name": "copy", "length": 4, "vocab": 8},)" +
                           R"( "model": {"d_model": 16, "heads": 2, "layers": 1, "attention": ")" +
                           attention +
                           R"("}, "train": {"steps": 40, "warmup": 5, "eval_every": 10}})";
  return parse_config(nlohmann::json::parse(text), "panel model test config");
}

struct MetricsRow {
  int64_t step;
  double train_loss, eval_loss, eval_accuracy;
};

// dir/config.json and dir/metrics.csv with `rows`: a saved run (unfinished: no summary.json).
inline void write_saved_run(const std::filesystem::path& dir, const ExperimentConfig& config,
                            const std::vector<MetricsRow>& rows) {
  write_run_config(dir.string(), config);
  std::ofstream out(dir / "metrics.csv");
  out << kMetricsHeader << "\n";
  for (const MetricsRow& r : rows)
    out << metrics_row(r.step, r.train_loss, r.eval_loss, r.eval_accuracy, 1e-3, 100.0);
}

}  // namespace attn::test
