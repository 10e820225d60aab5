// Sweeps (core/training/headless/sweep.h): --vary parsing, grid expansion and naming, validation
// that names the assignment, resumability, and the mean/spread aggregation against hand
// computation.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "core/base/error.h"
#include "core/config/config.h"
#include "core/runs/directory/run_dir.h"
#include "core/training/headless/sweep.h"
#include "helpers.h"

using namespace attn;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

json tiny_json() {
  return json::parse(R"({"name": "tiny", "seed": 3, "threads": 1,
    "task": {"name": "copy", "length": 4, "vocab": 8},
    "model": {"d_model": 16, "heads": 2, "layers": 1},
    "train": {"steps": 20, "batch_size": 8, "warmup": 2, "eval_every": 10, "eval_batches": 2}})");
}

}  // namespace

TEST_CASE("parse_vary: JSON values where valid, strings otherwise, lists kept whole") {
  auto a = parse_vary("model.attention=ky,dot");
  CHECK(a.key == "model.attention");
  REQUIRE(a.values.size() == 2);
  CHECK(a.values[0] == json("ky"));
  CHECK(a.values[1] == json("dot"));
  auto b = parse_vary("train.lr=1e-3,0.003");
  REQUIRE(b.values.size() == 2);
  CHECK(b.values[0].is_number_float());
  CHECK(b.values[0].get<double>() == doctest::Approx(1e-3));
  auto c = parse_vary(R"(model.attention=["ky","dot"],dot)");
  REQUIRE(c.values.size() == 2);
  CHECK(c.values[0] == json::array({"ky", "dot"}));
  CHECK_THROWS_WITH_AS(parse_vary("model.attention"), doctest::Contains("expected key=v1,v2"),
                       Error);
  CHECK_THROWS_WITH_AS(parse_vary("=ky"), doctest::Contains("expected key=v1,v2"), Error);
  CHECK_THROWS_WITH_AS(parse_vary("train.lr=1e-3,,2e-3"), doctest::Contains("empty value"), Error);
}

TEST_CASE("set_dotted/get_dotted create objects and refuse to cross a value") {
  json j = {{"train", {{"lr", 1}}}};
  set_dotted(j, "train.lr", 2);
  set_dotted(j, "model.attention_options.ky.window", 8);
  CHECK(j["train"]["lr"] == 2);
  CHECK(get_dotted(j, "model.attention_options.ky.window") == 8);
  CHECK(get_dotted(j, "model.nothing").is_null());
  CHECK_THROWS_WITH_AS(set_dotted(j, "train.lr.x", 1), doctest::Contains("not an object"), Error);
}

TEST_CASE("plan_sweep: grid x seeds, first axis slowest, stable names and seeds") {
  const auto plan =
      plan_sweep({{"", tiny_json()}},
                 {parse_vary("model.attention=ky,dot"), parse_vary("train.lr=0.001,0.01")}, 2);
  REQUIRE(plan.cells.size() == 8);
  REQUIRE(plan.groups.size() == 4);
  CHECK(plan.groups[0] == "model.attention=ky,train.lr=0.001");
  CHECK(plan.groups[1] == "model.attention=ky,train.lr=0.01");
  CHECK(plan.groups[2] == "model.attention=dot,train.lr=0.001");
  CHECK(plan.cells[0].dir == "model.attention=ky,train.lr=0.001/seed-3");
  CHECK(plan.cells[1].dir == "model.attention=ky,train.lr=0.001/seed-4");
  CHECK(plan.cells[1].seed == 4);
  CHECK(plan.cells[1].config.seed == 4);
  CHECK(plan.cells[7].config.model.attention == std::vector<std::string>{"dot"});
  CHECK(plan.cells[7].config.train.lr == doctest::Approx(0.01));
  CHECK(plan.cells[2].config.model.attention[0] == "ky");
  for (int i = 0; i < 8; ++i) CHECK(plan.cells[i].index == i);
  // Same plan, same manifest: every process of a Slurm array agrees on what index I is.
  const auto again =
      plan_sweep({{"", tiny_json()}},
                 {parse_vary("model.attention=ky,dot"), parse_vary("train.lr=0.001,0.01")}, 2);
  CHECK(sweep_manifest(plan) == sweep_manifest(again));
  // Arms give the group its name; no axes and no arm name: "base".
  const auto arms = plan_sweep({{"ky", tiny_json()}, {"dot", tiny_json()}}, {}, 1);
  CHECK(arms.cells[1].dir == "dot/seed-3");
  CHECK(plan_sweep({{"", tiny_json()}}, {}, 1).cells[0].dir == "base/seed-3");
  CHECK(sanitize_run_name(R"(model.attention=["ky","dot"])") == "model.attention=__ky_,_dot__");
}

TEST_CASE("plan_sweep: a bad key or value names the --vary assignment and what is allowed") {
  CHECK_THROWS_WITH_AS(
      plan_sweep({{"", tiny_json()}}, {parse_vary("model.attentoin=ky")}, 1),
      doctest::Contains("--vary model.attentoin=ky: unknown key 'model.attentoin'"), Error);
  CHECK_THROWS_WITH_AS(plan_sweep({{"", tiny_json()}}, {parse_vary("model.attention=dott")}, 1),
                       doctest::Contains("--vary model.attention=dott"), Error);
  CHECK_THROWS_WITH_AS(plan_sweep({{"", tiny_json()}}, {parse_vary("model.attention=dott")}, 1),
                       doctest::Contains("must be one of"), Error);
  CHECK_THROWS_WITH_AS(plan_sweep({{"", tiny_json()}}, {parse_vary("train.lr=fast")}, 1),
                       doctest::Contains("--vary train.lr=fast"), Error);
  CHECK_THROWS_WITH_AS(plan_sweep({{"", tiny_json()}}, {parse_vary("model.heads=3")}, 1),
                       doctest::Contains("--vary model.heads=3"), Error);
  CHECK_THROWS_WITH_AS(plan_sweep({{"", tiny_json()}}, {}, 0), doctest::Contains("--seeds 0"),
                       Error);
  CHECK_THROWS_WITH_AS(
      plan_sweep({{"", tiny_json()}}, {parse_vary("train.lr=0.1"), parse_vary("train.lr=0.2")}, 1),
      doctest::Contains("given twice"), Error);
  int i = 0, n = 0;
  parse_shard("1/4", i, n);
  CHECK((i == 1 && n == 4));
  CHECK_THROWS_WITH_AS(parse_shard("4/4", i, n), doctest::Contains("--shard 4/4"), Error);
  CHECK_THROWS_WITH_AS(parse_shard("x", i, n), doctest::Contains("expected i/n"), Error);
}

TEST_CASE("mean_sd and aggregate_runs equal the hand computation") {
  const Stat s = mean_sd({1.0, 2.0, 4.0});
  CHECK(s.n == 3);
  CHECK(s.mean == doctest::Approx(7.0 / 3));
  // sample variance: ((1-7/3)^2 + (2-7/3)^2 + (4-7/3)^2) / 2 = (16/9 + 1/9 + 25/9) / 2 = 7/3
  CHECK(s.sd == doctest::Approx(std::sqrt(7.0 / 3)));
  CHECK(mean_sd({5.0}).sd == 0);
  CHECK(mean_sd({NAN, 2.0}).n == 1);
  CHECK(format_stat(mean_sd({1.0, 3.0}), 2) == "2.00 ± 1.41");
  CHECK(format_stat(Stat{}, 2) == "-");

  std::vector<RunDirectory> runs(4);
  const double loss[] = {2.0, 2.5, 1.0, 0.0}, rss[] = {100, 300, 50, 70};
  for (int i = 0; i < 4; ++i) {
    runs[i].finished = i != 3;  // the fourth never finished: left out of the statistics
    runs[i].summary = {{"eval_loss", loss[i]},    {"eval_accuracy", 0.5},
                       {"parameters", 1000 + i},  {"attention_parameters", 10},
                       {"steps_per_second", 4.0}, {"peak_rss_mib", rss[i]}};
  }
  const auto g = aggregate_runs(runs, {"a", "a", "b", "b"});
  REQUIRE(g.size() == 2);
  CHECK(g[0].group == "a");
  CHECK(g[0].runs == 2);
  CHECK(g[0].finished == 2);
  CHECK(g[0].eval_loss.mean == doctest::Approx(2.25));
  CHECK(g[0].eval_loss.sd == doctest::Approx(std::sqrt(0.125)));
  CHECK(g[0].peak_rss_mib.mean == doctest::Approx(200));
  CHECK(g[0].peak_rss_mib.sd == doctest::Approx(std::sqrt(20000.0)));
  CHECK(g[0].parameters.mean == doctest::Approx(1000.5));
  CHECK(g[1].runs == 2);
  CHECK(g[1].finished == 1);
  CHECK(g[1].eval_loss.n == 1);
  CHECK(g[1].eval_loss.mean == doctest::Approx(1.0));
}

TEST_CASE("run_sweep: runs each cell once, skips finished cells, resumes a checkpointed one") {
  const std::string dir = test::temp_dir("sweep");
  const auto plan = plan_sweep({{"", tiny_json()}}, {parse_vary("model.attention=dot,ky")}, 1);
  // ky needs its window to fit: the default 16 > the copy sequence is fine (clipped).
  SweepRunOptions o;
  o.out_dir = dir;
  o.index = 0;
  auto first = run_sweep(plan, o);
  CHECK(first.ran == 1);
  CHECK(cell_state(dir, plan.cells[0]) == CellState::Done);
  CHECK(cell_state(dir, plan.cells[1]) == CellState::Pending);
  const auto mtime = fs::last_write_time(fs::path(dir) / plan.cells[0].dir / "summary.json");

  // Cell 1 interrupted: a checkpoint at step 10 and no summary. The sweep resumes it.
  HeadlessOptions h;
  h.out_dir = (fs::path(dir) / plan.cells[1].dir).string();
  h.until = 10;
  train_headless(plan.cells[1].config, h);
  fs::remove(fs::path(h.out_dir) / "summary.json");
  CHECK(cell_state(dir, plan.cells[1]) == CellState::Partial);
  o.index.reset();
  std::vector<std::string> lines;
  o.log = [&](const std::string& l) { lines.push_back(l); };
  auto second = run_sweep(plan, o);
  CHECK(second.skipped == 1);
  CHECK(second.resumed == 1);
  CHECK(second.ran == 0);
  CHECK(fs::last_write_time(fs::path(dir) / plan.cells[0].dir / "summary.json") == mtime);
  const auto resumed = read_run_directory(h.out_dir);
  CHECK(resumed.finished);
  CHECK(resumed.summary["steps"] == 20);
  // The resumed cell equals an uninterrupted run of the same config (bit-exact on CPU).
  HeadlessOptions straight;
  straight.out_dir = dir + "/straight";
  train_headless(plan.cells[1].config, straight);
  const auto reference = read_run_directory(straight.out_dir);
  CHECK(reference.eval_loss.values == resumed.eval_loss.values);

  // A different plan in the same directory is refused.
  const auto other = plan_sweep({{"", tiny_json()}}, {parse_vary("model.attention=dot")}, 2);
  CHECK_THROWS_WITH_AS(run_sweep(other, o), doctest::Contains("describes a different sweep"),
                       Error);
  const auto groups = aggregate_sweep(plan, dir);
  REQUIRE(groups.size() == 2);
  CHECK(groups[1].finished == 1);
  CHECK(groups[1].eval_loss.mean == doctest::Approx(resumed.summary["eval_loss"].get<double>()));

  // The same sweep with a second seed grows: sweep.json is rewritten, the two finished runs are
  // kept untouched, only the new seeds train. Fewer seeds than there were is another sweep.
  const auto more = plan_sweep({{"", tiny_json()}}, {parse_vary("model.attention=dot,ky")}, 2);
  const auto third = run_sweep(more, o);
  CHECK(third.skipped == 2);
  CHECK(third.ran == 2);
  CHECK(fs::last_write_time(fs::path(dir) / plan.cells[0].dir / "summary.json") == mtime);
  CHECK(read_json_file(dir + "/sweep.json")["cells"].size() == 4);
  CHECK_THROWS_WITH_AS(run_sweep(plan, o), doctest::Contains("describes a different sweep"), Error);
  fs::remove_all(dir);
}

TEST_CASE("every shipped reproduction plans, in full and in quick mode") {
  const fs::path root = ATTN_SOURCE_DIR "/assets/configs/repro";
  int papers = 0;
  for (const char* paper : {"condor", "conn", "kernel", "neural"}) {
    INFO(paper);
    std::ifstream in(root / paper / "repro.json");
    REQUIRE(in);
    const json m = json::parse(in);
    for (bool quick : {false, true}) {
      std::vector<SweepArm> arms;
      for (const auto& arm : m.at("arms")) {
        std::ifstream f(root / paper / arm.at("config").get<std::string>());
        REQUIRE(f);
        SweepArm s{arm.at("name").get<std::string>(), json::parse(f)};
        if (quick)
          for (const json* o : {&m, &arm})
            if (o->contains("quick"))
              for (const auto& [k, v] : (*o)["quick"].items())
                // quick's own keys (repro_plan.h) steer the plan, not the config.
                if (k != "lr_grid" && k != "seeds" && k != "lr_extend") set_dotted(s.config, k, v);
        arms.push_back(s);
      }
      const auto plan = plan_sweep(arms, {}, m.value("seeds", 2));
      CHECK(plan.groups.size() == arms.size());
      for (const auto& c : plan.cells) CHECK(c.config.threads == 1);
      if (quick)
        for (const auto& c : plan.cells) CHECK(c.config.train.steps <= 40);
    }
    ++papers;
  }
  CHECK(papers == 4);
}
