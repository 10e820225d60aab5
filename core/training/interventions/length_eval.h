// A trained run evaluated at another length (train short, test long): the task rebuilt with
// one length key changed (task.context for text, mqar, selective_copy and induction_head: the
// sequence; task.length for copy, reverse, sort, recall, induction, parity, reverse_string and
// duplicate_string: the string or the pairs), its fixed eval set drawn from the run's seed exactly
// as at training, and the model evaluated on it (core/training/interventions/interventions.h's
// evaluate_model: eval mode, no gradients, nothing about the run changed). Torch-free for callers
// (`attnlab eval`). Contract:
//  - At the training length the figures equal the run's own eval (the same batches).
//  - A task without a length to change (modadd, fashion-mnist) and a length below 1 throw
//    attn::Error naming the task or the length. A model that cannot run at that length (a
//    learned position table shorter than the input, linear-sim's max_len) throws attn::Error
//    naming the length, the limit and the positions that do extrapolate (rope, alibi, none).
#pragma once
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/views/intervention_view.h"

namespace attn {

class TrainingSession;  // core/training/session/session.h

struct LengthEvalResult {
  int length = 0;   // the value of the length key
  std::string key;  // "task.context" or "task.length"
  int tokens = 0;   // the model's input length at that length
  int batches = 0;
  EvalFigures figures;
};

// The key a length sets for this task, or throws attn::Error naming the task.
std::string length_key(const TaskConfig& task);
// The task's own value of that key (its training length).
int task_length(const TaskConfig& task);
// What that key counts for this task, for a field's hint (config.md's words): "key-value pairs"
// for recall, "tokens in the sequence" for mqar, and so on. Throws as length_key does.
std::string length_meaning(const TaskConfig& task);

LengthEvalResult evaluate_at_length(TrainingSession& session, int length);
// The same with the eval set drawn as `eval` says (`attnlab eval --set`): its seed, task keys,
// train.eval_batches and train.batch_size; the model is the session's. The caller checks that
// `eval` differs from the session's config only in those (eval_config_with_sets).
LengthEvalResult evaluate_at_length(TrainingSession& session, int length,
                                    const ExperimentConfig& eval);
// The session's config with `eval --set` specs applied (core/config/config_set.h); throws
// attn::Error naming --set for a key the checkpoint fixes (model.*, task.name, task.vocab, the
// architecture's, the length key: --context sets it) or one that does not change the eval set.
ExperimentConfig eval_config_with_sets(const ExperimentConfig& run,
                                       const std::vector<std::string>& specs);

// A validation set for choosing hyperparameters without looking at the reported eval set: the
// task's own held-out validation set where it has one (text with task.split "blocks",
// fashion-mnist with task.validation_examples: never trained on), else, for the synthetic tasks
// that draw fresh sequences, the eval set drawn from another seed (the run seed mixed with a
// fixed salt), the same size. Text split "tail", fashion-mnist without validation_examples and
// modadd (another seed splits the pairs differently, so it would score trained pairs) throw
// attn::Error naming the task and the key that would give it one.
EvalFigures evaluate_validation(TrainingSession& session);
// Why a task has no validation set (the message evaluate_validation throws), or "" when it has
// one: for checking a plan before anything trains.
std::string validation_refusal(const TaskConfig& task);

}  // namespace attn
