// FramePacer (app/gui/window/frame_pacer.h): the window draws when the snapshot or the input
// changed, a few frames more to let ImGui settle, never faster than the cap, and otherwise not
// at all. Driven by a simulated frame loop on a simulated clock: each frame costs `frame_s`, a
// wait lasts what the pacer said or until the next event, whichever comes first.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "app/gui/window/frame_pacer.h"

using attn::gui::FrameNeeds;
using attn::gui::FramePacer;
using attn::gui::PaceInput;
using attn::gui::PacerOptions;

namespace {

struct Sim {
  double frame_s = 0.005;      // what drawing a frame costs
  double publish_every_s = 0;  // > 0: the trainer publishes a snapshot this often
  std::vector<double> events;  // input events at these times (sorted)
  bool watching = false;
  bool report_cost = false;  // tell the pacer what each frame cost
  std::function<FrameNeeds(double)> needs = [](double) { return FrameNeeds{}; };
  std::vector<double> begun;      // when each frame began
  std::vector<uint64_t> serials;  // the snapshot each frame drew

  uint64_t serial_at(double t) const {
    return publish_every_s > 0 ? 1 + static_cast<uint64_t>(t / publish_every_s) : 1;
  }
  double last_event_before(double t) const {
    double last = -1;
    for (double e : events)
      if (e <= t) last = e;
    return last;
  }
  double next_event_after(double t) const {
    for (double e : events)
      if (e > t) return e;
    return 1e9;
  }
  // Runs the loop for `seconds`; returns the pacer for its counts.
  FramePacer run(double seconds, PacerOptions options = {}) {
    FramePacer pacer(options);
    double t = 0;
    while (t < seconds) {
      PaceInput in{t, serial_at(t), 0, last_event_before(t), watching};
      const FramePacer::Decision d = pacer.decide(in);
      if (d.draw) {
        pacer.frame_begun(in, d);
        begun.push_back(t);
        serials.push_back(in.snapshot_serial);
        t += frame_s;
        pacer.frame_needs(needs(t));
        if (report_cost) pacer.frame_cost(frame_s);
      } else {
        REQUIRE(d.wait_s > 0);
        REQUIRE(d.wait_s <= 1.0 / options.cap_hz + 1e-9);  // never sleeps past a frame period
        pacer.count_wait();
        t = std::min(t + d.wait_s, next_event_after(t));
      }
    }
    return pacer;
  }
  double min_gap() const {
    double gap = 1e9;
    for (size_t i = 1; i < begun.size(); ++i) gap = std::min(gap, begun[i] - begun[i - 1]);
    return gap;
  }
};

}  // namespace

TEST_CASE("a paused window with no input draws its first frames, then once per idle period") {
  Sim sim;
  const FramePacer pacer = sim.run(10.0);
  // Unpaced, 10 s of 5 ms frames are 2,000 frames; paced: the first frame and its settling
  // frames, then one safety redraw a second.
  const PacerOptions o;
  CHECK(pacer.counts().frames <= o.settle_after_input + std::ceil(10.0 / o.idle_s) + 1);
  CHECK(pacer.counts().of("snapshot") == 0);
  CHECK(pacer.counts().of("input") == 0);
  CHECK(pacer.counts().of("idle") >= 8);
  CHECK(pacer.waits() > 100);  // it looked for new snapshots all along (at most a frame apart)
}

TEST_CASE("while training, every new snapshot is drawn once, and nothing else") {
  Sim sim;
  sim.publish_every_s = 0.1;  // the trainer's publish interval while running
  const FramePacer pacer = sim.run(10.0);
  std::vector<uint64_t> distinct = sim.serials;
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  CHECK(distinct.size() >= 99);  // each of the ~100 snapshots was drawn
  const PacerOptions o;
  CHECK(pacer.counts().frames <= 100 + o.settle_after_input + 1);
  CHECK(pacer.counts().of("idle") == 0);
  CHECK(pacer.counts().of("settle") <= o.settle_after_input);  // the next snapshot came first
  CHECK(sim.min_gap() >= 1.0 / o.cap_hz - 1e-9);
}

TEST_CASE("a new snapshot is drawn within one frame period, and settled once if none follows") {
  Sim sim;
  sim.publish_every_s = 0.37;
  sim.run(5.0);
  for (int k = 1; k * 0.37 < 4.9; ++k) {
    const double published = k * 0.37;
    const auto first =
        std::find_if(sim.begun.begin(), sim.begun.end(), [&](double b) { return b >= published; });
    REQUIRE(first != sim.begun.end());
    CHECK(*first - published <= 1.0 / 60 + 1e-6);
    // Then one settling frame, change_settle_s later, and nothing until the next snapshot.
    REQUIRE(first + 1 != sim.begun.end());
    CHECK(*(first + 1) - *first == doctest::Approx(0.15).epsilon(0.02));
    CHECK(std::count_if(sim.begun.begin(), sim.begun.end(),
                        [&](double x) { return x >= published && x < published + 0.37; }) == 2);
  }
}

TEST_CASE("an input event wakes the window at once and a few frames settle it") {
  Sim sim;
  sim.events = {2.0, 4.5};
  const FramePacer pacer = sim.run(6.0);
  const PacerOptions o;
  for (double e : sim.events) {
    const auto first = std::lower_bound(sim.begun.begin(), sim.begun.end(), e);
    REQUIRE(first != sim.begun.end());
    CHECK(*first == doctest::Approx(e));  // no cap wait: the last frame was long ago
    // The event's frame and its settling frames, back to back at the cap.
    const auto n = std::count_if(sim.begun.begin(), sim.begun.end(),
                                 [&](double b) { return b >= e && b < e + 0.2; });
    CHECK(n == o.settle_after_input);
  }
  CHECK(pacer.counts().of("input") == 2);
}

TEST_CASE("continuous input or an animation draws at the cap, never faster") {
  Sim sim;
  for (double t = 0; t < 3; t += 0.002) sim.events.push_back(t);           // a mouse moved for 3 s
  sim.needs = [](double t) { return FrameNeeds{t > 3 && t < 5, false}; };  // then a drag held
  sim.frame_s = 0.001;
  sim.run(6.0);
  const auto in = [&](double a, double b) {
    return std::count_if(sim.begun.begin(), sim.begun.end(),
                         [&](double x) { return x >= a && x < b; });
  };
  CHECK(in(0, 3) >= 170);  // 60 Hz for 3 s: 180 frames
  CHECK(in(0, 3) <= 181);
  CHECK(in(3.1, 4.9) >= 100);  // the held drag keeps drawing at 60 Hz
  CHECK(in(5.2, 6.0) <= 1);    // then it stops
  CHECK(sim.min_gap() >= 1.0 / 60 - 1e-9);
}

TEST_CASE("a panel watching the disk redraws every watch period; a text field blinks") {
  Sim sim;
  sim.watching = true;
  const FramePacer watched = sim.run(10.0);
  CHECK(watched.counts().of("watch") >= 35);  // every 0.25 s
  CHECK(watched.counts().of("watch") <= 41);
  Sim typing;
  typing.needs = [](double) { return FrameNeeds{false, true}; };
  const FramePacer blink = typing.run(10.0);
  CHECK(blink.counts().of("text_input") >= 45);  // every 0.2 s
  CHECK(blink.counts().of("text_input") <= 51);
}

TEST_CASE("costly frames draw new snapshots only as often as the budget allows, unless in use") {
  Sim sim;
  sim.publish_every_s = 0.1;
  sim.frame_s = 0.025;  // software GL at 1920x1080: a tenth of a core is 4 frames a second
  sim.report_cost = true;
  const FramePacer pacer = sim.run(10.0);
  CHECK(pacer.counts().of("snapshot") >= 35);
  CHECK(pacer.counts().of("snapshot") <= 42);
  CHECK(pacer.counts().frames <= 42 + PacerOptions{}.settle_after_input + 1);
  // While the user moves the mouse, every snapshot shows at once.
  Sim busy = sim;
  busy.begun.clear();
  busy.serials.clear();
  for (double t = 0; t < 10; t += 0.05) busy.events.push_back(t);
  busy.run(10.0);
  std::vector<uint64_t> distinct = busy.serials;
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  CHECK(distinct.size() >= 99);
}

TEST_CASE("a frame a fault ended early is followed by another") {
  FramePacer pacer;
  PaceInput in{0, 1, 0, -1, false};
  pacer.frame_begun(in, pacer.decide(in));
  for (int i = 0; i < 10; ++i) {  // settle the first frames
    in.now += 0.02;
    const auto d = pacer.decide(in);
    if (d.draw) pacer.frame_begun(in, d);
  }
  in.now += 0.1;
  CHECK_FALSE(pacer.decide(in).draw);
  pacer.request_frame();
  CHECK(pacer.decide(in).draw);
}
