// What attnlab may remove or write (core/runs/directory/run_files.h), the config's name as a path
// component (core/config/config.h), summaries without invented measurements
// (core/runs/directory/run_writer.h) and the loss interval a checkpoint carries
// (core/training/session/session.h).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/base/error.h"
#include "core/config/config.h"
#include "core/runs/directory/run_files.h"
#include "core/runs/directory/run_writer.h"
#include "core/training/headless/headless.h"
#include "core/training/session/session.h"
#include "helpers.h"

namespace fs = std::filesystem;
using namespace attn;

namespace {

void spit(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

// Every path under dir, relative, directories with a trailing '/'.
std::set<std::string> tree(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    std::string rel = fs::relative(e.path(), dir).string();
    out.insert(e.is_directory() ? rel + "/" : rel);
  }
  return out;
}

}  // namespace

TEST_CASE("clear_run_files removes exactly a run's own files and nothing else") {
  const fs::path d = test::temp_dir("clear-run-files");
  // The run's files, temporaries of killed writes (pid 999999 runs no process here).
  std::set<std::string> run_files;
  for (const char* name : kRunFiles) run_files.insert(name);
  for (const char* name : kCheckpointFiles) run_files.insert(std::string("checkpoint/") + name);
  run_files.insert("metrics.csv.tmp.999999");
  run_files.insert("checkpoint/model.safetensors.tmp.999999");
  run_files.insert("checkpoint/model.pt.tmp.999999");  // the old format's, attnlab's too
  for (const auto& f : run_files) spit(d / f, "run");
  // What is not the run's: a nested run, the user's notes, a folder inside checkpoint/, a file
  // with a run file's name in a subfolder, the marker and the lock.
  const std::set<std::string> others = {"notes.md",
                                        "child/config.json",
                                        "child/summary.json",
                                        "checkpoint/mine/file.txt",
                                        "src/metrics.csv",
                                        "summary.json.bak",
                                        std::string(kRunMarkerName),
                                        ".attnlab.lock"};
  for (const auto& f : others) spit(d / f, "keep");
  clear_run_files(d.string());
  // The brute-force expectation: the other files and their folders, nothing of the run.
  std::set<std::string> expected;
  for (const auto& f : others) {
    expected.insert(f);
    for (fs::path p = fs::path(f).parent_path(); !p.empty(); p = p.parent_path())
      expected.insert(p.string() + "/");
  }
  CHECK(tree(d) == expected);
  fs::remove_all(d);
}

TEST_CASE("clear_run_files removes checkpoint/ once empty, never a link's target") {
  const fs::path d = test::temp_dir("clear-run-link");
  for (const char* name : kCheckpointFiles) spit(d / "run" / "checkpoint" / name, "x");
  spit(d / "run" / "config.json", "{}");
  clear_run_files((d / "run").string());
  CHECK_FALSE(fs::exists(d / "run" / "checkpoint"));
  // checkpoint/ as a link to the user's folder: the link goes, the folder's files stay.
  spit(d / "elsewhere" / "model.safetensors", "the user's");
  fs::create_directory_symlink(d / "elsewhere", d / "run" / "checkpoint");
  clear_run_files((d / "run").string());
  CHECK_FALSE(fs::exists(fs::symlink_status(d / "run" / "checkpoint")));
  CHECK(fs::exists(d / "elsewhere" / "model.safetensors"));
  fs::remove_all(d);
}

TEST_CASE("a directory is attnlab's run by its marker, or by an attnlab checkpoint or summary") {
  const fs::path d = test::temp_dir("is-run");
  spit(d / "user" / "config.json", "{}");
  spit(d / "user" / "summary.json", "{\"loss\": 1}");
  CHECK_FALSE(is_run_directory((d / "user").string()));
  CHECK(run_files_present((d / "user").string()) ==
        std::vector<std::string>{"config.json", "summary.json"});
  write_run_config((d / "new").string(), test::tiny_config());
  CHECK(is_run_directory((d / "new").string()));  // write_run_config marks it
  spit(d / "old" / "checkpoint" / "state.json", "{\"format\": \"attnlab-checkpoint\"}");
  CHECK(is_run_directory((d / "old").string()));
  spit(d / "old2" / "summary.json", "{\"attnlab\": \"0.1.0\", \"config_hash\": \"ab\"}");
  CHECK(is_run_directory((d / "old2").string()));
  fs::remove_all(d);
}

TEST_CASE("--force on a run whose checkpoint/ holds the user's folder refuses before removing") {
  const fs::path d = test::temp_dir("force-foreign");
  ExperimentConfig c = test::tiny_config();
  c.train.steps = 10;
  HeadlessOptions o;
  o.out_dir = (d / "run").string();
  o.threads = 1;
  train_headless(c, o);
  spit(d / "run" / "checkpoint" / "mine" / "data.txt", "keep");
  o.force = true;
  c.seed = 7;
  CHECK_THROWS_WITH_AS(train_headless(c, o), doctest::Contains("checkpoint/mine"), Error);
  CHECK(fs::exists(d / "run" / "summary.json"));  // refused before anything was removed
  CHECK(fs::exists(d / "run" / "checkpoint" / "mine" / "data.txt"));
  fs::remove_all(d);
}

TEST_CASE("the config's name is one plain path component, or refused naming `name`") {
  const std::vector<std::string> bad_names = {
      "", ".", "..", "../../escape", "a/b", "a\\b", ".hidden", "-x", "a\nb", std::string(101, 'n')};
  for (const std::string& bad : bad_names) {
    nlohmann::json j = to_json(test::tiny_config());
    j["name"] = bad;
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(parse_config(j, "c.json"), doctest::Contains("c.json: name \""), Error);
  }
  for (const std::string good :
       {"copy", "copy_gap-mixed.v2", "dot (rope)", "ky-w32", "\u03a9mega"}) {
    nlohmann::json j = to_json(test::tiny_config());
    j["name"] = good;
    CHECK(parse_config(j, "c.json").name == good);
  }
}

TEST_CASE("a summary never reports a loss it did not measure") {
  RunSummary s;
  s.steps = 0;
  s.diverged = true;
  const auto j = run_summary_json(test::tiny_config(), s, 0.1);
  CHECK(j.at("eval_loss").is_null());
  CHECK(j.at("eval_accuracy").is_null());
  CHECK(j.at("final_train_loss").is_null());
  s.eval_loss = 0.0;  // a measured 0 stays 0
  CHECK(run_summary_json(test::tiny_config(), s, 0.1).at("eval_loss") == 0.0);
}

TEST_CASE("a run that diverges before its first evaluation records null, not 0") {
  const fs::path d = test::temp_dir("diverge-early");
  ExperimentConfig c = test::tiny_config();
  c.train.lr = 1e8;
  c.train.warmup = 0;
  HeadlessOptions o;
  o.out_dir = d.string();
  o.threads = 1;
  const RunSummary s = train_headless(c, o);
  REQUIRE(s.diverged);
  CHECK_FALSE(s.eval_loss.has_value());
  std::ifstream in(d / "summary.json");
  const auto j = nlohmann::json::parse(in);
  CHECK(j.at("eval_loss").is_null());
  CHECK(j.at("eval_accuracy").is_null());
  fs::remove_all(d);
}

TEST_CASE("the loss interval is summed in step order, taken once, and kept by checkpoints") {
  const fs::path d = test::temp_dir("loss-interval");
  ExperimentConfig c = test::tiny_config();
  TrainingSession a(c);
  double sum = 0;
  for (int i = 0; i < 3; ++i) sum += a.train_step();
  CHECK(a.loss_interval().steps == 3);
  CHECK(a.loss_interval().sum == sum);  // the same additions in the same order: exact
  a.save((d / "ckpt").string());
  TrainingSession b(c);
  b.load((d / "ckpt").string());
  CHECK(b.loss_interval().steps == 3);
  CHECK(b.loss_interval().sum == sum);  // bit-exact through the JSON
  const double next_a = a.train_step(), next_b = b.train_step();
  CHECK(next_a == next_b);
  const auto taken = b.take_loss_interval();
  CHECK(taken.steps == 4);
  CHECK(taken.sum == sum + next_b);
  CHECK(b.loss_interval().steps == 0);
  CHECK(b.loss_interval().sum == 0.0);
  fs::remove_all(d);
}
