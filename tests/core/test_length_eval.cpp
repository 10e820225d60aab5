// Evaluating at another length (core/training/interventions/length_eval.h): the training length gives the
// run's own eval; relative positions run at other lengths; a learned table beyond its length is
// refused with a message that says what does extrapolate.
#include <doctest/doctest.h>

#include <cmath>

#include "core/base/error.h"
#include "core/training/interventions/length_eval.h"
#include "core/training/session/session.h"
#include "helpers.h"

using namespace attn;

TEST_CASE("length eval: the training length equals the run's own eval, bit for bit") {
  for (const std::string task : {"copy", "recall"}) {
    CAPTURE(task);
    ExperimentConfig c = test::tiny_config(task);
    c.model.position = "rope";
    TrainingSession s(c);
    for (int i = 0; i < 10; ++i) s.train_step();
    const LengthEvalResult r = evaluate_at_length(s, c.task.length);
    const EvalResult own = s.evaluate();
    CHECK(r.key == "task.length");
    CHECK(r.batches == c.train.eval_batches);
    CHECK(r.figures.loss == own.loss);
    CHECK(r.figures.accuracy == own.accuracy);
  }
}

TEST_CASE("length eval: rope, alibi, none, ky run at other lengths; learned is refused beyond") {
  for (const std::string position : {"rope", "alibi", "none", "learned"}) {
    CAPTURE(position);
    ExperimentConfig c = test::tiny_config("copy");
    c.model.position = position;
    TrainingSession s(c);
    for (int i = 0; i < 5; ++i) s.train_step();
    const LengthEvalResult shorter = evaluate_at_length(s, 2);
    CHECK(shorter.tokens == 2 * 2);  // x SEP y, the last target dropped
    CHECK(std::isfinite(shorter.figures.loss));
    if (position == "learned") {
      try {
        evaluate_at_length(s, 4 * c.task.length);
        FAIL("a learned table ran beyond its length");
      } catch (const Error& e) {
        const std::string m = e.what();
        CHECK(m.find("task.length 16") != std::string::npos);
        CHECK(m.find("trained at 4") != std::string::npos);
        CHECK(m.find("rope, alibi and none extrapolate") != std::string::npos);
      }
    } else {
      const LengthEvalResult longer = evaluate_at_length(s, 4 * c.task.length);
      CHECK(longer.tokens == 2 * 4 * c.task.length);
      CHECK(std::isfinite(longer.figures.loss));
      CHECK(longer.figures.loss != shorter.figures.loss);
    }
  }
  ExperimentConfig ky = test::tiny_config("copy");
  ky.model.attention = {"ky", "ky"};
  ky.model.position = "none";
  ky.model.attention_options["ky"] = {{"window", 3}};
  TrainingSession s(ky);
  CHECK(std::isfinite(evaluate_at_length(s, 12).figures.loss));
}

TEST_CASE("length eval: tasks without a length and lengths below 1 are refused by name") {
  ExperimentConfig c = test::tiny_config("modadd");
  TrainingSession s(c);
  CHECK_THROWS_WITH_AS(evaluate_at_length(s, 5), doctest::Contains("task \"modadd\""), Error);
  ExperimentConfig copy = test::tiny_config("copy");
  TrainingSession t(copy);
  CHECK_THROWS_WITH_AS(evaluate_at_length(t, 0), doctest::Contains("at least 1"), Error);
}
