// ThreadPolicy: how many torch intra-op threads a training loop uses, chosen by what the machine
// actually gives. No torch here: the caller applies threads() with torch::set_num_threads.
//
// Why: on a small machine OpenMP's barriers wait for every thread of a team, so one thread
// that another process holds off its core stalls the whole step. Measured on the 2-core build
// machine (d64/seq64/batch4 char LM, one busy process per core): 1 thread 13.6 ms/step,
// 2 threads 1106 ms/step; OMP_WAIT_POLICY=PASSIVE or GOMP_SPINCOUNT=0 still 117-122 ms. No wait
// policy fixes that; only not running a team on cores that others need does.
//
// Contract (adaptive mode, ThreadPolicyOptions::fixed == 0):
//  - Candidates are 1, 2, 4, ... up to max_threads (max_threads itself included).
//  - It starts at one thread for the run's first 0.25 s (and 2 steps), then probes each
//    candidate for a few steps (the first two steps after a change form the team: they are
//    neither counted nor cut short) and keeps the fastest by median step time; more threads
//    must be at least 5% faster than fewer to be kept (they cost the other work more).
//  - A candidate is not tried while other work (other processes, or other threads of this one
//    when other_load counts them) keeps fewer than candidate - 0.5 cores free, nor when
//    team_ready says a team of that size stalls now; a measured probe step slower than 3x
//    the best median so far ends that candidate and every larger one.
//  - While exploiting a choice with more than one thread, other work taking its cores drops it
//    back to one thread at once (the next sample, at most every 0.25 s); a median step time
//    1.5x the chosen one's probe re-probes at once. Otherwise it re-probes after an interval
//    that starts at 2 s, doubles while the choice stays the same (up to 60 s) and is always
//    at least 50x what the last probe cost, so probing costs at most ~2% of training time.
//  - fixed > 0 (--threads, the config's "threads"): threads() is always that.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace attn {

// Cores this process may run on: its CPU affinity mask, capped by a cgroup v2 cpu.max quota
// (rounded down, at least 1).
int usable_cores();

// Cores' worth of CPU time that everything except this process used on the CPUs of this
// process's affinity mask since the previous call (from /proc/stat and this process's own
// CPU time). nullopt on the first call, when less than min_interval_s passed (the previous
// figure is returned then, if any) or when /proc/stat cannot be read.
class OtherLoadMeter {
 public:
  explicit OtherLoadMeter(double min_interval_s = 0.25);
  std::optional<double> sample();

 private:
  double min_interval_s_;
  std::vector<int> cpus_;  // the affinity mask's CPUs
  double last_wall_ = -1, last_busy_ = 0, last_self_ = 0;
  std::optional<double> last_;
};

struct ThreadPolicyOptions {
  int fixed = 0;        // > 0: always this many threads
  int max_threads = 1;  // the adaptive range's top (usable_cores(), minus one for a UI thread)
  double min_interval_s = 2, max_interval_s = 60;
  int probe_steps = 3;  // measured steps per candidate (after the warm-up steps of a change)
  int cores = 0;        // the machine's usable cores; 0: usable_cores()
  // Injected for tests; defaults: a steady clock in seconds and an OtherLoadMeter.
  std::function<double()> clock;
  std::function<std::optional<double>()> other_load;
  // Asked before a larger team is tried (after other_load agreed): false when a team of that
  // many threads cannot run promptly now (team_runs_promptly, team_check.h). Null: always true.
  std::function<bool(int threads)> team_ready;
};

class ThreadPolicy {
 public:
  explicit ThreadPolicy(ThreadPolicyOptions options);

  int threads() const { return threads_; }  // for the next step
  bool adaptive() const { return options_.fixed <= 0 && options_.max_threads > 1; }
  // The wall time of one training step run at threads(). Returns true when threads() changed.
  bool record_step(double seconds);
  // Why threads() is what it is, one line (for logs and the Run panel).
  const std::string& reason() const { return reason_; }
  // The count the last probe chose (threads() differs from it while probing).
  int chosen() const { return options_.fixed > 0 ? options_.fixed : chosen_; }

  // Default max_threads: all usable cores headless; one left to the window's render thread.
  static int default_max_threads(bool leave_core_for_ui);

 private:
  enum class Phase { Warmup, Probe, Exploit };
  void start_probe(double now);
  void next_candidate(double now);
  void finish_probe(double now);
  bool set_threads(int n);
  bool cores_free_for(int n, std::optional<double> others) const;

  ThreadPolicyOptions options_;
  std::vector<int> candidates_;
  int threads_ = 1;
  std::string reason_;
  Phase phase_ = Phase::Warmup;
  int warmup_left_ = 2;  // the first steps of a run allocate; never measured
  double warmup_started_ = -1;
  // Probe state.
  size_t candidate_ = 0;
  int warmup_steps_ = 0;  // steps after a change of team not yet run (not measured)
  std::vector<double> samples_;
  std::vector<double> medians_;  // per candidate tried; NAN when skipped or cut short
  double probe_spent_ = 0;       // seconds in this probe's steps
  int probe_steps_ = 0;
  std::string probe_note_;
  // Exploit state.
  int chosen_ = 1;
  double chosen_median_ = 0, exploit_until_ = 0, interval_s_ = 0;
  std::vector<double> recent_;
};

}  // namespace attn
