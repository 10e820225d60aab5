// The benchmark suite's figures (torch-free), drawn from a leaderboard as suite_leaderboard()
// (core/training/headless/suite.h) writes it: the task x mechanism table of mean eval accuracy,
// and, for the tasks evaluated beyond their training length, accuracy against length with one
// line per mechanism. Both throw attn::Error when the leaderboard has nothing to draw.
#pragma once
#include <nlohmann/json.hpp>

#include "render/plot/figure.h"

namespace attn::figures {

fig::Figure leaderboard_figure(const nlohmann::json& leaderboard);
// Whether any cell has a length evaluated beyond training (else there is no extrapolation figure).
bool has_extrapolation(const nlohmann::json& leaderboard);
fig::Figure extrapolation_figure(const nlohmann::json& leaderboard);

}  // namespace attn::figures
