// `attnlab spectral`: the spectrum of I + C for a connection matrix C read from CSV (the
// Connection Transformer's C, seed 001), and optionally a stability control applied to it.
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/cli/cli.h"
#include "core/base/atomic_file.h"
#include "core/base/decimal.h"
#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/models/conn/spectrum.h"

namespace attn {
namespace {

using nlohmann::json;

constexpr const char* kSpectralFooter =
    R"(Reads C, an N x N matrix as CSV (N lines of N comma-separated decimal numbers, no
header), and prints rho(I + C) (the largest |eigenvalue|), ||I + C||_2 (the largest singular value) and
all eigenvalues of I + C as [re, im], by decreasing modulus. With --control, the control is
applied to C and the same is printed for the result under "output" (--out writes it as CSV):
  none        leaves C as it is
  spec        the seed's C *= r / rho(I + C) when rho > r; cannot bring rho below 1 when
              trace(C) >= 0 (the eigenvalues 1 + s lambda only move toward 1)
  norm-bound  if ||I + C||_2 > r: I + C rescaled to norm r, C = (I + C) - I; then
              rho(I + C) <= ||I + C||_2 <= r
Bad input exits 2 with a message naming the row and column.)";

json spectrum_json(const spectral::Spectrum& s) {
  json eig = json::array();
  for (const auto& z : s.eigenvalues) eig.push_back({z[0], z[1]});
  return json{{"n", s.n},
              {"spectral_radius", s.spectral_radius},
              {"spectral_norm", s.spectral_norm},
              {"eigenvalues", eig}};
}

void print_text(std::ostream& out, const std::string& title, const spectral::Spectrum& s) {
  out << title << ": n " << s.n << ", rho(I+C) " << std::setprecision(10) << s.spectral_radius
      << ", ||I+C||_2 " << s.spectral_norm << "\n  eigenvalues:";
  for (const auto& z : s.eigenvalues) out << " (" << z[0] << (z[1] < 0 ? "" : "+") << z[1] << "i)";
  out << "\n";
}

}  // namespace

CLI::App* add_command(CLI::App& app, SpectralArgs& a) {
  auto* cmd = app.add_subcommand(
      "spectral", "Spectral radius, spectral norm and eigenvalues of I + C for a CSV matrix C");
  cmd->add_option("--matrix", a.matrix, "C as CSV: N lines of N numbers, no header")->required();
  cmd->add_option("--control", a.control, "Apply a stability control: none, spec, norm-bound");
  // Decimal only: CLI11 (strtod) would read "0x10" as 16 and call 1e-400 "not a number".
  cmd->add_option("--limit", a.limit, "The control's limit r, a decimal number (default 0.95)")
      ->check(CLI::Validator(
          [](std::string& text) {
            double x = 0;
            std::string why;
            return parse_decimal(text, x, why) ? std::string() : "'" + text + "' " + why;
          },
          "DECIMAL"));
  cmd->add_option("--out", a.out, "Write the controlled C here (CSV); needs --control");
  cmd->add_flag("--json", a.json, "Print JSON");
  return with_footer(cmd, kSpectralFooter);
}

int run_command(const SpectralArgs& a) {
  try {
    // A regular file of at most 256 MiB (a 4096 x 4096 matrix is ~70 MiB of CSV): /dev/zero or a
    // FIFO is refused by name instead of read until the machine runs out of memory.
    std::string text;
    try {
      text = read_regular_file(a.matrix, 256 << 20);
    } catch (const Error& e) {
      throw Error(std::string("--matrix: ") + e.what());
    }
    int n = 0;
    auto c = spectral::parse_matrix_csv(text, a.matrix, n);
    if (!a.out.empty() && a.control.empty())
      throw Error("--out writes the controlled matrix: give --control none|spec|norm-bound");
    if (!(a.limit > 0) || !std::isfinite(a.limit))
      throw Error("--limit must be a finite number > 0, got " + std::to_string(a.limit));
    json j = spectrum_json(spectral::shifted_spectrum(c, n));
    // Text is printed only once everything succeeded: an error leaves stdout empty.
    std::ostringstream text_out;
    if (!a.json) print_text(text_out, "input", spectral::shifted_spectrum(c, n));
    if (!a.control.empty()) {
      const auto control = spectral::parse_control(a.control);
      const bool changed = spectral::apply_control(c, n, control, a.limit);
      const auto out = spectral::shifted_spectrum(c, n);
      j["output"] = spectrum_json(out);
      j["output"]["control"] = a.control;
      j["output"]["limit"] = a.limit;
      j["output"]["changed"] = changed;
      if (!a.json) {
        print_text(text_out,
                   std::string("after ") + a.control + " (r = " + std::to_string(a.limit) + ")" +
                       (changed ? "" : ", unchanged"),
                   out);
      }
      if (!a.out.empty()) {
        std::ostringstream f;
        f << std::setprecision(17);
        for (int i = 0; i < n; ++i) {
          for (int k = 0; k < n; ++k) f << (k ? "," : "") << c[static_cast<size_t>(i) * n + k];
          f << "\n";
        }
        if (!all_finite(j)) throw Error("the result is not finite (an overflow in the input?)");
        write_file_atomic(a.out, f.str());  // never a partial CSV, even if killed
      }
    }
    if (!all_finite(j)) throw Error("the result is not finite (an overflow in the input?)");
    if (a.json)
      std::cout << j.dump(2) << "\n";
    else
      std::cout << text_out.str();
    return kExitOk;
  } catch (const std::exception& e) {
    std::cerr << "attnlab spectral: " << e.what() << "\n";
    return kExitUsage;
  }
}

}  // namespace attn
