#include "core/training/interventions/run_interventions.h"

#include <map>

#include "core/base/error.h"
#include "core/training/interventions/attribution.h"
#include "core/training/interventions/interventions.h"
#include "core/training/interventions/logit_attribution.h"
#include "core/training/interventions/path_patching.h"
#include "core/training/session/session.h"

namespace attn {

namespace {

torch::Tensor tokens_tensor(const std::vector<int64_t>& tokens) {
  return torch::tensor(tokens, torch::kInt64).unsqueeze(0);
}

std::vector<int64_t> probe_of(const TrainingSession& session) {
  return session.probe_tokens().empty() ? session.task().probe() : session.probe_tokens();
}

}  // namespace

PatchProbes patch_probes(const TrainingSession& session, const std::string& clean,
                         const std::string& corrupt, const std::string& clean_what,
                         const std::string& corrupt_what) {
  if (session.task().patch_dim() > 0)
    throw Error("activation patching compares two token probes; this run's task (" +
                session.config().task.name +
                ") feeds images, so only ablation and importance apply to it");
  auto parse = [&](const std::string& text, const std::string& what) {
    try {
      return session.parse_probe(text);
    } catch (const Error& e) {
      throw Error(what + ": " + e.what());
    }
  };
  PatchProbes p;
  p.clean = clean.empty() ? probe_of(session) : parse(clean, clean_what);
  if (p.clean.empty()) throw Error(clean_what + ": the run has no probe; type one");
  if (corrupt.empty()) {
    try {
      Task::Twin twin = session.task().twin(p.clean);
      p.corrupt = std::move(twin.tokens);
      p.read = std::move(twin.read);
      p.answers = std::move(twin.answers);
      p.twin_answers = std::move(twin.twin_answers);
    } catch (const Error& e) {
      throw Error(corrupt_what + ": " + e.what());
    }
  } else {
    p.corrupt = parse(corrupt, corrupt_what);
    p.read = session.task().scored_positions(p.clean);
  }
  if (p.corrupt.size() != p.clean.size())
    throw Error(corrupt_what + " has " + std::to_string(p.corrupt.size()) + " tokens and " +
                clean_what + " " + std::to_string(p.clean.size()) +
                ": patching swaps a head's output position by position, so the probes must have "
                "the same length");
  if (p.corrupt == p.clean)
    throw Error(corrupt_what + " equals " + clean_what +
                ": patching needs two probes that differ where it matters");
  return p;
}

std::function<std::vector<int>(const std::vector<std::string>&)> probe_rows(
    const ExperimentConfig& config, const std::string& which, const std::string& what) {
  if (which != "answer" && which != "query" && which != "all")
    throw Error(what + " " + which + ": give answer, query or all");
  if (which == "all") return [](const std::vector<std::string>&) { return std::vector<int>{}; };
  std::shared_ptr<const Task> task = make_task(config.task, config.seed, 1, 1);
  if (task->patch_dim() > 0)
    throw Error(what + " " + which + ": this run's task (" + config.task.name +
                ") feeds images; its maps have no scored token positions (use all)");
  std::map<std::string, int64_t> ids;
  for (int64_t t = 0; t < task->vocab_size(); ++t) ids.emplace(task->token_label(t), t);
  return [task, ids, which, what](const std::vector<std::string>& labels) {
    std::vector<int64_t> tokens;
    for (const std::string& l : labels) {
      const auto it = ids.find(l);
      if (it == ids.end())
        throw Error(what + ": the recorded probe holds '" + l + "', not a token of this task");
      tokens.push_back(it->second);
    }
    const std::vector<int64_t> scored = task->scored_positions(tokens);
    std::vector<int> rows;
    if (which == "answer")
      rows.assign(scored.begin(), scored.end());
    else
      for (int64_t q = scored.empty() ? 0 : scored.front(); q < static_cast<int64_t>(labels.size());
           ++q)
        rows.push_back(static_cast<int>(q));
    return rows;
  };
}

AblationResult ablate_session(TrainingSession& session, const std::vector<HeadRef>& heads,
                              AblationMode mode, int batches) {
  check_interventions_apply(session.config());
  session.settle();
  return ablate_heads(session.model(), first_batches(session.task().eval_set(), batches), heads,
                      mode);
}

ImportanceTable session_importance(TrainingSession& session, AblationMode mode, int batches,
                                   const std::function<void(int, int)>& progress) {
  check_interventions_apply(session.config());
  session.settle();
  ImportanceTable t = head_importance(
      session.model(), first_batches(session.task().eval_set(), batches), mode, progress);
  t.step = session.step();
  return t;
}

PatchTable session_patch(TrainingSession& session, const PatchProbes& probes) {
  check_interventions_apply(session.config());
  session.settle();
  const Task& task = session.task();
  PatchTable t = patch_heads(
      session.model(), tokens_tensor(probes.clean), tokens_tensor(probes.corrupt),
      [&](int64_t token) { return task.token_label(token); }, probes.read, probes.answers,
      probes.twin_answers);
  t.step = session.step();
  return t;
}

std::vector<int64_t> probe_tokens(const TrainingSession& session, const std::string& clean,
                                  const std::string& what) {
  if (session.task().patch_dim() > 0)
    throw Error("the logit analyses read a token probe; this run's task (" +
                session.config().task.name + ") feeds images");
  std::vector<int64_t> p;
  try {
    p = clean.empty() ? probe_of(session) : session.parse_probe(clean);
  } catch (const Error& e) {
    throw Error(what + ": " + e.what());
  }
  if (p.empty()) throw Error(what + ": the run has no probe; type one");
  return p;
}

AttributionTable session_attribution(TrainingSession& session, const PatchProbes& probes) {
  check_interventions_apply(session.config());
  session.settle();
  AttributionTable t = attribute_heads(
      session.model(), tokens_tensor(probes.clean), tokens_tensor(probes.corrupt),
      [&](int64_t token) { return session.task().token_label(token); }, probes.read, probes.answers,
      probes.twin_answers);
  t.step = session.step();
  return t;
}

PathPatchTable session_path_patch(TrainingSession& session, const PatchProbes& probes,
                                  const std::vector<HeadRef>& receivers) {
  check_interventions_apply(session.config());
  session.settle();
  PathPatchTable t = path_patch(
      session.model(), tokens_tensor(probes.clean), tokens_tensor(probes.corrupt), receivers,
      [&](int64_t token) { return session.task().token_label(token); }, probes.read, probes.answers,
      probes.twin_answers);
  t.step = session.step();
  return t;
}

LogitAttribution session_logit_attribution(TrainingSession& session,
                                           const std::vector<int64_t>& probe) {
  check_interventions_apply(session.config());
  session.settle();
  LogitAttribution d =
      direct_logit_attribution(session.model(), tokens_tensor(probe),
                               [&](int64_t token) { return session.task().token_label(token); });
  d.step = session.step();
  return d;
}

LogitLens session_logit_lens(TrainingSession& session, const std::vector<int64_t>& probe) {
  check_interventions_apply(session.config());
  session.settle();
  LogitLens lens = logit_lens(session.model(), tokens_tensor(probe),
                              [&](int64_t token) { return session.task().token_label(token); });
  lens.step = session.step();
  return lens;
}

InterventionView session_interventions(TrainingSession& session, const InterventionRequest& request,
                                       int batches) {
  InterventionView v;
  v.request = request;
  v.step = session.step();
  auto note = [&](const std::string& what, const std::exception& e) {
    v.error += (v.error.empty() ? "" : "\n") + what + ": " + e.what();
  };
  try {
    check_interventions_apply(session.config());
  } catch (const Error& e) {
    v.error = e.what();
    return v;
  }
  try {
    v.ablation = ablate_session(session, request.ablate, request.mode, batches);
    {
      const torch::Tensor probe = session.task().patch_dim() > 0 ? session.task().probe_input()
                                                                 : tokens_tensor(probe_of(session));
      const auto eval = first_batches(session.task().eval_set(), batches);
      const auto before = ablated_prediction(session.model(), probe, eval, {}, request.mode);
      const auto after = ablated_prediction(session.model(), probe, eval, request.ablate,
                                            request.mode, &v.ablated_maps);
      if (request.ablate.empty()) v.ablated_maps.clear();  // the unablated maps: the snapshot's
      auto name = [&](int64_t token) {
        return session.task().patch_dim() > 0 ? "class " + std::to_string(token)
                                              : session.task().token_label(token);
      };
      v.prediction = name(before.first);
      v.prediction_probability = before.second;
      v.ablated_prediction = name(after.first);
      v.ablated_probability = after.second;
    }
  } catch (const std::exception& e) {
    note("ablation", e);
  }
  if (request.importance) try {
      v.importance = session_importance(session, request.mode, batches);
    } catch (const std::exception& e) {
      note("importance", e);
    }
  if (request.patch) try {
      v.patch = session_patch(session, patch_probes(session, request.clean, request.corrupt,
                                                    "clean probe", "corrupted probe"));
    } catch (const std::exception& e) {
      note("patching", e);
    }
  return v;
}

}  // namespace attn
