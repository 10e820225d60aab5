// The TSan stage's self-check (tests/sanitizers/CMakeLists.txt, scripts/sanitize.sh): a
// deliberate data race, compiled into the instrumented threads suite with the same flags as its
// code. Skipped in a normal run; the stage runs it with --no-skip and fails unless it dies with
// TSan's report, so a suite that lost its instrumentation cannot pass the stage.
#include <doctest/doctest.h>

#include <thread>

TEST_CASE("sanitizer self-check: TSan reports a data race" * doctest::skip()) {
  volatile int counter = 0;  // written by two threads with no lock: a race
  auto bump = [&counter] {
    for (int i = 0; i < 10000; ++i) counter = counter + 1;
  };
  std::thread a(bump);
  std::thread b(bump);
  a.join();
  b.join();
  CHECK(counter > 0);  // reached only without TSan
}
