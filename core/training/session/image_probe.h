// Image attention, torch-free: what the Image attention panel (and scripts) need to show the
// attention of image classifiers over a chosen test image, for the live run and for saved runs
// side by side (docs/design/MECHANISMS.md section 3; the paper's Figures 6-12).
// Contract:
//  - Token 0 of an image model's input is the CLS token; token 1 + r * grid + c is the patch at
//    grid row r, column c (see ProbeImage in core/views/snapshot.h). cls_patch_weights() reads that
//    layout, so a map's CLS row becomes a grid x grid image over the picture.
//  - SavedImageRun loads a checkpoint on the CPU and answers probe() with one forward pass of one
//    image (milliseconds for the shipped ViTs); it is not thread-safe: use it from one thread.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/views/snapshot.h"

namespace attn {

// Fashion-MNIST class names in label order (0 = T-shirt/top ... 9 = Ankle boot).
const std::vector<std::string>& fashion_mnist_class_names();

// The test index of the nth (0-based) test image of class `label` in the Fashion-MNIST files
// under data_dir; with label < 0, nth itself when it is in range. -1 when there is no such image.
// Throws attn::Error when the files cannot be read (naming the path and the Debian package).
int64_t find_test_image(const std::string& data_dir, int label, int64_t nth);
// How many test images of class `label` there are (label < 0: all of them).
int64_t count_test_images(const std::string& data_dir, int label);

// Query 0's (the CLS token's) weights on keys 1..size-1: the patches in row-major grid order.
// Empty when the map holds fewer than two tokens.
std::vector<float> cls_patch_weights(const AttentionMap& map);
// Element-wise mean of equally long vectors (e.g. the heads of one layer); empty when none.
std::vector<float> elementwise_mean(const std::vector<std::vector<float>>& rows);

// One model's attention on one test image.
struct ImageProbe {
  ProbeImage image;
  int layers = 0, heads = 0;
  std::vector<AttentionMap> maps;    // layer-major, every head
  std::vector<float> probabilities;  // per class
  int64_t step = 0;                  // the training step of the weights
};

// A saved image-classification run, probed on any test image.
class SavedImageRun {
 public:
  // dir: a run directory (holding checkpoint/, as `attnlab train --out` writes) or a checkpoint
  // directory itself. Throws attn::Error naming the directory: no checkpoint there, a token task
  // (only image classifiers can be shown over an image), or weights that do not fit the config.
  explicit SavedImageRun(const std::string& dir);
  ~SavedImageRun();
  SavedImageRun(const SavedImageRun&) = delete;
  SavedImageRun& operator=(const SavedImageRun&) = delete;

  const std::string& dir() const;
  // "pseudo, D 64, 4 heads, step 6000" (per-layer mechanisms joined when they differ).
  const std::string& description() const;
  const std::string& data_dir() const;
  int heads() const;
  // Throws attn::Error naming the allowed range when test_index is out of range.
  ImageProbe probe(int64_t test_index);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attn
