// Frame statistics and screenshot row flipping (render/gl/frame_stats.h, render/gl/screenshot.h).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "render/gl/frame_stats.h"
#include "render/gl/screenshot.h"

using namespace attn::render;

TEST_CASE("percentiles match a sorted-array brute force") {
  std::mt19937 rng(3);
  std::lognormal_distribution<double> ms(2.0, 0.5);
  for (size_t n : {size_t(1), size_t(2), size_t(7), size_t(100), size_t(1001)}) {
    std::vector<double> v(n);
    for (auto& x : v) x = ms(rng);
    const FrameStats s = compute_frame_stats(v);
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    // Brute force nearest rank: smallest x with count(<= x) >= p% of n.
    auto brute = [&](double p) {
      for (double x : sorted) {
        const size_t le = std::count_if(v.begin(), v.end(), [&](double y) { return y <= x; });
        if (le * 100.0 >= p * n) return x;
      }
      return sorted.back();
    };
    INFO("n=" << n);
    CHECK(s.count == n);
    CHECK(s.p50 == brute(50));
    CHECK(s.p99 == brute(99));
    CHECK(s.max == sorted.back());
    double sum = 0;
    for (double x : v) sum += x;
    CHECK(s.mean == doctest::Approx(sum / n));
  }
}

TEST_CASE("percentiles on known data") {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);  // unsorted on purpose
  const FrameStats s = compute_frame_stats(v);
  CHECK(s.p50 == 50);
  CHECK(s.p99 == 99);
  CHECK(s.max == 100);
  CHECK(compute_frame_stats({}).count == 0);
}

TEST_CASE("process start time is in the recent past") {
  const double s = seconds_since_process_start();
  CHECK(s >= 0.0);
  CHECK(s < 3600.0);
}

TEST_CASE("FrameClock records deltas and writes JSON") {
  FrameClock clock;
  for (int i = 0; i < 5; ++i) {
    clock.on_present();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  CHECK(clock.frames() == 5);
  REQUIRE(clock.frame_ms().size() == 4);
  for (double ms : clock.frame_ms()) CHECK(ms >= 1.9);
  CHECK(clock.launch_to_first_frame_ms() >= 0);
  const std::string path = "test_frame_stats_out.json";
  std::string error;
  REQUIRE(clock.write_json(path, 1, &error));
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str().find("\"frames\": 5,") != std::string::npos);
  CHECK(text.str().find("\"frames_measured\": 3,") != std::string::npos);
  CHECK(text.str().find("\"frame_ms_p99\"") != std::string::npos);
  CHECK(text.str().find("\"launch_to_first_frame_ms\"") != std::string::npos);
  std::remove(path.c_str());
  CHECK_FALSE(clock.write_json("/nonexistent-dir/x.json", 0, &error));
  CHECK(error.find("/nonexistent-dir/x.json") != std::string::npos);
}

TEST_CASE("flip_rows reverses row order") {
  // 2 x 3 image, 1 channel: rows {1,2}, {3,4}, {5,6}.
  uint8_t px[6] = {1, 2, 3, 4, 5, 6};
  flip_rows(px, 2, 3, 1);
  const uint8_t expected[6] = {5, 6, 3, 4, 1, 2};
  for (int i = 0; i < 6; ++i) CHECK(int(px[i]) == int(expected[i]));
  uint8_t rgb[12] = {1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4};  // 2 x 2 RGB
  flip_rows(rgb, 2, 2, 3);
  CHECK(int(rgb[0]) == 3);
  CHECK(int(rgb[9]) == 2);
}
