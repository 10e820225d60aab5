// Packs (core/training/headless/pack.h): the automatic size, runs trained side by side on
// threads equal to the same runs one at a time (metrics.csv bit for bit, steps_per_s aside),
// and a refused or diverging run that leaves the others of its pack to finish.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/base/file_io.h"
#include "core/config/config.h"
#include "core/training/headless/pack.h"
#include "core/training/headless/sweep.h"
#include "helpers.h"

using namespace attn;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

json tiny_json() {
  return json::parse(R"({"name": "tiny", "seed": 3, "threads": 1,
    "task": {"name": "copy", "length": 4, "vocab": 8},
    "model": {"d_model": 16, "heads": 2, "layers": 1, "dropout": 0.1},
    "train": {"steps": 30, "batch_size": 8, "warmup": 2, "eval_every": 10, "eval_batches": 2}})");
}

// metrics.csv without its last column (steps_per_s, a wall-clock rate).
std::string metrics_without_rate(const fs::path& run) {
  std::istringstream in(read_regular_file((run / "metrics.csv").string()));
  std::string line, out;
  while (std::getline(in, line)) out += line.substr(0, line.rfind(',')) + "\n";
  return out;
}

}  // namespace

TEST_CASE(
    "choose_pack_size: --pack as given, 0 is 16 on a GPU and 1 on a CPU, never past the cells") {
  CHECK(choose_pack_size(0, 40, true) == 16);
  CHECK(choose_pack_size(0, 5, true) == 5);
  CHECK(choose_pack_size(0, 40, false) == 1);
  CHECK(choose_pack_size(3, 40, false) == 3);
  CHECK(choose_pack_size(3, 2, true) == 2);
  CHECK(choose_pack_size(4, 0, false) == 1);
}

TEST_CASE("run_sweep in packs on threads: each run's metrics equal the run alone, bit for bit") {
  const fs::path dir = test::temp_dir("pack_identity");
  const auto plan =
      plan_sweep({{"", tiny_json()}},
                 {parse_vary("model.attention=dot,ky"), parse_vary("train.lr=0.003,0.01")}, 1);
  REQUIRE(plan.cells.size() == 4);
  SweepRunOptions alone;
  alone.out_dir = (dir / "alone").string();
  CHECK(run_sweep(plan, alone).ran == 4);
  SweepRunOptions packed;
  packed.out_dir = (dir / "packed").string();
  packed.pack = 3;  // a pack of 3, then one of 1, in this process (no launcher)
  CHECK(run_sweep(plan, packed).ran == 4);
  for (const auto& cell : plan.cells) {
    CAPTURE(cell.dir);
    const std::string a = metrics_without_rate(dir / "alone" / cell.dir);
    CHECK(a.size() > 100);
    CHECK(a == metrics_without_rate(dir / "packed" / cell.dir));
  }
  const json book = read_json_file((dir / "packed" / "pack.json").string());
  REQUIRE(book["packs"].size() == 2);
  CHECK(book["packs"][0]["cells"].size() == 3);
  CHECK(book["packs"][0]["exit_codes"] == json({0, 0, 0}));
  CHECK(book["packs"][0]["wall_seconds"].get<double>() > 0);
}

TEST_CASE("train_pack: a refused run and a diverging one leave the others to finish") {
  const fs::path dir = test::temp_dir("pack_isolation");
  std::vector<PackRun> runs(3);
  for (size_t i = 0; i < runs.size(); ++i) {
    runs[i].config = parse_config(tiny_json(), "tiny");
    runs[i].options.out_dir = (dir / ("run" + std::to_string(i))).string();
  }
  runs[1].refused = "its config could not be read";
  runs[2].config.train.lr = 1e9;  // blows up at the first step
  std::vector<std::string> logged(3);
  for (size_t i = 0; i < runs.size(); ++i)
    runs[i].options.log = [&logged, i](const std::string& line) { logged[i] += line + "\n"; };
  const PackResult r = train_pack(runs);
  REQUIRE(r.runs.size() == 3);
  CHECK(r.runs[0].exit_code == 0);
  CHECK(r.runs[0].steps_per_second > 0);
  CHECK(r.runs[1].exit_code == 2);
  CHECK(logged[1].find("failed: its config could not be read") != std::string::npos);
  CHECK(!fs::exists(dir / "run1" / "summary.json"));
  CHECK(r.runs[2].exit_code == 3);
  CHECK(read_json_file((dir / "run2" / "summary.json").string()).value("diverged", false));
  CHECK(read_json_file((dir / "run0" / "summary.json").string())["steps"] == 30);
}
