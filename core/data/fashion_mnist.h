// Fashion-MNIST from Debian's dataset-fashion-mnist package (private to core: includes torch).
// The package ships the original gzip-compressed IDX files; they are read with zlib and every
// header field is checked against the file's real length, so a damaged file fails loudly with
// its path instead of training on garbage.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/data/tasks.h"
#include "core/views/snapshot.h"  // ProbeImage

namespace attn {

constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
constexpr int kFashionMnistSide = 28;
constexpr int kFashionMnistClasses = 10;
// Pixel mean and standard deviation of the training images (as x / 255): the usual published
// values, checked against the real files in tests/core/test_fashion_mnist.cpp. Fixed constants
// rather than statistics of the loaded subset, so a capped training set normalises identically.
constexpr double kFashionMnistMean = 0.2860, kFashionMnistStd = 0.3530;

struct IdxImages {
  int64_t count = 0;
  int rows = 0, cols = 0;
  std::vector<uint8_t> pixels;  // count * rows * cols, row-major
};

// Reads an IDX image file (magic 0x00000803), gzip-compressed or plain. Requires 28 x 28 images.
// Throws attn::Error naming the path: missing file, bad magic, wrong image size, truncated data,
// trailing bytes, corrupt gzip stream.
IdxImages read_idx_images(const std::string& path);
// Reads an IDX label file (magic 0x00000801); every label must be in 0..9.
std::vector<uint8_t> read_idx_labels(const std::string& path);

struct FashionMnist {
  IdxImages train_images, test_images;
  std::vector<uint8_t> train_labels, test_labels;
};

// Loads {train,t10k}-{images-idx3,labels-idx1}-ubyte.gz from dir and checks that each image file
// and its label file hold the same count. A missing default directory names the Debian package
// and the apt-get line.
FashionMnist load_fashion_mnist(const std::string& dir);
// The same, shared between sessions that read the same directory while any of them is alive
// (the GUI rebuilds its session on every reset; decompressing 55 MB each time would stall it).
std::shared_ptr<const FashionMnist> shared_fashion_mnist(const std::string& dir);

// Throws attn::Error naming the index and the allowed range unless 0 <= index < test count.
void check_test_index(const FashionMnist& data, int64_t index);
// uint8 pixels (any shape) -> float32 (x / 255 - mean) / std, the model's input scale.
torch::Tensor normalise_pixels(const torch::Tensor& raw);
// Test image `index` as a model input batch of one: [1, S, patch * patch], normalised.
torch::Tensor fashion_mnist_test_input(const FashionMnist& data, int64_t index, int patch);
// Test image `index` as the snapshot's ProbeImage (pixels / 255, label and class name).
ProbeImage fashion_mnist_probe_image(const FashionMnist& data, int64_t index, int patch);
// The test index of the nth (0-based) test image of class `label`; with label < 0, nth itself.
// -1 when there is no such image.
int64_t find_test_image(const FashionMnist& data, int label, int64_t nth);

// images [B, H, W] (any dtype) -> patches [B, (H/p) * (W/p), p * p]: patch index r * (W/p) + c
// (row-major over the patch grid), feature index dy * p + dx within the patch.
torch::Tensor patchify(const torch::Tensor& images, int patch);

// The image classification task: 10 classes, inputs are normalised patch vectors.
std::unique_ptr<Task> make_fashion_mnist_task(const TaskConfig& config);

}  // namespace attn
