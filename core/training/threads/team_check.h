// A cheap test of whether a team of OpenMP threads would run well right now: the thread policy
// (thread_policy.h) asks it before it spends a whole training step on a larger team, because
// one such step on cores that other work holds can cost 50-80x a one-thread step.
// No torch in this header.
#pragma once

namespace attn {

// Runs a few tiny parallel regions of `threads` threads (torch's intra-op pool, the one
// training uses) and returns true when their median wall time stays under max_seconds, i.e.
// every thread of the team got a core at once. Leaves torch's thread count as it found it.
// Costs about a millisecond when the cores are free, at most ~max_total_seconds otherwise.
bool team_runs_promptly(int threads, double max_seconds = 300e-6, double max_total_seconds = 0.03);

}  // namespace attn
