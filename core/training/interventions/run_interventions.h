// Interventions on a trained model, torch-free for callers (the CLI's `attnlab analyze`, the
// trainer thread): ablation, head importance and activation patching (core/training/
// interventions.h holds the arithmetic and its contract; core/views/intervention_view.h the
// results). Everything runs in eval mode without gradients and leaves the model, its optimiser
// and its random streams as they were.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/views/causal_view.h"
#include "core/views/intervention_view.h"

namespace attn {

class TrainingSession;  // core/training/session/session.h

// Throws attn::Error saying why `config`'s model has no heads to intervene on (the Connection
// Transformer's connection heads only reparametrise one matrix).
void check_interventions_apply(const ExperimentConfig& config);

// The probes of a patch as token ids: `clean` typed (empty: the session's probe) and `corrupt`
// typed (empty: the task's corrupted twin of the clean probe, Task::corrupted_twin). Throws
// attn::Error naming `clean_what` / `corrupt_what` (e.g. "--clean") and the culprit: a token
// the task does not know, a probe too long, two lengths that differ, a task without twins.
// `read`: the input positions the patch metric reads, the twin's (Task::twin) or, for a typed
// corrupted probe, every position the task scores on the clean one (Task::scored_positions).
// `answers`/`twin_answers`: the task's targets there on each probe (Task::Twin's), which the
// patch metric reads; empty for a typed probe or a twin without stated answers (the metric then
// reads the model's argmaxes).
struct PatchProbes {
  std::vector<int64_t> clean, corrupt;
  std::vector<int64_t> read;
  std::vector<int64_t> answers, twin_answers;
};
PatchProbes patch_probes(const TrainingSession& session, const std::string& clean,
                         const std::string& corrupt, const std::string& clean_what,
                         const std::string& corrupt_what);

// The session's model, on its first `batches` eval batches (<= 0: all of them).
AblationResult ablate_session(TrainingSession& session, const std::vector<HeadRef>& heads,
                              AblationMode mode, int batches);
ImportanceTable session_importance(TrainingSession& session, AblationMode mode, int batches,
                                   const std::function<void(int, int)>& progress = {});
PatchTable session_patch(TrainingSession& session, const PatchProbes& probes);

// The causal analyses of core/views/causal_view.h on the session's model, at its step: the
// probes as patch_probes gives them (DLA and the logit lens read `probes.clean` only).
// `receivers` empty: every head of layers 1 and up.
AttributionTable session_attribution(TrainingSession& session, const PatchProbes& probes);
PathPatchTable session_path_patch(TrainingSession& session, const PatchProbes& probes,
                                  const std::vector<HeadRef>& receivers);
LogitAttribution session_logit_attribution(TrainingSession& session,
                                           const std::vector<int64_t>& probe);
LogitLens session_logit_lens(TrainingSession& session, const std::vector<int64_t>& probe);

// The query rows that head metrics average over for `which`, per probe (its token labels, as a
// view record holds them): "answer", the positions the task scores (Task::scored_positions);
// "query", every position from the first scored one to the end (the task's query region);
// "all", none listed (every row). The task is built once, from `config`. Throws attn::Error
// naming `what` (e.g. "--positions") for another value or an image task; the returned function
// throws for a label the task does not know.
std::function<std::vector<int>(const std::vector<std::string>&)> probe_rows(
    const ExperimentConfig& config, const std::string& which, const std::string& what);

// The session's probe tokens, or `clean` parsed (attn::Error naming `what` and the culprit).
std::vector<int64_t> probe_tokens(const TrainingSession& session, const std::string& clean,
                                  const std::string& what);

// What the Interventions panel asked for, at the session's step: the ablation with the probe's
// prediction before and after, the importance table (when asked) and the patch (when probes are
// given). A part that fails says why in `error`; the others are still filled. Never throws
// attn::Error.
InterventionView session_interventions(TrainingSession& session, const InterventionRequest& request,
                                       int batches);

}  // namespace attn
