// The memory estimate (core/models/memory_estimate.h) against what the work really takes: the
// task shapes against the built tasks, and the estimated peak of a training step and of an eval
// pass against the peak resident memory measured around them in this process (VmHWM of
// /proc/self/status, reset through /proc/self/clear_refs), for each mechanism family.
#include <doctest/doctest.h>
#include <malloc.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/base/memory.h"
#include "core/config/config.h"
#include "core/data/tasks.h"
#include "core/models/memory_estimate.h"
#include "core/training/interventions/run_interventions.h"
#include "core/training/session/session.h"
#include "core/training/trainer.h"
#include "helpers.h"

using namespace attn;
using attn::test::contains;
using attn::test::error_of;
namespace fs = std::filesystem;

namespace {

ExperimentConfig config_of(const std::string& text) {
  return parse_config(nlohmann::json::parse(text), "test config");
}

// A /proc/self/status field in bytes (VmRSS, VmHWM); 0 where unknown.
uint64_t status_bytes(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + ":", 0) == 0) return std::stoull(line.substr(key.size() + 1)) * 1024;
  return 0;
}

// Resets VmHWM to the present VmRSS (Linux >= 4.0); false where that is not possible.
bool reset_peak() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5" << std::flush;
  return f.good() && status_bytes("VmHWM") <= status_bytes("VmRSS") + (1 << 20);
}

}  // namespace

TEST_CASE("memory estimate: task shapes equal the built tasks' input length and vocabulary") {
  const fs::path dir = fs::temp_directory_path() / "attnlab_memory_estimate_text";
  fs::create_directories(dir);
  { std::ofstream(dir / "corpus.txt") << std::string(20000, 'a') + "bcdefgh ij\n"; }
  for (const std::string& task : std::vector<std::string>{
           R"({"name": "copy", "length": 9})", R"({"name": "reverse", "length": 5})",
           R"({"name": "sort", "length": 7})", R"({"name": "recall", "length": 6})",
           R"({"name": "modadd"})", R"({"name": "induction", "length": 8})",
           R"({"name": "mqar", "context": 64, "vocab": 72})",
           R"({"name": "selective_copy", "context": 48})",
           R"({"name": "induction_head", "context": 40})",
           R"({"name": "parity", "length": 12, "vocab": 2})",
           R"({"name": "reverse_string", "length": 10})",
           R"({"name": "duplicate_string", "length": 6})",
           R"({"name": "text", "context": 33, "text_path": ")" + (dir / "corpus.txt").string() +
               "\"}"}) {
    CAPTURE(task);
    const ExperimentConfig c =
        config_of(R"({"task": )" + task + R"(, "train": {"batch_size": 2, "eval_batches": 1}})");
    const auto built = make_task(c.task, 1, 1, 2);
    const TaskShape s = task_shape(c.task);
    CHECK(s.tokens == built->sequence_length());
    CHECK(s.patch_dim == built->patch_dim());
    if (s.vocab_known)
      CHECK(s.vocab == built->vocab_size());
    else
      CHECK(c.task.name == "text");
  }
  fs::remove_all(dir);
}

// Every config here runs one training step (the step's peak: forward, backward, AdamW's first
// moments, the recovery copy) in a fresh session, then one eval pass in another: the estimate
// must cover the peak measured, and stay within kAtMost of it.
TEST_CASE(
    "memory estimate: covers the measured peak of a training step, an eval pass and a views.rec "
    "record") {
  if (!reset_peak()) {
    MESSAGE("skipped: /proc/self/clear_refs cannot reset the peak resident size here");
    return;
  }
  // Large blocks straight from mmap and back on free, so that a freed block of an earlier case
  // is not reused unseen (glibc would otherwise raise its mmap threshold as blocks are freed).
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024);
  // Measured on these configs (2026-11-29, one thread): the estimate ran between 1.13x (pseudo,
  // eval) and 2.87x (neural, train) the peak, a record's between 1.1x (pseudo) and 2.0x
  // (neural); 3x is the bound. Training here records nothing (train.record_every 0): a
  // recording run's estimate adds a record's (MemoryUse::record), checked on its own.
  constexpr double kAtMost = 3.0;
  constexpr double kNoise = 4 << 20;
  const std::string base =
      R"("seed": 3, "threads": 1,
         "train": {"batch_size": 16, "eval_batches": 2, "warmup": 0, "record_every": 0},
         "task": {"name": "copy", "length": 128, "vocab": 8})";
  const std::string models[] = {
      R"({"d_model": 32, "heads": 4, "layers": 2})",
      R"({"d_model": 32, "heads": 4, "layers": 2, "position": "rope"})",
      R"({"d_model": 32, "heads": 4, "layers": 2, "attention": "ky",
          "attention_options": {"ky": {"window": 16}}})",
      R"({"d_model": 32, "heads": 4, "layers": 2, "attention": "neural"})",
      R"({"d_model": 32, "heads": 4, "layers": 2, "attention": "pseudo"})",
      R"({"d_model": 32, "heads": 4, "layers": 2, "attention": "linear-sim",
          "attention_options": {"linear-sim": {"max_len": 256}}})",
      R"({"d_model": 32, "architecture": "conn", "conn": {"slots": 16, "steps": 2}})",
  };
  for (const std::string& model : models) {
    CAPTURE(model);
    const ExperimentConfig c = config_of("{" + base + R"(, "model": )" + model + "}");
    const TaskShape shape = task_shape(c.task);
    for (const MemoryUse use : {MemoryUse::train, MemoryUse::eval, MemoryUse::record}) {
      const char* what = use == MemoryUse::train  ? "train "
                         : use == MemoryUse::eval ? "eval "
                                                  : "record ";
      CAPTURE(what);
      double measured = 0;
      if (use == MemoryUse::record) {
        // A record on top of a built session: its maps and head importance, and attribution
        // patching of the probe and its twin where the model has heads.
        TrainingSession session(c);
        const uint64_t before = status_bytes("VmRSS");
        REQUIRE(reset_peak());
        {
          const ViewRecord r = session.view_record();
          if (c.model.architecture != "conn")
            (void)session_attribution(session, patch_probes(session, "", "", "probe", "twin"));
        }
        measured = static_cast<double>(status_bytes("VmHWM") - before);
      } else {
        const uint64_t before = status_bytes("VmRSS");
        REQUIRE(reset_peak());
        {
          TrainingSession session(c);
          if (use == MemoryUse::train)
            session.train_step();
          else
            session.evaluate();
        }
        measured = static_cast<double>(status_bytes("VmHWM") - before);
      }
      // This process paid the runtime's one-time cost in an earlier case: compared without it.
      const double estimate =
          static_cast<double>(estimate_memory(c, shape, use).bytes - kRuntimeOverhead);
      MESSAGE(std::string(what)
              << model << ": estimate " << estimate / 1048576 << " MiB, measured "
              << measured / 1048576 << " MiB");
      CHECK(estimate >= measured);
      // A conn record (its C and eigenvalues of one probe) takes under a MiB: page noise.
      if (measured > kNoise) CHECK(estimate <= kAtMost * measured);
    }
  }
}

TEST_CASE("memory estimate: the refusal names the estimate, the limit and the config keys") {
  const ExperimentConfig c = config_of(
      R"({"task": {"name": "selective_copy", "context": 4096}, "train": {"batch_size": 64},
          "model": {"d_model": 64, "heads": 4, "layers": 2}})");
  const MemoryEstimate e = estimate_memory(c, task_shape(c.task), MemoryUse::train);
  // Two layers of [64, 4, 4096, 4096] float scores alone are 2 x 16 GiB.
  CHECK(e.bytes > (uint64_t(32) << 30));
  ::setenv("ATTNLAB_MEMORY_LIMIT", "1G", 1);
  const std::string msg =
      error_of([&] { require_memory_for(c, task_shape(c.task), MemoryUse::train, "training"); });
  ::unsetenv("ATTNLAB_MEMORY_LIMIT");
  CHECK(contains(msg, "needs about"));
  CHECK(contains(msg, "train.batch_size 64 x task.context 4096 (4096 tokens)"));
  CHECK(contains(msg, "model.heads 4 x model.layers 2 of 4096 x 4096 scores"));
  CHECK(contains(msg, "1.0 GB available (ATTNLAB_MEMORY_LIMIT)"));
  CHECK(contains(
      msg, "lower train.batch_size, task.context, model.heads, model.layers or model.d_model"));
  // A small config fits the same limit.
  const ExperimentConfig small = config_of(R"({"task": {"name": "copy", "length": 4}})");
  ::setenv("ATTNLAB_MEMORY_LIMIT", "1G", 1);
  CHECK_NOTHROW(require_memory_for(small, task_shape(small.task), MemoryUse::train, "training"));
  ::unsetenv("ATTNLAB_MEMORY_LIMIT");
}

// The window's trainer builds its session in build(): a config that cannot fit is its Error state
// with the estimate (what the Run panel shows), before anything is allocated, and the trainer
// lives on to take a config that fits.
TEST_CASE("memory estimate: the window refuses a config that cannot fit with a message") {
  ExperimentConfig c = test::tiny_config();
  Trainer t(c, test::fast_options());
  REQUIRE(test::wait_until([&] { return test::in_state(t, TrainerState::Idle); }));
  ExperimentConfig big = c;
  big.task.name = "selective_copy";
  big.task.context = 4096;
  big.train.batch_size = 64;
  ::setenv("ATTNLAB_MEMORY_LIMIT", "2G", 1);
  const uint64_t rss_before = status_bytes("VmRSS");
  t.reconfigure(big);
  REQUIRE(test::wait_until([&] { return test::in_state(t, TrainerState::Error); }));
  ::unsetenv("ATTNLAB_MEMORY_LIMIT");
  const std::string msg = t.latest()->message;
  INFO(msg);
  CHECK(contains(msg, "needs about"));
  CHECK(contains(msg, "train.batch_size 64 x task.context 4096 (4096 tokens)"));
  CHECK(status_bytes("VmRSS") < rss_before + (uint64_t(256) << 20));  // nothing was allocated
  t.reconfigure(c);
  REQUIRE(test::wait_until([&] { return test::in_state(t, TrainerState::Idle); }));
  t.step_once();
  REQUIRE(test::wait_until([&] { return t.latest()->step >= 1; }));
}
