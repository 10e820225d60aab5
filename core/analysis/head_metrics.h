// Scalar diagnostics of one attention head on the probe, computed from its recorded map, so a
// timeline can show when a head forms (docs/guide/heads.md gives the formulas). Torch-free.
// A map is L x L, row q = query, w[q][k] >= 0 with each row summing to 1 over the keys the query
// may see (a causal row q over k <= q). Non-finite weights count as 0.
//  - entropy: mean over rows of -sum_k w log w, in nats (0 log 0 = 0): 0 for a one-hot row,
//    log(q + 1) for a uniform causal row.
//  - diagonal: mean over q of w[q][q] (the query attends to itself).
//  - previous_token: mean over q >= 1 of w[q][q-1].
//  - induction: over the queries q whose token occurred before, at its latest earlier position
//    p < q, the mean of w[q][p + 1]: the weight on the token that followed the previous
//    occurrence (the induction pattern: "A B ... A -> B"). NaN when no token repeats.
//  - effective_window (ky): the fewest window slots whose beta_h(t_j) hold 90% of the mass.
// `rows` (optional) restricts every mean over queries to those rows (the task's scored
// positions, `attnlab export --positions`); empty: every row. A row outside the map throws
// attn::Error; a metric none of the rows qualifies for is NaN.
#pragma once
#include <string>
#include <vector>

namespace attn {

double map_entropy(const std::vector<float>& w, int size, const std::vector<int>& rows = {});
double map_diagonal(const std::vector<float>& w, int size, const std::vector<int>& rows = {});
double map_previous_token(const std::vector<float>& w, int size, const std::vector<int>& rows = {});
// tokens: the probe's token labels (ids or text), one per row; size must equal tokens.size().
double map_induction(const std::vector<float>& w, int size, const std::vector<std::string>& tokens,
                     const std::vector<int>& rows = {});
// beta: one head's W slot weights (summing to 1); `mass` in (0, 1].
int effective_window(const float* beta, int window, double mass = 0.9);

}  // namespace attn
