// The KY Transform lab (seed 000, section 3): connection functions g(t; theta) through
// (x0, f(x0)) and (x0 + h, f(x0 + h)), and the limit of theta(h) as h -> 0.
// Torch-free; no muparser in this header. Nothing here is thread-safe: an Expression keeps
// muparser's evaluation state, so give each thread its own.
//
// Kinds (theta ordering; names come back in KyResult::names):
//  linear        g(t) = a (t - x0) + b. theta = [a, b] ("a (slope)", "b (value)").
//                a = (f(x0+h) - f(x0)) / h, b = f(x0). Limit (f'(x0), f(x0)).
//  poly          degree n: the polynomial sum_k a_k (t - x0)^k through the n+1 points
//                x0, x0+h, ..., x0+n h. theta = [a0, ..., an] by degree ("a0", "a1", ...).
//                Limit: the Taylor coefficients f^(k)(x0) / k!.
//  poly-literal  degree n: the seed's literal system, only the two constraints
//                g(x0) = f(x0), g(x0+h) = f(x0+h) and the minimum-norm rule (Def. 3.4):
//                a0 = f(x0), a_k = D h^k / sum_{m=1..n} h^(2m) with D = f(x0+h) - f(x0).
//                Same ordering as poly. Limit (f(x0), f'(x0), 0, ..., 0), NOT the Taylor
//                coefficients that the seed's eq. 35 claims.
//  exp           g(t) = A exp(B (t - x0)) + C with |A| <= M (the amplitude bound) and
//                minimum |B|. theta = [A, B, C]. From A + C = f(x0), A e^(Bh) + C = f(x0+h):
//                A (e^(Bh) - 1) = D, and min |B| puts |A| = M with B > 0:
//                A = sign(D) M, B = ln(1 + |D|/M) / h, C = f(x0) - A; D == 0: A = B = 0,
//                C = f(x0). Limit (M sign f', |f'|/M, f - M sign f') for f'(x0) != 0.
//  harmonic      g(t) = A sin(w (t - x0)) + C with |A| <= M, the phase pinned to 0 (two
//                constraints cannot fix a phase as well) and minimum |w|, w >= 0 (A sin(w s)
//                and -A sin(-w s) are the same curve). theta = [A, w, C]: C = f(x0),
//                A = sign(D) M, w = asin(|D|/M) / h; D == 0: A = w = 0. Needs |D| <= M at every
//                h tried, else an Error says the amplitude bound is too small for that h.
//                Limit (M sign f', |f'|/M, f(x0)).
//
// The limit (Remark 3.1): h_k = h0 rho^k. theta(h_k) is computed in long double from the
// actual (double) sample points, then extrapolated to h = 0 by Richardson/Neville in powers of
// h (up to order 8; A and C of exp/harmonic, exact signs and values, are not extrapolated):
// E_k = T[k][min(k, 8)]. The stop rule |E_k - E_{k-1}|_max < eps (at least 3 values of h) is
// applied to these estimates, and E_k is reported with converged = true. Rounding in f grows
// like 1/h^n, so the iteration also stops once the change has been >= 2x its best value for
// 3 rows (rounding noise dominates, or f is not smooth) or the budget runs out; then the
// estimate that agrees best with both neighbours (min over j of max(change_j, change_j+1)) is
// reported, that max is `error`, and converged = false. Errors (attn::Error) for: f not finite
// at a sample point (the message names the point and the expression), invalid settings, a
// harmonic amplitude bound too small, x0 + h0 equal to x0 in double.
// A result never holds NaN or Inf.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/base/error.h"

namespace attn {

// A parse error in a user expression; position is the 0-based character index (clamped to
// the expression's length), -1 where muparser gives none (an empty expression).
struct ExpressionError : Error {
  ExpressionError(const std::string& message, int position) : Error(message), position(position) {}
  int position;
};

// A user expression f(x), compiled once with muparser: variable x, muparser's functions (sin,
// cos, tan, asin, acos, atan, sinh, cosh, tanh, exp, log = ln, ln, log2, log10, sqrt, abs,
// sign, min, max, ...), ^ for power, constants pi and e (also _pi, _e).
class Expression {
 public:
  // Throws ExpressionError on a parse error, e.g.
  // `cannot parse "sin(x" at position 5: Missing parenthesis`.
  explicit Expression(const std::string& text);
  Expression(const Expression& other);
  Expression& operator=(const Expression& other);
  Expression(Expression&&) noexcept;
  Expression& operator=(Expression&&) noexcept;
  ~Expression();

  // f(x) in double (muparser's precision). May be NaN or +-Inf (log(-1), 1/0): check with
  // std::isfinite; the KY functions below do and refuse such points.
  double operator()(double x) const;
  const std::string& text() const { return text_; }

 private:
  struct Impl;
  std::string text_;
  std::unique_ptr<Impl> impl_;
};

// A function of x with a label for messages ("x^3", "f(g(x))").
struct KyFunction {
  std::function<double(double)> eval;
  std::string label;
};
inline KyFunction ky_function(const Expression& e) {
  return {[e](double x) { return e(x); }, e.text()};
}
// x -> f(g(x)), labelled "f(g(x))" with both texts.
KyFunction ky_compose(const Expression& f, const Expression& g);

enum class KyKind { linear, poly, poly_literal, exp, harmonic };
// "linear", "poly", "poly-literal", "exp", "harmonic".
const char* ky_kind_name(KyKind kind);
// Inverse of ky_kind_name; throws Error listing the allowed names.
KyKind parse_ky_kind(const std::string& name);
const std::vector<KyKind>& all_ky_kinds();

struct KySettings {
  KyKind kind = KyKind::poly;
  int degree = 2;           // poly, poly-literal: 1..12
  double amplitude = 1.0;   // exp, harmonic: M > 0
  double h0 = 0.1;          // first step, > 0
  double rho = 0.5;         // h_k = h0 rho^k, rho in (0, 1)
  // Stop rule: successive estimates closer than eps (max norm). 0 = automatic, see ky_eps().
  double eps = 0;
  int max_iterations = 60;  // number of h values tried at most, 2..200
};
constexpr int kKyMaxDegree = 12;

// The eps the stop rule uses: s.eps if > 0, else 1e-8, raised for the (n+1)-point polynomial to
// max(1e-8, 1e-11 * 300^(n-1)). Why: f is evaluated in double, and the n-th divided difference
// loses about 2.5 digits per degree to rounding; measured over exp, log(1+x), sin,
// exp(x)cos(2x), 1/(1+x^2) at 0.3, the best achievable agreement is ~1e-9 (n=2), 3e-7 (n=3),
// 3e-5 (n=4), 3e-3 (n=5). A fixed 1e-8 would report "no convergence" for every degree >= 3.
double ky_eps(const KySettings& s);

// Throws Error naming the offending setting as `<prefix><name>` (prefix "--" for the CLI),
// e.g. "--rho must be in (0, 1), got 1.5".
void validate_ky_settings(const KySettings& s, const std::string& option_prefix = "");

// Parameter names in theta order.
std::vector<std::string> ky_parameter_names(KyKind kind, int degree);

// theta(h) for one h > 0 (the raw constraint solution, long double arithmetic, returned as
// double). Throws Error if f is not finite at a sample point or (harmonic) |D| > M.
std::vector<double> ky_theta(const KyFunction& f, double x0, double h, const KySettings& s);

// g(t; theta) for the kind (degree is theta.size() - 1 for the polynomials).
double ky_connection(KyKind kind, const std::vector<double>& theta, double x0, double t);

struct KyStep {
  double h = 0;
  std::vector<double> theta;     // raw theta(h)
  std::vector<double> estimate;  // extrapolated estimate from h_0..h_k (empty if it overflowed)
  double error = 0;  // |estimate - previous estimate|_max; +inf for k = 0 or after an overflow
};

struct KyResult {
  KyKind kind = KyKind::poly;
  std::vector<double> theta;  // the reported limit (best extrapolated estimate)
  std::vector<std::string> names;
  bool converged = false;
  double error = 0;    // error estimate of theta (max norm): the change the stop rule saw
  double h = 0;        // the last h tried
  int iterations = 0;  // h values tried (history.size())
  std::vector<KyStep> history;
  std::string message;  // why it stopped, in words
};

// The KY transform of f at x0 (the limit procedure above).
KyResult ky_transform(const KyFunction& f, double x0, const KySettings& s);
inline KyResult ky_transform(const Expression& f, double x0, const KySettings& s) {
  return ky_transform(ky_function(f), x0, s);
}

// The linear-linear chain rule, seed eq. 32: grad_L[f o g](x0) = (a_f c_g, a_f d_g + b_f)
// with grad_L[f](u0) = (a_f, b_f), u0 = g(x0), grad_L[g](x0) = (c_g, d_g).
// With the seed's centred lines (Def. 3.9: b is the VALUE at the base point) the composition
// is (a_f c_g, b_f): the first component is the classical chain rule and holds; the second
// of eq. 32 is off by a_f d_g = f'(u0) g(x0). Eq. 32 is exact if b is read as the intercept
// of an uncentred line a t + b (b = value - a * base point). Both readings are reported.
struct KyChainCheck {
  double x0 = 0, u0 = 0;   // u0 = g(x0)
  KyResult f_at_u0;        // grad_L[f](u0) = (a_f, b_f)
  KyResult g_at_x0;        // grad_L[g](x0) = (c_g, d_g)
  KyResult fg_at_x0;       // grad_L[f o g](x0), measured directly
  bool converged = false;  // all three
  // Centred reading (the seed's own definition).
  double eq32_slope = 0;         // a_f c_g
  double eq32_second = 0;        // a_f d_g + b_f, as eq. 32 writes it
  double centred_second = 0;     // b_f: the correct second component
  double slope_error = 0;        // |slope of f o g - a_f c_g|
  double eq32_second_error = 0;  // |value of f o g - (a_f d_g + b_f)| (= |a_f u0|)
  // Uncentred reading: lines a t + b with b the intercept at t = 0.
  double f_intercept = 0, g_intercept = 0, fg_intercept = 0;
  double eq32_intercept = 0;          // a_f g_intercept + f_intercept
  double uncentred_second_error = 0;  // |fg_intercept - eq32_intercept|
};
// Runs the linear kind (other settings from s) on f at g(x0), g at x0 and f o g at x0.
KyChainCheck ky_chain_check(const Expression& f, const Expression& g, double x0,
                            const KySettings& s);

// The seed's Example 3.1 (f = x^3, x0 = 1, degree 2) at one h, with real numbers. The seed
// claims a2 = 3 + h, a1 = 3 + h^2 (eqs. 28-29) and the limit (3, 3, 1); those do not satisfy
// its own eq. 26 (a2 h^2 + a1 h + 1 = (1+h)^3): the residual is h^3. The literal minimum-norm
// solution tends to (1, 3, 0) (degree order), the three-point fit to (1, 3, 3).
struct KySeedExample {
  double h = 0;
  double seed_a1 = 0, seed_a2 = 0;            // 3 + h^2, 3 + h
  double seed_lhs = 0;                        // a2 h^2 + a1 h + 1 with the seed's a1, a2
  double rhs = 0;                             // (1 + h)^3
  std::vector<double> literal;                // poly-literal theta(h) = [a0, a1, a2]
  std::vector<double> three_point;            // poly theta(h) = [a0, a1, a2]
  KyResult literal_limit, three_point_limit;  // the limits with default settings
};
KySeedExample ky_seed_example(double h);

}  // namespace attn
