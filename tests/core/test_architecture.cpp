// The model architectures' capabilities (core/models/architectures/architecture.h): the code around the model
// asks them instead of comparing model.architecture with a name, and each architecture the
// config accepts answers through its row of core/models/architectures/architectures.def.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/models/architectures/architecture.h"
#include "core/models/memory_estimate.h"
#include "core/runs/directory/run_dir.h"
#include "core/training/headless/headless.h"
#include "core/training/headless/sweep.h"
#include "core/training/interventions/length_eval.h"
#include "core/training/interventions/run_interventions.h"
#include "core/training/session/session.h"
#include "helpers.h"
#include "temp_dir.h"

using namespace attn;

namespace {

ExperimentConfig tiny_conn() {
  ExperimentConfig c = test::tiny_config("copy");
  c.model.architecture = "conn";
  c.model.heads = 1;
  c.model.conn.slots = 6;
  c.model.conn.steps = 2;
  return c;
}

}  // namespace

TEST_CASE("architecture: every model.architecture the config accepts has one row, in its order") {
  std::vector<std::string> rows;
  for (const ArchitectureDescriptor* a : architecture_descriptors()) rows.push_back(a->name);
  CHECK(rows == architecture_names());
  for (const ArchitectureDescriptor* a : architecture_descriptors()) {
    CAPTURE(a->name);
    CHECK(!a->summary.empty());
    if (a->attention_layers) continue;
    // A model of its own states what the layers' formulas and controls would have.
    CHECK(static_cast<bool>(a->memory));
    CHECK(!a->no_heads_reason.empty());
    CHECK(!a->fields.empty());
  }
  ModelConfig unknown;
  unknown.architecture = "no-such";
  CHECK(&architecture_of(unknown) == architecture_descriptors().front());
}

TEST_CASE("architecture: the transformer has heads; conn has none and a learned position table") {
  ModelConfig t;
  CHECK(architecture_has_heads(t));
  CHECK_NOTHROW(require_attention_heads(t));
  t.position = "rope";
  CHECK(!architecture_has_position_table(t));
  t.position = "learned";
  CHECK(architecture_has_position_table(t));
  ExperimentConfig conn = tiny_conn();
  conn.model.position = "rope";  // the config refuses it for conn; its table is its own anyway
  CHECK(!architecture_has_heads(conn.model));
  CHECK(architecture_has_position_table(conn.model));
  CHECK_THROWS_WITH_AS(
      check_interventions_apply(conn),
      "model.architecture \"conn\": the Connection Transformer's connection heads only "
      "reparametrise one matrix C (their mean), so no head has an output of its own to ablate or "
      "patch; interventions take models with attention heads",
      Error);
  CHECK(architecture_summaries() ==
        "transformer: attention layers; conn: the Connection Transformer");
}

TEST_CASE("architecture: conn's memory estimate names its own keys; its fields edit its config") {
  ExperimentConfig c = tiny_conn();
  TaskShape shape = task_shape(c.task);
  const MemoryEstimate e = estimate_memory(c, shape, MemoryUse::train);
  CHECK(test::contains(e.sizes, "; model.conn.slots 6 x model.d_model 16 per token;"));
  CHECK(e.shrink == "train.batch_size, task.length, model.conn.slots or model.d_model");
  ExperimentConfig wider = c;
  wider.model.conn.slots = 60;
  CHECK(estimate_memory(wider, shape, MemoryUse::train).bytes > e.bytes);

  std::vector<std::string> labels;
  ModelConfig m;
  const char* const first = reinterpret_cast<const char*>(&m);
  for (const ArchitectureField& f : architecture_of(c.model).fields) {
    CAPTURE(f.label);
    labels.push_back(f.label);
    CHECK((f.integer != nullptr) + (f.real != nullptr) + (f.text != nullptr) == 1);
    const char* p = f.integer ? reinterpret_cast<const char*>(f.integer(m))
                    : f.real  ? reinterpret_cast<const char*>(f.real(m))
                              : reinterpret_cast<const char*>(f.text(m));
    CHECK((p >= first && p < first + sizeof m));  // a field of the config it is given
    if (f.text) CHECK(!f.choices.empty());
  }
  CHECK(labels == std::vector<std::string>{"d_model", "slots", "steps K", "mixing", "variant",
                                           "connection heads", "control", "limit r",
                                           "regularization", "init std", "eigen every",
                                           "matrix every"});
}

TEST_CASE("architecture: conn's learned positions refuse lengths beyond training at length eval") {
  ExperimentConfig c = tiny_conn();
  c.model.position = "learned";
  TrainingSession s(c);
  for (int i = 0; i < 3; ++i) s.train_step();
  CHECK(std::isfinite(evaluate_at_length(s, 2).figures.loss));
  CHECK_THROWS_WITH_AS(evaluate_at_length(s, 4 * c.task.length),
                       doctest::Contains("rope, alibi and none extrapolate"), Error);
}

TEST_CASE("architecture: the training log's first line names a model of its own") {
  const test::ScopedTempDir dir("architecture-log");
  ExperimentConfig c = tiny_conn();
  c.train.steps = 10;
  c.train.eval_every = 10;
  std::vector<std::string> lines;
  HeadlessOptions h;
  h.out_dir = (dir.path / "run").string();
  h.threads = 1;
  h.log = [&](const std::string& line) { lines.push_back(line); };
  train_headless(c, h);
  int found = 0;
  for (const std::string& line : lines)
    found += test::contains(line, "training copy with the Connection Transformer (conn) on ");
  CHECK(found == 1);
  // A run of a model of its own is named by its architecture, in its directory and summary.
  const RunDirectory run = read_run_directory(h.out_dir);
  CHECK(run.mechanism() == "conn");
  CHECK(run.summary.at("mechanism") == "conn");
}

TEST_CASE("architecture: a sweep group of a model of its own is named by its architecture") {
  const test::ScopedTempDir dir("architecture-sweep");
  SweepPlan plan;
  for (const char* architecture : {"transformer", "conn"}) {
    SweepCell cell;
    cell.config = tiny_conn();
    cell.config.model.architecture = architecture;
    cell.group = architecture;
    cell.dir = std::string(architecture) + "/seed-0";  // never trained: named from the plan
    plan.cells.push_back(cell);
    plan.groups.push_back(architecture);
  }
  const std::vector<GroupSummary> groups = aggregate_sweep(plan, dir.path.string());
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].mechanism == "dot");
  CHECK(groups[1].mechanism == "conn");
}
