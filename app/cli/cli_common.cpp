// What the headless commands share (cli.h): numbers in tables, the shipped data, dates, error
// handling and the --figure FILE options.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "app/cli/cli.h"
#include "app/cli/compare/cli_compare.h"
#include "app/common/data_paths.h"
#include "core/base/error.h"
#include "core/training/threads/thread_policy.h"
#include "render/plot/figure_font.h"

namespace attn {

std::string fixed_number(double v, int precision) {
  if (!std::isfinite(v)) return "-";
  std::ostringstream s;
  s << std::fixed << std::setprecision(precision) << v;
  return s.str();
}

int threads_per_job(int jobs) {
  return std::max(1, usable_cores() / std::max(1, jobs));
}

std::string find_data_path_or_throw(const std::string& relative, const std::string& what,
                                    const std::string& option) {
  std::string found = find_data_path(relative);
  if (!found.empty()) return found;
  std::string tried;
  for (const auto& p : data_path_candidates(relative)) tried += " " + p;
  throw Error("cannot find the " + what + " (tried" + tried + "); give " + option);
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
  return buf;
}

int run_reporting_errors(const std::string& command, const std::function<int()>& body) {
  try {
    return body();
  } catch (const Error& e) {
    std::cerr << "attnlab " << command << ": " << e.what() << "\n";
  } catch (const fig::FigureError& e) {
    std::cerr << "attnlab " << command << ": " << e.what() << "\n";
  } catch (const std::exception& e) {  // the input was accepted, the work failed
    std::cerr << "attnlab " << command << ": " << e.what() << "\n";
    return kExitRunFailed;
  }
  return kExitUsage;
}

void add_figure_output_options(CLI::App* cmd, FigureOutputArgs& out, const FigureOutputHelp& help) {
  cmd->add_option("--figure", out.figure, help.figure);
  cmd->add_option("--width-in", out.request.width_in, "--figure width in inches (1..20)");
  cmd->add_option("--dpi", out.request.dpi, help.dpi);
  cmd->add_flag("--json", out.json, help.json);
}

void add_run_pacing_options(CLI::App* cmd, int& threads, long long& checkpoint_every,
                            const RunPacingHelp& help) {
  cmd->add_option("--threads", threads, help.threads)->check(CLI::NonNegativeNumber);
  cmd->add_option("--checkpoint-every", checkpoint_every, help.checkpoint_every)
      ->check(CLI::NonNegativeNumber);
}

fig::ExportRequest figure_file_request(const std::string& figure,
                                       const fig::ExportRequest& options) {
  std::string ext = std::filesystem::path(figure).extension().string();
  fig::ExportRequest request = options;
  if (ext.empty() || !fig::parse_export_format(ext.substr(1), request.format))
    throw Error("--figure " + figure +
                ": cannot tell the format from the extension; use .pdf, .svg, .png or .csv");
  request.path = figure;
  fig::validate(request);
  return request;
}

void add_campaign_options(CLI::App* cmd, CampaignArgs& a, const CampaignWords& w) {
  std::string product = w.product;
  product[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(product[0])));
  cmd->add_option("--out", a.out, product + " directory (runs under " + w.runs_under + ")")
      ->required();
  cmd->add_flag("--quick", a.quick,
                "Tiny runs (the manifest's quick slice): checks the pipeline, not the results");
  cmd->add_option("--seeds", a.seeds, "Seeds per " + w.unit + " (default: the manifest's)")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--jobs,-j", a.jobs, "Runs at a time, each its own process (default 1)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--threads", a.threads, "Torch threads per run (default: the configs')")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--report-only", a.report_only,
                "Train and measure nothing: rewrite the " + w.product + " from what OUT holds");
  cmd->add_flag("--json", a.json,
                "Print " + w.product + ".json" + w.json_extra + " instead of the table");
}

}  // namespace attn
