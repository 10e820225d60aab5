#include "app/cli/compare/cli_slurm.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>

#include "app/cli/cli.h"
#include "app/cli/compare/cli_compare.h"
#include "app/common/data_paths.h"
#include "app/common/exit_codes.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/interrupt.h"
#include "core/config/config.h"
#include "core/training/headless/slurm.h"

namespace attn {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Runs argv[0] (looked up on PATH) with stdout and stderr captured in `out`; its exit code, 127
// when it cannot start.
int run_capture(const std::vector<std::string>& argv, std::string& out) {
  int fds[2];
  if (pipe(fds) != 0) throw Error("cannot run " + argv[0] + ": pipe failed");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = fork();
  if (pid < 0) throw Error("cannot run " + argv[0] + ": fork failed");
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  out.clear();
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string d; std::getline(dirs, d, ':');)
    if (!d.empty() && access((fs::path(d) / name).c_str(), X_OK) == 0) return true;
  return false;
}

// This process's arguments (/proc/self/cmdline), the executable first as an absolute path.
std::vector<std::string> own_arguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> argv;
  for (std::string a; std::getline(in, a, '\0');) argv.push_back(a);
  if (argv.empty()) throw Error("--slurm: cannot read this command's arguments");
  argv[0] = executable_path();
  if (argv[0].empty()) throw Error("--slurm: the executable's path is unknown");
  return argv;
}

// The array task's command: this one less the options that submit (a task runs its shard).
std::vector<std::string> task_command(const std::vector<std::string>& argv) {
  static const std::set<std::string> kFlags = {"--slurm", "--resubmit-failed", "--slurm-task",
                                               "--slurm-report"};
  // --pack stays: a task trains its cells as one pack (one process; --pack 0 there: auto).
  static const std::set<std::string> kWithValue = {"--slurm-arg", "--max-parallel", "--shard",
                                                   "--index"};
  std::vector<std::string> out;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    const std::string name = a.substr(0, a.find('='));
    if (kFlags.count(a) || (kWithValue.count(name) && name != a)) continue;
    if (kWithValue.count(a)) {
      ++i;
      continue;
    }
    out.push_back(a);
  }
  return out;
}

fs::path slurm_dir(const std::string& out) {
  return fs::absolute(fs::path(out)) / "slurm";
}

void write_jobs(const std::string& out, const json& jobs) {
  write_file_atomic((slurm_dir(out) / "jobs.json").string(), jobs.dump(2) + "\n");
}

// `sbatch --parsable ARGS...`: the job id.
std::string sbatch(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::string text;
  if (run_capture(argv, text) != 0) throw Error("sbatch failed: " + text);
  return parse_sbatch_job_id(text);
}

int cluster_max_array_size() {
  std::string text;
  if (run_capture({"scontrol", "show", "config"}, text) != 0) {
    std::cerr << "attnlab: scontrol show config failed; assuming MaxArraySize 1001\n";
    return 1001;
  }
  return parse_max_array_size(text);
}

// Submits `tasks` as arrays (split at MaxArraySize), then the report job after them; records each
// in jobs.json as it goes and says what it submitted on stdout.
void submit_tasks(const SlurmArgs& a, const std::string& out, const std::vector<int>& tasks,
                  json& jobs, const std::string& report_note) {
  const std::string dir = slurm_dir(out).string();
  std::string after;
  for (const auto& chunk : split_array_tasks(tasks, cluster_max_array_size())) {
    std::vector<std::string> args = {"--array=" + array_spec(chunk, a.max_parallel)};
    args.insert(args.end(), a.args.begin(), a.args.end());
    args.insert(args.end(), {dir + "/task.sbatch", std::to_string(chunk.offset)});
    const std::string id = sbatch(args);
    jobs["arrays"].push_back({{"job", id}, {"offset", chunk.offset}, {"tasks", chunk.tasks}});
    write_jobs(out, jobs);
    after += ":" + id;
    std::cout << "submitted array job " << id << ": tasks " << array_spec(chunk, 0) << " (+"
              << chunk.offset << ") of " << jobs["tasks"] << ", " << jobs["pack"]
              << " cell(s) each\n";
  }
  std::vector<std::string> args = {"--dependency=afterany" + after};
  args.insert(args.end(), a.args.begin(), a.args.end());
  args.push_back(dir + "/report.sbatch");
  const std::string id = sbatch(args);
  jobs["reports"].push_back(id);
  write_jobs(out, jobs);
  std::cout << "submitted report job " << id << " (after the arrays: " << report_note << "\n";
}

SweepPlan plan_from_manifest(const std::string& out) {
  const json m = read_json_file((fs::path(out) / "sweep.json").string());
  std::vector<SweepArm> arms;
  std::vector<VaryAxis> axes;
  for (const auto& arm : m.at("arms")) arms.push_back({arm.at("name"), arm.at("config")});
  for (const auto& axis : m.at("axes"))
    axes.push_back({axis.at("key"), axis.at("values").get<std::vector<json>>()});
  return plan_sweep(arms, axes, m.at("seeds").get<int>());
}

std::map<std::string, std::string> job_states() {
  std::string text;
  std::map<std::string, std::string> states;
  // Accounting first (absent on small clusters: sacct then fails), the live queue over it.
  if (on_path("sacct") && run_capture({"sacct", "-n", "-P", "-X", "-o", "JobID,State"}, text) == 0)
    states = parse_job_states(text);
  if (run_capture({"squeue", "-h", "-r", "-t", "all", "-o", "%i %T"}, text) != 0)
    throw Error("squeue failed: " + text);
  for (const auto& [job, state] : parse_job_states(text)) states[job] = state;
  return states;
}

// A suite's or reproduction's tasks to submit again (slurm_task_status: each task's done mark).
std::vector<int> failed_campaign_tasks(const std::string& out, const json& jobs) {
  return tasks_to_resubmit(slurm_task_status(fs::absolute(out).string(), jobs, job_states()));
}

}  // namespace

void add_slurm_options(CLI::App* cmd, SlurmArgs& a, const std::string& what) {
  const std::string product = what == "suite" ? "leaderboard" : "report";
  const std::string noun = what == "reproduce" ? "reproduction" : what;
  cmd->add_flag("--slurm", a.submit,
                "Submit the " + noun +
                    " to Slurm as one job array (OUT/slurm/: scripts, jobs.json, logs) and a job "
                    "writing the " +
                    product + " after it; see attnlab slurm-status");
  cmd->add_option("--slurm-arg", a.args,
                  "With --slurm: an sbatch option for every job, e.g. --slurm-arg=--time=60 "
                  "(repeatable)");
  cmd->add_option("--pack", a.pack,
                  "Runs trained together in one process, each on a thread with one torch thread "
                  "(a pack; its runs' metrics equal theirs alone at --threads 1). 0 (default): "
                  "16 on a GPU, 1 on a CPU. With --slurm, the cells of one array task")
      ->check(CLI::Range(0, kMaxPack));
  cmd->add_option("--max-parallel", a.max_parallel,
                  "With --slurm: array tasks running at once (--array=...%K; default no limit)")
      ->check(CLI::Range(1, 100000));
  cmd->add_flag("--resubmit-failed", a.resubmit_failed,
                "With a submitted " + noun +
                    ": submit again only the tasks whose cells failed or never started");
  cmd->add_flag("--slurm-task", a.task, "Run as an array task (the job script passes it)")
      ->group("");
  if (what == "reproduce")
    cmd->add_flag("--slurm-report", a.report, "Run as the report job (the job script passes it)")
        ->group("");
}

namespace {

// What submit_to_slurm() submits: `cells` cells, `pack` to an array task, each task running
// this command's arguments with --shard, and `report` once after the arrays.
struct SlurmJobs {
  std::string command;  // "sweep" | "suite" | "reproduce": messages, job names, jobs.json
  size_t cells = 0;
  std::vector<std::string> report;
  std::string report_note;          // what the report job writes, and where to look meanwhile
  std::function<void()> check_out;  // throws to refuse --out before anything is written
  // The tasks --resubmit-failed submits (jobs.json read).
  std::function<std::vector<int>(const json& jobs)> failed_tasks;
};

// Refusals (exit 2, nothing written), else jobs.json as submitted before or as it starts.
json slurm_jobs_or_refuse(const SlurmArgs& a, const SlurmJobs& j, const std::string& out,
                          const std::string& conflicts) {
  if (!conflicts.empty())
    throw Error("--slurm submits the whole " + j.command + "; " + conflicts + " cannot go with it");
  if (!on_path("sbatch"))
    throw Error("--slurm: sbatch is not on PATH (Slurm's client commands are needed)");
  const fs::path jobs_path = slurm_dir(out) / "jobs.json";
  std::error_code ec;
  const bool submitted = fs::exists(jobs_path, ec);
  if (a.resubmit_failed && !submitted)
    throw Error("--resubmit-failed: " + jobs_path.string() + " does not exist; submit first");
  if (!a.resubmit_failed && submitted)
    throw Error("--slurm: " + out + " was submitted already (" + jobs_path.string() +
                "); see attnlab slurm-status --out " + out + ", or add --resubmit-failed");
  // --pack 0 (automatic on the node) is a cell per task.
  auto task_count = [&](int pack) {
    pack = std::max(1, pack);
    return static_cast<int>((j.cells + pack - 1) / pack);
  };
  json jobs;
  if (submitted) {
    jobs = read_json_file(jobs_path.string());
    const int pack = jobs.value("pack", 1);
    if (pack < 1 || jobs.value("tasks", 0) != task_count(pack) ||
        jobs.value("command", std::string("sweep")) != j.command)
      throw Error("--resubmit-failed: the " + j.command + "'s cells differ from those submitted (" +
                  jobs_path.string() + ")");
  } else {
    jobs = {{"format", "attnlab-slurm"},   {"version", 1},
            {"command", j.command},        {"cells", j.cells},
            {"tasks", task_count(a.pack)}, {"pack", std::max(1, a.pack)},
            {"arrays", json::array()},     {"reports", json::array()}};
  }
  if (j.check_out) j.check_out();
  return jobs;
}

// OUT/slurm/task.sbatch, report.sbatch and jobs.json of a first submission.
void write_slurm_scripts(const SlurmJobs& j, const std::string& out, const json& jobs) {
  SlurmScript s;
  s.job_name = "attnlab-" + j.command;
  s.workdir = fs::current_path().string();
  s.out_dir = fs::absolute(out).string();
  s.tasks = jobs["tasks"];
  s.command = task_command(own_arguments());
  fs::create_directories(slurm_dir(out));
  write_file_atomic((slurm_dir(out) / "task.sbatch").string(), slurm_task_script(s));
  s.job_name = "attnlab-report";
  s.command = j.report;
  write_file_atomic((slurm_dir(out) / "report.sbatch").string(), slurm_report_script(s));
  write_jobs(out, jobs);
}

int submit_to_slurm(const SlurmArgs& a, const SlurmJobs& j, const std::string& out,
                    const std::string& conflicts) {
  json jobs;
  try {
    jobs = slurm_jobs_or_refuse(a, j, out, conflicts);
  } catch (const std::exception& e) {
    std::cerr << "attnlab " << j.command << ": " << e.what() << "\n";
    return kExitUsage;
  }
  try {
    std::vector<int> todo;
    if (a.resubmit_failed) {
      todo = j.failed_tasks(jobs);
      if (todo.empty()) {
        std::cout << "nothing to resubmit: every cell is finished, running or pending\n";
        return kExitOk;
      }
    } else {
      write_slurm_scripts(j, out, jobs);
      for (int t = 0; t < jobs["tasks"].get<int>(); ++t) todo.push_back(t);
    }
    submit_tasks(a, out, todo, jobs, j.report_note);
    return kExitOk;
  } catch (const std::exception& e) {
    std::cerr << "attnlab " << j.command << ": " << e.what() << "\n";
    return kExitRunFailed;
  }
}

}  // namespace

int submit_sweep_to_slurm(const SlurmArgs& a, const SweepPlan& plan, const std::string& out,
                          const std::string& conflicts) {
  SlurmJobs j;
  j.command = "sweep";
  j.cells = plan.cells.size();
  j.report = {executable_path(), "slurm-status", "--out", fs::absolute(out).string(), "--report"};
  j.report_note = out + "/report.md)\nstate: attnlab slurm-status --out " + out;
  j.check_out = [&] { open_sweep_dir(plan, out); };  // refuses another sweep's directory
  j.failed_tasks = [&](const json& jobs) {
    return tasks_to_resubmit(slurm_cell_status(plan, out, jobs, job_states()));
  };
  return submit_to_slurm(a, j, out, conflicts);
}

namespace {

// A suite or a reproduction: task t runs this command with --shard t/T, the report job runs it
// with `report_flag` and writes OUT/`product`; each task's done mark says which cells finished.
int submit_campaign_to_slurm(const SlurmArgs& a, const std::string& command, size_t cells,
                             const std::string& out, const std::string& conflicts,
                             const std::string& report_flag, const std::string& product) {
  SlurmJobs j;
  j.command = command;
  j.cells = cells;
  j.report = task_command(own_arguments());  // (a resubmission keeps report.sbatch as it is)
  j.report.push_back(report_flag);
  j.report_note = out + "/" + product + "; its log: " + out + "/slurm/report.log)";
  j.failed_tasks = [&](const json& jobs) { return failed_campaign_tasks(out, jobs); };
  return submit_to_slurm(a, j, out, conflicts);
}

}  // namespace

int submit_suite_to_slurm(const SlurmArgs& a, size_t pairs, const std::string& out,
                          const std::string& conflicts) {
  return submit_campaign_to_slurm(a, "suite", pairs, out, conflicts, "--report-only",
                                  "leaderboard.md");
}

int submit_reproduce_to_slurm(const SlurmArgs& a, size_t arms, const std::string& out,
                              const std::string& conflicts) {
  return submit_campaign_to_slurm(a, "reproduce", arms, out, conflicts, "--slurm-report",
                                  "report.md");
}

void slurm_task_done(const std::string& out, const std::string& shard) {
  int task = 0, tasks = 1;
  parse_shard(shard, task, tasks);
  const fs::path file = slurm_task_done_path(out, task);
  fs::create_directories(file.parent_path());
  write_file_atomic(file.string(),
                    json({{"task", task}, {"tasks", tasks}, {"date", utc_now()}}).dump() + "\n");
}

void install_requeue_signal() {
  stop_also_on(SIGUSR1);
}

int slurm_task_exit(int code) {
  if (stop_signal() != SIGUSR1) return code;
  const char* job = std::getenv("SLURM_ARRAY_JOB_ID");
  const char* task = std::getenv("SLURM_ARRAY_TASK_ID");
  const char* single = std::getenv("SLURM_JOB_ID");
  const std::string id = job && task ? std::string(job) + "_" + task : single ? single : "";
  if (id.empty()) {
    std::cerr << "attnlab: SIGUSR1 outside a Slurm job: checkpointed, not requeued\n";
    return kExitRequeue;
  }
  std::cerr << "attnlab: SIGUSR1: the running cell is checkpointed; requeueing " << id << "\n";
  std::string text;
  if (run_capture({"scontrol", "requeue", id}, text) != 0)
    std::cerr << "attnlab: scontrol requeue " << id << " failed: " << text;
  return kExitRequeue;
}

CLI::App* add_command(CLI::App& app, SlurmStatusArgs& a) {
  auto* cmd = app.add_subcommand(
      "slurm-status",
      "State of a sweep, suite or reproduction submitted with --slurm: cells finished, running, "
      "pending, failed or never started (run directories or each task's done mark, squeue, "
      "sacct)");
  cmd->add_option("--out", a.out, "The directory submitted (sweep|suite|reproduce --slurm --out)")
      ->required();
  cmd->add_flag("--json", a.json, "Print the cells and counts as JSON");
  cmd->add_flag("--report", a.report,
                "A sweep's: also write OUT/report.md and OUT/report.json (the per-group table "
                "and the counts; the report job does this)");
  cmd->add_flag("--resubmit-failed", a.slurm.resubmit_failed,
                "Submit again the tasks whose cells failed or never started");
  cmd->add_option("--slurm-arg", a.slurm.args, "With --resubmit-failed: an sbatch option");
  cmd->add_option("--max-parallel", a.slurm.max_parallel,
                  "With --resubmit-failed: array tasks running at once")
      ->check(CLI::Range(1, 100000));
  return with_footer(cmd,
                     "Without accounting (sacct) a job is known while squeue still lists it; a "
                     "cell whose task ended without finishing it is failed (it has a run "
                     "directory) or never started.");
}

namespace {

constexpr SlurmCellState kStates[] = {SlurmCellState::Finished, SlurmCellState::Running,
                                      SlurmCellState::Pending, SlurmCellState::Failed,
                                      SlurmCellState::NeverStarted};

json status_json(const std::vector<SlurmCellStatus>& cells, json& counts) {
  json rows = json::array();
  for (auto s : kStates) counts[to_string(s)] = 0;
  for (const auto& c : cells) {
    counts[to_string(c.state)] = counts[to_string(c.state)].get<int>() + 1;
    rows.push_back({{"cell", c.cell},
                    {"task", c.task},
                    {"dir", c.dir},
                    {"job", c.job},
                    {"job_state", c.job_state},
                    {"state", to_string(c.state)}});
  }
  return rows;
}

std::string counts_line(const json& counts) {
  std::string line;
  for (auto s : kStates)
    line += (line.empty() ? "" : ", ") + std::to_string(counts.value(to_string(s), 0)) + " " +
            to_string(s);
  return line;
}

void write_report(const SweepPlan& plan, const std::string& out, const json& counts) {
  const auto groups = aggregate_sweep(plan, out);
  write_file_atomic((fs::path(out) / "report.md").string(),
                    "# Sweep " + out + "\n\nCells: " + counts_line(counts) + "\n\n" +
                        group_table_markdown(groups));
  write_file_atomic((fs::path(out) / "report.json").string(),
                    json({{"cells", counts}, {"groups", group_table_json(groups)}}).dump(2) + "\n");
}

}  // namespace

namespace {

// What slurm-status reads: jobs.json, and for a sweep its plan (sweep.json).
struct SubmittedWork {
  json jobs;
  std::string command;  // jobs.json's "command" ("sweep" when absent: the first format)
  SweepPlan plan;       // a sweep's only
};

SubmittedWork read_submitted(const std::string& out) {
  SubmittedWork w;
  w.jobs = read_json_file((slurm_dir(out) / "jobs.json").string());
  w.command = w.jobs.value("command", std::string("sweep"));
  if (w.command == "sweep") w.plan = plan_from_manifest(out);
  return w;
}

// Submits again the tasks whose cells failed or never started, with the scripts written at
// the first submission.
int resubmit(const SlurmStatusArgs& a, const SubmittedWork& w) {
  SlurmArgs s = a.slurm;
  s.pack = w.jobs.value("pack", 1);
  if (w.command == "sweep") return submit_sweep_to_slurm(s, w.plan, a.out, "");
  const size_t cells = w.jobs.value("cells", w.jobs.value("tasks", 1));
  return w.command == "suite" ? submit_suite_to_slurm(s, cells, a.out, "")
                              : submit_reproduce_to_slurm(s, cells, a.out, "");
}

}  // namespace

int run_command(const SlurmStatusArgs& a) {
  SubmittedWork w;
  try {
    w = read_submitted(a.out);
    if (a.report && w.command != "sweep")
      throw Error("--report: a " + w.command + "'s report job writes its own (" +
                  (slurm_dir(a.out) / "report.sbatch").string() + ")");
  } catch (const std::exception& e) {
    std::cerr << "attnlab slurm-status: " << e.what() << " (is " << a.out
              << " a sweep, suite or reproduction submitted with --slurm?)\n";
    return kExitUsage;
  }
  if (a.slurm.resubmit_failed) return resubmit(a, w);
  try {
    const auto cells = w.command == "sweep"
                           ? slurm_cell_status(w.plan, a.out, w.jobs, job_states())
                           : slurm_task_status(fs::absolute(a.out).string(), w.jobs, job_states());
    json counts = json::object();
    const json rows = status_json(cells, counts);
    if (a.report) write_report(w.plan, a.out, counts);
    if (a.json) {
      std::cout << json({{"command", w.command}, {"cells", rows}, {"counts", counts}}).dump(2)
                << "\n";
      return kExitOk;
    }
    for (const auto& c : cells)
      std::cout << c.cell << "  task " << c.task << "  " << (c.job.empty() ? "-" : c.job) << "  "
                << (c.job_state.empty() ? "-" : c.job_state) << "  " << to_string(c.state) << "  "
                << (c.dir.empty() ? "-" : c.dir) << "\n";
    std::cout << counts_line(counts) << "\n";
    return kExitOk;
  } catch (const std::exception& e) {
    std::cerr << "attnlab slurm-status: " << e.what() << "\n";
    return kExitRunFailed;
  }
}

}  // namespace attn
