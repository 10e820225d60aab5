// Image attention (core/training/session/image_probe.h): picking test images by class, saved runs probed on any
// image against the live session's probe of the same image, and the trainer's image requests.
#include <doctest/doctest.h>

#include <filesystem>
#include <numeric>

#include "core/base/error.h"
#include "core/training/session/image_probe.h"
#include "core/data/fashion_mnist.h"
#include "core/training/session/session.h"
#include "core/training/trainer.h"
#include "tests/core/helpers.h"

using namespace attn;

namespace {

ExperimentConfig image_config() {
  ExperimentConfig c = test::tiny_config("fashion-mnist");
  c.task.data_dir = kFashionMnistDir;
  c.model.head = "classifier";
  c.model.classes = 10;
  c.model.d_model = 32;
  c.model.heads = 4;
  c.model.attention = {"dot", "pseudo"};
  c.task.patch = 7;
  c.task.train_examples = 2000;
  c.task.test_examples = 200;
  c.train.batch_size = 32;
  c.train.steps = 20;
  return c;
}

std::string test_path(const char* stem) {
  return std::string(kFashionMnistDir) + "/t10k-" + stem + ".gz";
}

}  // namespace

TEST_CASE("image probe: test images by class agree with a scan of the label file") {
  const auto labels = read_idx_labels(test_path("labels-idx1-ubyte"));
  int64_t total = 0;
  for (int label = 0; label < 10; ++label) {
    std::vector<int64_t> of_class;
    for (size_t i = 0; i < labels.size(); ++i)
      if (labels[i] == label) of_class.push_back(static_cast<int64_t>(i));
    CHECK(count_test_images(kFashionMnistDir, label) == static_cast<int64_t>(of_class.size()));
    total += of_class.size();
    for (int64_t nth : {int64_t{0}, int64_t{1}, int64_t{57}, int64_t(of_class.size() - 1)})
      CHECK(find_test_image(kFashionMnistDir, label, nth) == of_class[nth]);
    CHECK(find_test_image(kFashionMnistDir, label, of_class.size()) == -1);
  }
  CHECK(total == count_test_images(kFashionMnistDir, -1));
  CHECK(find_test_image(kFashionMnistDir, -1, 1234) == 1234);  // label < 0: a raw index
  CHECK(find_test_image(kFashionMnistDir, -1, total) == -1);
  CHECK(find_test_image(kFashionMnistDir, -1, -1) == -1);
}

TEST_CASE("image probe: CLS patch weights and head means") {
  AttentionMap m;
  m.size = 5;  // CLS + a 2 x 2 grid
  for (int i = 0; i < 25; ++i) m.weights.push_back(static_cast<float>(i));
  CHECK(cls_patch_weights(m) == std::vector<float>{1, 2, 3, 4});  // row 0, keys 1..4
  m.size = 1;
  CHECK(cls_patch_weights(m).empty());
  CHECK(elementwise_mean({{1, 2}, {3, 6}, {5, 1}}) == std::vector<float>{3, 3});
  CHECK(elementwise_mean({}).empty());
  CHECK_THROWS_AS(elementwise_mean({{1, 2}, {3}}), Error);
}

TEST_CASE("image probe: a saved run on any test image equals the live session's probe of it") {
  const ExperimentConfig c = image_config();
  TrainingSession session(c);
  for (int i = 0; i < 20; ++i) session.train_step();
  const std::string run = test::temp_dir("image-probe");
  session.save(run + "/checkpoint");  // the layout `attnlab train --out run` writes

  SavedImageRun saved(run);  // the run directory; the checkpoint directory works as well
  CHECK(saved.heads() == 4);
  CHECK(saved.description() == "dot/pseudo, D 32, 4 heads, step 20");
  SavedImageRun by_checkpoint(run + "/checkpoint");

  const auto images = read_idx_images(test_path("images-idx3-ubyte"));
  const auto labels = read_idx_labels(test_path("labels-idx1-ubyte"));
  for (int label : {3, 7}) {
    const int64_t index = find_test_image(kFashionMnistDir, label, 2);
    CAPTURE(index);
    const ImageProbe probe = saved.probe(index);
    session.set_probe_index(index);
    Snapshot live;
    session.probe_attention(live);

    // The picture: the raw file's pixels and label, independently read.
    CHECK(probe.image.index == index);
    CHECK(probe.image.label == labels[index]);
    CHECK(probe.image.label_name == fashion_mnist_class_names()[label]);
    REQUIRE(probe.image.pixels.size() == 784);
    for (int p = 0; p < 784; ++p)
      REQUIRE(probe.image.pixels[p] == images.pixels[index * 784 + p] / 255.0f);
    CHECK(live.probe_image.pixels == probe.image.pixels);

    // The maps and the prediction: the loaded weights give exactly the live model's.
    CHECK(probe.layers == 2);
    CHECK(probe.step == 20);
    REQUIRE(probe.maps.size() == live.attention_maps().size());
    REQUIRE(probe.maps.size() == 8);
    for (size_t k = 0; k < probe.maps.size(); ++k) {
      CHECK(probe.maps[k].layer == live.attention_maps()[k].layer);
      CHECK(probe.maps[k].head == live.attention_maps()[k].head);
      REQUIRE(probe.maps[k].weights.size() == live.attention_maps()[k].weights.size());
      for (size_t j = 0; j < probe.maps[k].weights.size(); ++j)
        REQUIRE(probe.maps[k].weights[j] ==
                doctest::Approx(live.attention_maps()[k].weights[j]).epsilon(1e-6));
      const auto cls = cls_patch_weights(probe.maps[k]);
      CHECK(cls.size() == 16);
      const double row = std::accumulate(cls.begin(), cls.end(), 0.0) + probe.maps[k].weights[0];
      CHECK(row == doctest::Approx(1.0).epsilon(1e-5));
    }
    REQUIRE(probe.probabilities.size() == 10);
    CHECK(std::accumulate(probe.probabilities.begin(), probe.probabilities.end(), 0.0) ==
          doctest::Approx(1.0).epsilon(1e-5));
    REQUIRE(live.probe_probabilities.size() == 10);
    for (int k = 0; k < 10; ++k)
      CHECK(probe.probabilities[k] == doctest::Approx(live.probe_probabilities[k]).epsilon(1e-5));
    CHECK(by_checkpoint.probe(index).maps[3].weights == probe.maps[3].weights);
  }
  std::filesystem::remove_all(run);
}

TEST_CASE("image probe: bad input names the culprit") {
  const std::string empty = test::temp_dir("image-probe-empty");
  CHECK_THROWS_WITH_AS(SavedImageRun{empty}, doctest::Contains("holds no attnlab checkpoint"),
                       Error);

  TrainingSession token(test::tiny_config("copy"));
  token.save(empty + "/checkpoint");
  CHECK_THROWS_WITH_AS(SavedImageRun{empty},
                       doctest::Contains("only image classifiers (fashion-mnist)"), Error);
  CHECK_THROWS_WITH_AS(token.set_probe_index(0), doctest::Contains("no test images to pick"),
                       Error);

  TrainingSession image(image_config());
  CHECK_THROWS_WITH_AS(image.set_probe_index(10000), doctest::Contains("0..9999"), Error);
  CHECK_THROWS_WITH_AS(image.set_probe_index(-1), doctest::Contains("out of range"), Error);
  std::filesystem::remove_all(empty);
}

TEST_CASE("image probe: the trainer probes the requested image, keeps it across resets") {
  Trainer trainer(image_config());
  auto probed = [&](int64_t index) {
    return test::wait_until([&] {
      auto s = trainer.latest();
      return s->probe_image.index == index && s->attention_step >= 0 &&
             s->attention_maps().size() == 8;
    });
  };
  REQUIRE(probed(0));  // the task's default: test image 0
  trainer.request_probe_image(42);
  REQUIRE(probed(42));
  CHECK(trainer.latest()->probe_probabilities.size() == 10);

  trainer.request_probe_image(10000);  // out of range: a message, image 42 kept
  REQUIRE(test::wait_until(
      [&] { return trainer.latest()->message.find("0..9999") != std::string::npos; }));
  CHECK(trainer.latest()->probe_image.index == 42);

  trainer.reset();
  const uint64_t generation = trainer.latest()->generation;
  REQUIRE(test::wait_until([&] { return trainer.latest()->generation > generation; }));
  CHECK(probed(42));
}
