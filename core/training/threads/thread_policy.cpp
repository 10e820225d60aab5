#include "core/training/threads/thread_policy.h"

#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

namespace attn {
namespace {

// A measured probe step this much slower than the best median so far ends the probe: a team
// that collapses under contention runs 28-80x slower, while a team that is merely warming up
// or shares its cores for a moment ran single steps 1.5-2x slower (2 vCPUs, d64 LM), which
// the median over the candidate's steps absorbs.
constexpr double kProbeCutoff = 3.0;
constexpr double kSlowdownReprobe = 1.5;  // recent median this much slower: measure again
// Steps after a change of team that are not measured and not cut short: a new team's first
// steps create its threads and their BLAS buffers. Measured on the 2-core machine (d64 char LM,
// 2.7 ms/step at 1 thread, 2.0 at 2): the first step at 2 threads took 7.5-66 ms and the
// second up to 12 ms. Their cost still counts toward the probe's, which spaces probes out.
constexpr int kTeamWarmupSteps = 2;
constexpr double kMoreThreadsGain = 0.95;  // more threads must be 5% faster to be kept
constexpr double kProbeBudgetFactor = 50;  // interval >= 50x the probe's cost: <= ~2%
constexpr size_t kRecentSteps = 5;
// A run's first steps are slower for a while (heap and buffers growing): on the d64 LM, steps at
// 2 threads went 3.5 -> 2.3 ms over the first 0.1 s, and a probe then chose one thread where
// two are 1.35x faster. The first probe waits this long (and at least 2 steps).
constexpr double kRunWarmupSeconds = 0.25;
// Short steps are measured for at least this long per candidate (up to kMaxProbeSamples
// steps): a 2 ms step's median over 3 steps moved by 50% between probes of the same team.
constexpr double kMinProbeSeconds = 0.03;
constexpr size_t kMaxProbeSamples = 64;

double monotonic_seconds(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::vector<int> affinity_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int i = 0; i < CPU_SETSIZE; ++i)
      if (CPU_ISSET(i, &set)) cpus.push_back(i);
  return cpus;
}

std::string ms(double seconds) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g ms", seconds * 1e3);
  return b;
}

std::string thread_word(int n) {
  return std::to_string(n) + (n == 1 ? " thread" : " threads");
}

}  // namespace

int usable_cores() {
  int cores = static_cast<int>(affinity_cpus().size());
  if (cores <= 0) cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // cgroup v2: "max 100000" (no quota) or "<quota> <period>".
  std::ifstream f("/sys/fs/cgroup/cpu.max");
  std::string quota;
  double period = 0;
  if (f >> quota >> period && quota != "max" && period > 0) {
    const double q = std::atof(quota.c_str()) / period;
    if (q > 0) cores = std::min(cores, std::max(1, static_cast<int>(q)));
  }
  return std::max(1, cores);
}

OtherLoadMeter::OtherLoadMeter(double min_interval_s)
    : min_interval_s_(min_interval_s), cpus_(affinity_cpus()) {}

std::optional<double> OtherLoadMeter::sample() {
  const double wall = monotonic_seconds(CLOCK_MONOTONIC);
  if (last_wall_ >= 0 && wall - last_wall_ < min_interval_s_) return last_;
  std::ifstream stat("/proc/stat");
  if (!stat) return std::nullopt;
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  double busy = 0;
  std::string line;
  while (std::getline(stat, line)) {
    if (line.compare(0, 3, "cpu") != 0) break;
    if (line.size() < 4 || line[3] == ' ') continue;  // the all-CPU total
    std::istringstream in(line.substr(3));
    int cpu = -1;
    in >> cpu;
    if (!cpus_.empty() && !std::binary_search(cpus_.begin(), cpus_.end(), cpu)) continue;
    // user nice system idle iowait irq softirq steal (guest time is inside user)
    double v[8] = {};
    for (double& x : v) in >> x;
    busy += v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  }
  busy /= tick;
  const double self = monotonic_seconds(CLOCK_PROCESS_CPUTIME_ID);
  if (last_wall_ >= 0) {
    const double others = (busy - last_busy_ - (self - last_self_)) / (wall - last_wall_);
    last_ = std::max(0.0, others);
  }
  last_wall_ = wall;
  last_busy_ = busy;
  last_self_ = self;
  return last_;
}

int ThreadPolicy::default_max_threads(bool leave_core_for_ui) {
  const int cores = usable_cores();
  return std::max(1, leave_core_for_ui ? cores - 1 : cores);
}

ThreadPolicy::ThreadPolicy(ThreadPolicyOptions options) : options_(std::move(options)) {
  options_.max_threads = std::max(1, options_.max_threads);
  options_.probe_steps = std::max(1, options_.probe_steps);
  if (options_.cores <= 0) options_.cores = usable_cores();
  if (!options_.clock) {
    options_.clock = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
  }
  if (!options_.other_load) {
    auto meter = std::make_shared<OtherLoadMeter>();
    options_.other_load = [meter] { return meter->sample(); };
  }
  if (options_.fixed > 0) {
    threads_ = options_.fixed;
    reason_ = thread_word(threads_) + ", fixed (--threads or the config's \"threads\")";
    return;
  }
  for (int c = 1; c < options_.max_threads; c *= 2) candidates_.push_back(c);
  candidates_.push_back(options_.max_threads);
  threads_ = 1;
  reason_ = adaptive() ? "1 thread until the first measurement (adaptive, 1 to " +
                             std::to_string(options_.max_threads) + ")"
                       : "1 thread (one usable core)";
  if (adaptive()) options_.other_load();  // starts the meter's first interval
}

bool ThreadPolicy::set_threads(int n) {
  const bool changed = n != threads_;
  threads_ = n;
  return changed;
}

bool ThreadPolicy::cores_free_for(int n, std::optional<double> others) const {
  if (n <= 1 || !others) return true;  // unknown load: let the step times decide
  return options_.cores - *others >= n - 0.5;
}

void ThreadPolicy::start_probe(double now) {
  phase_ = Phase::Probe;
  candidate_ = 0;
  medians_.clear();
  samples_.clear();
  probe_spent_ = 0;
  probe_note_.clear();
  warmup_steps_ = set_threads(candidates_[0]) ? kTeamWarmupSteps : 0;
  probe_steps_ = 0;
}

void ThreadPolicy::next_candidate(double now) {
  ++candidate_;
  if (candidate_ >= candidates_.size()) return finish_probe(now);
  const int c = candidates_[candidate_];
  const auto others = options_.other_load();
  if (!cores_free_for(c, others)) {
    char b[96];
    std::snprintf(b, sizeof b, "; %s not tried: other work keeps %.1f of %d cores busy",
                  thread_word(c).c_str(), *others, options_.cores);
    probe_note_ += b;
    return finish_probe(now);
  }
  if (options_.team_ready) {
    const double t0 = options_.clock();
    const bool ready = options_.team_ready(c);
    probe_spent_ += options_.clock() - t0;  // the check's cost counts as the probe's
    if (!ready) {
      probe_note_ += "; " + thread_word(c) + " not tried: a team of them stalled (cores busy)";
      return finish_probe(now);
    }
  }
  samples_.clear();
  warmup_steps_ = set_threads(c) ? kTeamWarmupSteps : 0;
}

void ThreadPolicy::finish_probe(double now) {
  size_t best = 0;
  for (size_t i = 1; i < medians_.size(); ++i)
    if (!std::isnan(medians_[i]) && medians_[i] < kMoreThreadsGain * medians_[best]) best = i;
  const int previous = chosen_;
  const bool had_choice = chosen_median_ > 0;
  chosen_ = candidates_[best];
  chosen_median_ = medians_[best];
  // The probe's cost: what its steps took beyond the chosen count's pace.
  const double cost = std::max(0.0, probe_spent_ - probe_steps_ * chosen_median_);
  interval_s_ = had_choice && previous == chosen_
                    ? std::min(2 * interval_s_, options_.max_interval_s)
                    : options_.min_interval_s;
  exploit_until_ = now + std::max(interval_s_, kProbeBudgetFactor * cost);
  std::string measured;
  for (size_t i = 0; i < medians_.size(); ++i)
    measured += (i ? ", " : "") + thread_word(candidates_[i]) + " " +
                (std::isnan(medians_[i]) ? std::string("slower (cut short)") : ms(medians_[i]));
  reason_ = thread_word(chosen_) + " (adaptive: " + measured + " per step" + probe_note_ + ")";
  phase_ = Phase::Exploit;
  recent_.clear();
  set_threads(chosen_);
}

bool ThreadPolicy::record_step(double seconds) {
  if (!adaptive()) return false;
  const double now = options_.clock();
  const int before = threads_;
  switch (phase_) {
    case Phase::Warmup:
      if (warmup_started_ < 0) warmup_started_ = now - seconds;
      if (--warmup_left_ <= 0 && now - warmup_started_ >= kRunWarmupSeconds) start_probe(now);
      break;
    case Phase::Probe: {
      probe_spent_ += seconds;
      ++probe_steps_;
      double best = NAN;
      for (double m : medians_)
        if (!std::isnan(m) && !(m >= best)) best = m;
      if (warmup_steps_ > 0) {
        --warmup_steps_;
        break;
      }
      if (!std::isnan(best) && seconds > kProbeCutoff * best) {
        medians_.push_back(NAN);  // slower: so, by experience, is every larger team
        finish_probe(now);
        break;
      }
      samples_.push_back(seconds);
      double measured = 0;
      for (double v : samples_) measured += v;
      if (static_cast<int>(samples_.size()) >= options_.probe_steps &&
          (measured >= kMinProbeSeconds || samples_.size() >= kMaxProbeSamples)) {
        medians_.push_back(median(samples_));
        next_candidate(now);
      }
      break;
    }
    case Phase::Exploit: {
      recent_.push_back(seconds);
      if (recent_.size() > kRecentSteps) recent_.erase(recent_.begin());
      if (threads_ > 1) {
        const auto others = options_.other_load();
        if (!cores_free_for(threads_, others)) {
          start_probe(now);  // one thread at once; the probe skips the busy counts
          break;
        }
      }
      if (recent_.size() == kRecentSteps && median(recent_) > kSlowdownReprobe * chosen_median_) {
        start_probe(now);  // throughput dropped: measure again now
        break;
      }
      if (now >= exploit_until_) start_probe(now);
      break;
    }
  }
  return threads_ != before;
}

}  // namespace attn
