#include "core/data/fashion_mnist.h"

#include <zlib.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <random>

#include "core/base/error.h"

namespace attn {
namespace fs = std::filesystem;

namespace {

constexpr uint32_t kImageMagic = 0x00000803;  // unsigned byte data, 3 dimensions
constexpr uint32_t kLabelMagic = 0x00000801;  // unsigned byte data, 1 dimension
constexpr int64_t kEvalChunk = 500;           // test images per eval batch
constexpr uint64_t kShiftSalt = 0x5A1F7;

std::string missing_message(const std::string& path) {
  std::string m = path + " does not exist";
  if (fs::path(path).parent_path() == fs::path(kFashionMnistDir))
    m += " (it is Debian's dataset-fashion-mnist package: sudo apt-get install "
         "dataset-fashion-mnist)";
  return m;
}

// The whole decompressed content. gzread passes plain (uncompressed) files through unchanged.
std::vector<uint8_t> read_gzip(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(missing_message(path));
  if (!fs::is_regular_file(path, ec)) throw Error(path + " is not a regular file");
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw Error("cannot open " + path);
  std::vector<uint8_t> data;
  std::vector<uint8_t> chunk(1 << 20);
  for (;;) {
    const int n = gzread(f, chunk.data(), static_cast<unsigned>(chunk.size()));
    if (n > 0) data.insert(data.end(), chunk.begin(), chunk.begin() + n);
    if (n < static_cast<int>(chunk.size())) {
      int err = Z_OK;
      const char* what = gzerror(f, &err);
      std::string message = what ? what : "";
      gzclose(f);
      // A gzip stream cut short reads as Z_BUF_ERROR ("unexpected end of file").
      if (err == Z_BUF_ERROR)
        throw Error(path + " is truncated: its gzip stream ends early (" + message + ")");
      if (n < 0 || (err != Z_OK && err != Z_STREAM_END))
        throw Error(path + " is corrupt: " + (message.empty() ? "gzip read error" : message));
      return data;
    }
  }
}

uint32_t big_endian(const std::vector<uint8_t>& d, size_t at) {
  return (uint32_t(d[at]) << 24) | (uint32_t(d[at + 1]) << 16) | (uint32_t(d[at + 2]) << 8) |
         uint32_t(d[at + 3]);
}

std::string hex(uint32_t v) {
  char buf[16];
  snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// Header fields, then exactly `payload` bytes: short files are truncated, longer ones carry
// trailing bytes that some other tool wrote and we would silently ignore.
void check_length(const std::string& path, const std::vector<uint8_t>& d, size_t header,
                  uint64_t payload, const std::string& declared) {
  const uint64_t want = header + payload;
  if (d.size() < want)
    throw Error(path + " is truncated: its header declares " + declared + " (" +
                std::to_string(want) + " bytes), but it holds " + std::to_string(d.size()) +
                " bytes");
  if (d.size() > want)
    throw Error(path + " has " + std::to_string(d.size() - want) + " bytes after the " + declared +
                " its header declares");
}

uint32_t read_magic(const std::string& path, const std::vector<uint8_t>& d, size_t header,
                    uint32_t want, const char* kind) {
  if (d.size() < header)
    throw Error(path + " is truncated: " + std::to_string(d.size()) +
                " bytes, shorter than the IDX " + kind + " header (" + std::to_string(header) +
                " bytes)");
  const uint32_t magic = big_endian(d, 0);
  if (magic != want)
    throw Error(path + " is not an IDX " + kind + " file: bad magic number " + hex(magic) +
                " (expected " + hex(want) + ")");
  return magic;
}

}  // namespace

const std::vector<std::string>& fashion_mnist_class_names() {
  static const std::vector<std::string> names = {"T-shirt/top", "Trouser",   "Pullover", "Dress",
                                                 "Coat",        "Sandal",    "Shirt",    "Sneaker",
                                                 "Bag",         "Ankle boot"};
  return names;
}

IdxImages read_idx_images(const std::string& path) {
  const auto d = read_gzip(path);
  read_magic(path, d, 16, kImageMagic, "image");
  IdxImages out;
  out.count = big_endian(d, 4);
  out.rows = static_cast<int>(big_endian(d, 8));
  out.cols = static_cast<int>(big_endian(d, 12));
  if (out.rows != kFashionMnistSide || out.cols != kFashionMnistSide)
    throw Error(path + " holds " + std::to_string(out.rows) + "x" + std::to_string(out.cols) +
                " images; Fashion-MNIST images are 28x28");
  const uint64_t payload = static_cast<uint64_t>(out.count) * out.rows * out.cols;
  check_length(path, d, 16, payload, std::to_string(out.count) + " images of 28x28");
  out.pixels.assign(d.begin() + 16, d.end());
  return out;
}

std::vector<uint8_t> read_idx_labels(const std::string& path) {
  const auto d = read_gzip(path);
  read_magic(path, d, 8, kLabelMagic, "label");
  const uint32_t count = big_endian(d, 4);
  check_length(path, d, 8, count, std::to_string(count) + " labels");
  std::vector<uint8_t> labels(d.begin() + 8, d.end());
  for (size_t i = 0; i < labels.size(); ++i)
    if (labels[i] >= kFashionMnistClasses)
      throw Error(path + ": label " + std::to_string(labels[i]) + " at index " + std::to_string(i) +
                  " is outside 0..9");
  return labels;
}

FashionMnist load_fashion_mnist(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    std::string m = "task.data_dir: " + dir + " does not exist";
    if (fs::path(dir) == fs::path(kFashionMnistDir))
      m += " (it is Debian's dataset-fashion-mnist package: sudo apt-get install "
           "dataset-fashion-mnist)";
    throw Error(m);
  }
  FashionMnist f;
  auto split = [&](const std::string& prefix, IdxImages& images, std::vector<uint8_t>& labels) {
    const std::string image_path = (fs::path(dir) / (prefix + "-images-idx3-ubyte.gz")).string();
    const std::string label_path = (fs::path(dir) / (prefix + "-labels-idx1-ubyte.gz")).string();
    images = read_idx_images(image_path);
    labels = read_idx_labels(label_path);
    if (static_cast<int64_t>(labels.size()) != images.count)
      throw Error(label_path + " holds " + std::to_string(labels.size()) + " labels but " +
                  image_path + " holds " + std::to_string(images.count) +
                  " images: the counts must match");
    if (images.count == 0) throw Error(image_path + " holds no images");
  };
  split("train", f.train_images, f.train_labels);
  split("t10k", f.test_images, f.test_labels);
  return f;
}

std::shared_ptr<const FashionMnist> shared_fashion_mnist(const std::string& dir) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<const FashionMnist>> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (auto alive = cache[dir].lock()) return alive;
  auto loaded = std::make_shared<const FashionMnist>(load_fashion_mnist(dir));
  cache[dir] = loaded;
  return loaded;
}

torch::Tensor patchify(const torch::Tensor& images, int patch) {
  const int64_t B = images.size(0), H = images.size(1), W = images.size(2);
  if (H % patch != 0 || W % patch != 0)
    throw Error("patch size " + std::to_string(patch) + " does not divide the " +
                std::to_string(H) + "x" + std::to_string(W) + " image");
  const int64_t gh = H / patch, gw = W / patch;
  return images.reshape({B, gh, patch, gw, patch})
      .permute({0, 1, 3, 2, 4})
      .reshape({B, gh * gw, static_cast<int64_t>(patch) * patch});
}

torch::Tensor normalise_pixels(const torch::Tensor& raw) {
  return (raw.to(torch::kFloat32) / 255.0 - kFashionMnistMean) / kFashionMnistStd;
}

void check_test_index(const FashionMnist& data, int64_t index) {
  if (index < 0 || index >= data.test_images.count)
    throw Error("test image " + std::to_string(index) + " is out of range: the test set holds " +
                std::to_string(data.test_images.count) + " images (0.." +
                std::to_string(data.test_images.count - 1) + ")");
}

ProbeImage fashion_mnist_probe_image(const FashionMnist& data, int64_t index, int patch) {
  check_test_index(data, index);
  ProbeImage p;
  p.rows = data.test_images.rows;
  p.cols = data.test_images.cols;
  p.patch = patch;
  p.index = static_cast<int>(index);
  p.label = data.test_labels.at(index);
  p.label_name = fashion_mnist_class_names().at(p.label);
  const size_t pixels = static_cast<size_t>(p.rows) * p.cols;
  const uint8_t* px = data.test_images.pixels.data() + index * pixels;
  p.pixels.reserve(pixels);
  for (size_t i = 0; i < pixels; ++i) p.pixels.push_back(px[i] / 255.0f);
  return p;
}

torch::Tensor fashion_mnist_test_input(const FashionMnist& data, int64_t index, int patch) {
  check_test_index(data, index);
  const int64_t pixels = static_cast<int64_t>(data.test_images.rows) * data.test_images.cols;
  auto raw = torch::from_blob(const_cast<uint8_t*>(data.test_images.pixels.data()) + index * pixels,
                              {1, data.test_images.rows, data.test_images.cols}, torch::kUInt8);
  return patchify(normalise_pixels(raw), patch).contiguous();
}

int64_t find_test_image(const FashionMnist& data, int label, int64_t nth) {
  if (label < 0) return nth >= 0 && nth < data.test_images.count ? nth : -1;
  for (size_t i = 0; i < data.test_labels.size(); ++i)
    if (data.test_labels[i] == label && nth-- == 0) return static_cast<int64_t>(i);
  return -1;
}

namespace {

// Training images come only from the train-*.gz files and eval batches only from the t10k-*.gz
// files, so the test set is never trained on (tests/core/test_fashion_mnist.cpp checks this with
// files whose two splits are told apart by their pixel values).
class FashionMnistTask : public Task {
 public:
  // Batches depend only on the per-step seed: the run seed enters through it.
  explicit FashionMnistTask(const TaskConfig& c) : c_(c), data_(shared_fashion_mnist(c.data_dir)) {
    // The last validation_examples training images are held out; training draws from the rest.
    const int64_t pool = data_->train_images.count - c.validation_examples;
    if (pool < 1)
      throw Error("task.validation_examples " + std::to_string(c.validation_examples) +
                  " leaves no training images of " +
                  std::to_string(data_->train_images.count) + " in " + c.data_dir);
    n_train_ = c.train_examples > 0 ? std::min<int64_t>(c.train_examples, pool) : pool;
    n_test_ = c.test_examples > 0 ? std::min<int64_t>(c.test_examples, data_->test_images.count)
                                  : data_->test_images.count;
    for (int64_t i = 0; i < n_test_; i += kEvalChunk) {
      std::vector<int64_t> idx;
      for (int64_t j = i; j < std::min(n_test_, i + kEvalChunk); ++j) idx.push_back(j);
      eval_.push_back(gather(data_->test_images, data_->test_labels, idx, nullptr));
    }
    for (int64_t i = pool; i < data_->train_images.count; i += kEvalChunk) {
      std::vector<int64_t> idx;
      for (int64_t j = i; j < std::min(data_->train_images.count, i + kEvalChunk); ++j)
        idx.push_back(j);
      validation_.push_back(gather(data_->train_images, data_->train_labels, idx, nullptr));
    }
  }

  int vocab_size() const override { return 0; }
  int sequence_length() const override {
    const int g = kFashionMnistSide / c_.patch;
    return g * g;
  }
  int patch_dim() const override { return c_.patch * c_.patch; }

  Batch train_batch(int batch_size, uint64_t seed) const override {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int64_t> pick(0, n_train_ - 1);
    std::vector<int64_t> idx(batch_size);
    for (auto& i : idx) i = pick(rng);
    std::mt19937_64 shift_rng(mix_seed(seed, kShiftSalt));
    return gather(data_->train_images, data_->train_labels, idx,
                  c_.shift > 0 ? &shift_rng : nullptr);
  }

  const std::vector<Batch>& eval_set() const override { return eval_; }
  std::vector<Batch> validation_set() const override { return validation_; }

  // The probe defaults to test image 0 (an ankle boot, label 9, in the shipped t10k file): fixed
  // across runs, mechanisms and seeds, so their maps can be compared on the same picture.
  // set_probe_index() picks any other test image (the Image attention panel's picker).
  std::vector<int64_t> probe() const override { return {}; }
  std::string token_label(int64_t) const override { return ""; }
  torch::Tensor probe_input() const override {
    return fashion_mnist_test_input(*data_, probe_index_, c_.patch);
  }
  std::vector<std::string> probe_labels() const override {
    std::vector<std::string> labels = {"CLS"};
    const int g = kFashionMnistSide / c_.patch;
    for (int r = 0; r < g; ++r)
      for (int col = 0; col < g; ++col)
        labels.push_back(std::to_string(r) + "," + std::to_string(col));
    return labels;
  }
  ProbeImage probe_image() const override {
    return fashion_mnist_probe_image(*data_, probe_index_, c_.patch);
  }
  void set_probe_index(int64_t index) override {
    check_test_index(*data_, index);
    probe_index_ = index;
  }

 private:
  static constexpr int kPixels = kFashionMnistSide * kFashionMnistSide;

  // Images idx as a batch: optionally shifted by up to c_.shift pixels each way (zero fill, the
  // background colour), normalised with the training statistics, cut into patches.
  Batch gather(const IdxImages& images, const std::vector<uint8_t>& labels,
               const std::vector<int64_t>& idx, std::mt19937_64* shift_rng) const {
    const int64_t B = idx.size();
    const int side = kFashionMnistSide;
    auto raw = torch::zeros({B, side, side}, torch::kUInt8);
    auto targets = torch::empty({B}, torch::kInt64);
    auto tg = targets.accessor<int64_t, 1>();
    uint8_t* dst = raw.data_ptr<uint8_t>();
    std::uniform_int_distribution<int> offset(-c_.shift, c_.shift);
    for (int64_t b = 0; b < B; ++b) {
      const uint8_t* src = images.pixels.data() + idx[b] * kPixels;
      tg[b] = labels[idx[b]];
      const int dy = shift_rng ? offset(*shift_rng) : 0, dx = shift_rng ? offset(*shift_rng) : 0;
      for (int y = 0; y < side; ++y) {
        const int sy = y - dy;
        if (sy < 0 || sy >= side) continue;
        for (int x = 0; x < side; ++x) {
          const int sx = x - dx;
          if (sx >= 0 && sx < side) dst[(b * side + y) * side + x] = src[sy * side + sx];
        }
      }
    }
    return {patchify(normalise_pixels(raw), c_.patch).contiguous(), targets};
  }

  TaskConfig c_;
  std::shared_ptr<const FashionMnist> data_;
  int64_t n_train_ = 0, n_test_ = 0;
  std::vector<Batch> eval_, validation_;
  int64_t probe_index_ = 0;
};

}  // namespace

std::unique_ptr<Task> make_fashion_mnist_task(const TaskConfig& config) {
  return std::make_unique<FashionMnistTask>(config);
}

}  // namespace attn
