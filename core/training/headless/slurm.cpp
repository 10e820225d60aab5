#include "core/training/headless/slurm.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include "core/base/error.h"

namespace attn {
namespace fs = std::filesystem;
using nlohmann::json;

std::vector<ArrayChunk> split_array_tasks(std::vector<int> tasks, int max_array_size) {
  if (max_array_size < 1) throw Error("MaxArraySize " + std::to_string(max_array_size) + " < 1");
  std::sort(tasks.begin(), tasks.end());
  tasks.erase(std::unique(tasks.begin(), tasks.end()), tasks.end());
  std::vector<ArrayChunk> out;
  for (int t : tasks) {
    if (out.empty() || t - out.back().offset >= max_array_size) out.push_back({t, {}});
    out.back().tasks.push_back(t);
  }
  return out;
}

std::string array_spec(const ArrayChunk& chunk, int max_parallel) {
  std::string spec;
  const auto& t = chunk.tasks;
  for (size_t i = 0; i < t.size();) {
    size_t j = i;
    while (j + 1 < t.size() && t[j + 1] == t[j] + 1) ++j;
    spec += (spec.empty() ? "" : ",") + std::to_string(t[i] - chunk.offset);
    if (j > i) spec += "-" + std::to_string(t[j] - chunk.offset);
    i = j + 1;
  }
  if (max_parallel > 0) spec += "%" + std::to_string(max_parallel);
  return spec;
}

int parse_max_array_size(const std::string& scontrol_config) {
  std::istringstream in(scontrol_config);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("MaxArraySize", 0) != 0) continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    try {
      const int n = std::stoi(line.substr(eq + 1));
      if (n >= 1) return n;
    } catch (const std::exception&) {
    }
  }
  return 1001;
}

std::string parse_sbatch_job_id(const std::string& output) {
  std::string id = output.substr(0, output.find_first_of(";\n"));
  const bool digits =
      !id.empty() && std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) throw Error("sbatch printed no job id: '" + output + "'");
  return id;
}

std::map<std::string, std::string> parse_job_states(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::replace(line.begin(), line.end(), '|', ' ');
    std::istringstream words(line);
    std::string job, state;
    if (words >> job >> state) out[job] = state;  // "CANCELLED by 0": the first word
  }
  return out;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

namespace {

std::string command_line(const std::vector<std::string>& command) {
  std::string line;
  for (const auto& a : command) line += (line.empty() ? "" : " ") + shell_quote(a);
  return line;
}

std::string script_header(const SlurmScript& s, const std::string& log) {
  const std::string slurm_dir = (fs::path(s.out_dir) / "slurm").string();
  return "#!/bin/bash\n# Written by attnlab; submitted by `attnlab sweep --slurm`.\n"
         "#SBATCH --job-name=" +
         s.job_name + "\n#SBATCH --chdir=" + s.workdir +
         "\n#SBATCH --output=" + (fs::path(slurm_dir) / log).string() +
         "\n#SBATCH --open-mode=append\n";
}

}  // namespace

std::string slurm_task_script(const SlurmScript& s) {
  std::ostringstream o;
  o << script_header(s, "task-%A_%a.log") << "#SBATCH --requeue\n"
    << "#SBATCH --signal=B:USR1@" << s.signal_seconds << "\n"
    << "# Task t runs the cells whose index % " << s.tasks << " == t; $1 is the offset of this\n"
    << "# array's ids (arrays are split at the cluster's MaxArraySize).\n"
    << "task=$((SLURM_ARRAY_TASK_ID + ${1:-0}))\n"
    << "echo \"attnlab: task $task of " << s.tasks
    << ", job ${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}, "
       "restart ${SLURM_RESTART_COUNT:-0}, $(date -u +%FT%TZ)\"\n"
    << "# exec: USR1 (time limit near, preemption) reaches attnlab, which checkpoints and\n"
    << "# requeues this task.\n"
    << "exec " << command_line(s.command) << " --shard \"$task/" << s.tasks << "\" --slurm-task\n";
  return o.str();
}

std::string slurm_report_script(const SlurmScript& s) {
  return script_header(s, "report.log") + "exec " + command_line(s.command) + "\n";
}

const char* to_string(SlurmCellState s) {
  // In the enum's order (slurm.h).
  static const char* const kNames[] = {"finished", "running", "pending", "failed", "never started"};
  return kNames[static_cast<int>(s)];
}

std::string slurm_task_job(const json& jobs, int task) {
  std::string job;
  for (const auto& a : jobs.value("arrays", json::array())) {
    const auto& tasks = a.value("tasks", json::array());
    if (std::find(tasks.begin(), tasks.end(), json(task)) != tasks.end())
      job = a.value("job", std::string()) + "_" + std::to_string(task - a.value("offset", 0));
  }
  return job;
}

namespace {

bool job_active(const std::string& state) {
  static const std::set<std::string> kActive = {"PENDING",  "RUNNING",  "COMPLETING", "CONFIGURING",
                                                "REQUEUED", "RESIZING", "SUSPENDED"};
  return kActive.count(state) > 0;
}

}  // namespace

std::vector<SlurmCellStatus> slurm_cell_status(const SweepPlan& plan, const std::string& out_dir,
                                               const json& jobs,
                                               const std::map<std::string, std::string>& states) {
  const int tasks = jobs.value("tasks", 1);
  if (tasks < 1) throw Error("slurm/jobs.json: tasks must be >= 1");
  std::vector<SlurmCellStatus> out;
  for (const auto& cell : plan.cells) {
    SlurmCellStatus s;
    s.cell = cell.index;
    s.task = cell.index % tasks;
    s.dir = cell.dir;
    s.job = slurm_task_job(jobs, s.task);
    const auto it = states.find(s.job);
    if (it != states.end()) s.job_state = it->second;
    std::error_code ec;
    const bool started = fs::exists(fs::path(out_dir) / cell.dir, ec);
    if (cell_state(out_dir, cell) == CellState::Done)
      s.state = SlurmCellState::Finished;
    else if (s.job.empty())
      s.state = SlurmCellState::NeverStarted;
    else if (job_active(s.job_state))
      s.state =
          s.job_state == "RUNNING" && started ? SlurmCellState::Running : SlurmCellState::Pending;
    else
      s.state = started ? SlurmCellState::Failed : SlurmCellState::NeverStarted;
    out.push_back(s);
  }
  return out;
}

std::string slurm_task_done_path(const std::string& out_dir, int task) {
  return (fs::path(out_dir) / "slurm" / "done" / ("task-" + std::to_string(task) + ".json"))
      .string();
}

std::vector<SlurmCellStatus> slurm_task_status(const std::string& out_dir, const json& jobs,
                                               const std::map<std::string, std::string>& states) {
  const int tasks = jobs.value("tasks", 1);
  const int cells = jobs.value("cells", tasks);
  if (tasks < 1 || cells < tasks)
    throw Error("slurm/jobs.json: need tasks >= 1 and cells >= tasks");
  std::vector<SlurmCellStatus> out;
  for (int c = 0; c < cells; ++c) {
    SlurmCellStatus s;
    s.cell = c;
    s.task = c % tasks;
    s.job = slurm_task_job(jobs, s.task);
    const auto it = states.find(s.job);
    if (it != states.end()) s.job_state = it->second;
    std::error_code ec;
    const fs::path log = fs::path(out_dir) / "slurm" / ("task-" + s.job + ".log");
    const bool started = !s.job.empty() && fs::exists(log, ec);
    if (started) s.dir = log.lexically_relative(out_dir).generic_string();
    if (fs::exists(slurm_task_done_path(out_dir, s.task), ec))
      s.state = SlurmCellState::Finished;
    else if (s.job.empty())
      s.state = SlurmCellState::NeverStarted;
    else if (job_active(s.job_state))
      s.state = s.job_state == "RUNNING" ? SlurmCellState::Running : SlurmCellState::Pending;
    else
      s.state = started ? SlurmCellState::Failed : SlurmCellState::NeverStarted;
    out.push_back(s);
  }
  return out;
}

std::vector<int> tasks_to_resubmit(const std::vector<SlurmCellStatus>& cells) {
  std::set<int> want, busy;
  for (const auto& c : cells) {
    if (c.state == SlurmCellState::Failed || c.state == SlurmCellState::NeverStarted)
      want.insert(c.task);
    if (c.state == SlurmCellState::Running || c.state == SlurmCellState::Pending)
      busy.insert(c.task);
  }
  std::vector<int> out;
  for (int t : want)
    if (!busy.count(t)) out.push_back(t);
  return out;
}

}  // namespace attn
