// attnlab: train and watch attention models. `attnlab` alone opens the window.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <iostream>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "app/cli/cli.h"
#include "app/cli/compare/cli_compare.h"
#include "app/cli/compare/cli_slurm.h"
#include "app/cli/labs/cli_ky.h"
#include "app/cli/run/cli_config_doc.h"
#include "app/cli/run/cli_data.h"
#include "app/common/data_paths.h"
#include "app/common/exit_codes.h"
#include "attnlab_build_info.h"
#include "core/base/memory.h"
#include "core/config/config_set.h"
#ifdef ATTN_HAVE_GUI
#include "app/gui/gui.h"
#endif

// --- Start-up under an address-space limit (`ulimit -v`) ---------------------------------------
// OpenBLAS (under LibTorch) allocates a 128 MiB buffer per thread in its library constructor and
// retries a failed allocation forever: under a tight limit attnlab spun at 99% CPU before main.
// No environment variable shrinks that buffer (OPENBLAS_NUM_THREADS=1 and OMP_NUM_THREADS=1 were
// measured not to move the threshold on 2 cores). So a function in the executable's
// DT_PREINIT_ARRAY, which glibc runs after mapping every library but before any library's
// constructor, checks the limit: one that cannot hold what is mapped plus two buffers is refused
// at once with a message; above that, a watchdog (SIGALRM) and a terminate handler turn a spin or
// an allocation failure before main into the same message instead of a hang or an abort. main()
// disarms both.
namespace {

constexpr unsigned long long kOpenBlasBuffer = (128ull << 20) + (8ull << 10);  // + guard pages
constexpr unsigned kStartupWatchdogSeconds = 30;
char g_limit_message[768];
size_t g_limit_message_size = 0;
std::terminate_handler g_previous_terminate = nullptr;
struct sigaction g_previous_alarm {};
bool g_guard_armed = false;  // set where it is armed: main() disarms exactly that

unsigned long long mapped_bytes() {
  unsigned long long pages = 0;
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%llu", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  return pages * static_cast<unsigned long long>(sysconf(_SC_PAGESIZE));
}

// Prepares the message (async-signal-safe to print later): the limit, what start-up needs, what to
// do.
void prepare_limit_message(unsigned long long limit, unsigned long long mapped, const char* what) {
  const unsigned long long need_kib = (mapped + 2 * kOpenBlasBuffer + (256ull << 20)) >> 10;
  const int n = std::snprintf(
      g_limit_message, sizeof g_limit_message,
      "attnlab: %s under the address-space limit (ulimit -v %llu, in KiB): the libraries map "
      "%llu MiB and OpenBLAS, LibTorch's BLAS, reserves 128 MiB per thread as it starts (it "
      "retries a failed reservation forever). Raise the limit to at least %llu KiB (ulimit -v "
      "%llu) or lift it (ulimit -v unlimited); to cap the memory attnlab plans for, set "
      "ATTNLAB_MEMORY_LIMIT instead (docs/guide/hardening.md).\n",
      what, limit >> 10, mapped >> 20, need_kib, need_kib);
  g_limit_message_size = n > 0 ? std::min(static_cast<size_t>(n), sizeof g_limit_message - 1) : 0;
}

[[noreturn]] void exit_with_limit_message() {
  if (g_limit_message_size) {
    const ssize_t ignored = write(STDERR_FILENO, g_limit_message, g_limit_message_size);
    (void)ignored;
  }
  _exit(attn::kExitUsage);
}

extern "C" void on_startup_watchdog(int) {
  exit_with_limit_message();
}

void on_startup_terminate() {
  exit_with_limit_message();
}

extern "C" void check_address_space_limit(int, char**, char**) {
  rlimit rl{};
  if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return;
  const unsigned long long limit = rl.rlim_cur, mapped = mapped_bytes();
  if (limit < mapped + 2 * kOpenBlasBuffer) {
    prepare_limit_message(limit, mapped, "cannot start");
    exit_with_limit_message();
  }
  prepare_limit_message(limit, mapped, "could not start");
  struct sigaction sa {};
  sa.sa_handler = on_startup_watchdog;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, &g_previous_alarm);
  alarm(kStartupWatchdogSeconds);
  g_previous_terminate = std::set_terminate(on_startup_terminate);
  g_guard_armed = true;
}

// main() reached: start-up is over.
void disarm_startup_guard() {
  if (!g_guard_armed) return;
  alarm(0);
  sigaction(SIGALRM, &g_previous_alarm, nullptr);
  std::set_terminate(g_previous_terminate);
  g_guard_armed = false;
}

}  // namespace

__attribute__((section(".preinit_array"),
               used)) static void (*const kCheckAddressSpace)(int, char**,
                                                              char**) = check_address_space_limit;

namespace attn {
// Defined in core/kernels (torch-free signature; its header includes torch): the GPU's name, empty
// without CUDA kernels or without a GPU.
std::string cuda_device_name();
}  // namespace attn

namespace {

// One headless subcommand: registered on the app with its own arguments, run when parsed.
struct Subcommand {
  CLI::App* cmd;
  std::function<int()> run;
};

// The commands whose arguments are the types Args... (given as a std::tuple<Args...>, never
// built), registered in that order (app/cli/cli.h: each Args has its add_command and run_command
// overloads).
template <class... Args>
std::vector<Subcommand> subcommands(CLI::App& app, std::tuple<Args...>* /*types*/) {
  std::vector<Subcommand> commands;
  auto add = [&](auto args) {  // args: a shared_ptr, kept alive by the run closure
    CLI::App* cmd = attn::add_command(app, *args);
    commands.push_back({cmd, [args] { return attn::run_command(*args); }});
  };
  (add(std::make_shared<Args>()), ...);
  return commands;
}

// Every command's results go to standard output: a write that failed there (a full disk,
// `> /dev/full`, a closed pipe's EIO) must not end in exit 0 and an empty file. Flushes what is
// still buffered, both std::cout and C stdio (some commands printf), and checks both error
// states; a failure is said on stderr naming standard output and exits 1 (kExitRunFailed),
// unless the command already failed with its own code.
int stdout_checked(int rc, const std::string& command) {
  errno = 0;
  std::cout.flush();
  int err = errno;
  const bool stream_failed = !std::cout.good();
  if (std::fflush(stdout) != 0 && err == 0) err = errno;
  if (!stream_failed && !std::ferror(stdout) && err == 0) return rc;
  std::cerr << "attnlab" << (command.empty() ? "" : " " + command)
            << ": cannot write to standard output"
            << (err ? std::string(": ") + std::strerror(err) : "")
            << " (the results were not written; free space or redirect them elsewhere)\n";
  return rc == attn::kExitOk || rc == attn::kExitDiverged ? attn::kExitRunFailed : rc;
}

// `attnlab --version`: the version, the LibTorch it was built with, and where it computes.
std::string version_text() {
  std::string compute = "CPU";
  if (ATTN_BUILD_TORCH_CUDA || ATTN_BUILD_CUDA_KERNELS) {
    const std::string gpu = attn::cuda_device_name();
    compute = gpu.empty() ? "CPU (CUDA build, no GPU found)" : "CUDA (" + gpu + ")";
  }
  const std::string configs = attn::find_data_path("configs");
  return std::string("attnlab ") + ATTN_BUILD_VERSION + "\nLibTorch " + ATTN_BUILD_TORCH_VERSION +
         (ATTN_BUILD_TORCH_CUDA ? " with CUDA" : " (CPU only)") + "\ncompute: " + compute +
         "\nconfigs: " + (configs.empty() ? "not found" : configs);
}

#ifdef ATTN_HAVE_GUI
// `attnlab gui` (the default without a subcommand): the window's options; --size is kept as the
// text given and read by run_gui_command, so that its message names it.
void add_gui_command(CLI::App& app, attn::GuiOptions& gui, std::string& size) {
  auto* gui_cmd = app.add_subcommand("gui", "Open the interactive window (the default)");
  gui_cmd->add_option("--config", gui.config_path, "Experiment config to open");
  gui_cmd->add_option("--set", gui.config_sets, attn::kConfigSetHelp);
  gui_cmd->add_flag("--autostart", gui.autostart, "Start training at once");
  gui_cmd->add_option("--frames", gui.exit_after_frames, "Quit after N frames (tests, benchmarks)");
  gui_cmd->add_option("--screenshot", gui.screenshot_path, "Save the last frame as PNG");
  gui_cmd->add_option("--frame-stats", gui.frame_stats_path, "Write frame-time statistics (JSON)");
  gui_cmd->add_option("--layout", gui.layout_path, "Window layout file");
  gui_cmd->add_option("--size", size, "Window size WxH (default 1280x800)");
  std::string panel_names;  // the panel table's, so the help never misses one
  for (const std::string& name : attn::gui_panel_names())
    panel_names += (panel_names.empty() ? "" : ", ") + name;
  gui_cmd->add_option("--panel", gui.panels,
                      "Open this panel at start (repeatable): " + panel_names);
  gui_cmd->add_option("--compare-run", gui.compare_runs,
                      "Saved image run (directory of attnlab train --out) to show beside the live "
                      "one in Image attention (repeatable)");
  gui_cmd->add_option("--image", gui.image_index, "Test image Image attention shows first")
      ->check(CLI::NonNegativeNumber);
  gui_cmd->add_option("--export-figure", gui.export_figure,
                      "Export this figure through the Export dialog once the run has it, then quit "
                      "(scripts, tests; needs --export-out)");
  gui_cmd->add_option("--export-out", gui.export_out, "File for --export-figure");
  gui_cmd
      ->add_option("--export-after-step", gui.export_after_step,
                   "--export-figure waits until the attention probe has seen this step")
      ->check(CLI::NonNegativeNumber);
  gui_cmd->add_option("--compare-dir", gui.compare_dirs,
                      "Run directory to add to the Compare panel (repeatable)");
  gui_cmd
      ->add_option("--compare-bands", gui.compare_bands,
                   "Compare and Runs: runs that differ only in their seed as one mean line with "
                   "a band: 0 each run (default), 1 mean ± sd, 2 mean ± 95% CI")
      ->check(CLI::Range(0, 2));
  gui_cmd->add_option("--compare-vary", gui.compare_vary,
                      "key=v1,v2: the Compare panel starts one run per value from --config");
  gui_cmd->add_option("--runs-dir", gui.runs_dir,
                      "Record runs trained in the window here (default "
                      "$XDG_DATA_HOME/attnlab/runs); the Runs panel lists them");
  gui_cmd->add_option("--run", gui.follow_runs,
                      "Open a run directory (or a folder of runs) in the Runs panel and follow "
                      "it while another process writes it (repeatable)");
  gui_cmd
      ->add_option("--step", gui.start_step,
                   "With one --run DIR: open DIR's checkpoint with the timeline at the view "
                   "recorded at or before step N")
      ->check(CLI::NonNegativeNumber);
  gui_cmd->add_option("--probe", gui.probe_text,
                      "Probe input of the attention maps: characters (text tasks) or token ids "
                      "separated by spaces (synthetic tasks)");
  gui_cmd->add_option("--compare-out", gui.compare_out,
                      "Where the Compare panel records its runs (default: the runs directory's "
                      "compare/)");
  gui_cmd
      ->add_option("--cycle-panels", gui.cycle_panels_every,
                   "Every N frames switch to the next panel (soak tests)")
      ->check(CLI::PositiveNumber);
  gui_cmd
      ->add_option("--ui-scale", gui.ui_scale,
                   "UI scale, fonts included, in [0.5, 4] (default: saved, else the monitor's)")
      ->check(CLI::Range(0.5f, 4.0f));
  gui_cmd
      ->add_option("--checkpoint-seconds", gui.checkpoint_every_s,
                   "While training, checkpoint the recorded run at least every this many seconds "
                   "of training (default 60; 0: only on pause, finish and close), so a window "
                   "that dies loses at most that much")
      ->check(CLI::Range(0.0, 1e9));
}

// Runs the window once the options that CLI11 cannot check alone are.
int run_gui_command(attn::GuiOptions gui, const std::string& size) {
  if (!size.empty() && std::sscanf(size.c_str(), "%dx%d", &gui.width, &gui.height) != 2) {
    std::cerr << "attnlab: --size must look like 1280x800, got " << size << "\n";
    return attn::kExitUsage;
  }
  if (gui.start_step >= 0 && gui.follow_runs.size() != 1) {
    std::cerr << "attnlab: --step needs exactly one --run DIR (the run whose timeline to open), "
                 "got "
              << gui.follow_runs.size() << "\n";
    return attn::kExitUsage;
  }
  try {
    attn::check_config_sets(gui);
  } catch (const std::exception& e) {
    std::cerr << "attnlab gui: " << e.what() << "\n";
    return attn::kExitUsage;
  }
  return attn::run_gui(gui);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  disarm_startup_guard();
  attn::keep_freed_memory_in_heap();
  CLI::App app{
      "attnlab: train small attention models and watch what they learn.\n"
      "With no subcommand, opens the window on the default experiment."};
  app.set_version_flag("--version", version_text, "Print the version, LibTorch's, CUDA or CPU");
  app.require_subcommand(0, 1);
  app.footer(attn::kExitCodesHelp);

  // The headless subcommands, in the order --help lists them.
  using Commands = decltype(std::tuple_cat(
      std::declval<std::tuple<attn::TrainArgs>>(), std::declval<attn::LabCommands>(),
      std::declval<std::tuple<attn::CompareArgs, attn::SweepArgs, attn::ReproduceArgs,
                              attn::SuiteArgs, attn::SlurmStatusArgs, attn::PackRunArgs,
                              attn::ExportArgs, attn::AnalyzeArgs, attn::EvalArgs, attn::DataArgs,
                              attn::MigrateArgs, attn::BenchStepArgs, attn::ConfigArgs>>()));
  const std::vector<Subcommand> commands = subcommands(app, static_cast<Commands*>(nullptr));

#ifdef ATTN_HAVE_GUI
  attn::GuiOptions gui;
  std::string size;
  add_gui_command(app, gui, size);
#endif

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // app.exit prints the message (or --help, --version); every usage error exits 2, not
    // CLI11's own codes (100+).
    return stdout_checked(app.exit(e) == 0 ? attn::kExitOk : attn::kExitUsage, "");
  }

  // A malformed ATTNLAB_MEMORY_LIMIT is refused before any work, not ignored.
  try {
    attn::memory_limit_from_env();
  } catch (const std::exception& e) {
    std::cerr << "attnlab: " << e.what() << "\n";
    return attn::kExitUsage;
  }

  for (const Subcommand& c : commands) {
    if (!c.cmd->parsed()) continue;
    // Each command prints its own errors; this is the net under them, so that nothing LibTorch,
    // the file system or an allocation throws ever ends attnlab with an abort.
    try {
      return stdout_checked(c.run(), c.cmd->get_name());
    } catch (const std::bad_alloc&) {
      std::cerr << "attnlab " << c.cmd->get_name()
                << ": out of memory (make the model, batch or output smaller)\n";
    } catch (const std::exception& e) {
      std::cerr << "attnlab " << c.cmd->get_name() << ": " << e.what() << "\n";
    } catch (...) {
      std::cerr << "attnlab " << c.cmd->get_name() << ": failed with an unknown error\n";
    }
    return attn::kExitRunFailed;
  }
#ifdef ATTN_HAVE_GUI
  return run_gui_command(gui, size);
#else
  const std::string copy = attn::find_data_path("configs/copy.json");
  std::cerr << "attnlab: this build has no window (ATTN_BUILD_GUI=OFF). Use: attnlab train "
               "--config "
            << (copy.empty() ? "assets/configs/copy.json" : copy) << "\n";
  return attn::kExitUsage;
#endif
}
