// The KY Transform lab maths, against independent references: analytic Taylor coefficients,
// a brute-force minimum-norm solve, the constraints themselves, and the classical chain rule.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/analysis/ky_transform.h"

using namespace attn;

namespace {

double factorial(int k) {
  return k <= 1 ? 1.0 : k * factorial(k - 1);
}

// A test function: its expression and its k-th derivative at x, computed by hand.
struct Analytic {
  const char* expr;
  double x0;
  double (*derivative)(int k, double x);
};

double d_cube(int k, double x) {
  const double d[] = {x * x * x, 3 * x * x, 6 * x, 6};
  return k < 4 ? d[k] : 0.0;
}
double d_exp(int, double x) {
  return std::exp(x);
}
double d_sin(int k, double x) {
  const double d[] = {std::sin(x), std::cos(x), -std::sin(x), -std::cos(x)};
  return d[k % 4];
}
double d_log1p(int k, double x) {  // log(1+x): (-1)^(k+1) (k-1)! / (1+x)^k
  if (k == 0) return std::log1p(x);
  return (k % 2 ? 1.0 : -1.0) * factorial(k - 1) / std::pow(1 + x, k);
}
double d_expcos(int k, double x) {  // exp(x) cos(2x) = Re e^((1+2i) x)
  const std::complex<double> z(1, 2);
  return std::real(std::pow(z, k) * std::exp(z * x));
}

const Analytic kFunctions[] = {
    {"x^3", 1.0, d_cube},
    {"exp(x)", 0.0, d_exp},
    {"sin(x)", 0.7, d_sin},
    {"log(1+x)", 0.0, d_log1p},
    {"exp(x)*cos(2*x)", 0.0, d_expcos},
    {"exp(x)*cos(2*x)", -0.4, d_expcos},
};

// eps tighter than the automatic one: these tests check how accurate the method can be.
KySettings settings(KyKind kind, int degree = 2, double amplitude = 1.0) {
  KySettings s;
  s.eps = 1e-9;
  s.kind = kind;
  s.degree = degree;
  s.amplitude = amplitude;
  return s;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("KY transform: poly (n+1 points) reaches the Taylor coefficients") {
  for (const auto& fn : kFunctions) {
    for (int degree = 1; degree <= 4; ++degree) {
      INFO(fn.expr << " at " << fn.x0 << ", degree " << degree);
      const KyResult r = ky_transform(Expression(fn.expr), fn.x0, settings(KyKind::poly, degree));
      REQUIRE(r.theta.size() == static_cast<size_t>(degree + 1));
      CHECK(r.names.front() == "a0");
      for (int k = 0; k <= degree; ++k) {
        INFO("a" << k << " = " << r.theta[k]);
        const double want = fn.derivative(k, fn.x0) / factorial(k);
        const double tolerance = degree <= 2 ? 1e-8 : 1e-5;  // a4: well inside the 1e-3 asked
        CHECK(std::fabs(r.theta[k] - want) <= tolerance);
        // The reported error estimate is honest: the true error is not much larger.
        CHECK(std::fabs(r.theta[k] - want) <= 10 * r.error + 1e-12);
      }
      if (degree <= 2) CHECK(r.converged);
    }
  }
}

TEST_CASE("KY transform: linear is (f'(x0), f(x0))") {
  for (const auto& fn : kFunctions) {
    INFO(fn.expr << " at " << fn.x0);
    const KyResult r = ky_transform(Expression(fn.expr), fn.x0, settings(KyKind::linear));
    CHECK(r.converged);
    CHECK(r.names == std::vector<std::string>{"a (slope)", "b (value)"});
    CHECK(r.theta[0] == doctest::Approx(fn.derivative(1, fn.x0)).epsilon(1e-9));
    CHECK(r.theta[1] == fn.derivative(0, fn.x0));  // f(x0) itself, no extrapolation error
  }
}

TEST_CASE("KY transform: poly-literal tends to (f, f', 0, ...), not the Taylor coefficients") {
  for (const auto& fn : kFunctions) {
    for (int degree = 2; degree <= 4; ++degree) {
      INFO(fn.expr << " at " << fn.x0 << ", degree " << degree);
      const KyResult r =
          ky_transform(Expression(fn.expr), fn.x0, settings(KyKind::poly_literal, degree));
      CHECK(r.converged);
      CHECK(r.theta[0] == doctest::Approx(fn.derivative(0, fn.x0)).epsilon(1e-12));
      CHECK(r.theta[1] == doctest::Approx(fn.derivative(1, fn.x0)).epsilon(1e-8));
      for (int k = 2; k <= degree; ++k) CHECK(std::fabs(r.theta[k]) < 1e-7);
    }
  }
  // ... while the Taylor coefficient a2 = f''/2 is far from 0 for x^3 at 1.
  const KyResult taylor = ky_transform(Expression("x^3"), 1.0, settings(KyKind::poly, 2));
  CHECK(taylor.theta[2] == doctest::Approx(3.0).epsilon(1e-9));
}

TEST_CASE("KY transform: poly-literal closed form equals a brute-force minimum-norm solve") {
  using R = long double;
  for (const auto& fn : kFunctions) {
    for (int degree = 1; degree <= 6; ++degree) {
      for (double h : {0.1, 0.013}) {
        INFO(fn.expr << " degree " << degree << " h " << h);
        const Expression f(fn.expr);
        const std::vector<double> theta =
            ky_theta(ky_function(f), fn.x0, h, settings(KyKind::poly_literal, degree));
        // The 2 x (n+1) system A theta = b: rows (1, 0, ..., 0) and (1, s, ..., s^n) with s the
        // actual step; minimum norm theta = A^T (A A^T)^{-1} b.
        const double t1 = fn.x0 + h;
        const R s = static_cast<R>(t1) - fn.x0;
        std::vector<R> row0(degree + 1, 0), row1(degree + 1, 1);
        row0[0] = 1;
        for (int k = 1; k <= degree; ++k) row1[k] = row1[k - 1] * s;
        R g00 = 0, g01 = 0, g11 = 0;
        for (int k = 0; k <= degree; ++k)
          g00 += row0[k] * row0[k], g01 += row0[k] * row1[k], g11 += row1[k] * row1[k];
        const R b0 = f(fn.x0), b1 = f(t1), det = g00 * g11 - g01 * g01;
        const R y0 = (g11 * b0 - g01 * b1) / det, y1 = (g00 * b1 - g01 * b0) / det;
        for (int k = 0; k <= degree; ++k) {
          const double brute = static_cast<double>(row0[k] * y0 + row1[k] * y1);
          CHECK(theta[k] == doctest::Approx(brute).epsilon(1e-9).scale(1.0));
        }
      }
    }
  }
}

TEST_CASE("KY transform: exp and harmonic satisfy both constraints at every h, |A| <= M") {
  struct Case {
    const char* expr;
    double x0;
    double slope, value;  // f'(x0), f(x0)
  };
  const Case cases[] = {{"exp(x)", 0.0, 1.0, 1.0},
                        {"sin(x)", 0.3, std::cos(0.3), std::sin(0.3)},
                        {"x^3 - 2*x", 1.0, 1.0, -1.0},
                        {"cos(x)", 1.0, -std::sin(1.0), std::cos(1.0)}};
  for (KyKind kind : {KyKind::exp, KyKind::harmonic}) {
    for (const auto& c : cases) {
      for (double m : {0.5, 1.0, 3.0}) {
        INFO(ky_kind_name(kind) << " " << c.expr << " at " << c.x0 << ", M = " << m);
        const Expression f(c.expr);
        const KyResult r = ky_transform(f, c.x0, settings(kind, 2, m));
        CHECK(r.converged);
        REQUIRE(!r.history.empty());
        for (const KyStep& step : r.history) {
          const double t1 = c.x0 + step.h;
          CHECK(ky_connection(kind, step.theta, c.x0, c.x0) ==
                doctest::Approx(f(c.x0)).epsilon(1e-12));
          CHECK(ky_connection(kind, step.theta, c.x0, t1) == doctest::Approx(f(t1)).epsilon(1e-10));
          CHECK(std::fabs(step.theta[0]) <= m);
          CHECK(step.theta[1] >= 0);  // the minimum |B| / |w| is the non-negative root
        }
        const double sign = c.slope > 0 ? 1.0 : -1.0;
        CHECK(r.theta[0] == sign * m);
        CHECK(r.theta[1] == doctest::Approx(std::fabs(c.slope) / m).epsilon(1e-8));
        CHECK(r.theta[2] ==
              doctest::Approx(kind == KyKind::exp ? c.value - sign * m : c.value).epsilon(1e-12));
      }
    }
  }
  // f(x0+h) == f(x0): no growth and no amplitude needed.
  const KyResult flat = ky_transform(Expression("3"), 0.5, settings(KyKind::exp));
  CHECK(flat.theta == std::vector<double>{0.0, 0.0, 3.0});
  // The harmonic amplitude bound must reach |f(x0+h) - f(x0)|.
  CHECK(error_of([] {
          ky_transform(Expression("exp(x)"), 0.0, settings(KyKind::harmonic, 2, 0.05));
        }).find("amplitude bound M = 0.05 is too small for h = 0.1") != std::string::npos);
}

TEST_CASE("KY transform: linear-linear chain rule, eq. 32 and its centred-form discrepancy") {
  struct Case {
    const char* f;
    const char* g;
    double x0;
    double df_at_u0, g_x0, dg_x0;  // f'(g(x0)), g(x0), g'(x0) by hand
  };
  const Case cases[] = {
      {"sin(x)", "x^2 + 1", 0.5, std::cos(1.25), 1.25, 1.0},
      {"exp(x)", "3*x - 1", 2.0, std::exp(5.0), 5.0, 3.0},
      {"exp(x)", "sin(x)", 0.0, 1.0, 0.0, 1.0},  // g(x0) = 0: eq. 32 happens to hold
      {"x^2 - 2*x", "x^2", 1.0, 0.0, 1.0, 2.0},  // f'(u0) = 0: likewise
      {"log(x)", "exp(2*x)", 0.3, std::exp(-0.6), std::exp(0.6), 2 * std::exp(0.6)},
  };
  for (const auto& c : cases) {
    INFO(c.f << " o " << c.g << " at " << c.x0);
    const KyChainCheck k =
        ky_chain_check(Expression(c.f), Expression(c.g), c.x0, settings(KyKind::linear));
    CHECK(k.converged);
    CHECK(k.u0 == doctest::Approx(c.g_x0).epsilon(1e-14));
    const double scale = std::max(1.0, std::fabs(c.df_at_u0 * c.dg_x0));
    // First component: the classical chain rule, both measured and as eq. 32 predicts.
    CHECK(k.fg_at_x0.theta[0] == doctest::Approx(c.df_at_u0 * c.dg_x0).epsilon(1e-8));
    CHECK(k.slope_error <= 1e-8 * scale);
    // Second component: eq. 32 is off by exactly f'(u0) g(x0) for the centred lines.
    const double discrepancy = std::fabs(c.df_at_u0 * c.g_x0);
    CHECK(k.eq32_second_error == doctest::Approx(discrepancy).epsilon(1e-8).scale(1.0));
    CHECK(k.fg_at_x0.theta[1] == doctest::Approx(k.centred_second).epsilon(1e-12));
    // ... and exact under the uncentred (intercept) reading.
    CHECK(k.uncentred_second_error <= 1e-8 * std::max(1.0, std::fabs(k.fg_intercept)));
  }
}

TEST_CASE("KY transform: the seed's Example 3.1 contradicts its own eq. 26") {
  for (double h : {0.1, 0.01}) {
    const KySeedExample ex = ky_seed_example(h);
    CHECK(ex.seed_a2 == doctest::Approx(3 + h));
    CHECK(ex.seed_lhs - ex.rhs == doctest::Approx(h * h * h).epsilon(1e-6));  // residual h^3
    // The literal minimum-norm solution satisfies eq. 26; the seed's a1, a2 do not.
    const double lhs = ex.literal[2] * h * h + ex.literal[1] * h + ex.literal[0];
    CHECK(lhs == doctest::Approx(ex.rhs).epsilon(1e-13));
    CHECK(ex.literal[1] != doctest::Approx(ex.seed_a1));
  }
  const KySeedExample ex = ky_seed_example(0.1);
  CHECK(ex.literal_limit.converged);
  CHECK(ex.literal_limit.theta[0] == doctest::Approx(1.0));
  CHECK(ex.literal_limit.theta[1] == doctest::Approx(3.0));
  CHECK(std::fabs(ex.literal_limit.theta[2]) < 1e-9);  // not 3
  CHECK(ex.three_point_limit.theta[2] == doctest::Approx(3.0));
}

TEST_CASE("KY transform: the h sequence, history and the stop rule") {
  KySettings s = settings(KyKind::linear);
  s.h0 = 0.2;
  s.rho = 0.25;
  const KyResult r = ky_transform(Expression("sin(x)"), 0.4, s);
  REQUIRE(r.iterations == static_cast<int>(r.history.size()));
  REQUIRE(r.iterations >= 3);
  for (size_t k = 0; k < r.history.size(); ++k)
    CHECK(r.history[k].h == doctest::Approx(0.2 * std::pow(0.25, k)).epsilon(1e-15));
  CHECK(r.h == r.history.back().h);
  CHECK(r.error < s.eps);
  CHECK(r.history.back().error == r.error);
  // The raw first-order sequence itself still carries its O(h) error; the estimate does not.
  CHECK(std::fabs(r.history.back().theta[0] - std::cos(0.4)) > 1e-6);

  // A budget too small to converge: converged false, a finite estimate, a message.
  KySettings tight = settings(KyKind::poly, 4);
  tight.max_iterations = 3;
  const KyResult t = ky_transform(Expression("exp(x)"), 0.0, tight);
  CHECK_FALSE(t.converged);
  CHECK(t.iterations == 3);
  CHECK(t.message.find("budget of 3 values of h") != std::string::npos);
  for (double v : t.theta) CHECK(std::isfinite(v));
}

TEST_CASE("KY transform: no convergence where f is not differentiable") {
  // sqrt(|x|) at 0: the slope (f(h) - f(0)) / h = h^(-1/2) grows without bound.
  for (const char* expr : {"sqrt(abs(x))", "sign(x)"}) {
    INFO(expr);
    const KyResult r = ky_transform(Expression(expr), 0.0, settings(KyKind::linear));
    CHECK_FALSE(r.converged);
    CHECK(r.message.find("no convergence") != std::string::npos);
    CHECK(r.iterations < 60);  // stopped once the changes kept growing, not by the budget
    for (double v : r.theta) CHECK(std::isfinite(v));
    CHECK(std::isfinite(r.error));
  }
}

TEST_CASE("KY transform: bad input is refused with a message naming the culprit") {
  CHECK(error_of([] { Expression("sin(x"); }) ==
        "cannot parse \"sin(x\" at position 5: Missing parenthesis");
  try {
    Expression("1 + sin(x");
    FAIL("accepted a parse error");
  } catch (const ExpressionError& e) {
    CHECK(e.position == 9);  // the panel draws its caret here
  }
  CHECK(error_of([] { Expression("2x"); }).find("at position 1") != std::string::npos);
  CHECK(error_of([] { Expression("foo(x)"); }).find("at position 0") != std::string::npos);
  CHECK(error_of([] { Expression("y + 1"); }).find("cannot parse \"y + 1\"") != std::string::npos);
  CHECK(error_of([] { Expression(""); }).find("cannot parse \"\"") != std::string::npos);
  CHECK(error_of([] { Expression("x, 2"); }).find("gives 2 values") != std::string::npos);
  CHECK(Expression("pi * e + 2^3 - ln(1)")(0.0) == doctest::Approx(M_PI * M_E + 8));

  // f not finite at x0 or at a sample point: the message names the point and the expression.
  const KySettings s = settings(KyKind::poly, 2);
  CHECK(error_of([&] { ky_transform(Expression("log(x)"), 0.0, s); }) ==
        "f is not finite at x = 0 (log(x) = -inf)");
  CHECK(error_of([&] {
          ky_transform(Expression("1/x"), 0.0, s);
        }).find("f is not finite at x = 0 (1/x") != std::string::npos);
  CHECK(error_of([&] {
          ky_transform(Expression("log(-x)"), -0.05, s);
        }).find("f is not finite at x = 0.05 (log(-x)") != std::string::npos);
  CHECK(error_of([&] {
          ky_transform(Expression("sqrt(x)"), -1.0, s);
        }).find("f is not finite at x = -1 (sqrt(x)") != std::string::npos);

  // Settings: each range names its option (with the CLI's prefix).
  struct Bad {
    void (*edit)(KySettings&);
    const char* message;
  };
  const Bad bad[] = {
      {[](KySettings& b) { b.rho = 1.0; }, "--rho must be in (0, 1), got 1"},
      {[](KySettings& b) { b.rho = 0.0; }, "--rho must be in (0, 1), got 0"},
      {[](KySettings& b) { b.h0 = 0.0; }, "--h0 must be > 0, got 0"},
      {[](KySettings& b) { b.h0 = -1.0; }, "--h0 must be > 0, got -1"},
      {[](KySettings& b) { b.eps = -1.0; }, "--eps must be > 0 (or 0 for automatic), got -1"},
      {[](KySettings& b) { b.degree = 0; }, "--degree must be in [1, 12], got 0"},
      {[](KySettings& b) { b.degree = 13; }, "--degree must be in [1, 12], got 13"},
      {[](KySettings& b) { b.amplitude = 0.0; }, "--amplitude must be > 0, got 0"},
      {[](KySettings& b) { b.h0 = NAN; }, "--h0 must be > 0, got nan"},
      {[](KySettings& b) { b.max_iterations = 1; }, "--max-iterations must be in [2, 200]"},
  };
  for (const auto& b : bad) {
    KySettings t = settings(KyKind::poly);
    b.edit(t);
    const std::string got = error_of([&] { validate_ky_settings(t, "--"); });
    INFO(got);
    CHECK(got.find(b.message) == 0);
  }
  CHECK(error_of([] { parse_ky_kind("spline"); }) ==
        "unknown KY kind 'spline' (allowed: linear, poly, poly-literal, exp, harmonic)");
  for (KyKind k : all_ky_kinds()) CHECK(parse_ky_kind(ky_kind_name(k)) == k);
  CHECK(ky_parameter_names(KyKind::poly_literal, 3) ==
        std::vector<std::string>{"a0", "a1", "a2", "a3"});
  CHECK(ky_parameter_names(KyKind::harmonic, 1).size() == 3);
}

TEST_CASE("KY transform: Expression copies and moves keep their own variable") {
  Expression a("x^2");
  Expression b = a;             // copy recompiles: b's x is not a's
  Expression c = std::move(a);  // move keeps the heap state (the bound address)
  CHECK(b(3.0) == 9.0);
  CHECK(c(4.0) == 16.0);
  CHECK(b(2.0) == 4.0);
  b = Expression("x + 1");
  CHECK(b(2.0) == 3.0);
  CHECK(c.text() == "x^2");
  const KyFunction composed = ky_compose(Expression("sin(x)"), Expression("2*x"));
  CHECK(composed.eval(0.25) == doctest::Approx(std::sin(0.5)));
}
