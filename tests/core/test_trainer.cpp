// The trainer thread: commands, states, snapshots, failures; never a deadlock.
// Every wait is bounded; a hang fails the test instead of stalling CI.
#include <doctest/doctest.h>

#include <filesystem>

#include "core/training/trainer.h"
#include "helpers.h"

using namespace attn;
using test::fast_options;
using test::in_state;
using test::wait_until;

TEST_CASE("start, pause, step, resume, finish") {
  auto c = test::tiny_config();
  c.train.steps = 200;
  Trainer t(c, fast_options());
  REQUIRE(
      wait_until([&] { return in_state(t, TrainerState::Idle) && t.latest()->parameters > 0; }));
  CHECK(t.latest()->step == 0);

  t.start();
  REQUIRE(wait_until([&] { return t.latest()->step >= 5; }));
  t.pause();
  REQUIRE(wait_until([&] { return in_state(t, TrainerState::Paused); }));
  const int64_t paused_at = t.latest()->step;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(t.latest()->step == paused_at);  // paused means no steps

  t.step_once();
  REQUIRE(wait_until([&] { return t.latest()->step == paused_at + 1; }));
  CHECK(t.state() == TrainerState::Paused);

  t.start();
  REQUIRE(wait_until([&] { return in_state(t, TrainerState::Finished); }));
  auto s = t.latest();
  CHECK(s->step == 200);
  CHECK(!s->train_loss.empty());
  CHECK(s->train_loss.steps.back() == 200);
  CHECK(s->eval_loss.steps.back() == 200);
  CHECK(s->attention_maps().size() == 4);
  CHECK(s->steps_per_second > 0);
}

TEST_CASE("reset returns to a fresh model; reconfigure applies a new config") {
  auto c = test::tiny_config();
  c.train.steps = 100000;
  Trainer t(c, fast_options());
  t.start();
  REQUIRE(wait_until([&] { return t.latest()->step >= 3; }));
  t.reset();
  REQUIRE(wait_until([&] { return in_state(t, TrainerState::Idle) && t.latest()->step == 0; }));
  CHECK(t.latest()->train_loss.empty());

  auto c2 = c;
  c2.model.layers = 3;
  c2.model.attention.assign(3, "dot");
  t.reconfigure(c2);
  REQUIRE(wait_until([&] { return t.latest()->layers == 3; }));
  CHECK(t.config().model.layers == 3);
}

TEST_CASE("snapshots are immutable and published while running") {
  auto c = test::tiny_config();
  c.train.steps = 100000;
  Trainer t(c, fast_options());
  auto first = t.latest();
  const auto first_serial = first->serial;
  const auto first_step = first->step;
  t.start();
  REQUIRE(wait_until([&] { return t.latest()->serial > first_serial + 3; }));
  CHECK(first->step == first_step);  // an old snapshot never changes under its reader
  t.pause();
  REQUIRE(wait_until([&] { return in_state(t, TrainerState::Paused); }));
}

TEST_CASE("snapshots between two probes share the attention maps instead of copying them") {
  auto c = test::tiny_config();
  c.train.steps = 100000;
  Trainer t(c, fast_options());
  t.start();
  std::shared_ptr<const Snapshot> a, b;
  REQUIRE(wait_until([&] {
    auto s = t.latest();
    if (a && s->serial != a->serial && s->generation == a->generation &&
        s->attention_step == a->attention_step) {
      b = s;
      return true;
    }
    a = s;
    return false;
  }));
  REQUIRE(b->attention_maps().size() == 4);
  CHECK(a->attention.get() == b->attention.get());
}

TEST_CASE("a learning rate of 1e6 diverges: state Diverged with a message, process alive") {
  auto c = test::diverging_config();
  c.train.steps = 1000;
  Trainer t(c, fast_options());
  t.start();
  REQUIRE(wait_until([&] { return in_state(t, TrainerState::Diverged); }));
  CHECK(t.latest()->message.find("loss became") != std::string::npos);
  t.reset();  // recovers
  REQUIRE(wait_until([&] { return in_state(t, TrainerState::Idle); }));
}

TEST_CASE("a failing model build becomes the Error state, and reconfigure recovers") {
  auto c = test::tiny_config("text");
  c.task.text_path = "/nonexistent/corpus.txt";
  Trainer t(c, fast_options());
  REQUIRE(wait_until([&] { return in_state(t, TrainerState::Error); }));
  CHECK(t.latest()->message.find("/nonexistent/corpus.txt") != std::string::npos);
  t.start();  // nothing to start: stays in Error, no crash
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(t.state() == TrainerState::Error);
  t.reconfigure(test::tiny_config());
  REQUIRE(wait_until([&] { return in_state(t, TrainerState::Idle); }));
}

TEST_CASE("save and load checkpoints through the command queue") {
  auto c = test::tiny_config();
  c.train.steps = 100000;
  const auto dir = test::temp_dir("trainer-ckpt") + "/ck";
  Trainer t(c, fast_options());
  for (int i = 0; i < 7; ++i) t.step_once();
  REQUIRE(wait_until([&] { return t.latest()->step == 7; }));
  t.save_checkpoint(dir);
  REQUIRE(wait_until(
      [&] { return t.latest()->message.find("saved checkpoint") != std::string::npos; }));
  t.step_once();
  REQUIRE(wait_until([&] { return t.latest()->step == 8; }));
  t.load_checkpoint(dir);
  REQUIRE(wait_until(
      [&] { return t.latest()->message.find("loaded checkpoint") != std::string::npos; }));
  CHECK(t.latest()->step == 7);
  t.load_checkpoint("/nonexistent/ck");
  REQUIRE(wait_until([&] { return t.latest()->message.find("load failed") != std::string::npos; }));
  CHECK(t.latest()->step == 7);  // the current run is kept
  t.save_checkpoint("");         // no default directory configured
  REQUIRE(wait_until([&] { return t.latest()->message.find("save failed") != std::string::npos; }));
}

TEST_CASE("command storm from several threads, then destruction while running: no deadlock") {
  auto c = test::tiny_config();
  c.train.steps = 100000;
  for (int round = 0; round < 3; ++round) {
    Trainer t(c, fast_options());
    std::vector<std::thread> senders;
    for (int k = 0; k < 3; ++k) {
      senders.emplace_back([&, k] {
        for (int i = 0; i < 40; ++i) {
          switch ((i + k) % 5) {
            case 0:
              t.start();
              break;
            case 1:
              t.pause();
              break;
            case 2:
              t.step_once();
              break;
            case 3:
              t.set_learning_rate(1e-3);
              break;
            case 4:
              (void)t.latest();
              break;
          }
        }
      });
    }
    for (auto& s : senders) s.join();
    t.start();
    REQUIRE(wait_until([&] { return t.state() == TrainerState::Running; }));
  }  // ~Trainer joins while running; a deadlock here trips the ctest timeout
}
