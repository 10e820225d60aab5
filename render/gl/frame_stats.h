// Frame-time statistics and launch latency, for the benchmark mode of the window.
// Contract:
//  - percentile() is nearest-rank: the smallest sample x with at least p% of the samples <= x
//    (p = 100 gives the maximum). compute_frame_stats() sorts a copy, so callers keep order.
//  - FrameClock::on_present() is called right after each buffer swap returns; frame time is the
//    wall-clock time between successive returns, so it covers CPU work, driver work and any
//    blocking in the swap. The first call also records the launch-to-first-frame latency.
//  - seconds_since_process_start() uses /proc/self/stat (start time in clock ticks since boot)
//    against CLOCK_BOOTTIME: 10 ms resolution, no wall-clock jumps. Returns < 0 where
//    unavailable (non-Linux).
#pragma once
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace attn::render {

struct FrameStats {
  size_t count = 0;  // samples the statistics were computed from
  double p50 = 0, p99 = 0, max = 0, mean = 0;
};

double percentile(const std::vector<double>& sorted, double p);  // sorted ascending, non-empty
FrameStats compute_frame_stats(std::vector<double> frame_ms);

double seconds_since_process_start();

class FrameClock {
 public:
  explicit FrameClock(size_t reserve = 4096);
  void on_present();

  size_t frames() const { return frames_; }                          // presents seen so far
  const std::vector<double>& frame_ms() const { return frame_ms_; }  // frames() - 1 deltas
  double launch_to_first_frame_ms() const { return launch_ms_; }     // < 0 if unknown

  // Statistics over the deltas after the first `warmup` ones (all of them if too few remain),
  // written as JSON: frames, frames_measured, warmup_frames, frame_ms_{p50,p99,max,mean},
  // launch_to_first_frame_ms. Returns false and sets *error on I/O failure.
  bool write_json(const std::string& path, size_t warmup, std::string* error) const;

 private:
  static constexpr size_t kMaxSamples = size_t(1) << 18;  // bounded for long interactive runs
  std::vector<double> frame_ms_;
  std::chrono::steady_clock::time_point last_{};
  size_t frames_ = 0;
  double launch_ms_ = -1;
};

}  // namespace attn::render
