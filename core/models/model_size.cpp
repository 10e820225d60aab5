#include "core/models/model_size.h"

#include "core/attention/registry.h"
#include "core/base/error.h"
#include "core/models/architectures/architecture.h"

namespace attn {

ModelSize model_parameter_count(const ModelConfig& m, int vocab, int max_length, int patch_dim) {
  if (const ArchitectureDescriptor& a = architecture_of(m); !a.attention_layers) {
    if (!a.parameter_count || patch_dim != 0)
      throw Error("model_parameter_count: model.architecture \"" + m.architecture +
                  "\" is counted by building it (its row gives no formula for these inputs)");
    ModelSize s;  // no attention layers: attention 0, as its runs record
    s.total = a.parameter_count(m, vocab, max_length);
    return s;
  }
  const int64_t D = m.d_model, hidden = static_cast<int64_t>(m.mlp_ratio) * D;
  const bool classifier = m.head == "classifier";
  ModelSize s;
  // The layers as the model builds them, every mechanism's layout rule applied.
  const std::vector<std::string> layers =
      resolved_attention_layers(m.attention, m.layers, m.attention_options, !classifier);
  for (const std::string& mech : layers) {
    const nlohmann::json options =
        m.attention_options.contains(mech) ? m.attention_options[mech] : nlohmann::json::object();
    s.attention += attention_parameter_count(mech, m.d_model, m.heads, options);
  }
  const int64_t block_rest = 2 * 2 * D              // ln1, ln2
                             + D * hidden + hidden  // fc1
                             + hidden * D + D;      // fc2
  const int64_t input = patch_dim > 0 ? patch_dim * D + D : static_cast<int64_t>(vocab) * D;
  const int64_t positions = max_length + (classifier ? 1 : 0);
  const int64_t position = m.position == "learned" ? positions * D : 0;
  const int64_t cls = classifier ? D : 0;
  const int64_t out = classifier ? m.classes : vocab;
  s.total = input + position + cls + s.attention + m.layers * block_rest + 2 * D  // final_ln
            + D * out + out;                                                      // head
  return s;
}

}  // namespace attn
