// Fashion-MNIST and the ViT: the IDX reader on the real files and on damaged copies, patching
// against explicit pixel loops, the train/test split, the classifier model with every mechanism,
// training on the real data, the probe, and the config rules of the image task.
#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>

#include "core/attention/registry.h"
#include "core/base/error.h"
#include "core/data/fashion_mnist.h"
#include "core/models/model.h"
#include "core/training/session/session.h"
#include "helpers.h"
#include "temp_dir.h"

using namespace attn;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kDir = kFashionMnistDir;

// The decompressed bytes of a file, through the gzip program rather than zlib, so the statistics
// below do not share code with the reader they check.
std::vector<uint8_t> gunzip_with_gzip_program(const std::string& path) {
  std::vector<uint8_t> out;
  FILE* p = popen(("gzip -dc '" + path + "'").c_str(), "r");
  REQUIRE(p != nullptr);
  std::vector<uint8_t> buf(1 << 16);
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
    out.insert(out.end(), buf.begin(), buf.begin() + n);
  REQUIRE(pclose(p) == 0);
  return out;
}

void put_be32(std::vector<uint8_t>& v, uint32_t x) {
  for (int s = 24; s >= 0; s -= 8) v.push_back(static_cast<uint8_t>(x >> s));
}

std::vector<uint8_t> idx_images(uint32_t count, uint32_t rows, uint32_t cols,
                                const std::function<uint8_t(uint32_t, uint32_t)>& pixel,
                                uint32_t magic = 0x803) {
  std::vector<uint8_t> v;
  put_be32(v, magic);
  put_be32(v, count);
  put_be32(v, rows);
  put_be32(v, cols);
  for (uint32_t i = 0; i < count; ++i)
    for (uint32_t p = 0; p < rows * cols; ++p) v.push_back(pixel(i, p));
  return v;
}

std::vector<uint8_t> idx_labels(const std::vector<uint8_t>& labels, uint32_t magic = 0x801) {
  std::vector<uint8_t> v;
  put_be32(v, magic);
  put_be32(v, labels.size());
  v.insert(v.end(), labels.begin(), labels.end());
  return v;
}

void write_gz(const fs::path& path, const std::vector<uint8_t>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(gzwrite(f, bytes.data(), bytes.size()) == static_cast<int>(bytes.size()));
  REQUIRE(gzclose(f) == Z_OK);
}

std::vector<uint8_t> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

using TempDir = test::ScopedTempDir;

// A small, valid data set: train image i has every pixel 1 + i (i < 3 of them: 1, 2, 3; label
// i), test image j every pixel 100 + j (label 9 - j). The two splits never share a value.
void write_small_dataset(const fs::path& dir) {
  write_gz(dir / "train-images-idx3-ubyte.gz",
           idx_images(3, 28, 28, [](uint32_t i, uint32_t) { return static_cast<uint8_t>(1 + i); }));
  write_gz(dir / "train-labels-idx1-ubyte.gz", idx_labels({0, 1, 2}));
  write_gz(dir / "t10k-images-idx3-ubyte.gz", idx_images(2, 28, 28, [](uint32_t j, uint32_t) {
             return static_cast<uint8_t>(100 + j);
           }));
  write_gz(dir / "t10k-labels-idx1-ubyte.gz", idx_labels({9, 8}));
}

// Raw pixel values back from normalised patches.
torch::Tensor unnormalise(const torch::Tensor& patches) {
  return ((patches * kFashionMnistStd + kFashionMnistMean) * 255.0).round();
}

ExperimentConfig fmnist_config() {
  ExperimentConfig c = test::tiny_config("fashion-mnist");
  c.model.head = "classifier";
  c.model.classes = 10;
  c.model.d_model = 32;
  c.model.heads = 4;
  c.task.patch = 7;
  c.task.train_examples = 5000;
  c.task.test_examples = 500;
  c.train.batch_size = 64;
  c.train.lr = 3e-3;
  c.train.steps = 150;
  c.train.warmup = 5;
  return c;
}

}  // namespace

TEST_CASE("fashion-mnist IDX reader: the shipped files") {
  REQUIRE_MESSAGE(fs::exists(kDir + "/train-images-idx3-ubyte.gz"),
                  "install Debian's dataset-fashion-mnist (scripts/setup.sh does)");
  const auto train = read_idx_images(kDir + "/train-images-idx3-ubyte.gz");
  const auto test = read_idx_images(kDir + "/t10k-images-idx3-ubyte.gz");
  const auto train_labels = read_idx_labels(kDir + "/train-labels-idx1-ubyte.gz");
  const auto test_labels = read_idx_labels(kDir + "/t10k-labels-idx1-ubyte.gz");
  CHECK(train.count == 60000);
  CHECK(test.count == 10000);
  CHECK(train.rows == 28);
  CHECK(train.cols == 28);
  CHECK(train.pixels.size() == 60000u * 784);
  CHECK(test.pixels.size() == 10000u * 784);
  CHECK(train_labels.size() == 60000);
  CHECK(test_labels.size() == 10000);
  // Labels span 0..9 and the classes are balanced as published (6000 / 1000 each).
  std::vector<int> train_per_class(10), test_per_class(10);
  for (auto l : train_labels) ++train_per_class.at(l);
  for (auto l : test_labels) ++test_per_class.at(l);
  CHECK(*std::max_element(train_labels.begin(), train_labels.end()) == 9);
  CHECK(*std::min_element(train_labels.begin(), train_labels.end()) == 0);
  for (int k = 0; k < 10; ++k) {
    CHECK(train_per_class[k] == 6000);
    CHECK(test_per_class[k] == 1000);
  }
  CHECK(test_labels[0] == 9);  // the probe: an ankle boot

  // Pixel statistics from the raw bytes (decompressed by the gzip program, header skipped).
  const auto raw = gunzip_with_gzip_program(kDir + "/train-images-idx3-ubyte.gz");
  REQUIRE(raw.size() == 16 + 60000u * 784);
  double sum = 0, sum_sq = 0;
  for (size_t i = 16; i < raw.size(); ++i) {
    sum += raw[i];
    sum_sq += double(raw[i]) * raw[i];
  }
  const double n = raw.size() - 16.0;
  const double reader_sum = std::accumulate(train.pixels.begin(), train.pixels.end(), 0.0);
  CHECK(reader_sum == sum);  // exact: integers well below 2^53
  CHECK(std::equal(train.pixels.begin(), train.pixels.end(), raw.begin() + 16));
  const double mean = sum / n / 255.0, var = sum_sq / n / (255.0 * 255.0) - mean * mean;
  // The normalisation constants are the real statistics to the 4 digits they are given with.
  CHECK(mean == doctest::Approx(kFashionMnistMean).epsilon(0.0005 / kFashionMnistMean));
  CHECK(std::sqrt(var) == doctest::Approx(kFashionMnistStd).epsilon(0.0005 / kFashionMnistStd));
}

TEST_CASE("fashion-mnist IDX reader: damaged copies give their specific errors") {
  TempDir tmp("idx");
  const fs::path& d = tmp.path;
  auto images = [](uint32_t count) {
    return idx_images(count, 28, 28, [](uint32_t i, uint32_t p) { return uint8_t((i + p) % 256); });
  };
  auto expect = [](const std::function<void()>& f, const std::string& what) {
    INFO("expected: " << what);
    CHECK_THROWS_WITH_AS(f(), doctest::Contains(what.c_str()), Error);
  };

  SUBCASE("a valid small file reads back exactly") {
    write_gz(d / "ok.gz", images(3));
    const auto r = read_idx_images((d / "ok.gz").string());
    CHECK(r.count == 3);
    CHECK(r.pixels[784 + 5] == uint8_t((1 + 5) % 256));
    write_bytes(d / "plain", images(2));  // uncompressed IDX reads too
    CHECK(read_idx_images((d / "plain").string()).count == 2);
  }
  SUBCASE("bad magic") {
    write_gz(d / "m.gz", idx_images(
                             2, 28, 28, [](uint32_t, uint32_t) { return uint8_t(0); }, 0x802));
    expect([&] { read_idx_images((d / "m.gz").string()); },
           (d / "m.gz").string() +
               " is not an IDX image file: bad magic number 0x00000802 "
               "(expected 0x00000803)");
    write_gz(d / "l.gz", idx_labels({1, 2}, 0x803));
    expect([&] { read_idx_labels((d / "l.gz").string()); },
           "is not an IDX label file: bad magic number 0x00000803 (expected 0x00000801)");
  }
  SUBCASE("truncated data: the header promises more images than the file holds") {
    auto bytes = images(5);
    bytes.resize(bytes.size() - 400);
    write_gz(d / "t.gz", bytes);
    expect([&] { read_idx_images((d / "t.gz").string()); },
           "t.gz is truncated: its header declares 5 images of 28x28 (3936 bytes), but it holds "
           "3536 bytes");
    write_gz(d / "h.gz", {0, 0, 8, 3, 0, 0});
    expect([&] { read_idx_images((d / "h.gz").string()); },
           "h.gz is truncated: 6 bytes, shorter than the IDX image header");
  }
  SUBCASE("truncated gzip stream") {
    write_gz(d / "full.gz", images(20));
    auto gz = read_bytes(d / "full.gz");
    gz.resize(gz.size() / 2);
    write_bytes(d / "cut.gz", gz);
    expect([&] { read_idx_images((d / "cut.gz").string()); },
           "cut.gz is truncated: its gzip stream ends early");
  }
  SUBCASE("trailing bytes, wrong image size, label out of range") {
    auto bytes = images(2);
    bytes.push_back(7);
    write_gz(d / "x.gz", bytes);
    expect([&] { read_idx_images((d / "x.gz").string()); },
           "x.gz has 1 bytes after the 2 images of 28x28 its header declares");
    write_gz(d / "s.gz", idx_images(1, 32, 32, [](uint32_t, uint32_t) { return uint8_t(0); }));
    expect([&] { read_idx_images((d / "s.gz").string()); },
           "s.gz holds 32x32 images; Fashion-MNIST images are 28x28");
    write_gz(d / "l.gz", idx_labels({3, 10, 1}));
    expect([&] { read_idx_labels((d / "l.gz").string()); },
           "l.gz: label 10 at index 1 is outside 0..9");
  }
  SUBCASE("label and image counts differ") {
    write_small_dataset(d);
    write_gz(d / "t10k-labels-idx1-ubyte.gz", idx_labels({9, 8, 7}));
    expect([&] { load_fashion_mnist(d.string()); },
           "t10k-labels-idx1-ubyte.gz holds 3 labels but " +
               (d / "t10k-images-idx3-ubyte.gz").string() +
               " holds 2 images: the counts must match");
  }
  SUBCASE("missing file, missing directory, missing package") {
    write_small_dataset(d);
    fs::remove(d / "train-labels-idx1-ubyte.gz");
    expect([&] { load_fashion_mnist(d.string()); },
           (d / "train-labels-idx1-ubyte.gz").string() + " does not exist");
    expect([&] { load_fashion_mnist("/nonexistent/fmnist"); },
           "task.data_dir: /nonexistent/fmnist does not exist");
    // A file missing from the package's own directory names the package and the apt-get line.
    expect([&] { read_idx_images(kDir + "/no-such-images.gz"); },
           "it is Debian's dataset-fashion-mnist package: sudo apt-get install "
           "dataset-fashion-mnist");
  }
}

TEST_CASE("fashion-mnist patching: the patch tensor equals the explicit pixel loop") {
  torch::manual_seed(3);
  auto images = torch::randint(0, 256, {3, 28, 28}, torch::kInt64);
  auto img = images.accessor<int64_t, 3>();
  for (int p : {1, 4, 7, 14}) {
    INFO("patch " << p);
    const int g = 28 / p;
    auto patches = patchify(images, p);
    REQUIRE(patches.sizes() == torch::IntArrayRef({3, g * g, p * p}));
    auto got = patches.accessor<int64_t, 3>();
    int64_t mismatches = 0;
    for (int b = 0; b < 3; ++b)
      for (int r = 0; r < g; ++r)
        for (int c = 0; c < g; ++c)
          for (int dy = 0; dy < p; ++dy)
            for (int dx = 0; dx < p; ++dx)
              mismatches += got[b][r * g + c][dy * p + dx] != img[b][r * p + dy][c * p + dx];
    CHECK(mismatches == 0);
  }
  CHECK_THROWS_WITH_AS(patchify(images, 5), doctest::Contains("does not divide"), Error);

  // The task's eval batch: test images in file order, normalised and patched the same way.
  TaskConfig t;
  t.name = "fashion-mnist";
  t.patch = 4;
  t.test_examples = 600;  // two eval batches: 500 + 100
  auto task = make_task(t, 1, 1, 1);
  CHECK(task->sequence_length() == 49);
  CHECK(task->patch_dim() == 16);
  const auto& eval = task->eval_set();
  REQUIRE(eval.size() == 2);
  CHECK(eval[1].inputs.size(0) == 100);
  const auto test = read_idx_images(kDir + "/t10k-images-idx3-ubyte.gz");
  const auto labels = read_idx_labels(kDir + "/t10k-labels-idx1-ubyte.gz");
  const int64_t i = 500 + 37;  // an image in the second batch
  auto x = eval[1].inputs[37];
  CHECK(eval[1].targets[37].item<int64_t>() == labels[i]);
  double max_err = 0;
  for (int r = 0; r < 7; ++r)
    for (int c = 0; c < 7; ++c)
      for (int dy = 0; dy < 4; ++dy)
        for (int dx = 0; dx < 4; ++dx) {
          const double px = test.pixels[i * 784 + (r * 4 + dy) * 28 + c * 4 + dx];
          const double want = (px / 255.0 - kFashionMnistMean) / kFashionMnistStd;
          max_err = std::max(max_err, std::abs(x[r * 7 + c][dy * 4 + dx].item<double>() - want));
        }
  CHECK(max_err < 1e-5);
}

TEST_CASE(
    "fashion-mnist split: train batches come only from the train files, eval only from t10k") {
  // The guarantee is structural (train_batch draws from the train arrays, eval_set from the
  // test arrays); here it is observed with files whose splits have disjoint pixel values.
  TempDir tmp("split");
  write_small_dataset(tmp.path);
  TaskConfig t;
  t.name = "fashion-mnist";
  t.data_dir = tmp.path.string();
  t.patch = 7;
  auto values = [](const torch::Tensor& patches) {
    auto v = unnormalise(patches).to(torch::kInt64).flatten().contiguous();
    return std::set<int64_t>(v.data_ptr<int64_t>(), v.data_ptr<int64_t>() + v.numel());
  };
  {
    auto task = make_task(t, 1, 1, 1);
    std::set<int64_t> train_values;
    for (uint64_t s = 0; s < 20; ++s) {
      auto b = task->train_batch(16, s);
      for (auto v : values(b.inputs)) train_values.insert(v);
      // Each image's label is its index, and so its pixel value minus one.
      CHECK(torch::equal(unnormalise(b.inputs).select(2, 0).select(1, 0).to(torch::kInt64) - 1,
                         b.targets));
    }
    CHECK(train_values == std::set<int64_t>{1, 2, 3});
    REQUIRE(task->eval_set().size() == 1);
    CHECK(values(task->eval_set()[0].inputs) == std::set<int64_t>{100, 101});
    CHECK(torch::equal(task->eval_set()[0].targets, torch::tensor({9, 8}, torch::kInt64)));
    CHECK(torch::equal(task->train_batch(8, 5).inputs, task->train_batch(8, 5).inputs));
  }
  {  // The training cap keeps the first N images; shifts fill with background (0).
    t.train_examples = 2;
    t.shift = 2;
    auto task = make_task(t, 1, 1, 1);
    std::set<int64_t> seen;
    int64_t shifted = 0;
    for (uint64_t s = 0; s < 20; ++s) {
      auto raw = unnormalise(task->train_batch(16, s).inputs);
      for (auto v : values(task->train_batch(16, s).inputs)) seen.insert(v);
      // A shift of at most 2 each way leaves at least 26 x 26 = 676 image pixels.
      auto kept = raw.ne(0).sum({1, 2});
      CHECK(kept.min().item<int64_t>() >= 676);
      shifted += kept.lt(784).sum().item<int64_t>();
    }
    CHECK(seen == std::set<int64_t>{0, 1, 2});
    CHECK(shifted > 200);  // of 320 images, most are shifted (P(no shift) = 1/25)
  }  {  // Issue 34: validation_examples holds out the last training images: never trained on,
     // never the test set.
    t.train_examples = 0;
    t.shift = 0;
    t.validation_examples = 1;
    auto task = make_task(t, 1, 1, 1);
    std::set<int64_t> trained;
    for (uint64_t s = 0; s < 20; ++s)
      for (auto v : values(task->train_batch(16, s).inputs)) trained.insert(v);
    CHECK(trained == std::set<int64_t>{1, 2});
    const auto held = task->validation_set();
    REQUIRE(held.size() == 1);
    CHECK(values(held[0].inputs) == std::set<int64_t>{3});
    CHECK(values(task->eval_set()[0].inputs) == std::set<int64_t>{100, 101});
    t.validation_examples = 3;  // every training image
    CHECK_THROWS_WITH_AS(make_task(t, 1, 1, 1), doctest::Contains("task.validation_examples 3"),
                         Error);
  }
}

TEST_CASE("fashion-mnist ViT: classifier shape, patch input, every mechanism plugs in per layer") {
  const auto& names = attention_mechanism_names();
  ModelConfig m;
  m.d_model = 16;
  m.heads = 2;
  m.layers = static_cast<int>(names.size());
  m.attention = names;
  m.head = "classifier";
  m.classes = 10;
  // Neural in a later layer: its placement must say so (the first-layer rule, neural's
  // descriptor), or the model refuses the layout.
  m.attention_options = {{"neural", {{"placement", "all-layers"}}}};
  // A classifier builds every layer bidirectional (AttentionSpec::causal false).
  torch::manual_seed(1);
  Transformer vit(m, /*vocab=*/0, /*max_length=*/16, /*patch_dim=*/49);
  CHECK(vit->takes_patches());
  auto x = torch::randn({3, 16, 49});
  auto logits = vit->forward(x);
  CHECK(logits.sizes() == torch::IntArrayRef({3, 10}));
  logits.sum().backward();
  for (const auto& p : vit->named_parameters()) {
    INFO(p.key());
    REQUIRE(p.value().grad().defined());
    CHECK(torch::isfinite(p.value().grad()).all().item<bool>());
  }
  // The patch embedding replaces the token embedding: no "token" parameters.
  for (const auto& p : vit->named_parameters()) CHECK(p.key().rfind("token", 0) != 0);
  CHECK(vit->named_parameters().contains("patch.weight"));
  // Bidirectional: the last patch reaches the CLS output.
  auto changed = x.clone();
  changed[0][15] += 1.0;
  CHECK(!torch::allclose(vit->forward(changed)[0], logits[0]));
  CHECK_THROWS_WITH_AS(vit->forward(torch::zeros({1, 16}, torch::kInt64)),
                       doctest::Contains("this model takes float patches [B, S, 49]"), Error);
  CHECK_THROWS_WITH_AS(vit->forward(torch::zeros({1, 17, 49})),
                       doctest::Contains("longer than the model's 16 learned positions"), Error);
}

TEST_CASE("fashion-mnist ViT trains on the real data: loss falls, the probe is test image 0") {
  auto c = fmnist_config();
  TrainingSession s(c);
  CHECK(s.model()->takes_patches());
  std::vector<double> losses;
  for (int i = 0; i < 150; ++i) losses.push_back(s.train_step());
  const double first = std::accumulate(losses.begin(), losses.begin() + 10, 0.0) / 10;
  const double last = std::accumulate(losses.end() - 10, losses.end(), 0.0) / 10;
  INFO("first " << first << " last " << last);
  CHECK(first > 1.9);  // about ln 10 = 2.30 untrained
  CHECK(last < 0.7 * first);
  const auto eval = s.evaluate();
  CHECK(eval.accuracy > 0.5);  // chance is 0.1; about 0.65 after these 150 steps

  Snapshot snap;
  s.probe_attention(snap);
  CHECK(snap.layers == 2);
  CHECK(snap.heads == 4);
  REQUIRE(snap.attention_maps().size() == 8);
  REQUIRE(snap.probe_tokens.size() == 17);  // CLS + 4 x 4 patches
  CHECK(snap.probe_tokens[0] == "CLS");
  CHECK(snap.probe_tokens[16] == "3,3");
  for (const auto& map : snap.attention_maps()) {
    CHECK(map.size == 17);
    double row0 = 0;
    for (int j = 0; j < 17; ++j) row0 += map.weights[j];
    CHECK(row0 == doctest::Approx(1.0).epsilon(1e-5));
    CHECK(map.weights[16] > 0.0f);  // bidirectional: CLS sees the last patch
  }
  const auto& img = snap.probe_image;
  CHECK(img.index == 0);
  CHECK(img.label == 9);
  CHECK(img.label_name == "Ankle boot");
  CHECK(img.patch == 7);
  REQUIRE(img.pixels.size() == 784);
  CHECK(*std::max_element(img.pixels.begin(), img.pixels.end()) <= 1.0f);
  CHECK(*std::max_element(img.pixels.begin(), img.pixels.end()) > 0.5f);
}

TEST_CASE("fashion-mnist config: patch size, head/task combination, classes") {
  auto parse = [](const char* text) { return parse_config(json::parse(text)); };
  auto fails = [&](const char* text, const std::string& message) {
    INFO(text);
    CHECK_THROWS_WITH_AS(parse(text), doctest::Contains(message.c_str()), Error);
  };
  fails(R"({"task": {"name": "fashion-mnist", "patch": 5}, "model": {"head": "classifier"}})",
        "task.patch must divide the 28-pixel image side: one of 1, 2, 4, 7, 14, 28, got 5");
  fails(R"({"task": {"name": "fashion-mnist", "patch": 0}, "model": {"head": "classifier"}})",
        "task.patch must be in [1, 28], got 0");
  fails(R"({"task": {"name": "fashion-mnist"}})",
        "model.head \"lm\" needs a token task; task \"fashion-mnist\" is image classification "
        "(use \"classifier\")");
  fails(R"({"task": {"name": "copy"}, "model": {"head": "classifier"}})",
        "model.head \"classifier\" needs a classification task (fashion-mnist); task \"copy\"");
  fails(R"({"task": {"name": "fashion-mnist"}, "model": {"head": "classifier", "classes": 5}})",
        "model.classes must be 10 for task \"fashion-mnist\"");
  fails(R"({"task": {"name": "fashion-mnist", "shift": 9}, "model": {"head": "classifier"}})",
        "task.shift must be in [0, 8], got 9");
  fails(
      R"({"task": {"name": "fashion-mnist", "train_examples": 60001}, "model": {"head": "classifier"}})",
      "task.train_examples must be in [0, 60000]");
  // classes 0 resolves to the task's 10, and the resolved config round-trips.
  auto c =
      parse(R"({"task": {"name": "fashion-mnist", "patch": 4}, "model": {"head": "classifier"}})");
  CHECK(c.model.classes == 10);
  CHECK(c.task.patch == 4);
  CHECK(to_json(parse_config(to_json(c))) == to_json(c));
}
