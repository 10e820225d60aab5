// Mechanism figures: the figures that show one attention mechanism or architecture (its own
// data in the snapshot: a conn model's C, a neural layer's score surface). Each is built and
// registered from its mechanism's own place, beside its panel's model
// (app/panels/mechanisms/<panel>_figures.cpp), keyed by the mechanism's name, so figures_for()
// and build_figure() (app/figures/catalog/figures.h) name no mechanism: they list the generic figures,
// with every registered figure the snapshot can give after mechanism-views, ordered by
// mechanism, then by registration within it.
// Adding a mechanism's figure: a builder in app/panels/mechanisms/<panel>_figures.cpp and, at
// namespace scope there, one registration:
//   const bool kMine = register_mechanism_figure(
//       {"mine", "mine-map", "what it shows", has_mine_map, mine_map_figure});
// Contract: registration runs in static initialisers. The *_figures.cpp files are the object
// library attnlab_mechanism_figures, whose objects every target that links attnlab_figures
// links directly (app/figures/CMakeLists.txt), so the linker keeps them; never register from a
// static library's member, which nothing references. A second figure under one name is refused
// with a message on stderr. Torch-free.
#pragma once
#include <vector>

#include "app/figures/catalog/figures.h"

namespace attn::figures {

struct MechanismFigure {
  const char* mechanism;    // the model.attention entry or model.architecture it shows
  const char* name;         // the figure's name (figures_for, `attnlab export --figure`)
  const char* description;  // figures_for's line
  // Whether the snapshot gives the figure (figures_for lists it, build_figure builds it).
  bool (*available)(const Snapshot& s);
  // The figure; throws attn::Error naming what is missing.
  fig::Figure (*build)(const Snapshot& s, const FigureOptions& o);
};

// Adds `figure`; returns true, for a namespace-scope `const bool` initialiser.
bool register_mechanism_figure(const MechanismFigure& figure);
// Every registered figure, ordered by mechanism, then registration order.
std::vector<MechanismFigure> mechanism_figures();

}  // namespace attn::figures
