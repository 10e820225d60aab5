// The figure registry (app/figures/catalog/mechanism_figures.h): the mechanisms' own figures register
// themselves from their files beside their panels (app/panels/mechanisms/*_figures.cpp), survive
// the link into every binary that links attnlab_figures, and reach figures_for() and
// build_figure() in the order the hard-wired list had; a figure registered from anywhere else
// (here, this file) reaches them the same way, and a second figure under one name is refused.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "app/figures/catalog/figures.h"
#include "app/figures/catalog/mechanism_figures.h"
#include "core/base/error.h"

using namespace attn;

namespace {

constexpr const char* kToyTask = "toy-figure-task";

bool toy_available(const Snapshot& s) {
  return s.task == kToyTask;
}

fig::Figure toy_figure(const Snapshot& s, const figures::FigureOptions& o) {
  fig::Figure f;
  f.name = "toy-map";
  f.title = "toy of " + s.task + ", layer " + std::to_string(o.layer);
  return f;
}

const bool kToy = figures::register_mechanism_figure(
    {"toy", "toy-map", "a toy mechanism's figure", toy_available, toy_figure});

std::vector<std::string> names(const std::vector<figures::FigureSpec>& specs) {
  std::vector<std::string> out;
  for (const auto& s : specs) out.push_back(s.name);
  return out;
}

}  // namespace

TEST_CASE("mechanism figures: conn's and neural's register themselves, in figures_for's order") {
  std::vector<std::string> registered;
  for (const figures::MechanismFigure& m : figures::mechanism_figures())
    if (std::string(m.mechanism) != "toy") registered.push_back(m.name);
  // conn before neural (by mechanism), each in its file's order: the list figures_for had when
  // it named them itself, so `attnlab export --list` and --all are unchanged.
  CHECK(registered == std::vector<std::string>{"conn-matrix", "conn-eigenvalues", "conn-spectral",
                                               "conn-trace", "neural-surface"});
}

TEST_CASE("mechanism figures: a registered figure reaches figures_for and build_figure") {
  REQUIRE(kToy);
  Snapshot s;
  s.task = kToyTask;
  CHECK(names(figures::figures_for(s)) == std::vector<std::string>{"loss", "toy-map"});
  figures::FigureOptions o;
  o.layer = 3;
  const fig::Figure f = figures::build_figure("toy-map", s, o);
  CHECK(f.name == "toy-map");
  CHECK(f.title == std::string("toy of ") + kToyTask + ", layer 3");  // the options reach it

  // A snapshot the figure is not available for neither lists nor builds it.
  Snapshot other;
  other.task = "copy";
  CHECK(names(figures::figures_for(other)) == std::vector<std::string>{"loss"});
  CHECK_THROWS_WITH_AS(figures::build_figure("toy-map", other), doctest::Contains("it has: loss"),
                       Error);
}

TEST_CASE("mechanism figures: a second figure under one name is refused") {
  figures::register_mechanism_figure(
      {"toy", "toy-map", "an impostor", [](const Snapshot&) { return true; }, toy_figure});
  int rows = 0;
  for (const figures::MechanismFigure& m : figures::mechanism_figures())
    if (std::string(m.name) == "toy-map") {
      ++rows;
      CHECK(std::string(m.description) == "a toy mechanism's figure");
    }
  CHECK(rows == 1);
  Snapshot other;
  CHECK(names(figures::figures_for(other)) == std::vector<std::string>{"loss"});
}
