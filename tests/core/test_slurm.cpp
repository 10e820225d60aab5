// The pure half of `attnlab sweep --slurm` (core/training/headless/slurm.h): arrays split at
// MaxArraySize, their --array specs, what sbatch/squeue/scontrol print, and which tasks a
// resubmission takes. The Slurm commands themselves: tests/e2e/slurm_test.sh.
#include <doctest/doctest.h>

#include "core/base/error.h"
#include "core/training/headless/slurm.h"

using namespace attn;

TEST_CASE("slurm: task ids split into arrays below MaxArraySize") {
  std::vector<int> all;
  for (int t = 0; t < 2500; ++t) all.push_back(t);
  const auto chunks = split_array_tasks(all, 1001);
  REQUIRE(chunks.size() == 3);
  CHECK(chunks[0].offset == 0);
  CHECK(chunks[1].offset == 1001);
  CHECK(chunks[2].offset == 2002);
  CHECK(array_spec(chunks[0], 0) == "0-1000");
  CHECK(array_spec(chunks[1], 8) == "0-1000%8");
  CHECK(array_spec(chunks[2], 0) == "0-497");
  // A resubmission: sparse ids, unsorted, repeated; each array's indices stay below the limit.
  const auto sparse = split_array_tasks({7, 3, 4, 5, 3, 9, 12}, 4);
  REQUIRE(sparse.size() == 3);
  CHECK(array_spec(sparse[0], 0) == "0-2");    // 3,4,5 (+3)
  CHECK(array_spec(sparse[1], 2) == "0,2%2");  // 7,9 (+7)
  CHECK(sparse[2].offset == 12);
  CHECK(array_spec(sparse[2], 0) == "0");
  CHECK_THROWS_AS(split_array_tasks({1}, 0), Error);
}

TEST_CASE("slurm: what sbatch, scontrol and squeue print") {
  CHECK(parse_max_array_size(
            "AuthType = auth/munge\nMaxArraySize            = 4\nMaxJobCount = 1") == 4);
  CHECK(parse_max_array_size("MaxJobCount = 10000\n") == 1001);  // Slurm's default
  CHECK(parse_sbatch_job_id("123\n") == "123");
  CHECK(parse_sbatch_job_id("77;cluster\n") == "77");
  CHECK_THROWS_AS(parse_sbatch_job_id("sbatch: error: Batch job submission failed"), Error);
  const auto states = parse_job_states("12_0 RUNNING\n12_1 PENDING\n13|CANCELLED by 0\n");
  CHECK(states.at("12_0") == "RUNNING");
  CHECK(states.at("12_1") == "PENDING");
  CHECK(states.at("13") == "CANCELLED");
  CHECK(shell_quote("it's") == "'it'\\''s'");
}

TEST_CASE("slurm: a task's job is the last array that ran it; failed tasks resubmit alone") {
  const nlohmann::json jobs = {{"tasks", 3},
                               {"arrays",
                                {{{"job", "5"}, {"offset", 0}, {"tasks", {0, 1}}},
                                 {{"job", "6"}, {"offset", 2}, {"tasks", {2}}},
                                 {{"job", "9"}, {"offset", 1}, {"tasks", {1}}}}}};
  CHECK(slurm_task_job(jobs, 0) == "5_0");
  CHECK(slurm_task_job(jobs, 1) == "9_0");
  CHECK(slurm_task_job(jobs, 2) == "6_0");
  CHECK(slurm_task_job(jobs, 3) == "");
  using S = SlurmCellState;
  auto cell = [](int task, S state) {
    SlurmCellStatus c;
    c.task = task;
    c.state = state;
    return c;
  };
  // Task 0 finished; task 1 failed on one cell but is running again; task 2 failed; task 3's
  // cells never started.
  const std::vector<SlurmCellStatus> cells = {cell(0, S::Finished),     cell(1, S::Failed),
                                              cell(1, S::Running),      cell(2, S::Failed),
                                              cell(2, S::NeverStarted), cell(3, S::NeverStarted)};
  CHECK(tasks_to_resubmit(cells) == std::vector<int>{2, 3});
}
