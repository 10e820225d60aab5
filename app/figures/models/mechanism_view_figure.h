// The mechanism-views figure: what any layer's attention mechanism shows of itself
// (AttentionModule::observe, core/views/mechanism_view.h), drawn without knowing the mechanism,
// so a new mechanism's view is exportable (`attnlab export --figure mechanism-views`) with no
// app code naming it. Torch-free.
// Contract:
//  - The frame recorded at or before `step` (< 0: the latest); every layer's view, or `layer`'s.
//  - One panel per curve family (its series as lines, Okabe-Ito colours, the axes' names and
//    units as labels) and one per matrix (a heatmap with a colorbar named after its values);
//    a layer's scalars are listed in its first panel's title. Panels are grouped by layer.
//  - Throws attn::Error when there are no views, `step` precedes the first frame, or `layer`
//    has no view at that frame (naming the layers that do), or when no view holds a curve or a
//    matrix to draw.
#pragma once
#include <cstdint>
#include <vector>

#include "core/views/mechanism_view.h"
#include "render/plot/figure.h"

namespace attn::figures {

struct MechanismViewOptions {
  int layer = -1;     // one layer (model index); < 0: every layer with a view
  int64_t step = -1;  // the frame at or before this step; < 0: the latest
};

fig::Figure build_mechanism_view_figure(const std::vector<MechanismFrame>& history,
                                        const MechanismViewOptions& options);

}  // namespace attn::figures
