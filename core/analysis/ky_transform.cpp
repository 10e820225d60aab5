#include "core/analysis/ky_transform.h"

#include <muParser.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/base/enum_names.h"
#include "core/base/error.h"

namespace attn {
namespace {

using Real = long double;
using Vec = std::vector<Real>;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kMaxExtrapolationOrder = 8;  // beyond this Neville only adds rounding noise
constexpr int kNoisePatience = 3;          // rows in a row whose error is >= 2x the best
constexpr int kMinLevels = 3;              // h values before the stop rule may succeed

// x0 + h == x0 in double: the end of the h sequence, not a user error past its first step.
struct ResolutionError : Error {
  using Error::Error;
};

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// muparser's messages often end in " at position N." which our prefix already says.
std::string strip_position(std::string msg) {
  const auto at = msg.rfind(" at position ");
  if (at != std::string::npos && msg.find_first_not_of("0123456789.", at + 13) == std::string::npos)
    msg.erase(at);
  return msg;
}

double to_double(Real v) {
  return static_cast<double>(v);
}

std::vector<double> to_doubles(const Vec& v) {
  return std::vector<double>(v.begin(), v.end());
}

bool all_finite(const Vec& v) {
  return std::all_of(v.begin(), v.end(), [](Real x) { return std::isfinite(x); });
}

int sample_count(const KySettings& s) {
  return s.kind == KyKind::poly ? s.degree + 1 : 2;
}

// f at x0 + j h, j = 0..count-1. Returns the offsets s_j = t_j - x0 of the points actually
// evaluated (t_j is x0 + j h rounded to double) so the fit uses the true abscissas.
void sample(const KyFunction& f, double x0, double h, int count, Vec& offsets, Vec& values) {
  offsets.assign(count, 0);
  values.assign(count, 0);
  for (int j = 0; j < count; ++j) {
    const double t = to_double(static_cast<Real>(x0) + j * static_cast<Real>(h));
    const double v = f.eval(t);
    if (!std::isfinite(v))
      throw Error("f is not finite at x = " + num(t) + " (" + f.label + " = " + num(v) + ")" +
                  (j == 0 ? "" : "; try a smaller h0 or another x0"));
    offsets[j] = static_cast<Real>(t) - static_cast<Real>(x0);
    values[j] = v;
    if (j > 0 && !(offsets[j] > offsets[j - 1]))
      throw ResolutionError("h = " + num(h) +
                            " is too small: x0 + j h rounds to x0 + (j-1) h at x0 = " + num(x0));
  }
}

// Interpolating polynomial through (s_j, y_j), as coefficients of s^k (Newton form first).
Vec interpolate(const Vec& s, Vec c) {
  const size_t n = s.size() - 1;
  for (size_t level = 1; level <= n; ++level)
    for (size_t j = n; j >= level; --j) c[j] = (c[j] - c[j - 1]) / (s[j] - s[j - level]);
  Vec p(n + 1, 0);
  p[0] = c[n];
  for (size_t j = n; j-- > 0;) {  // p = p * (s - s_j) + c_j
    for (size_t k = n; k >= 1; --k) p[k] = p[k - 1] - s[j] * p[k];
    p[0] = c[j] - s[j] * p[0];
  }
  return p;
}

Vec raw_theta(const KyFunction& f, double x0, double h, const KySettings& st) {
  Vec s, y;
  sample(f, x0, h, sample_count(st), s, y);
  const Real f0 = y[0], d = y[1] - y[0], step = s[1];
  const Real m = st.amplitude;
  switch (st.kind) {
    case KyKind::linear:
      return {d / step, f0};
    case KyKind::poly:
      return interpolate(s, y);
    case KyKind::poly_literal: {
      // a_k = D s^k / sum_{m=1..n} s^(2m), written as (D/s) s^(k-1) / (1 + s^2 + ...) so that
      // tiny s neither underflows nor loses the leading term.
      Real denom = 0, power = 1;
      for (int k = 1; k <= st.degree; ++k, power *= step * step) denom += power;
      Vec theta(st.degree + 1);
      theta[0] = f0;
      Real sk = 1;
      for (int k = 1; k <= st.degree; ++k, sk *= step) theta[k] = d / step * sk / denom;
      return theta;
    }
    case KyKind::exp: {
      if (d == 0) return {0, 0, f0};
      const Real a = d > 0 ? m : -m;
      return {a, std::log1p(std::fabs(d) / m) / step, f0 - a};
    }
    case KyKind::harmonic: {
      if (d == 0) return {0, 0, f0};
      if (std::fabs(d) > m)
        throw Error("the amplitude bound M = " + num(st.amplitude) + " is too small for h = " +
                    num(h) + ": |f(x0+h) - f(x0)| = " + num(to_double(std::fabs(d))) +
                    " > M; raise the amplitude or lower h0");
      return {d > 0 ? m : -m, std::asin(std::fabs(d) / m) / step, f0};
    }
  }
  throw Error("unknown KY kind");
}

// Components that are exact signs/values at every h (exp and harmonic A, C) are not
// extrapolated: Neville on a sequence that jumps would invent values.
std::vector<bool> smooth_components(const KySettings& s, size_t size) {
  std::vector<bool> smooth(size, true);
  if (s.kind == KyKind::exp || s.kind == KyKind::harmonic) smooth[0] = smooth[2] = false;
  return smooth;
}

Real max_diff(const Vec& a, const Vec& b) {
  Real d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
  return d;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Expression

struct Expression::Impl {
  mu::Parser parser;
  double x = 0;  // bound by address: Impl lives on the heap and never moves
};

Expression::Expression(const std::string& text) : text_(text), impl_(std::make_unique<Impl>()) {
  try {
    impl_->parser.DefineVar("x", &impl_->x);
    impl_->parser.DefineConst("pi", 3.14159265358979323846);
    impl_->parser.DefineConst("e", 2.71828182845904523536);
    impl_->parser.SetExpr(text);
    int results = 0;
    impl_->parser.Eval(results);  // muparser parses lazily: force it now
    if (results != 1)
      throw ExpressionError("cannot parse \"" + text + "\": it gives " + std::to_string(results) +
                                " values (a comma?); write one "
                                "expression in x",
                            -1);
  } catch (const mu::Parser::exception_type& e) {
    const int pos = e.GetPos() < 0 ? -1 : std::min<int>(e.GetPos(), static_cast<int>(text.size()));
    const std::string where = pos >= 0 ? " at position " + std::to_string(pos) : "";
    throw ExpressionError(
        "cannot parse \"" + text + "\"" + where + ": " + strip_position(e.GetMsg()), pos);
  }
}

Expression::Expression(const Expression& other) : Expression(other.text_) {}
Expression& Expression::operator=(const Expression& other) {
  if (this != &other) *this = Expression(other.text_);
  return *this;
}
Expression::Expression(Expression&&) noexcept = default;
Expression& Expression::operator=(Expression&&) noexcept = default;
Expression::~Expression() = default;

double Expression::operator()(double x) const {
  impl_->x = x;
  try {
    return impl_->parser.Eval();
  } catch (const mu::Parser::exception_type&) {
    return std::numeric_limits<double>::quiet_NaN();
  }
}

KyFunction ky_compose(const Expression& f, const Expression& g) {
  return {[f, g](double x) { return f(g(x)); }, "(" + f.text() + ")(" + g.text() + ")"};
}

// ---------------------------------------------------------------------------------------------
// Kinds and settings

constexpr EnumName<KyKind> kKyKindNames[] = {{KyKind::linear, "linear"},
                                             {KyKind::poly, "poly"},
                                             {KyKind::poly_literal, "poly-literal"},
                                             {KyKind::exp, "exp"},
                                             {KyKind::harmonic, "harmonic"}};

const char* ky_kind_name(KyKind kind) {
  return enum_name(kind, kKyKindNames);
}

const std::vector<KyKind>& all_ky_kinds() {
  static const std::vector<KyKind> kinds = {KyKind::linear, KyKind::poly, KyKind::poly_literal,
                                            KyKind::exp, KyKind::harmonic};
  return kinds;
}

KyKind parse_ky_kind(const std::string& name) {
  KyKind kind;
  if (find_enum(kKyKindNames, name, &kind)) return kind;
  throw Error("unknown KY kind '" + name + "' (allowed: " + enum_choices(kKyKindNames) + ")");
}

void validate_ky_settings(const KySettings& s, const std::string& p) {
  const bool polynomial = s.kind == KyKind::poly || s.kind == KyKind::poly_literal;
  if (polynomial && (s.degree < 1 || s.degree > kKyMaxDegree))
    throw Error(p + "degree must be in [1, " + std::to_string(kKyMaxDegree) + "], got " +
                std::to_string(s.degree));
  if (!(s.amplitude > 0) || !std::isfinite(s.amplitude))
    throw Error(p + "amplitude must be > 0, got " + num(s.amplitude));
  if (!(s.h0 > 0) || !std::isfinite(s.h0)) throw Error(p + "h0 must be > 0, got " + num(s.h0));
  if (!(s.rho > 0 && s.rho < 1)) throw Error(p + "rho must be in (0, 1), got " + num(s.rho));
  if (!(s.eps >= 0) || !std::isfinite(s.eps))
    throw Error(p + "eps must be > 0 (or 0 for automatic), got " + num(s.eps));
  if (s.max_iterations < 2 || s.max_iterations > 200)
    throw Error(p + "max-iterations must be in [2, 200], got " + std::to_string(s.max_iterations));
}

std::vector<std::string> ky_parameter_names(KyKind kind, int degree) {
  switch (kind) {
    case KyKind::linear:
      return {"a (slope)", "b (value)"};
    case KyKind::exp:
      return {"A (amplitude)", "B (growth rate)", "C (baseline)"};
    case KyKind::harmonic:
      return {"A (amplitude)", "w (frequency)", "C (baseline)"};
    case KyKind::poly:
    case KyKind::poly_literal: {
      std::vector<std::string> names;
      for (int k = 0; k <= degree; ++k) names.push_back("a" + std::to_string(k));
      return names;
    }
  }
  return {};
}

std::vector<double> ky_theta(const KyFunction& f, double x0, double h, const KySettings& s) {
  validate_ky_settings(s);
  if (!(h > 0) || !std::isfinite(h)) throw Error("h must be > 0, got " + num(h));
  return to_doubles(raw_theta(f, x0, h, s));
}

double ky_connection(KyKind kind, const std::vector<double>& theta, double x0, double t) {
  const Real s = static_cast<Real>(t) - x0;
  if (kind == KyKind::poly || kind == KyKind::poly_literal) {
    Real v = 0;
    for (size_t k = theta.size(); k-- > 0;) v = v * s + theta[k];
    return to_double(v);
  }
  if (theta.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  switch (kind) {
    case KyKind::linear:
      return to_double(theta[0] * s + theta[1]);
    case KyKind::exp:
      return to_double(theta[0] * std::exp(theta[1] * s) + theta[2]);
    case KyKind::harmonic:
      return to_double(theta[0] * std::sin(theta[1] * s) + theta[2]);
    default:
      return std::numeric_limits<double>::quiet_NaN();
  }
}

// ---------------------------------------------------------------------------------------------
// The limit

double ky_eps(const KySettings& s) {
  if (s.eps > 0) return s.eps;
  if (s.kind != KyKind::poly) return 1e-8;
  return std::max(1e-8, 1e-11 * std::pow(300.0, s.degree - 1));
}

KyResult ky_transform(const KyFunction& f, double x0, const KySettings& s) {
  validate_ky_settings(s);
  const double eps = ky_eps(s);
  if (!std::isfinite(x0)) throw Error("x0 must be finite, got " + num(x0));
  KyResult r;
  r.kind = s.kind;
  r.names = ky_parameter_names(s.kind, s.degree);

  std::vector<Real> hs;
  std::vector<std::vector<Vec>> table;  // table[k][m]: Neville entry of order m at row k
  std::vector<Vec> estimates;           // E_k (empty where not finite)
  std::vector<Real> changes;            // |E_k - E_{k-1}|_max, inf where not comparable
  std::vector<bool> smooth;
  Real best_change = kInf;
  int worse_rows = 0;
  std::string stop_reason;

  for (int k = 0; k < s.max_iterations; ++k) {
    const Real h = static_cast<Real>(s.h0) * std::pow(static_cast<Real>(s.rho), k);
    Vec raw;
    try {
      raw = raw_theta(f, x0, to_double(h), s);
    } catch (const ResolutionError&) {
      if (k == 0) throw;
      stop_reason = "h = " + num(to_double(h)) + " is below the resolution of x0 in double";
      break;
    }
    if (!all_finite(raw)) {
      if (k == 0) throw Error("theta(h) is not finite at h = " + num(to_double(h)));
      stop_reason = "theta(h) overflowed at h = " + num(to_double(h));
      break;
    }
    if (smooth.empty()) smooth = smooth_components(s, raw.size());
    hs.push_back(h);

    // Neville row k: T[k][m] = T[k][m-1] + (T[k][m-1] - T[k-1][m-1]) h_k / (h_{k-m} - h_k).
    // The estimate E_k is the highest order, T[k][min(k, max order)].
    const int orders = std::min(k, kMaxExtrapolationOrder);
    std::vector<Vec> row{raw};
    row.reserve(orders + 1);  // `here` below must stay valid across push_back
    for (int m = 1; m <= orders; ++m) {
      const Vec& here = row[m - 1];
      const Vec& above = table[k - 1][m - 1];
      Vec next(raw.size());
      for (size_t i = 0; i < raw.size(); ++i)
        next[i] = smooth[i] ? here[i] + (here[i] - above[i]) * h / (hs[k - m] - h) : raw[i];
      row.push_back(std::move(next));
    }
    const Vec estimate = all_finite(row.back()) ? row.back() : Vec{};
    if (k > kMaxExtrapolationOrder) table[k - 1 - kMaxExtrapolationOrder].clear();  // unused now
    table.push_back(std::move(row));

    // Remark 3.1's stop rule, on the extrapolated sequence.
    const Real change = k > 0 && !estimate.empty() && !estimates.back().empty()
                            ? max_diff(estimate, estimates.back())
                            : kInf;
    estimates.push_back(estimate);
    changes.push_back(change);
    r.history.push_back({to_double(h), to_doubles(raw), to_doubles(estimate), to_double(change)});

    if (change < eps && k + 1 >= kMinLevels) {
      r.converged = true;
      break;
    }
    if (change < best_change) {
      best_change = change, worse_rows = 0;
    } else if (change >= 2 * best_change && ++worse_rows >= kNoisePatience) {
      stop_reason = "the change between successive h stopped shrinking at " +
                    num(to_double(best_change)) +
                    " (rounding noise grows as h shrinks, or f is not smooth enough at x0)";
      break;
    }
  }
  if (stop_reason.empty() && !r.converged)
    stop_reason = "the budget of " + std::to_string(s.max_iterations) + " values of h ran out";

  // Converged: the last estimate, as the Remark says. Otherwise the estimate that agrees best
  // with both neighbours: when rounding noise takes over, the newest one is the noisy one.
  const size_t n = estimates.size();
  size_t pick = n - 1;
  Real error = changes.back();
  if (!r.converged) {
    error = kInf;
    for (size_t j = 0; j + 1 < n; ++j) {
      const Real two_sided = std::max(changes[j], changes[j + 1]);
      if (two_sided < error) error = two_sided, pick = j;
    }
    if (!std::isfinite(error)) pick = n - 1, error = changes.back();
  }
  if (estimates[pick].empty() || !std::isfinite(error))
    throw Error("theta(h) for " + f.label + " at x0 = " + num(x0) +
                " has no two finite estimates to compare (" + stop_reason + ")");
  r.theta = to_doubles(estimates[pick]);
  r.error = to_double(error);
  r.iterations = static_cast<int>(n);
  r.h = r.history.back().h;
  if (r.converged) {
    r.message = "converged: the change " + num(r.error) + " < eps = " + num(eps) + " after " +
                std::to_string(r.iterations) + " values of h";
  } else {
    r.message = "no convergence: " + stop_reason + "; eps = " + num(eps) +
                " was not met. Reported: the estimate at h = " + num(r.history[pick].h) +
                ", good to about " + num(r.error);
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// Chain rule and the seed's worked example

KyChainCheck ky_chain_check(const Expression& f, const Expression& g, double x0,
                            const KySettings& settings) {
  KySettings s = settings;
  s.kind = KyKind::linear;
  KyChainCheck c;
  c.x0 = x0;
  c.u0 = g(x0);
  if (!std::isfinite(c.u0))
    throw Error("g is not finite at x = " + num(x0) + " (" + g.text() + " = " + num(c.u0) + ")");
  c.g_at_x0 = ky_transform(g, x0, s);
  c.f_at_u0 = ky_transform(f, c.u0, s);
  c.fg_at_x0 = ky_transform(ky_compose(f, g), x0, s);
  c.converged = c.f_at_u0.converged && c.g_at_x0.converged && c.fg_at_x0.converged;

  const Real a_f = c.f_at_u0.theta[0], b_f = c.f_at_u0.theta[1];
  const Real c_g = c.g_at_x0.theta[0], d_g = c.g_at_x0.theta[1];
  const Real a_fg = c.fg_at_x0.theta[0], b_fg = c.fg_at_x0.theta[1];
  c.eq32_slope = to_double(a_f * c_g);
  c.eq32_second = to_double(a_f * d_g + b_f);
  c.centred_second = to_double(b_f);
  c.slope_error = to_double(std::fabs(a_fg - a_f * c_g));
  c.eq32_second_error = to_double(std::fabs(b_fg - (a_f * d_g + b_f)));

  const Real u0 = c.u0;
  c.f_intercept = to_double(b_f - a_f * u0);
  c.g_intercept = to_double(d_g - c_g * x0);
  c.fg_intercept = to_double(b_fg - a_fg * x0);
  c.eq32_intercept = to_double(a_f * (d_g - c_g * x0) + (b_f - a_f * u0));
  c.uncentred_second_error = std::fabs(c.fg_intercept - c.eq32_intercept);
  return c;
}

KySeedExample ky_seed_example(double h) {
  const Expression cube("x^3");
  const KyFunction f = ky_function(cube);
  KySeedExample ex;
  ex.h = h;
  const Real hl = h;
  ex.seed_a1 = to_double(3 + hl * hl);
  ex.seed_a2 = to_double(3 + hl);
  ex.seed_lhs = to_double((3 + hl) * hl * hl + (3 + hl * hl) * hl + 1);
  ex.rhs = to_double((1 + hl) * (1 + hl) * (1 + hl));
  KySettings s;
  s.degree = 2;
  s.kind = KyKind::poly_literal;
  ex.literal = ky_theta(f, 1.0, h, s);
  ex.literal_limit = ky_transform(f, 1.0, s);
  s.kind = KyKind::poly;
  ex.three_point = ky_theta(f, 1.0, h, s);
  ex.three_point_limit = ky_transform(f, 1.0, s);
  return ex;
}

}  // namespace attn
