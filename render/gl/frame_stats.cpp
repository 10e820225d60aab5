#include "render/gl/frame_stats.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <sstream>

#include "core/base/atomic_file.h"
#include "core/base/error.h"

namespace attn::render {

double percentile(const std::vector<double>& sorted, double p) {
  const size_t n = sorted.size();
  size_t rank = static_cast<size_t>(std::ceil(std::clamp(p, 0.0, 100.0) / 100.0 * n - 1e-9));
  rank = std::clamp<size_t>(rank, 1, n);  // 1-based nearest rank
  return sorted[rank - 1];
}

FrameStats compute_frame_stats(std::vector<double> frame_ms) {
  FrameStats s;
  s.count = frame_ms.size();
  if (frame_ms.empty()) return s;
  std::sort(frame_ms.begin(), frame_ms.end());
  s.p50 = percentile(frame_ms, 50);
  s.p99 = percentile(frame_ms, 99);
  s.max = frame_ms.back();
  s.mean = std::accumulate(frame_ms.begin(), frame_ms.end(), 0.0) / frame_ms.size();
  return s;
}

double seconds_since_process_start() {
#ifdef __linux__
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!std::getline(in, line)) return -1;
  // Field 2 (comm) may contain spaces and parentheses: parse from the last ')'.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(line.substr(close + 2));
  std::string field;
  // After comm, fields start at 3 (state); starttime is field 22.
  for (int i = 3; i < 22; ++i)
    if (!(fields >> field)) return -1;
  unsigned long long start_ticks = 0;
  if (!(fields >> start_ticks)) return -1;
  const long hz = sysconf(_SC_CLK_TCK);
  timespec now{};
  if (hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &now) != 0) return -1;
  const double boot_now = now.tv_sec + now.tv_nsec * 1e-9;
  return boot_now - static_cast<double>(start_ticks) / hz;
#else
  return -1;
#endif
}

FrameClock::FrameClock(size_t reserve) {
  frame_ms_.reserve(std::min(reserve, kMaxSamples));
}

void FrameClock::on_present() {
  const auto now = std::chrono::steady_clock::now();
  if (frames_ == 0) {
    const double s = seconds_since_process_start();
    launch_ms_ = s >= 0 ? s * 1000.0 : -1.0;
  } else {
    if (frame_ms_.size() >= kMaxSamples)  // keep the recent half
      frame_ms_.erase(frame_ms_.begin(), frame_ms_.begin() + kMaxSamples / 2);
    frame_ms_.push_back(std::chrono::duration<double, std::milli>(now - last_).count());
  }
  last_ = now;
  ++frames_;
}

bool FrameClock::write_json(const std::string& path, size_t warmup, std::string* error) const {
  if (warmup >= frame_ms_.size()) warmup = 0;
  const std::vector<double> measured(frame_ms_.begin() + static_cast<long>(warmup),
                                     frame_ms_.end());
  const FrameStats s = compute_frame_stats(measured);
  char text[4096];  // ample for 5 numbers of any size
  std::snprintf(text, sizeof text,
                "{\n  \"frames\": %zu,\n  \"frames_measured\": %zu,\n  \"warmup_frames\": %zu,\n"
                "  \"frame_ms_p50\": %.4f,\n  \"frame_ms_p99\": %.4f,\n  \"frame_ms_max\": %.4f,\n"
                "  \"frame_ms_mean\": %.4f,\n  \"launch_to_first_frame_ms\": %.1f\n}\n",
                frames_, s.count, warmup, s.p50, s.p99, s.max, s.mean, launch_ms_);
  try {  // crash-safe: a killed process never leaves a partial file at path
    write_file_atomic(path, text);
  } catch (const Error& e) {
    if (error) *error = e.what();
    return false;
  }
  return true;
}

}  // namespace attn::render
