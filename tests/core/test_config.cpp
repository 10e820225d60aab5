// Config parsing: every bad input names its key and what is allowed; good input round-trips.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <stdexcept>

#include "core/attention/registry.h"
#include "core/base/error.h"
#include "core/config/config.h"
#include "core/config/config_keys.h"

using namespace attn;
using nlohmann::json;

TEST_CASE("bad configs are rejected with a message naming the culprit") {
  struct Case {
    const char* config;
    const char* message;
  };
  const Case cases[] = {
      {R"([1, 2])", "the top level must be an object"},
      {R"({"sed": 1})", "unknown key 'sed'"},
      {R"({"seed": -1})", "seed must be in [0,"},
      {R"({"seed": "1"})", "seed must be an integer in [0, 9007199254740992], got string"},
      {R"({"device": "tpu"})", "device must be one of auto, cpu, cuda"},
      {R"({"threads": 2.5})", "threads must be an integer in [0, 1024], got number"},
      {R"({"task": "copy"})", "task must be an object"},
      {R"({"task": {"name": "copyy"}})", "task.name must be one of copy, reverse"},
      {R"({"task": {"lenght": 4}})", "unknown key 'task.lenght' (allowed: name, length"},
      {R"({"task": {"length": 0}})", "task.length must be in [1, 256], got 0"},
      {R"({"task": {"vocab": 1}})", "task.vocab must be in [2, 8192], got 1"},
      {R"({"task": {"name": "modadd", "train_fraction": 0}})",
       "task.train_fraction must be in (0, 1]"},
      {R"({"task": {"name": "recall", "length": 20, "vocab": 10}})",
       "task.length (20) must not exceed task.vocab (10)"},
      {R"({"task": {"name": "text", "text_path": ""}})", "task.text_path must name"},
      {R"({"task": {"eval_fraction": 0.9}})", "task.eval_fraction must be in (0, 0.5]"},
      {R"({"model": {"d_model": 30, "heads": 4}})",
       "model.d_model (30) must be divisible by model.heads (4)"},
      {R"({"model": {"heads": 0}})", "model.heads must be in [1, 128], got 0"},
      {R"({"model": {"attention": "flash"}})", "model.attention must be one of dot"},
      {R"({"model": {"attention": ["dot", 3]}})", "model.attention[1] must be a mechanism name"},
      {R"({"model": {"layers": 3, "attention": ["dot", "dot"]}})",
       "model.attention lists 2 mechanisms but model.layers is 3"},
      {R"({"model": {"attention": []}})", "model.attention must not be empty"},
      {R"({"model": {"dropout": 1.5}})", "model.dropout must be in [0, 0.9], got 1.5"},
      {R"({"model": {"head": "regression"}})", "model.head must be one of lm, classifier"},
      {R"({"model": {"head": "classifier", "classes": 3}})", "needs a classification task"},
      {R"({"model": {"attention_options": {"kx": {}}}})",
       "unknown key 'model.attention_options.kx'"},
      {R"({"model": {"attention": "ky", "attention_options": {"ky": {"window": 1}}}})",
       "model.attention_options.ky.window must be in [2, 4096]"},
      {R"({"model": {"attention_options": {"dot": {"window": 4}}}})",
       "model.attention_options.dot.window"},
      {R"({"train": {"lr": 0}})", "train.lr must be in (0, 1e+09], got 0"},
      {R"({"train": {"lr": "fast"}})", "train.lr must be a number, got string"},
      {R"({"train": {"steps": 0}})", "train.steps must be in [1,"},
      {R"({"train": {"batch_size": true}})",
       "train.batch_size must be an integer in [1, 65536], got boolean"},
      {R"({"train": {"steps": 10, "warmup": 10}})",
       "train.warmup (10) must be smaller than train.steps (10)"},
      {R"({"train": {"beta2": 1.0}})", "train.beta2 must be in [0,"},
      {R"({"train": {"grad_clip": -1}})", "train.grad_clip must be in [0,"},
      {R"({"train": {"eval_every": 0}})", "train.eval_every must be in [1,"},
      {R"({"train": {"learning_rate": 0.1}})", "unknown key 'train.learning_rate'"},
  };
  CHECK(std::size(cases) >= 20);
  for (const auto& c : cases) {
    INFO("config: " << c.config);
    try {
      parse_config(json::parse(c.config), "test.json");
      FAIL("accepted a bad config");
    } catch (const Error& e) {
      const std::string msg = e.what();
      CHECK_MESSAGE(msg.find(c.message) != std::string::npos, "message was: " << msg);
      CHECK(msg.rfind("test.json: ", 0) == 0);  // names the file
    }
  }
}

TEST_CASE("a resolved config round-trips and a single mechanism fills every layer") {
  auto c = parse_config(json::parse(R"({"model": {"layers": 3, "attention": "dot"}, "seed": 9})"));
  CHECK(c.model.attention == std::vector<std::string>{"dot", "dot", "dot"});
  auto again = parse_config(to_json(c));
  CHECK(to_json(again) == to_json(c));
  CHECK(config_hash(again) == config_hash(c));
  c.seed = 10;
  CHECK(config_hash(again) != config_hash(c));
}

TEST_CASE("every shipped config parses") {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(ATTN_SOURCE_DIR "/assets/configs")) {
    if (!e.is_regular_file()) continue;  // repro/: reproduction suites (test_sweep)
    INFO(e.path().string());
    CHECK_NOTHROW(load_config_file(e.path().string()));
    ++n;
  }
  CHECK(n >= 7);
}

TEST_CASE("config files: missing file and invalid JSON name the file") {
  CHECK_THROWS_WITH_AS(load_config_file("/nonexistent/x.json"),
                       doctest::Contains("/nonexistent/x.json"), Error);
  const auto path = std::filesystem::temp_directory_path() / "attnlab-bad.json";
  { std::ofstream(path) << "{\"seed\": 1,,}"; }
  CHECK_THROWS_WITH_AS(load_config_file(path.string()), doctest::Contains("not valid JSON"), Error);
}

TEST_CASE("neural placement first-layer: one name resolves to neural then dot; a list is refused") {
  auto c = parse_config(json::parse(R"({"model": {"layers": 3, "attention": "neural"}})"));
  CHECK(c.model.attention == std::vector<std::string>{"neural", "dot", "dot"});
  CHECK(to_json(parse_config(to_json(c))) == to_json(c));  // the resolved list round-trips
  c = parse_config(json::parse(R"({"model": {"layers": 2, "attention": "neural",
      "attention_options": {"neural": {"placement": "all-layers"}}}})"));
  CHECK(c.model.attention == std::vector<std::string>{"neural", "neural"});
  CHECK_THROWS_WITH_AS(
      parse_config(json::parse(R"({"model": {"layers": 2, "attention": ["dot", "neural"]}})")),
      doctest::Contains("model.attention[1] is \"neural\" but "
                        "model.attention_options.neural.placement is \"first-layer\""),
      Error);
  c = parse_config(json::parse(R"({"model": {"layers": 2, "attention": ["neural", "dot"]}})"));
  CHECK(c.model.attention == std::vector<std::string>{"neural", "dot"});
}

TEST_CASE(
    "ky's whole-config rule comes from its descriptor: a centred window only without a mask") {
  const char* lm = R"({"model": {"layers": 2, "attention": ["dot", "ky"],
      "attention_options": {"ky": {"placement": "centered"}}}})";
  CHECK_THROWS_WITH_AS(parse_config(json::parse(lm)),
                       doctest::Contains("model.attention_options.ky.placement \"centered\" is "
                                         "refused for a causal language model"),
                       Error);
  // The same options in a classifier (bidirectional) are the user's choice.
  const auto image = parse_config(json::parse(R"({"task": {"name": "fashion-mnist",
      "data_dir": "/nowhere"}, "model": {"head": "classifier", "attention": "ky",
      "attention_options": {"ky": {"placement": "centered"}}}})"));
  CHECK(image.model.attention.at(0) == "ky");
  // The options of a mechanism no layer names are validated but its rules do not run.
  CHECK_NOTHROW(parse_config(json::parse(R"({"model": {"attention": "dot",
      "attention_options": {"ky": {"placement": "centered"}}}})")));
  // The registry runs each named mechanism's rule once, from the options it is given.
  std::vector<std::string> layers{"ky", "ky"};
  CHECK_THROWS_AS(
      resolve_attention_layout({{"ky", {{"placement", "centered"}}}}, layers, true, true), Error);
  CHECK_NOTHROW(
      resolve_attention_layout({{"ky", {{"placement", "centered"}}}}, layers, true, false));
  layers = {"neural", "neural", "ky"};
  CHECK_THROWS_WITH_AS(resolve_attention_layout(json::object(), layers, false, true),
                       doctest::Contains("model.attention[1] is \"neural\""), Error);
  resolve_attention_layout(json::object(), layers, /*one_name=*/true, true);
  CHECK(layers == std::vector<std::string>{"neural", "dot", "ky"});
}

TEST_CASE("train.record_every: absent is every evaluation (resolved), 0 is off, negative refused") {
  auto c = parse_config(json::parse(R"({"train": {"eval_every": 25}})"));
  CHECK(c.train.record_every == 25);
  CHECK(to_json(c)["train"]["record_every"] == 25);  // config.json shows what runs
  c = parse_config(json::parse(R"({"train": {"eval_every": 25, "record_every": 0}})"));
  CHECK(c.train.record_every == 0);
  c = parse_config(json::parse(R"({"train": {"eval_every": 25, "record_every": 7}})"));
  CHECK(c.train.record_every == 7);
  CHECK_THROWS_WITH_AS(parse_config(json::parse(R"({"train": {"record_every": -1}})")),
                       doctest::Contains("train.record_every must be in [0,"), Error);
}

// --- The one description of the configuration (core/config/config_keys.h) ---------------------

namespace {

// {"a": {"b": value}} for path "a.b".
json at_path(const std::string& path, const json& value) {
  const size_t dot = path.find('.');
  if (dot == std::string::npos) return json{{path, value}};
  return json{{path.substr(0, dot), at_path(path.substr(dot + 1), value)}};
}

// Every key path of a resolved config, sections included; the options object is one key.
void key_paths(const json& j, const std::string& prefix, std::set<std::string>& out) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
    out.insert(path);
    if (it.value().is_object() && path != "model.attention_options")
      key_paths(it.value(), path, out);
  }
}

// What parse_config says of `value` at `path`: "" when it is accepted, else the message.
std::string verdict(const std::string& path, const json& value) {
  try {
    parse_config(at_path(path, value), "test");
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

// Whether the message refuses `path` for its range or its allowed values (a message about how
// the value fits other keys is not one).
bool range_refused(const std::string& message, const std::string& path) {
  return message.find(path + " must be in") != std::string::npos ||
         message.find(path + " must be one of") != std::string::npos;
}

}  // namespace

TEST_CASE("the table of config keys lists exactly the keys a config has") {
  std::set<std::string> resolved, described;
  key_paths(to_json_every_key(parse_config(json::object())), "", resolved);
  for (const ConfigKey& k : config_keys()) CHECK_MESSAGE(described.insert(k.path).second, k.path);
  CHECK(resolved == described);
  CHECK_THROWS_AS(config_key("train.nope"), std::logic_error);
  // Every described key is one parse_config reads (it would refuse an unknown one).
  for (const ConfigKey& k : config_keys()) {
    const json value =
        k.type == ConfigType::section || k.type == ConfigType::options
            ? json::object()
            : to_json_every_key(parse_config(json::object()))
                  .flatten()
                  .value("/" + std::regex_replace(k.path, std::regex("\\."), "/"), json());
    if (value.is_null()) continue;  // model.attention: a list, checked below
    CHECK_MESSAGE(verdict(k.path, value) == "", k.path);
  }
  CHECK(verdict("model.attention", "dot") == "");
}

TEST_CASE("parse_config enforces exactly the range and values the table describes") {
  for (const ConfigKey& k : config_keys()) {
    CAPTURE(k.path);
    if (k.type == ConfigType::integer) {
      const auto lo = static_cast<long long>(k.lo), hi = static_cast<long long>(k.hi);
      const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
      CHECK(verdict(k.path, lo - 1).find(k.path + " must be in " + range) != std::string::npos);
      CHECK(verdict(k.path, hi + 1).find(k.path + " must be in " + range) != std::string::npos);
      CHECK(!range_refused(verdict(k.path, lo), k.path));
      CHECK(!range_refused(verdict(k.path, hi), k.path));
    } else if (k.type == ConfigType::number) {
      const double below = std::nextafter(k.lo, -1e300), above = std::nextafter(k.hi, 1e300);
      CHECK(range_refused(verdict(k.path, k.lo_open ? k.lo : below), k.path));
      CHECK(
          !range_refused(verdict(k.path, k.lo_open ? std::nextafter(k.lo, 1e300) : k.lo), k.path));
      CHECK(!range_refused(verdict(k.path, k.hi), k.path));
      CHECK(range_refused(verdict(k.path, above), k.path));
    } else if ((k.type == ConfigType::string || k.type == ConfigType::names) &&
               !k.allowed.empty()) {
      std::string list;
      for (const auto& a : k.allowed) list += (list.empty() ? "" : ", ") + a;
      CHECK(verdict(k.path, "zzz").find(k.path + " must be one of " + list) != std::string::npos);
      for (const auto& a : k.allowed) CHECK(!range_refused(verdict(k.path, a), k.path));
    } else if (k.type == ConfigType::boolean) {
      CHECK(verdict(k.path, "yes").find(k.path + " must be") != std::string::npos);
    }
  }
}

TEST_CASE("docs/guide/config.md describes every key and every mechanism's options") {
  const std::string page = config_doc_markdown();
  const auto in_page = [&](std::string text) {  // as a table cell: pipes escaped
    text = text.substr(0, 30);
    return page.find(std::regex_replace(text, std::regex("\\|"), "\\|")) != std::string::npos;
  };
  for (const ConfigKey& k : config_keys()) {
    CAPTURE(k.path);
    CHECK(page.find("| `" + k.path + "` |") != std::string::npos);
    CHECK(in_page(k.meaning));
  }
  CHECK(page.find("| `train.steps` | integer | [1, 10^8] | `2000` |") != std::string::npos);
  CHECK(page.find("| `train.record_every` | integer | [0, 10^8] | train.eval_every |") !=
        std::string::npos);
  CHECK(page.find("| `model.rope_base` | number | (1, 10^12] | `10000.0` |") != std::string::npos);
  for (const std::string& name : attention_mechanism_names()) {
    CHECK(page.find("| `" + name + "` |") != std::string::npos);
    const std::string help = attention_mechanism_options_help(name);
    if (!help.empty()) CHECK(in_page(help));
  }
}
