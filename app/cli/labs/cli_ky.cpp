// `attnlab ky`: the KY Transform lab without a window. One transform (and optionally the
// linear-linear chain-rule check) printed as a table or as one JSON object.
#include "app/cli/labs/cli_ky.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "app/cli/cli.h"
#include "app/figures/models/ky_lab_figures.h"
#include "core/analysis/ky_transform.h"
#include "core/base/error.h"
#include "core/base/version.h"
#include "render/plot/export/figure_export.h"

namespace attn {
namespace {

using nlohmann::json;

constexpr const char* kKyFooter = R"(Kinds (theta in this order):
  linear        g(t) = a (t-x0) + b                          -> (f'(x0), f(x0))
  poly          degree-n polynomial in (t-x0) through x0, x0+h, ..., x0+nh
                                                             -> Taylor coefficients f^(k)(x0)/k!
  poly-literal  the seed's literal system: g(x0) = f(x0), g(x0+h) = f(x0+h) and minimum
                norm; a0 = f(x0), a_k = D h^k / sum_m h^(2m), D = f(x0+h) - f(x0)
                                                             -> (f(x0), f'(x0), 0, ..., 0)
  exp           g(t) = A exp(B (t-x0)) + C, |A| <= M, min |B|: A = sign(D) M,
                B = ln(1 + |D|/M) / h, C = f(x0) - A        -> (M sgn f', |f'|/M, f - M sgn f')
  harmonic      g(t) = A sin(w (t-x0)) + C, phase pinned to 0, |A| <= M, min |w| >= 0:
                C = f(x0), A = sign(D) M, w = asin(|D|/M) / h (needs |D| <= M)
                                                             -> (M sgn f', |f'|/M, f(x0))
h_k = h0 rho^k; theta(h_k) is extrapolated to h = 0 (Richardson) and the iteration stops when
successive estimates differ by < eps (max norm), or when rounding noise makes them diverge.
Expressions: variable x, sin cos tan exp log(=ln) ln log10 sqrt abs sign ..., ^ for power, pi, e.
Exits 4 when it did not converge (the best estimate is still printed).)";

const char* limit_note(KyKind kind) {
  switch (kind) {
    case KyKind::linear:
      return "linear: the limit is (f'(x0), f(x0))";
    case KyKind::poly:
      return "poly: the (n+1)-point fit; its limit is the Taylor coefficients f^(k)(x0)/k!";
    case KyKind::poly_literal:
      return "poly-literal: two constraints + minimum norm (seed Def. 3.4); its limit is "
             "(f(x0), f'(x0), 0, ..., 0), not the Taylor coefficients the seed claims (eq. 35)";
    case KyKind::exp:
      return "exp: the limit is (M sign f', |f'|/M, f - M sign f') for f' != 0";
    case KyKind::harmonic:
      return "harmonic: the limit is (M sign f', |f'|/M, f(x0)) for f' != 0";
  }
  return "";
}

json chain_json(const KyChainCheck& c, const std::string& g) {
  return {{"g", g},
          {"x0", c.x0},
          {"u0", c.u0},
          {"f_at_u0", c.f_at_u0.theta},
          {"g_at_x0", c.g_at_x0.theta},
          {"fg_at_x0", c.fg_at_x0.theta},
          {"eq32", {c.eq32_slope, c.eq32_second}},
          {"centred_composition", {c.eq32_slope, c.centred_second}},
          {"slope_error", c.slope_error},
          {"eq32_second_error", c.eq32_second_error},
          {"uncentred",
           {{"f_intercept", c.f_intercept},
            {"g_intercept", c.g_intercept},
            {"fg_intercept", c.fg_intercept},
            {"eq32_intercept", c.eq32_intercept},
            {"error", c.uncentred_second_error}}},
          {"converged", c.converged},
          {"note",
           "eq. 32's slope a_f c_g is the chain rule and holds; its second component "
           "a_f d_g + b_f is off by a_f g(x0) for the seed's centred lines (the value of f o g "
           "is b_f), and exact if b is read as the intercept of an uncentred line a t + b"}};
}

void print_table(const KyArgs& a, const KyResult& r) {
  std::printf("KY transform of f(x) = %s at x0 = %.12g, kind %s", a.function.c_str(), a.x0,
              ky_kind_name(r.kind));
  if (r.kind == KyKind::poly || r.kind == KyKind::poly_literal)
    std::printf(", degree %d", a.settings.degree);
  if (r.kind == KyKind::exp || r.kind == KyKind::harmonic)
    std::printf(", M = %g", a.settings.amplitude);
  std::printf("\n\n%12s", "h");
  for (const auto& n : r.names) std::printf(" %20s", n.c_str());
  std::printf("\n");
  for (const auto& step : r.history) {
    std::printf("%12.4e", step.h);
    for (double v : step.theta) std::printf(" %20.12g", v);
    std::printf("\n");
  }
  std::printf("\nlimit (extrapolated to h = 0):\n");
  for (size_t i = 0; i < r.theta.size(); ++i)
    std::printf("  %-18s %.15g\n", r.names[i].c_str(), r.theta[i]);
  std::printf("%s\n%s\n", r.message.c_str(), limit_note(r.kind));
}

void print_chain(const KyChainCheck& c, const std::string& f, const std::string& g) {
  const auto& af = c.f_at_u0.theta;
  const auto& cg = c.g_at_x0.theta;
  const auto& fg = c.fg_at_x0.theta;
  std::printf(
      "\nlinear-linear chain rule (seed eq. 32), f = %s, g = %s, x0 = %.12g, u0 = g(x0) "
      "= %.12g\n",
      f.c_str(), g.c_str(), c.x0, c.u0);
  std::printf("  grad_L[f](u0)        (a_f, b_f) = (%.12g, %.12g)\n", af[0], af[1]);
  std::printf("  grad_L[g](x0)        (c_g, d_g) = (%.12g, %.12g)\n", cg[0], cg[1]);
  std::printf("  grad_L[f o g](x0)    measured   = (%.12g, %.12g)\n", fg[0], fg[1]);
  std::printf("  eq. 32 (a_f c_g, a_f d_g + b_f) = (%.12g, %.12g)\n", c.eq32_slope, c.eq32_second);
  std::printf("  slope:  |measured - a_f c_g| = %.3g  (the classical chain rule: holds)\n",
              c.slope_error);
  std::printf(
      "  second: |measured - (a_f d_g + b_f)| = %.6g = |a_f g(x0)|: eq. 32 is wrong for "
      "the seed's centred lines; the right value is b_f = %.12g\n",
      c.eq32_second_error, c.centred_second);
  std::printf(
      "  uncentred reading (b = intercept at t = 0): measured %.12g, eq. 32 %.12g, "
      "difference %.3g (holds)\n",
      c.fg_intercept, c.eq32_intercept, c.uncentred_second_error);
  if (!c.converged) std::printf("  (not all three linear transforms converged)\n");
}

// The export request of --figure/--out (std::nullopt: neither given), checked before anything is
// computed: the figure's name, the format from --out's extension, the directory it goes in.
std::optional<fig::ExportRequest> ky_figure_request(const KyArgs& a) {
  if (a.figure.empty() && a.out.empty()) return std::nullopt;
  if (a.figure != "ky-theta" && a.figure != "ky-fit")
    throw Error("--figure '" + a.figure + "': the KY lab draws ky-theta or ky-fit (with --out)");
  if (a.out.empty()) throw Error("--figure " + a.figure + " needs --out FILE");
  fig::ExportRequest r;
  const std::string ext = std::filesystem::path(a.out).extension().string();
  if (ext.empty() || !fig::parse_export_format(ext.substr(1), r.format))
    throw Error("--out " + a.out +
                ": cannot tell the format from the extension; use .pdf, .svg, .png or .csv");
  r.path = a.out;
  fig::validate(r);
  return r;
}

// Writes --figure for the computed result, as the KY lab panel draws it; the files written are
// said on stderr. --component and --fit-step out of range throw before anything is written.
void write_ky_figure(const KyArgs& a, const KyResult& r, const Expression& f, const KySettings& s,
                     const fig::ExportRequest& request) {
  fig::Figure figure;
  if (a.figure == "ky-fit") {
    figure = figures::ky_fit_figure(r, ky_function(f), a.x0, s, a.fit_step);
  } else {
    const std::optional<KyResult> other = figures::ky_other_reading(ky_function(f), a.x0, s);
    figure = figures::ky_theta_figure(r, other ? &*other : nullptr, a.component);
  }
  fig::Provenance p;
  p.program_version = version_string();
  p.run_id = "ky-lab";
  p.mechanism = "ky";
  for (const std::string& file : fig::export_figure(figure, request, p).files)
    std::cerr << "wrote " << file << "\n";
}

}  // namespace

// KyResult's plain fields as `attnlab ky --json` prints them (history and kind are written
// separately; from_json comes with the macro and is unused).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(KyResult, theta, names, converged, error, h, iterations, message)

CLI::App* add_command(CLI::App& app, KyArgs& a) {
  auto* cmd = app.add_subcommand(
      "ky",
      "KY Transform lab: theta(h) of a connection function through (x0, f(x0)) and "
      "(x0+h, f(x0+h)), and its limit as h -> 0");
  cmd->add_option("--function,-f", a.function, "f(x) as an expression, e.g. \"exp(x)*cos(2*x)\"")
      ->required();
  cmd->add_option("--x0", a.x0, "The base point")->required();
  cmd->add_option("--kind", a.kind, "linear, poly, poly-literal, exp or harmonic")
      ->capture_default_str();
  cmd->add_option("--degree", a.settings.degree, "Polynomial degree for poly, poly-literal (1..12)")
      ->capture_default_str();
  cmd->add_option("--amplitude", a.settings.amplitude, "Amplitude bound M for exp, harmonic (> 0)")
      ->capture_default_str();
  cmd->add_option("--h0", a.settings.h0, "First step h0 (> 0)")->capture_default_str();
  cmd->add_option("--rho", a.settings.rho, "Step ratio: h_k = h0 rho^k, rho in (0, 1)")
      ->capture_default_str();
  cmd->add_option(
         "--eps", a.settings.eps,
         "Stop when successive estimates differ by less (> 0; default 0 = automatic: 1e-8, "
         "raised for poly of degree >= 3 to what double evaluation of f allows)")
      ->capture_default_str();
  cmd->add_option("--max-iterations", a.settings.max_iterations,
                  "Values of h tried at most (2..200)")
      ->capture_default_str();
  cmd->add_option("--chain", a.chain,
                  "Also check the linear-linear chain rule (eq. 32) for f(g(x)) with this g");
  cmd->add_flag("--json", a.json, "Print one JSON object instead of a table");
  cmd->add_option(
      "--figure", a.figure,
      "Also draw ky-theta (theta(h) against h) or ky-fit (f and g(t; theta)) into --out");
  cmd->add_option("--out", a.out,
                  "The --figure file: .pdf, .svg, .png or .csv (with its data "
                  "CSV and JSON sidecar beside it)");
  cmd->add_option("--component", a.component, "ky-theta: the one theta component drawn (-1: all)")
      ->capture_default_str();
  cmd->add_option("--fit-step", a.fit_step, "ky-fit: the step k whose g(t; theta(h_k)) is drawn")
      ->capture_default_str();
  return with_footer(cmd, kKyFooter);
}

int run_command(const KyArgs& a) {
  KyResult r;
  KyChainCheck chain;
  try {
    const std::optional<fig::ExportRequest> figure = ky_figure_request(a);
    KySettings s = a.settings;
    try {
      s.kind = parse_ky_kind(a.kind);
    } catch (const Error& e) {
      throw Error(std::string("--kind: ") + e.what());
    }
    validate_ky_settings(s, "--");
    if (!std::isfinite(a.x0)) throw Error("--x0 must be finite");
    const Expression f = [&] {
      try {
        return Expression(a.function);
      } catch (const Error& e) {
        throw Error(std::string("--function: ") + e.what());
      }
    }();
    r = ky_transform(f, a.x0, s);
    if (!a.chain.empty()) {
      const Expression g = [&] {
        try {
          return Expression(a.chain);
        } catch (const Error& e) {
          throw Error(std::string("--chain: ") + e.what());
        }
      }();
      chain = ky_chain_check(f, g, a.x0, s);
    }
    if (figure) write_ky_figure(a, r, f, s, *figure);
  } catch (const std::exception& e) {
    std::cerr << "attnlab ky: " << e.what() << "\n";
    return kExitUsage;
  }

  const bool converged = r.converged && (a.chain.empty() || chain.converged);
  if (a.json) {
    json out = r;  // theta, names, converged, error, h, iterations, message
    out.update({{"function", a.function},
                {"x0", a.x0},
                {"kind", ky_kind_name(r.kind)},
                {"limit_note", limit_note(r.kind)}});
    if (r.kind == KyKind::poly || r.kind == KyKind::poly_literal) out["degree"] = a.settings.degree;
    if (r.kind == KyKind::exp || r.kind == KyKind::harmonic)
      out["amplitude"] = a.settings.amplitude;
    json history = json::array(), extrapolated = json::array();
    for (const auto& step : r.history) {
      json row = {step.h};
      for (double v : step.theta) row.push_back(v);
      history.push_back(row);
      if (step.estimate.empty() || !std::isfinite(step.error)) continue;
      json est = {step.h, step.error};
      for (double v : step.estimate) est.push_back(v);
      extrapolated.push_back(est);
    }
    out["history"] = history;            // [h, raw theta(h)...]
    out["extrapolated"] = extrapolated;  // [h, change, estimate...] (rows with a change)
    if (!a.chain.empty()) out["chain"] = chain_json(chain, a.chain);
    // nlohmann writes NaN/Inf as null: a result must never carry one.
    if (!all_finite(out)) {
      std::cerr << "attnlab ky: the result is not finite (refusing to print NaN)\n";
      return kExitNoConvergence;
    }
    std::cout << out.dump(2) << "\n";
  } else {
    print_table(a, r);
    if (!a.chain.empty()) print_chain(chain, a.function, a.chain);
  }
  if (!converged) {
    std::cerr << "attnlab ky (exit " << kExitNoConvergence
              << "): " << (r.converged ? "no convergence in the chain-rule check" : r.message)
              << "\n";
    return kExitNoConvergence;
  }
  return kExitOk;
}

}  // namespace attn
