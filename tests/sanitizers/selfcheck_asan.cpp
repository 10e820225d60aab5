// The ASan+UBSan stage's self-check (tests/sanitizers/CMakeLists.txt, scripts/sanitize.sh): one
// deliberate heap overflow and one signed overflow, compiled into every instrumented suite with
// the same flags as its code. Skipped in a normal run; the stage runs them with --no-skip and
// fails unless each dies with its sanitizer's report, so a suite that lost its instrumentation
// cannot pass the stage.
#include <doctest/doctest.h>

#include <climits>
#include <cstring>
#include <memory>

TEST_CASE("sanitizer self-check: ASan reports a heap overflow" * doctest::skip()) {
  volatile int n = 8;  // volatile: the compiler may not see that the read is out of bounds
  std::unique_ptr<char[]> bytes(new char[n]);
  std::memset(bytes.get(), 1, n);
  volatile char past_end = bytes[n];  // one byte past the allocation
  (void)past_end;
  CHECK(n == 8);  // reached only without ASan: the read went unnoticed
}

TEST_CASE("sanitizer self-check: UBSan reports a signed overflow" * doctest::skip()) {
  volatile int big = INT_MAX;
  const int sum = big + 1;  // undefined behaviour
  CHECK(sum != 0);          // reached only without UBSan (or with it recovering)
}
