#include "app/figures/catalog/mechanism_figures.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace attn::figures {
namespace {

std::vector<MechanismFigure>& registered() {
  static std::vector<MechanismFigure> rows;  // filled by static initialisers: a function static
  return rows;
}

}  // namespace

bool register_mechanism_figure(const MechanismFigure& figure) {
  for (const MechanismFigure& m : registered())
    if (std::string(m.name) == figure.name) {
      std::fprintf(stderr, "attnlab: a second mechanism figure named %s is ignored\n", figure.name);
      return true;
    }
  registered().push_back(figure);
  return true;
}

std::vector<MechanismFigure> mechanism_figures() {
  std::vector<MechanismFigure> rows = registered();
  // Stable: one mechanism's figures keep the order its file registers them in.
  std::stable_sort(rows.begin(), rows.end(),
                   [](const MechanismFigure& a, const MechanismFigure& b) {
                     return std::string(a.mechanism) < b.mechanism;
                   });
  return rows;
}

}  // namespace attn::figures
