// Each mechanism rule lives once, in its descriptor (issue 47): neural's first-layer placement
// and linear-sim's length are applied by the registry when a config is resolved, and everything
// else (the model builder, the parameter count, the memory estimate, the Python package through
// mechanisms.json) reads the resolved layout. Torch-free (test_base).
#include <doctest/doctest.h>

#include "core/attention/kernel_family/kernel_options.h"
#include "core/attention/neural/neural_options.h"
#include "core/attention/registry.h"
#include "core/base/error.h"
#include "core/config/config.h"
#include "core/config/task_shape.h"
#include "core/models/memory_estimate.h"
#include "core/models/model_size.h"

using namespace attn;
using nlohmann::json;

namespace {

const json* option_entry(const json& schema, const std::string& key) {
  for (const json& k : schema)
    if (k.at("key") == key) return &k;
  return nullptr;
}

ExperimentConfig parsed(const std::string& text) {
  return parse_config(json::parse(text), "rules.json");
}

}  // namespace

TEST_CASE("neural's first layer: a config built in code counts and sizes as its parsed twin") {
  // Before: model_size and the memory estimate each re-decided the placement by name.
  ModelConfig code;
  code.layers = 3;
  code.d_model = 16;
  code.heads = 2;
  code.attention = {"neural"};  // unparsed: one name, the default placement "first-layer"
  code.attention_options = {{"neural", {{"hidden", 5}}}};
  const std::vector<std::string> expected = {"neural", "dot", "dot"};
  CHECK(resolved_attention_layers(code.attention, 3, code.attention_options, true) == expected);
  const ExperimentConfig twin = parsed(R"({"model": {"layers": 3, "d_model": 16, "heads": 2,
      "attention": "neural", "attention_options": {"neural": {"hidden": 5}}}})");
  CHECK(twin.model.attention == expected);
  // The parsed layout is already resolved: resolving again changes nothing.
  CHECK(resolved_attention_layers(twin.model.attention, 3, twin.model.attention_options, true) ==
        expected);
  const int64_t neural = attention_parameter_count("neural", 16, 2, {{"hidden", 5}});
  const int64_t dot = attention_parameter_count("dot", 16, 2, json::object());
  CHECK(neural > dot);
  CHECK(model_parameter_count(code, 11, 8, 0).attention == neural + 2 * dot);
  CHECK(model_parameter_count(twin.model, 11, 8, 0).attention == neural + 2 * dot);
  ExperimentConfig in_code = twin;
  in_code.model = code;
  const TaskShape shape = task_shape(twin.task);
  CHECK(estimate_memory(in_code, shape, MemoryUse::train).bytes ==
        estimate_memory(twin, shape, MemoryUse::train).bytes);
  // A list that puts neural deeper is refused by the same rule, built in code or parsed.
  const std::vector<std::string> deeper = {"dot", "neural", "dot"};
  CHECK_THROWS_WITH_AS(resolved_attention_layers(deeper, 3, json::object(), true),
                       doctest::Contains("model.attention[1] is \"neural\" but "
                                         "model.attention_options.neural.placement is "
                                         "\"first-layer\""),
                       Error);
  code.attention = deeper;
  CHECK_THROWS_AS(model_parameter_count(code, 11, 8, 0), Error);
  CHECK(resolved_attention_layers(deeper, 3, {{"neural", {{"placement", "all-layers"}}}}, true) ==
        deeper);
}

TEST_CASE("linear-sim's max_len is refused when the config is resolved, naming the key") {
  // Before: only the training session checked it, after the task was built.
  const std::string copy = R"({"task": {"name": "copy", "length": 4},
      "model": {"attention": "linear-sim", "attention_options": {"linear-sim": {"max_len": )";
  CHECK(task_shape(parsed(copy + "8}}}}").task).tokens == 8);
  CHECK_THROWS_WITH_AS(parsed(copy + "7}}}}"),
                       doctest::Contains("rules.json: model.attention_options.linear-sim.max_len "
                                         "(7) is shorter than the model's input: task \"copy\" "
                                         "gives 8 tokens; set max_len to at least 8"),
                       Error);
  // A classifier's input adds its CLS token: 16 patches of 7 x 7 pixels + 1.
  const std::string image = R"({"task": {"name": "fashion-mnist", "data_dir": "/nowhere",
      "patch": 7}, "model": {"head": "classifier", "attention": ["dot", "linear-sim"],
      "layers": 2, "attention_options": {"linear-sim": {"max_len": )";
  CHECK_THROWS_WITH_AS(parsed(image + "16}}}}"),
                       doctest::Contains("linear-sim.max_len (16) is shorter than the model's "
                                         "input: task \"fashion-mnist\" gives 17 tokens"),
                       Error);
  CHECK_NOTHROW(parsed(image + "17}}}}"));
  // The default (256 slots) against a longer task.
  CHECK_THROWS_WITH_AS(parsed(R"({"task": {"name": "copy", "length": 200},
      "model": {"attention": "linear-sim"}})"),
                       doctest::Contains("linear-sim.max_len (256) is shorter than the model's "
                                         "input: task \"copy\" gives 400 tokens"),
                       Error);
  // No input length known (a model built in code): the rule leaves it to the module.
  std::vector<std::string> layers = {"linear-sim"};
  CHECK_NOTHROW(resolve_attention_layout({{"linear-sim", {{"max_len", 1}}}}, layers, true, true));
}

TEST_CASE("the option schema states each option's default and range as its reader reads it") {
  const json neural = attention_mechanism_option_schema("neural");
  const NeuralOptions defaults = parse_neural_options(json::object());
  const json* hidden = option_entry(neural, "hidden");
  REQUIRE(hidden != nullptr);
  CHECK(hidden->at("type") == "integer");
  CHECK(hidden->at("default") == defaults.hidden);
  CHECK(hidden->at("min") == 1);
  CHECK(hidden->at("max") == 4096);
  const json* placement = option_entry(neural, "placement");
  REQUIRE(placement != nullptr);
  CHECK(placement->at("default") == defaults.placement);
  CHECK(placement->at("allowed") == json{"first-layer", "all-layers"});
  const json* activation = option_entry(neural, "activation");
  REQUIRE(activation != nullptr);
  CHECK(activation->at("default") == "relu");
  CHECK(option_entry(neural, "down")->at("default") == defaults.down);
  const json linear_sim = attention_mechanism_option_schema("linear-sim");
  const json* max_len = option_entry(linear_sim, "max_len");
  REQUIRE(max_len != nullptr);
  CHECK(max_len->at("default") == parse_linear_sim_options(json::object()).max_len);
  CHECK(attention_mechanism_option_schema("dot") == json::array());
  // Every option the reader accepts is listed: the schema's keys are exactly the allowed ones.
  for (const std::string& name : attention_mechanism_names())
    for (const json& k : attention_mechanism_option_schema(name)) {
      const std::string key = options_path(name) + "." + k.at("key").get<std::string>();
      CHECK_THROWS_WITH_AS(validate_attention_options(name, {{k.at("key"), json::array()}}),
                           doctest::Contains(key.c_str()), Error);
    }
}

TEST_CASE("the mechanism table carries every registry row and its rules as data") {
  const json table = attention_mechanism_table();
  REQUIRE(table.size() == attention_mechanism_names().size());
  for (size_t i = 0; i < table.size(); ++i) {
    const json& row = table[i];
    const std::string name = attention_mechanism_names()[i];
    CAPTURE(name);
    CHECK(row.at("name") == name);
    CHECK(row.at("description") == attention_mechanism_description(name));
    CHECK(row.at("supports_rope") == attention_mechanism_supports_rope(name));
    CHECK(row.at("supports_alibi") == attention_mechanism_supports_alibi(name));
    CHECK(row.at("options") == attention_mechanism_option_schema(name));
  }
  const json& neural = table.at(2);
  REQUIRE(neural.at("name") == "neural");
  CHECK(neural.at("first_layer").at("option") == "placement");
  CHECK(neural.at("first_layer").at("value") == "first-layer");
  CHECK(neural.at("first_layer").at("later") == "dot");
  CHECK(table.at(6).at("input_length_option") == "max_len");
  CHECK(table.at(0).at("first_layer").is_null());
}
