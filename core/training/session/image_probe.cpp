#include "core/training/session/image_probe.h"

#include <filesystem>
#include <fstream>

#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/data/fashion_mnist.h"
#include "core/models/model.h"
#include "core/random/run_random.h"
#include "core/training/session/session.h"

namespace attn {
namespace fs = std::filesystem;

int64_t find_test_image(const std::string& data_dir, int label, int64_t nth) {
  return find_test_image(*shared_fashion_mnist(data_dir), label, nth);
}

int64_t count_test_images(const std::string& data_dir, int label) {
  const auto data = shared_fashion_mnist(data_dir);
  if (label < 0) return data->test_images.count;
  return std::count(data->test_labels.begin(), data->test_labels.end(), label);
}

std::vector<float> cls_patch_weights(const AttentionMap& map) {
  if (map.size < 2 || map.weights.size() < static_cast<size_t>(map.size)) return {};
  return std::vector<float>(map.weights.begin() + 1, map.weights.begin() + map.size);
}

std::vector<float> elementwise_mean(const std::vector<std::vector<float>>& rows) {
  if (rows.empty()) return {};
  std::vector<double> sum(rows.front().size(), 0.0);
  for (const auto& r : rows) {
    if (r.size() != sum.size()) throw Error("elementwise_mean: rows of different lengths");
    for (size_t i = 0; i < r.size(); ++i) sum[i] += r[i];
  }
  std::vector<float> mean(sum.size());
  for (size_t i = 0; i < sum.size(); ++i) mean[i] = static_cast<float>(sum[i] / rows.size());
  return mean;
}

struct SavedImageRun::Impl {
  std::string dir, description, data_dir;
  ExperimentConfig config;
  std::shared_ptr<const FashionMnist> data;
  Transformer model{nullptr};
  int64_t step = 0;
};

namespace {

// A run directory holds checkpoint/; a checkpoint directory holds state.json itself.
std::string checkpoint_in(const std::string& dir) {
  if (fs::exists(fs::path(dir) / "state.json")) return dir;
  if (fs::exists(fs::path(dir) / "checkpoint" / "state.json"))
    return (fs::path(dir) / "checkpoint").string();
  throw Error(dir + " holds no attnlab checkpoint (neither " + dir + "/state.json nor " + dir +
              "/checkpoint/state.json; `attnlab train --out DIR` writes DIR/checkpoint)");
}

std::string describe(const ExperimentConfig& c, int64_t step) {
  std::string mechanisms;
  for (size_t l = 0; l < c.model.attention.size(); ++l) {
    if (l > 0 && c.model.attention[l] == c.model.attention[l - 1]) continue;
    mechanisms += (mechanisms.empty() ? "" : "/") + c.model.attention[l];
  }
  return mechanisms + ", D " + std::to_string(c.model.d_model) + ", " +
         std::to_string(c.model.heads) + " heads, step " + std::to_string(step);
}

}  // namespace

SavedImageRun::SavedImageRun(const std::string& dir) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.dir = dir;
  const std::string ckpt = checkpoint_in(dir);
  m.config = TrainingSession::checkpoint_config(ckpt);
  if (m.config.task.name != "fashion-mnist" || m.config.model.head != "classifier")
    throw Error(dir + " is a run of task \"" + m.config.task.name +
                "\": only image classifiers (fashion-mnist) can be shown over an image");
  try {
    m.step = nlohmann::json::parse(read_regular_file((fs::path(ckpt) / "state.json").string()))
                 .at("step")
                 .get<int64_t>();
  } catch (const std::exception& e) {
    throw Error(ckpt + "/state.json: no step (" + std::string(e.what()) + ")");
  }
  m.data_dir = m.config.task.data_dir;
  m.data = shared_fashion_mnist(m.data_dir);
  const int grid = kFashionMnistSide / m.config.task.patch;
  {
    auto rng = init_rng_lock();  // its random init draws from the generator training runs seed
    m.model =
        Transformer(m.config.model, 0, grid * grid, m.config.task.patch * m.config.task.patch);
  }
  load_checkpoint_weights(*m.model, ckpt);  // data only (safetensors), checked against the model
  m.model->to(torch::kCPU);
  m.model->eval();
  m.description = describe(m.config, m.step);
}

SavedImageRun::~SavedImageRun() = default;

const std::string& SavedImageRun::dir() const {
  return impl_->dir;
}
const std::string& SavedImageRun::description() const {
  return impl_->description;
}
const std::string& SavedImageRun::data_dir() const {
  return impl_->data_dir;
}
int SavedImageRun::heads() const {
  return impl_->config.model.heads;
}

ImageProbe SavedImageRun::probe(int64_t test_index) {
  Impl& m = *impl_;
  const int patch = m.config.task.patch;
  ImageProbe out;
  out.image = fashion_mnist_probe_image(*m.data, test_index, patch);  // checks the range
  ProbeResult r = probe_model(m.model, fashion_mnist_test_input(*m.data, test_index, patch));
  out.layers = r.layers;
  out.heads = m.config.model.heads;
  out.maps = std::move(r.maps);
  out.probabilities = std::move(r.probabilities);
  out.step = m.step;
  return out;
}

}  // namespace attn
