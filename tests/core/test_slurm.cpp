// The pure half of `attnlab sweep --slurm` (core/training/headless/slurm.h): arrays split at
// MaxArraySize, their --array specs, what sbatch/squeue/scontrol print, and which tasks a
// resubmission takes. The Slurm commands themselves: tests/e2e/slurm_test.sh.
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/base/error.h"
#include "core/base/interrupt.h"
#include "core/training/headless/slurm.h"
#include "temp_dir.h"

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

TEST_CASE("slurm: a suite's or reproduction's cells are their tasks' done marks and jobs") {
  namespace fs = std::filesystem;
  test::ScopedTempDir dir("slurm-tasks");
  const std::string out = dir.path.string();
  // 5 cells in 3 tasks (cell c in task c % 3); tasks 0 and 1 in job 7, task 2 never submitted.
  const nlohmann::json jobs = {{"command", "reproduce"},
                               {"cells", 5},
                               {"tasks", 3},
                               {"arrays", {{{"job", "7"}, {"offset", 0}, {"tasks", {0, 1}}}}}};
  fs::create_directories(dir.path / "slurm");
  std::ofstream(dir.path / "slurm" / "task-7_0.log") << "started\n";
  std::ofstream(dir.path / "slurm" / "task-7_1.log") << "started\n";
  fs::create_directories(fs::path(slurm_task_done_path(out, 0)).parent_path());
  std::ofstream(slurm_task_done_path(out, 0)) << "{}\n";
  CHECK(slurm_task_done_path(out, 0) == (dir.path / "slurm/done/task-0.json").string());
  auto states = [&](const std::map<std::string, std::string>& jobs_now) {
    std::vector<std::string> got;  // (names: doctest prints them)
    for (const auto& c : slurm_task_status(out, jobs, jobs_now)) got.push_back(to_string(c.state));
    return got;
  };
  // Task 1 running: its cells 1 and 4 are; task 2's cell 2 never started.
  CHECK(states({{"7_1", "RUNNING"}}) ==
        std::vector<std::string>{"finished", "running", "never started", "finished", "running"});
  // Task 1's job ended without its mark: failed (it started: its log is there).
  const auto ended = slurm_task_status(out, jobs, {{"7_1", "COMPLETED"}});
  CHECK(ended[1].state == SlurmCellState::Failed);
  CHECK(ended[1].dir == "slurm/task-7_1.log");
  CHECK(ended[1].job == "7_1");
  CHECK(tasks_to_resubmit(ended) == std::vector<int>{1, 2});
  // A job that never wrote its log (cancelled while pending) never started.
  fs::remove(dir.path / "slurm" / "task-7_1.log");
  CHECK(slurm_task_status(out, jobs, {})[1].state == SlurmCellState::NeverStarted);
  nlohmann::json bad = jobs;
  bad["cells"] = 2;  // fewer cells than tasks
  CHECK_THROWS_AS(slurm_task_status(out, bad, {}), Error);
}

TEST_CASE(
    "slurm: SIGUSR1 stops like SIGTERM, and a forwarded stop names the signal it stands for") {
  auto wait_for_stop = [] {
    for (int i = 0; i < 200 && stop_signal() == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return stop_signal();
  };
  install_stop_signals();
  stop_also_on(SIGUSR1);
  clear_stop_signal();
  std::raise(SIGUSR1);
  CHECK(wait_for_stop() == SIGUSR1);
  CHECK(std::string(stop_signal_name(SIGUSR1)) == "SIGUSR1");
  clear_stop_signal();
  // A sweep's cell gets its parent's SIGUSR1 as SIGTERM (app/cli's run_cell_in_child).
  forward_stop(getpid(), SIGTERM, SIGUSR1);
  CHECK(wait_for_stop() == SIGUSR1);
  clear_stop_signal();
  forward_stop(getpid(), SIGINT, SIGTERM);
  CHECK(wait_for_stop() == SIGTERM);
  clear_stop_signal();
  std::signal(SIGUSR1, SIG_DFL);
}
