// Helpers shared by the CPU benchmarks that measure one configuration per child process (so the
// peak resident memory a child reports belongs to that configuration alone).
#pragma once
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace attn::bench {

struct Point {
  double ms = NAN, mib = NAN;
};

inline double rss_mib() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1 << 20);
}

inline double max_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;  // KiB on Linux
}

// In the child: runs pass() passes+1 times (the first is a warm-up) and prints
// "median_ms peak_mib" (peak RSS over the RSS before the first pass).
inline int report_child(const std::function<void()>& pass, int passes) {
  const double base = rss_mib();
  std::vector<double> ms;
  for (int i = 0; i <= passes; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    pass();
    const auto t1 = std::chrono::steady_clock::now();
    if (i > 0) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%.3f %.1f\n", ms[ms.size() / 2], max_rss_mib() - base);
  return 0;
}

// In the parent: runs this executable again with args and reads the child's report.
inline Point run_child(const std::string& args) {
  const std::string cmd = "/proc/" + std::to_string(getpid()) + "/exe " + args;
  Point p;
  if (FILE* f = popen(cmd.c_str(), "r")) {
    if (std::fscanf(f, "%lf %lf", &p.ms, &p.mib) != 2) p = {};
    pclose(f);
  }
  return p;
}

inline std::vector<int> parse_int_list(const char* s) {
  std::vector<int> v;
  for (const char* p = s; *p;) {
    v.push_back(std::atoi(p));
    p = std::strchr(p, ',');
    if (!p) break;
    ++p;
  }
  return v;
}

}  // namespace attn::bench
