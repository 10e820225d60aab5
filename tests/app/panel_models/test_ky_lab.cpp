// The KY Transform lab panel's model (app/panels/mechanisms/ky_lab_model.h) and its figures
// (app/figures/models/ky_lab_figures.h, also written by `attnlab ky --figure`): the limit against the
// Taylor coefficients computed by hand, the figures against the result and f, and the controls
// (component, step, kind, f) changing what is drawn.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "app/figures/models/ky_lab_figures.h"
#include "app/panels/mechanisms/ky_lab_model.h"
#include "core/base/error.h"
#include "tests/app/panel_models/figure_lookup.h"

using namespace attn;
using attn::test::line_named;
using gui::KyLabModel;

namespace {

int named_lines(const fig::Figure& f) {
  int n = 0;
  for (const fig::LineSeries& l : f.panels.at(0).lines) n += l.name.empty() ? 0 : 1;
  return n;
}

}  // namespace

TEST_CASE("ky lab model: the default f's limit is its Taylor coefficients; ky-theta shows them") {
  KyLabModel m;
  m.update();
  REQUIRE(m.error().empty());
  REQUIRE(m.result());
  const KyResult& r = *m.result();
  // f = exp(x) cos(2x) at 0: f = 1, f' = 1, f''/2 = (1 - 4)/2 = -1.5 (by hand).
  REQUIRE(r.theta.size() == 3);
  CHECK(r.theta[0] == doctest::Approx(1.0).epsilon(1e-7));
  CHECK(r.theta[1] == doctest::Approx(1.0).epsilon(1e-6));
  CHECK(r.theta[2] == doctest::Approx(-1.5).epsilon(1e-5));
  REQUIRE(m.other_reading());  // poly-literal beside poly
  CHECK(m.other_reading()->kind == KyKind::poly_literal);

  const fig::Figure all = m.theta_figure();
  CHECK(all.name == "ky-theta");
  CHECK(named_lines(all) == 3);
  for (size_t i = 0; i < r.names.size(); ++i) {
    const fig::LineSeries& line = line_named(all, r.names[i]);
    REQUIRE(line.y.size() == r.history.size());
    for (size_t k = 0; k < r.history.size(); ++k) {
      CHECK(line.x[k] == r.history[k].h);
      CHECK(line.y[k] == r.history[k].theta[i]);
    }
  }
  // The control: one component shown.
  m.set_component(1);
  const fig::Figure one = m.theta_figure();
  CHECK(named_lines(one) == 1);
  CHECK(one.panels[0].lines.size() == 3);  // the other reading, the component, its limit
  line_named(one, r.names[1]);
  // The limit's dashed line sits at the limit.
  CHECK(one.panels[0].lines[2].y == std::vector<double>{r.theta[1], r.theta[1]});
  m.set_component(9);  // out of range: all again
  CHECK(m.component() == -1);
  CHECK_THROWS_AS(figures::ky_theta_figure(r, nullptr, 3), Error);
}

TEST_CASE("ky lab model: ky-fit draws f and g through the fit's points at the chosen h") {
  KyLabModel m;
  m.update();
  const KyResult& r = *m.result();
  REQUIRE(m.steps() >= 3);
  const fig::Figure f0 = m.fit_figure();
  CHECK(f0.name == "ky-fit");
  const fig::LineSeries& f_line = line_named(f0, "f");
  for (size_t i = 0; i < f_line.x.size(); i += 40)
    CHECK(f_line.y[i] == doctest::Approx(std::exp(f_line.x[i]) * std::cos(2 * f_line.x[i])));
  // The span: 1.5 times degree * h0 around x0 = 0.
  CHECK(f_line.x.front() == doctest::Approx(-0.3));
  CHECK(f_line.x.back() == doctest::Approx(0.3));
  // g(t; limit) at t: the Taylor polynomial of the limit.
  const fig::LineSeries& g = line_named(f0, "g(t; limit)");
  const double t = g.x[200];
  CHECK(g.y[200] == doctest::Approx(r.theta[0] + r.theta[1] * t + r.theta[2] * t * t));
  // The control: another step moves the fit's points to x0 + j h_k.
  m.set_fit_step(2);
  const fig::Figure f2 = m.fit_figure();
  const fig::ScatterSeries& dots = f2.panels[0].scatters.at(0);
  REQUIRE(dots.x.size() == 3);
  CHECK(dots.x[1] == doctest::Approx(r.history[2].h));
  CHECK(dots.x[1] != doctest::Approx(f0.panels[0].scatters.at(0).x[1]));
  CHECK(line_named(f2, "g(t; theta(h))").y != line_named(f0, "g(t; theta(h))").y);
  m.set_fit_step(10000);  // clamped to the last step
  CHECK(m.fit_step() == m.steps() - 1);
  CHECK(m.report()["fit_step"] == m.steps() - 1);
}

TEST_CASE("ky lab model: the kind and f controls; bad f is an error with its position") {
  KyLabModel m;
  m.inputs().kind = 0;  // linear
  m.set_f("x^3");
  m.inputs().x0 = 1.0;
  m.update();
  REQUIRE(m.result());
  CHECK(m.result()->kind == KyKind::linear);
  // (f'(1), f(1)) = (3, 1); the reference from a degree-2 fit agrees.
  CHECK(m.result()->theta[0] == doctest::Approx(3.0).epsilon(1e-6));
  CHECK(m.result()->theta[1] == doctest::Approx(1.0).epsilon(1e-8));
  CHECK_FALSE(m.other_reading());
  REQUIRE(m.reference().size() == 2);
  CHECK(m.reference()[0] == doctest::Approx(3.0).epsilon(1e-5));
  CHECK(named_lines(m.theta_figure()) == 2);
  CHECK(m.report()["kind"] == "linear");

  m.set_f("sin(x");
  m.update();
  CHECK_FALSE(m.error().empty());
  CHECK(m.error_position() == 5);
  CHECK_FALSE(m.result());
  CHECK_THROWS_AS(m.theta_figure(), Error);
  CHECK_THROWS_AS(m.fit_figure(), Error);
  // The field holds what set_f gave it.
  CHECK(std::string(m.f_field()) == "sin(x");
}
