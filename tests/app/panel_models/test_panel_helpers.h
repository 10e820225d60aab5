// Helpers of the panel model tests (test_loss.cpp, test_compare.cpp, test_runs.cpp, test_run.cpp):
// saved runs written by hand in the format that core/runs/directory/run_dir.h reads (config.json through
// core's writer, metrics.csv rows given here) in a ScopedTempDir (tests/core/temp_dir.h), and
// the lines of a figure's panel looked up by name.
#pragma once
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/runs/directory/run_writer.h"
#include "render/plot/figure.h"
#include "tests/core/temp_dir.h"

namespace attn::test {

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

// The panel titled `title` (nullptr: none).
inline const fig::Panel* find_panel(const fig::Figure& f, const std::string& title) {
  for (const fig::Panel& p : f.panels)
    if (p.title == title) return &p;
  return nullptr;
}

// The line named `name` in `p` (nullptr: none).
inline const fig::LineSeries* find_line(const fig::Panel& p, const std::string& name) {
  for (const fig::LineSeries& l : p.lines)
    if (l.name == name) return &l;
  return nullptr;
}

// The names of `p`'s lines, in drawing order.
inline std::vector<std::string> line_names(const fig::Panel& p) {
  std::vector<std::string> out;
  for (const auto& l : p.lines) out.push_back(l.name);
  return out;
}

}  // namespace attn::test
