// The statistics of a leaderboard (`attnlab suite`, core/training/headless/suite.h) for
// all-or-nothing outcomes: a cell's seeds either solve their task (eval accuracy at least the
// board's "threshold") or do not, so a cell is "solved k of n" with its exact (Clopper-Pearson)
// interval, mechanisms are compared by Fisher's exact test with Holm's adjustment over the
// board, and a task on which the reference mechanism does not solve is "not learned at this
// budget" (no comparison drawn). Works on the board's JSON alone, so `attnlab suite
// --reanalyze` rebuilds a committed board from its per-seed values without the runs.
// Contract, added to each cell with "values" (per-seed eval accuracy, in run order):
//   "solved" k, "n", "threshold", "ci95_exact" [lo, hi] (of the solve rate, in [0, 1]; null when
//   n = 0), "ci95" clamped to [0, 1], "lr_interior" (the chosen rate strictly inside the rates
//   tried, diverged ones included; false where the grid hit its lr_extend cap at an edge),
//   "eval_sequences" (eval_batches x batch_size of the cell's config in `plan`; null when the
//   plan has no such cell; a board with "stale" keeps its cells' own figure), and in each
//   "length_eval" entry with values: "seeds_solved" (the seeds that solved at the training length),
//   "values"/"mean"/"ci95" over those seeds only (their previous figures over every seed as
//   "values_all"), "solved" and "ci95_exact" there.
// Each task row gains "reference" (the board's "reference", the manifest's; a board that
// predates it: dot-rope, else the first mechanism),
// "reference_solved" [k, n] and "learned_at_budget": the reference solved at least kLearnedShare
// (suite.h: 80%) of its seeds (4 of 5; 3 of 3). "comparisons" lists, for each task learned at
// budget, every other mechanism against the reference: solved counts, "p_fisher" (two-sided) and
// "p_holm" (Holm over every comparison of the board).
#pragma once
#include <nlohmann/json.hpp>

#include "core/training/headless/suite.h"

namespace attn {

void analyze_leaderboard(nlohmann::json& board, const SuitePlan& plan);

}  // namespace attn
