#include "core/training/interventions/length_eval.h"

#include "core/base/error.h"
#include "core/config/config_set.h"
#include "core/data/benchmark_tasks.h"
#include "core/data/tasks.h"
#include "core/models/architectures/architecture.h"
#include "core/models/memory_estimate.h"
#include "core/training/interventions/interventions.h"
#include "core/training/session/session.h"

namespace attn {

std::string length_key(const TaskConfig& task) {
  const std::string& n = task.name;
  if (n == "text" || n == "mqar" || n == "selective_copy" || n == "induction_head")
    return "task.context";
  if (n == "copy" || n == "reverse" || n == "sort" || n == "recall" || n == "induction" ||
      is_length_generalisation_task(n))
    return "task.length";
  throw Error("task \"" + task.name +
              "\" has no length to change (modadd is always \"a b =\"; fashion-mnist images "
              "have a fixed number of patches): evaluating at another length applies to every "
              "other token task");
}

int task_length(const TaskConfig& task) {
  return length_key(task) == "task.context" ? task.context : task.length;
}

std::string length_meaning(const TaskConfig& task) {
  const std::string key = length_key(task);  // throws for a task without a length
  const std::string& n = task.name;
  if (n == "text") return "tokens per window";
  if (key == "task.context") return "tokens in the sequence";
  if (n == "recall") return "key-value pairs";
  if (n == "induction") return "prefix tokens";
  if (n == "copy" || n == "reverse" || n == "sort") return "symbols";
  return "symbols of the longest string";  // parity, reverse_string, duplicate_string
}

namespace {

// Before the task is rebuilt at `length` (its eval set alone can be gigabytes): a learned
// position table shorter than the input is refused with the reason, and the eval's memory
// estimate (core/models/memory_estimate.h) must fit, so nothing is allocated to find out.
void check_length_fits(TrainingSession& session, const TaskConfig& task, const std::string& key,
                       int length) {
  const ExperimentConfig& config = session.config();
  TaskShape shape = task_shape(task);
  shape.vocab = session.task().vocab_size();
  shape.vocab_known = true;
  const std::string at = key + " " + std::to_string(length) + " (" + std::to_string(shape.tokens) +
                         " tokens; trained at " + std::to_string(task_length(config.task)) + ")";
  if (architecture_has_position_table(config.model) && shape.tokens > session.max_probe_length())
    throw Error(at + ": model.position is \"learned\": its table has a row per position up to " +
                std::to_string(session.max_probe_length()) +
                " tokens (the training length), and none beyond; rope, alibi and none "
                "extrapolate");
  ExperimentConfig at_length = config;
  at_length.task = task;
  require_memory_for(at_length, shape, MemoryUse::eval, "eval at " + at);
}

}  // namespace

LengthEvalResult evaluate_at_length(TrainingSession& session, int length) {
  return evaluate_at_length(session, length, session.config());
}

ExperimentConfig eval_config_with_sets(const ExperimentConfig& run,
                                       const std::vector<std::string>& specs) {
  const std::string length = length_key(run.task);
  for (const std::string& spec : specs) {
    const std::string key = parse_config_set(spec).key;
    const bool eval_key = key == "seed" || key == "train.eval_batches" ||
                          key == "train.batch_size" || key.rfind("task.", 0) == 0;
    if (!eval_key || key == "task.name" || key == "task.vocab" || key == length)
      throw Error("--set " + spec + ": eval keeps the checkpoint's model and task; it can change " +
                  "seed, train.eval_batches, train.batch_size and task keys other than " +
                  "task.name, task.vocab and " + length + " (--context sets that)");
  }
  nlohmann::json config = to_json(run);
  apply_config_sets(config, specs);
  return parse_config(config, "the run's config with --set");
}

LengthEvalResult evaluate_at_length(TrainingSession& session, int length,
                                    const ExperimentConfig& config) {
  LengthEvalResult r;
  r.key = length_key(config.task);
  r.length = length;
  if (length < 1)
    throw Error("length " + std::to_string(length) + ": " + r.key + " must be at least 1");
  TaskConfig task = config.task;
  (r.key == "task.context" ? task.context : task.length) = length;
  check_length_fits(session, task, r.key, length);
  const auto rebuilt =
      make_task(task, config.seed, config.train.eval_batches, config.train.batch_size);
  const std::vector<Batch>& batches = rebuilt->eval_set();
  r.batches = static_cast<int>(batches.size());
  r.tokens = rebuilt->sequence_length();
  try {
    session.settle();
    r.figures = evaluate_model(session.model(), batches);
  } catch (const std::exception& e) {
    const std::string trained = std::to_string(task_length(config.task));
    std::string why = e.what();
    if (config.model.position == "learned" && why.find("positions") != std::string::npos)
      why =
          "model.position is \"learned\": its table has a row per position up to the training "
          "length (" +
          r.key + " " + trained +
          "), and none beyond; rope, alibi and none "
          "extrapolate (" +
          why + ")";
    throw Error(r.key + " " + std::to_string(length) + " (" + std::to_string(r.tokens) +
                " tokens; trained at " + trained + "): " + why);
  }
  return r;
}

std::string validation_refusal(const TaskConfig& t) {
  if (t.name == "text" && t.split != "blocks")
    return "task \"text\" with task.split \"" + t.split +
           "\" has no validation set apart from its eval set: set task.split \"blocks\" (it "
           "holds out task.validation_fraction of the corpus for validation)";
  if (t.name == "fashion-mnist" && t.validation_examples == 0)
    return "task \"fashion-mnist\" has no validation set apart from its test set: set "
           "task.validation_examples (training images held out for validation, e.g. 5000)";
  if (t.name == "modadd")
    return "task \"modadd\" has no validation set apart from its eval set (another seed splits "
           "the pairs differently, so it would score trained pairs): choose its "
           "hyperparameters another way";
  return "";
}

EvalFigures evaluate_validation(TrainingSession& session) {
  const ExperimentConfig& config = session.config();
  if (const std::string why = validation_refusal(config.task); !why.empty()) throw Error(why);
  const std::vector<Batch> held_out = session.task().validation_set();
  session.settle();
  if (!held_out.empty()) return evaluate_model(session.model(), held_out);
  constexpr uint64_t kValidationSalt = 0x7A11DA7E;
  const auto task = make_task(config.task, mix_seed(config.seed, kValidationSalt),
                              config.train.eval_batches, config.train.batch_size);
  return evaluate_model(session.model(), task->eval_set());
}

}  // namespace attn
