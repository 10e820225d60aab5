#include "app/cli/compare/cli_compare.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include "app/cli/cli.h"
#include "app/cli/progress.h"
#include "app/common/data_paths.h"
#include "app/figures/runs/compare_figures.h"
#include "core/analysis/verdict.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/base/interrupt.h"
#include "core/base/version.h"
#include "core/config/config_set.h"
#include "core/runs/directory/seed_groups.h"
#include "core/training/threads/thread_policy.h"
#include "render/plot/export/figure_export.h"
#include "render/plot/figure_font.h"

extern char** environ;

namespace attn {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

double summary_number(const RunDirectory& r, const char* key) {
  if (!r.finished || !r.summary.contains(key) || !r.summary[key].is_number()) return NAN;
  return r.summary[key].get<double>();
}

// The summary.json keys the table shows.
const char* const kSummaryKeys[] = {"steps",
                                    "eval_loss",
                                    "eval_accuracy",
                                    "parameters",
                                    "attention_parameters",
                                    "steps_per_second",
                                    "peak_rss_mib"};

// A finished run's summary.json value that the table would show as "-" though it is there: a
// string, an object, ... where a number belongs (an edited or foreign file). One line each.
void warn_non_numbers(const std::vector<ComparedRun>& runs) {
  for (const auto& c : runs) {
    if (!c.run.finished) continue;
    for (const char* key : kSummaryKeys) {
      const auto it = c.run.summary.find(key);
      if (it == c.run.summary.end() || it->is_number() || it->is_null()) continue;
      std::string value = it->dump();
      if (value.size() > 40) value = value.substr(0, 37) + "...";
      std::cerr << "attnlab compare: warning: " << (fs::path(c.run.dir) / "summary.json").string()
                << ": " << key << " is " << value << ", not a number; shown as -\n";
    }
  }
}

std::string cell(double v, int precision, bool integer = false) {
  if (!std::isfinite(v)) return "-";
  std::ostringstream s;
  if (integer)
    s << static_cast<long long>(std::llround(v));
  else
    s << std::fixed << std::setprecision(precision) << v;
  return s.str();
}

// Columns padded to their widest cell.
std::string align(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      // UTF-8 "±" is two bytes but one column.
      size_t n = 0;
      for (unsigned char c : r[i]) n += (c & 0xC0) != 0x80;
      width[i] = std::max(width[i], n);
    }
  std::string out;
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size(); ++i) {
      size_t n = 0;
      for (unsigned char c : r[i]) n += (c & 0xC0) != 0x80;
      out += r[i];
      if (i + 1 < r.size()) out += std::string(width[i] - n + 2, ' ');
    }
    out += "\n";
  }
  return out;
}

}  // namespace

namespace {

// A cell's config, written where its child reads it: OUT/<cell dir>.cell.json.
std::string write_cell_config(const SweepCell& cell, const std::string& out_dir) {
  std::error_code ec;
  fs::create_directories(fs::path(out_dir).parent_path(), ec);
  const std::string path = out_dir + ".cell.json";
  std::ofstream out(path);
  out << to_json(cell.config).dump(2) << "\n";
  if (!out.flush()) throw Error("cannot write " + path);
  return path;
}

// Runs this executable with `args` (args[0] its name) as a child whose stdout goes to stderr
// (this process's stdout carries results only) and whose progress stays plain lines; on Linux
// it is killed when this process dies. `lock_held`: the run directory whose lock this process
// holds for it (kRunLockHeldEnv), or "". Returns its exit code (128 + the signal that ended it).
int run_attnlab_child(std::vector<std::string> args, const std::string& lock_held) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The child's progress stays plain lines (cells may run side by side); built before fork, as
  // the child may only call async-signal-safe functions.
  std::string progress_env = std::string(kProgressEnv) + "=lines";
  std::vector<char*> envp;
  auto starts_with = [](const char* s, const char* prefix) {
    return std::strncmp(s, prefix, std::strlen(prefix)) == 0;
  };
  for (char** e = environ; *e; ++e)
    if (!starts_with(*e, kProgressEnv) && !starts_with(*e, kRunLockHeldEnv)) envp.push_back(*e);
  envp.push_back(progress_env.data());
  // The sweep holds the cell's lock for the child (core/training/headless/headless.h).
  std::string lock_env;
  if (!lock_held.empty()) {
    lock_env = std::string(kRunLockHeldEnv) + "=" + fs::absolute(lock_held).string();
    envp.push_back(lock_env.data());
  }
  envp.push_back(nullptr);
#ifdef __linux__
  const std::string exe = "/proc/self/exe";  // this very binary, even if rebuilt meanwhile
#else
  const std::string exe = executable_path();
  if (exe.empty()) throw Error("cannot start a training process: the executable's path is unknown");
#endif
  std::cout.flush();
  std::cerr.flush();
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw Error("cannot start a training process: fork failed");
  if (pid == 0) {
#ifdef __linux__
    // The run dies with the sweep: a killed sweep must not leave a run writing into a cell
    // that the next invocation resumes. (Elsewhere the orphan finishes its cell.)
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    if (getppid() != parent) _exit(127);
    dup2(STDERR_FILENO, STDOUT_FILENO);  // the sweep's stdout carries its results only
    execve(exe.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  // A stop asked of this process (kill PID: only the sweep got it) reaches the child too, once,
  // so that it checkpoints now instead of training to its end. It is sent as the other stop
  // signal (SIGTERM for SIGINT/SIGHUP, SIGINT for SIGTERM): a child that received the same signal
  // itself (Ctrl-C reaches the whole process group) takes a second one of a kind as "stop at
  // once" (core/base/interrupt.h) and would lose its checkpoint. It names the signal this process
  // got, so that the cell's log and summary say SIGUSR1 in a Slurm task.
  int status = 0;
  bool forwarded = false;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    if (!forwarded && stop_signal() != 0) {
      forward_stop(pid, stop_signal() == SIGTERM ? SIGINT : SIGTERM, stop_signal());
      forwarded = true;
    }
    usleep(20 * 1000);
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace

int run_cell_in_child(const SweepCell& cell, const HeadlessOptions& h, bool quiet, int jobs) {
  std::vector<std::string> args = {"attnlab", "train"};
  std::string cell_config;
  if (!h.resume_dir.empty()) {
    args.insert(args.end(), {"--resume", h.resume_dir});
  } else {
    cell_config = write_cell_config(cell, h.out_dir);
    args.insert(args.end(), {"--config", cell_config, "--out", h.out_dir});
  }
  // N children must not each take every core: each gets cores/N at most, its count still
  // chosen by measurement (a fixed cores/N collapses when the machine is busy; thread_policy.h),
  // unless --threads or the cell's config fixes it.
  int threads = h.threads, max_threads = 0;
  if (threads == 0 && jobs > 1) {
    if (cell.config.threads > 0)
      threads = std::min(threads_per_job(jobs), cell.config.threads);
    else
      max_threads = threads_per_job(jobs);
  }
  if (threads > 0) args.insert(args.end(), {"--threads", std::to_string(threads)});
  if (max_threads > 0) args.insert(args.end(), {"--max-threads", std::to_string(max_threads)});
  if (h.checkpoint_every > 0)
    args.insert(args.end(), {"--checkpoint-every", std::to_string(h.checkpoint_every)});
  if (quiet) args.push_back("-q");
  const int code = run_attnlab_child(args, h.lock ? "" : h.out_dir);
  if (!cell_config.empty()) {
    std::error_code ec;
    fs::remove(cell_config, ec);
  }
  return code;
}

PackResult ChildPack::run() {
  const std::string spec_path = spec_["runs"][0]["out"].get<std::string>() + ".pack.json";
  const std::string result_path = spec_["runs"][0]["out"].get<std::string>() + ".pack-result.json";
  std::error_code ec;
  fs::remove(result_path, ec);  // a result left by a killed sweep is not this pack's
  spec_["quiet"] = quiet_;
  write_file_atomic(spec_path, spec_.dump(2) + "\n");
  const int code =
      run_attnlab_child({"attnlab", "pack-run", "--spec", spec_path, "--result", result_path}, "");
  const size_t n = spec_["runs"].size();
  PackResult r;
  try {
    r = pack_result_from_json(read_json_file(result_path), n, result_path);
  } catch (const std::exception&) {  // the process ended before its result (killed, crashed)
    r.runs.assign(n, {code == 0 ? kExitRunFailed : code, 0.0});
  }
  for (const auto& path : files_) fs::remove(path, ec);
  fs::remove(spec_path, ec);
  fs::remove(result_path, ec);
  for (size_t i = 0; i < n; ++i)
    exits_.record(r.runs[i].exit_code, spec_["runs"][i]["resume"].get<std::string>().empty());
  return r;
}

void ChildPack::add(const SweepCell& cell, const HeadlessOptions& h) {
  const std::string out = fs::absolute(h.out_dir).string();
  std::string config;
  if (h.resume_dir.empty()) {
    config = write_cell_config(cell, h.out_dir);
    files_.push_back(config);
  }
  spec_["runs"].push_back(
      {{"config", config},
       {"out", out},
       {"resume", h.resume_dir.empty() ? "" : fs::absolute(h.resume_dir).string()},
       {"tag", cell.dir},
       {"checkpoint_every", h.checkpoint_every}});
}

int CellExits::run(const SweepCell& cell, const HeadlessOptions& h, bool quiet, int jobs) {
  if (const int code = interrupted_.load()) return code;
  const int code = run_cell_in_child(cell, h, quiet, jobs);
  record(code, h.resume_dir.empty());
  return code;
}

void CellExits::record(int code, bool fresh) {
  if (is_interruption(code))
    interrupted_ = code;
  else if (fresh && code != kExitOk && code != kExitDiverged)
    failed_ = true;  // a failed resume is retried from the start; a failed fresh run is final
}

int CellExits::code_for_failure() const {
  if (const int code = interrupted_.load()) return code;
  return failed_ ? kExitRunFailed : kExitUsage;
}

std::vector<ComparedRun> load_compared_runs(const std::vector<std::string>& dirs) {
  std::vector<ComparedRun> out;
  std::vector<std::string> sweep_of;  // per run: the sweep directory given, or "" for a run
  for (const auto& d : dirs) {
    std::error_code ec;
    const fs::path manifest = fs::path(d) / "sweep.json";
    if (fs::exists(manifest, ec) && !fs::exists(fs::path(d) / "config.json", ec)) {
      const json m = read_json_file(manifest);
      if (!m.contains("cells") || !m["cells"].is_array())
        throw Error(manifest.string() + " has no cells list (is it an attnlab sweep?)");
      for (const auto& c : m["cells"]) {
        const std::string rel = c.at("dir").get<std::string>();
        const fs::path cd = fs::path(d) / rel;
        if (!fs::exists(cd / "config.json", ec) || !fs::exists(cd / "metrics.csv", ec)) continue;
        out.push_back({read_run_directory(cd.string()), rel});
        sweep_of.push_back(d);
      }
      continue;
    }
    ComparedRun r{read_run_directory(d), ""};
    r.label = r.run.id;
    out.push_back(std::move(r));
    sweep_of.push_back("");
  }
  // Two sweeps hold cells of the same name (lr=0.008/seed-2 in each arm's sweep): name every
  // sweep cell by its sweep directory too, so that rows and seed groups stay apart.
  std::set<std::string> labels;
  bool collide = false;
  for (const auto& r : out) collide |= !labels.insert(r.label).second;
  if (collide)
    for (size_t i = 0; i < out.size(); ++i)
      if (!sweep_of[i].empty())
        out[i].label = (fs::path(sweep_of[i]) / out[i].label).lexically_normal().string();
  return out;
}

std::string compare_table_text(const std::vector<ComparedRun>& runs) {
  std::vector<std::vector<std::string>> rows = {{"run", "mechanism", "task", "steps", "eval loss",
                                                 "eval acc", "parameters", "attn params", "steps/s",
                                                 "peak RSS MiB"}};
  for (const auto& c : runs) {
    const auto& r = c.run;
    rows.push_back({c.label, r.mechanism(), r.config.task.name,
                    r.finished ? cell(summary_number(r, "steps"), 0, true) : "(unfinished)",
                    cell(summary_number(r, "eval_loss"), 4),
                    cell(summary_number(r, "eval_accuracy"), 4),
                    cell(summary_number(r, "parameters"), 0, true),
                    cell(summary_number(r, "attention_parameters"), 0, true),
                    cell(summary_number(r, "steps_per_second"), 2),
                    cell(summary_number(r, "peak_rss_mib"), 1)});
  }
  return align(rows);
}

json compare_table_json(const std::vector<ComparedRun>& runs) {
  json out = json::array();
  for (const auto& c : runs) {
    const auto& r = c.run;
    json row = {{"run", c.label},
                {"dir", r.dir},
                {"mechanism", r.mechanism()},
                {"task", r.config.task.name},
                {"finished", r.finished}};
    for (const char* k : {"steps", "eval_loss", "eval_accuracy", "parameters",
                          "attention_parameters", "steps_per_second", "peak_rss_mib", "seed"})
      row[k] = r.finished && r.summary.contains(k) ? r.summary[k] : json(nullptr);
    out.push_back(row);
  }
  return out;
}

std::string group_table_markdown(const std::vector<GroupSummary>& groups) {
  std::ostringstream s;
  s << "| run | mechanism | seeds | eval loss | eval accuracy | parameters | attention parameters "
       "| steps/s | peak RSS MiB |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& g : groups)
    s << "| " << g.group << " | " << g.mechanism << " | " << g.finished << "/" << g.runs
      << (g.diverged ? " (" + std::to_string(g.diverged) + " diverged)" : "") << " | "
      << format_stat(g.eval_loss, 4) << " | " << format_stat(g.eval_accuracy, 4) << " | "
      << cell(g.parameters.n ? g.parameters.mean : NAN, 0, true) << " | "
      << cell(g.attention_parameters.n ? g.attention_parameters.mean : NAN, 0, true) << " | "
      << format_stat(g.steps_per_second, 2) << " | " << format_stat(g.peak_rss_mib, 0) << " |\n";
  return s.str();
}

json group_table_json(const std::vector<GroupSummary>& groups) {
  json table = json::array();
  for (const auto& g : groups)
    table.push_back({{"group", g.group},
                     {"mechanism", g.mechanism},
                     {"runs", g.runs},
                     {"finished", g.finished},
                     {"diverged", g.diverged},
                     {"eval_loss", stat_json(g.eval_loss)},
                     {"eval_accuracy", stat_json(g.eval_accuracy)},
                     {"steps_per_second", stat_json(g.steps_per_second)},
                     {"peak_rss_mib", stat_json(g.peak_rss_mib)},
                     {"parameters", stat_json(g.parameters)},
                     {"attention_parameters", stat_json(g.attention_parameters)}});
  return table;
}

std::vector<std::string> export_report_figure(const fig::Figure& figure, const std::string& dir,
                                              const std::string& stem, double width_in) {
  fig::Provenance p;
  p.program_version = version_string();
  p.run_id = stem;
  fig::ExportRequest pdf;
  pdf.format = fig::ExportFormat::Pdf;
  pdf.path = (fs::path(dir) / (stem + ".pdf")).string();
  pdf.width_in = width_in;
  auto files = fig::export_figure(figure, pdf, p).files;
  fig::ExportRequest png = pdf;
  png.format = fig::ExportFormat::Png;
  png.path = (fs::path(dir) / (stem + ".png")).string();
  png.dpi = 150;
  png.sidecars = false;  // the PDF's CSV and JSON describe the same figure
  for (auto& f : fig::export_figure(figure, png, p).files) files.push_back(f);
  return files;
}

CLI::App* add_command(CLI::App& app, CompareArgs& a) {
  auto* cmd = app.add_subcommand(
      "compare", "Table of final metrics of run directories (or sweep directories) side by side");
  cmd->add_option("dirs", a.dirs, "Run directories (attnlab train --out) or sweep directories")
      ->required();
  auto* as_json =
      cmd->add_flag("--json", a.json, "Print the table as JSON (summary.json values, unrounded)");
  cmd->add_flag(
         "--json-groups", a.json_groups,
         "Print the seed groups as JSON instead: each group's runs, seeds and mean ± sd, and "
         "each group's paired 95% interval and p-value against the first")
      ->excludes(as_json);
  cmd->add_option("--export", a.export_path,
                  "Write the loss/accuracy overlay: FILE.pdf|svg|png|csv (CSV and JSON beside)");
  cmd->add_option("--width", a.width_in, "Figure width in inches (default 7)");
  cmd->add_option("--seed-bands", a.seed_bands,
                  "In the exported figure, runs that differ only in their seed as one mean line "
                  "with a band: sd | ci95 (default: each run its own line)")
      ->check(CLI::IsMember({"sd", "ci95"}));
  return with_footer(cmd,
                     "Runs that differ only in their seed are grouped below the table: mean ± sd "
                     "per group and each group's paired 95% interval against the first "
                     "(--json-groups prints them as JSON). With --json or --json-groups the JSON "
                     "is the only thing on stdout.");
}

SeedGroupComparison compare_seed_groups(const std::vector<ComparedRun>& runs) {
  SeedGroupComparison out;
  std::vector<const RunDirectory*> dirs;
  std::vector<const ComparedRun*> compared;
  for (const auto& r : runs)
    if (r.run.finished && !r.run.summary.value("diverged", false)) {
      dirs.push_back(&r.run);
      compared.push_back(&r);
    }
  const auto groups = group_by_seed(dirs);
  bool any = false;
  for (const auto& g : groups) any |= g.members.size() > 1;
  if (!any) return out;
  auto keyed = [&](const SeedGroup& g, const char* metric) {
    KeyedValues k;
    for (size_t m : g.members) {
      const auto& s = dirs[m]->summary;
      if (s.contains(metric) && s[metric].is_number())
        k[static_cast<long long>(dirs[m]->config.seed)] = s[metric].get<double>();
    }
    return k;
  };
  auto values = [](const KeyedValues& k) {
    std::vector<double> v;
    for (const auto& [seed, x] : k) v.push_back(x);
    return v;
  };
  for (const auto& g : groups) {
    ComparedSeedGroup row;
    // The group's name: the sweep cell's group directory, else its first run's label.
    const std::string& label = compared[g.members[0]]->label;
    const auto cut = label.rfind("/seed-");
    row.name = cut != std::string::npos ? label.substr(0, cut) : label;
    row.mechanism = dirs[g.members[0]]->mechanism();
    for (size_t m : g.members) {
      row.runs.push_back(compared[m]->label);
      row.seeds.push_back(static_cast<long long>(dirs[m]->config.seed));
    }
    row.eval_loss = mean_sd(values(keyed(g, "eval_loss")));
    row.eval_accuracy = mean_sd(values(keyed(g, "eval_accuracy")));
    out.groups.push_back(std::move(row));
  }
  for (size_t i = 1; i < groups.size(); ++i)
    for (const char* metric : {"eval_loss", "eval_accuracy"})
      out.against_first.push_back(
          {i, metric, judge_better(keyed(groups[i], metric), keyed(groups[0], metric), false)});
  return out;
}

std::string seed_groups_text(const std::vector<ComparedRun>& runs) {
  const SeedGroupComparison c = compare_seed_groups(runs);
  if (c.groups.empty()) return "";
  std::vector<std::vector<std::string>> rows = {
      {"seed group", "mechanism", "seeds", "eval loss (mean ± sd)", "eval acc (mean ± sd)"}};
  for (const auto& g : c.groups)
    rows.push_back({g.name, g.mechanism, std::to_string(g.runs.size()), format_stat(g.eval_loss, 4),
                    format_stat(g.eval_accuracy, 4)});
  std::ostringstream out;
  out << "\nSeed groups (runs that differ only in their seed):\n" << align(rows);
  if (c.groups.size() < 2) return out.str();
  out << "\nAgainst " << c.groups[0].name
      << " (mean difference, 95% t-interval; paired by seed where seeds match, else Welch):\n";
  for (const auto& d : c.against_first) {
    const Verdict& v = d.verdict;
    out << "  " << c.groups[d.group].name << " - " << c.groups[0].name << " " << d.metric << ": "
        << cell(v.estimate, 4) << " [" << cell(v.lo, 4) << ", " << cell(v.hi, 4) << "], " << v.n
        << (v.paired ? " pairs" : " seeds (unpaired)") << ", p "
        << (std::isfinite(v.p_value) ? cell(v.p_value, 3) : std::string("-"))
        << (std::isfinite(v.lo) && (v.lo > 0 || v.hi < 0) ? "" : " (interval includes 0)") << "\n";
  }
  return out.str();
}

json seed_groups_json(const std::vector<ComparedRun>& runs) {
  const SeedGroupComparison c = compare_seed_groups(runs);
  auto number = [](double x) { return std::isfinite(x) ? json(x) : json(nullptr); };
  json groups = json::array();
  for (const auto& g : c.groups)
    groups.push_back({{"group", g.name},
                      {"mechanism", g.mechanism},
                      {"runs", g.runs},
                      {"seeds", g.seeds},
                      {"eval_loss", stat_json(g.eval_loss)},
                      {"eval_accuracy", stat_json(g.eval_accuracy)}});
  json differences = json::array();
  for (const auto& d : c.against_first) {
    const Verdict& v = d.verdict;
    differences.push_back({{"group", c.groups[d.group].name},
                           {"against", c.groups[0].name},
                           {"metric", d.metric},
                           {"paired", v.paired},
                           {"n", v.n},
                           {"difference", number(v.estimate)},
                           {"ci95", {number(v.lo), number(v.hi)}},
                           {"p_value", number(v.p_value)},
                           {"p_permutation", number(v.p_permutation)}});
  }
  return {{"groups", groups}, {"differences", differences}};
}

int run_command(const CompareArgs& a) {
  try {
    fig::ExportRequest request;
    if (!a.export_path.empty()) {
      std::string ext = fs::path(a.export_path).extension().string();
      if (!ext.empty()) ext = ext.substr(1);
      if (!fig::parse_export_format(ext, request.format))
        throw Error("--export " + a.export_path +
                    ": the file must end in .pdf, .svg, .png or .csv");
      request.path = a.export_path;
      request.width_in = a.width_in;
      fig::validate(request);  // before reading runs: a bad path or width fails first
    }
    const auto runs = load_compared_runs(a.dirs);
    if (runs.empty()) throw Error("compare: no run directory found in the directories given");
    warn_non_numbers(runs);
    if (a.json_groups)
      std::cout << seed_groups_json(runs).dump(2) << "\n";
    else if (a.json)
      std::cout << compare_table_json(runs).dump(2) << "\n";
    else
      std::cout << compare_table_text(runs) << seed_groups_text(runs);
    if (!a.export_path.empty()) {
      std::vector<figures::CompareCurve> curves;
      for (size_t i = 0; i < runs.size(); ++i)
        curves.push_back(
            {&runs[i].run, runs[i].label, figures::compare_color(static_cast<int>(i)), true});
      figures::CompareOptions options;
      if (a.seed_bands == "sd") options.seed_bands = figures::SeedBands::Sd;
      if (a.seed_bands == "ci95") options.seed_bands = figures::SeedBands::Ci95;
      const auto figure = figures::loss_overlay(curves, "", options);
      fig::Provenance p;
      p.program_version = version_string();
      p.run_id = "compare";
      const auto result = fig::export_figure(figure, request, p);
      std::ostream& note = a.json || a.json_groups ? std::cerr : std::cout;
      note << "wrote";
      for (const auto& f : result.files) note << " " << f;
      note << "\n";
    }
    return kExitOk;
  } catch (const std::exception& e) {  // fig::FigureError included
    std::cerr << "attnlab compare: " << e.what() << "\n";
    return kExitUsage;
  }
}

constexpr const char* kSweepFooter =
    R"(Each cell runs as `attnlab train` in a child process; progress goes to stderr, the closing
table (or with --json {"ran", "resumed", "skipped", "diverged", "groups"}) to stdout.
-j N without --threads gives each run cores/N torch threads (fewer if its config asks).
--pack N trains N cells together in one process, one torch thread each (their metrics.csv equal
theirs alone at --threads 1); each pack's steps/s and wall time go to OUT/pack.json.
Exits 1 when a cell failed, 3 when one diverged (the others still ran).)";

CLI::App* add_command(CLI::App& app, SweepArgs& a) {
  auto* cmd = app.add_subcommand(
      "sweep",
      "Run a grid of configs headless (one run directory each; resumable; --index/--shard for "
      "Slurm arrays or GNU parallel)");
  cmd->add_option("--config", a.config, "Base experiment config (JSON)")->required();
  cmd->add_option("--set", a.set, kConfigSetHelp);
  cmd->add_option("--vary", a.vary,
                  "key=v1,v2,... (a dotted config key, e.g. model.attention=ky,dot or "
                  "train.lr=1e-3,3e-3; repeatable: the grid is their product)");
  cmd->add_option("--seeds", a.seeds, "Seeds per grid point: the config's seed, +1, ... (1)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--out", a.out, "Sweep directory (one run directory per cell)")->required();
  cmd->add_option("--index", a.index, "Run only cell I (0-based; see --list)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--shard", a.shard, "Run cells whose index % n == i (i/n)");
  cmd->add_flag("--list", a.list, "Print the cells and their state, run nothing");
  cmd->add_option(
         "--lr-grid", a.lr_grid,
         "Multipliers of train.lr, e.g. 0.5,1,2: each grid point trains its first seed "
         "at every rate, the rate with the best validation accuracy is chosen (never the "
         "eval set), and its other seeds train at it (OUT/<group>/grid, OUT/<group>/seeds)")
      ->delimiter(',');
  cmd->add_option("--lr-extend", a.lr_extend,
                  "With --lr-grid: when the best rate is the grid's lowest or highest, try one "
                  "more a grid step beyond it, up to N times (default 2)")
      ->check(CLI::Range(0, 10));
  add_run_pacing_options(cmd, a.threads, a.checkpoint_every,
                         {"Torch threads per run (default: the config's, else chosen by "
                          "measurement; with -j N, at most cores/N)",
                          "Checkpoint every N steps so a killed run resumes mid-way (default: at "
                          "the end only)"});
  cmd->add_option("--jobs,-j", a.jobs,
                  "Cells (with --pack, packs) at a time, each its own process (default 1: runs "
                  "do not share cores, so steps/s and memory compare fairly)")
      ->check(CLI::Range(1, 256));
  cmd->add_flag("--quiet,-q", a.quiet, "Progress: only one line per cell");
  cmd->add_flag("--json", a.json, "Print the cells (--list) or the outcome and table as JSON");
  add_slurm_options(cmd, a.slurm);
  return with_footer(cmd, kSweepFooter);
}

int resolve_pack(int requested, int threads, int cells) {
  // Automatic: packs on a GPU, unless --threads asks for more than one torch thread per run.
  const bool gpu = requested == 0 && threads <= 1 && pack_gpu_present();
  if (requested == 0 && !gpu) return 0;  // a CPU: one process per run, as before packs
  const int pack = choose_pack_size(requested, cells, gpu);
  if (pack > 1 && threads > 1)
    throw Error("--threads " + std::to_string(threads) + " with --pack " +
                std::to_string(requested) +
                ": a packed run trains on one torch thread (the pack's runs share the cores); "
                "drop --threads, or give --pack 1");
  return threads > 1 ? 0 : pack;  // --pack 1 --threads N: its own process with N threads
}

namespace {

// The pack size of this invocation: --pack over the cells it runs (--index: one; --shard i/n:
// its share).
int sweep_pack(const SweepArgs& a, const SweepPlan& plan) {
  int cells = static_cast<int>(plan.cells.size());
  if (a.index >= 0) {
    cells = 1;
  } else if (!a.shard.empty()) {
    int i = 0, n = 1;
    parse_shard(a.shard, i, n);
    cells = 0;
    for (const auto& c : plan.cells) cells += c.index % n == i;
  }
  return resolve_pack(a.slurm.pack, a.threads, cells);
}

}  // namespace

int run_command(const SweepArgs& a) {
  SweepPlan plan;
  try {
    if (a.index >= 0 && !a.shard.empty()) throw Error("give --index or --shard, not both");
    json base = read_config_json(a.config);  // bounded, regular, not nested deep
    apply_config_sets(base, a.set);
    std::vector<VaryAxis> axes;
    for (const auto& v : a.vary) axes.push_back(parse_vary(v));
    plan = plan_sweep({{"", base}}, axes, a.seeds);
  } catch (const std::exception& e) {
    std::cerr << "attnlab sweep: " << e.what() << "\n";
    return kExitUsage;
  }
  if (a.slurm.any())
    return submit_sweep_to_slurm(a.slurm, plan, a.out,
                                 a.index >= 0           ? "--index"
                                 : !a.shard.empty()     ? "--shard"
                                 : a.list               ? "--list"
                                 : a.lr_grid.size() > 1 ? "--lr-grid"
                                                        : "");
  if (a.lr_grid.size() > 1) return run_tuned_sweep(a, plan);
  if (a.list) {
    json cells = json::array();
    for (const auto& c : plan.cells) {
      const std::string state = to_string(cell_state(a.out, c));
      if (a.json)
        cells.push_back({{"index", c.index}, {"dir", c.dir}, {"state", state}});
      else
        std::cout << c.index << "  " << c.dir << "  " << state << "\n";
    }
    if (a.json) std::cout << cells.dump(2) << "\n";
    return kExitOk;
  }
  int pack = 0;
  try {
    pack = sweep_pack(a, plan);
  } catch (const std::exception& e) {
    std::cerr << "attnlab sweep: " << e.what() << "\n";
    return kExitUsage;
  }
  install_stop_signals();  // Ctrl-C: the running cells checkpoint, no new cell starts
  if (a.slurm.task) install_requeue_signal();
  CellConsole console(a.quiet, a.jobs);
  auto o = console.run_options<SweepRunOptions>(a.out, a.threads, a.checkpoint_every);
  console.use_packs(o, pack);
  if (a.index >= 0) o.index = a.index;
  SweepOutcome outcome;
  if (const auto stopped =
          run_sweep_cells(console, a.shard, o, "cells", [&] { outcome = run_sweep(plan, o); }))
    return a.slurm.task ? slurm_task_exit(*stopped) : *stopped;
  try {
    const auto groups = aggregate_sweep(plan, a.out);
    if (a.json)
      std::cout << outcome_json(outcome, groups).dump(2) << "\n";
    else
      std::cout << outcome_line(outcome) << "\n" << group_table_markdown(groups);
  } catch (const std::exception& e) {
    std::cerr << "attnlab sweep: " << e.what() << "\n";
    return kExitRunFailed;
  }
  return outcome.diverged ? kExitDiverged : kExitOk;
}

}  // namespace attn
