#include "core/config/config.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/attention/registry.h"
#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/config/benchmark_settings.h"
#include "core/config/config_keys.h"
#include "core/config/task_shape.h"
#include "core/json/json_reader.h"

namespace attn {

// Every key of every section, defaults included (the resolved config.json). Objects are
// key-sorted, so the dump (and config_hash) does not depend on the order listed here.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TaskConfig, name, length, vocab, modulus, train_fraction,
                                   text_path, context, eval_fraction, split, validation_fraction,
                                   data_dir, patch, shift, train_examples, test_examples,
                                   validation_examples)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ConnConfig, slots, steps, init_std, mixing, variant,
                                   connection_heads, regularization, control, limit, track,
                                   eigen_every, matrix_every, link_threshold)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ModelConfig, architecture, conn, d_model, heads, layers,
                                   mlp_ratio, dropout, attention, head, classes, attention_options,
                                   position, rope_base)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TrainConfig, steps, batch_size, lr, min_lr_ratio, warmup,
                                   weight_decay, beta1, beta2, grad_clip, eval_every, eval_batches,
                                   record_every, record_attribution, record_importance_batches,
                                   keep_checkpoints)

namespace {

using nlohmann::json;

// Reads the keys of one section as the table of keys describes them (core/config/config_keys.h):
// the type, range and allowed values come from there, so the parser and docs/guide/config.md
// cannot disagree.
class KeyReader {
 public:
  KeyReader(const json& j, std::string section, const std::string& where)
      : r_(j, section, where), section_(std::move(section)) {}

  // Every scalar key (integer, number, string, boolean) that the table lists directly under this
  // section, read into `fields` (the section's struct as JSON, holding its defaults) in the
  // table's order: the keys read are the table's, each checked against its range or values.
  void scalars(json& fields) {
    for (const ConfigKey& k : config_keys()) {
      const size_t dot = k.path.rfind('.');
      if ((dot == std::string::npos ? std::string() : k.path.substr(0, dot)) != section_ ||
          k.type == ConfigType::section || k.type == ConfigType::names ||
          k.type == ConfigType::options)
        continue;  // read by hand
      const char* key = k.path.c_str() + (dot == std::string::npos ? 0 : dot + 1);
      json& v = fields.at(key);
      if (k.type == ConfigType::integer) {
        long long x = v.get<long long>();
        r_.integer(key, x, static_cast<long long>(k.lo), static_cast<long long>(k.hi));
        v = x;
      } else if (k.type == ConfigType::number) {
        double x = v.get<double>();
        r_.number(key, x, k.lo, k.hi, k.lo_open);
        v = x;
      } else if (k.type == ConfigType::string) {
        std::string x = v.get<std::string>();
        r_.string(key, x, k.allowed);
        v = x;
      } else if (k.type == ConfigType::boolean) {
        bool x = v.get<bool>();
        r_.boolean(key, x);
        v = x;
      }
    }
  }
  // A key read by hand (a section, a list of names, the options): its description, and its
  // value or null when absent.
  const json* find(const char* key, ConfigType type) {
    const ConfigKey& k = config_key(section_.empty() ? key : section_ + "." + key);
    if (k.type != type)
      throw std::logic_error("config key '" + k.path + "' is read as another type than described");
    return r_.find(key);
  }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    r_.fail(key, what);
  }
  void finish() const { r_.finish(); }

 private:
  JsonReader r_;
  std::string section_;
};

// A section's scalar keys into its struct (through its JSON form, NLOHMANN_DEFINE_TYPE above).
template <typename Section>
void read_scalars(KeyReader& r, Section& s) {
  json fields = s;
  r.scalars(fields);
  s = fields.get<Section>();
}

void read_task(KeyReader& r, TaskConfig& t) {
  read_scalars(r, t);
  r.finish();
  if (t.split == "blocks" && t.eval_fraction + t.validation_fraction > 0.5)
    r.fail("task.validation_fraction",
           "with task.eval_fraction " + std::to_string(t.eval_fraction) +
               " holds out more than half of the corpus (their sum must be at most 0.5)");
  if (28 % t.patch != 0)
    r.fail("task.patch", "must divide the 28-pixel image side: one of 1, 2, 4, 7, 14, 28, got " +
                             std::to_string(t.patch));
}

// model.position against the architecture and every layer's mechanism.
void check_position(const ModelConfig& m, const std::string& where) {
  if (m.position == "learned" || m.position == "none") {
    if (m.architecture == "conn" && m.position == "none")
      throw Error(where +
                  ": model.position \"none\" does not apply to model.architecture "
                  "\"conn\", which has its own learned position table (use \"learned\")");
    return;
  }
  if (m.architecture == "conn")
    throw Error(where + ": model.position \"" + m.position +
                "\" does not apply to model.architecture \"conn\": its positions are a learned "
                "table added before the compression (use \"learned\")");
  for (size_t l = 0; l < m.attention.size(); ++l) {
    const std::string& name = m.attention[l];
    const bool ok = m.position == "rope" ? attention_mechanism_supports_rope(name)
                                         : attention_mechanism_supports_alibi(name);
    if (ok) continue;
    std::string why = m.position == "rope" ? attention_mechanism_rope_refusal(name) : "";
    throw Error(where + ": model.position \"" + m.position + "\" does not apply to mechanism \"" +
                name + "\" (model.attention" +
                (m.attention.size() > 1 ? "[" + std::to_string(l) + "]" : std::string()) + ")" +
                (why.empty() ? std::string() : ": " + why) + ". Use \"learned\", \"none\"" +
                (m.position == "rope" && attention_mechanism_supports_alibi(name)
                     ? std::string(" or \"alibi\"")
                     : std::string()) +
                " for it.");
  }
}

// task: the parsed task section, whose input length the mechanisms' layout rules check.
void read_model(KeyReader& r, ModelConfig& m, const TaskConfig& task, const std::string& where) {
  read_scalars(r, m);
  if (const json* c = r.find("conn", ConfigType::section)) {
    KeyReader cr(*c, "model.conn", where);
    read_scalars(cr, m.conn);
    cr.finish();
  }
  if (const json* a = r.find("attention", ConfigType::names)) {
    const auto& names = config_key("model.attention").allowed;
    auto check = [&](const json& v, const std::string& key) {
      if (!v.is_string()) r.fail(key, "must be a mechanism name (string), got " + describe_json(v));
      std::string s = v.get<std::string>();
      if (s == "rope")
        r.fail(key,
               "\"rope\" is no longer a mechanism: rotary positions are a model setting for "
               "every layer. Write \"attention\": \"dot\" with \"position\": \"rope\" in "
               "\"model\" (the old \"rope\" also added the learned absolute table; "
               "\"position\": \"rope\" replaces it)");
      if (std::find(names.begin(), names.end(), s) == names.end())
        r.fail(key, "must be one of " + join_names(names) + ", got \"" + s + "\"");
      return s;
    };
    m.attention.clear();
    if (a->is_array()) {
      if (a->empty()) r.fail("model.attention", "must not be empty");
      for (size_t i = 0; i < a->size(); ++i)
        m.attention.push_back(check((*a)[i], "model.attention[" + std::to_string(i) + "]"));
    } else {
      m.attention.push_back(check(*a, "model.attention"));
    }
  }
  if (const json* o = r.find("attention_options", ConfigType::options)) {
    if (!o->is_object())
      r.fail("model.attention_options", "must be an object, got " + describe_json(*o));
    m.attention_options = *o;
  }
  r.finish();
  if (m.d_model % m.heads != 0)
    throw Error(where + ": model.d_model (" + std::to_string(m.d_model) +
                ") must be divisible by model.heads (" + std::to_string(m.heads) + ")");
  if (m.attention.size() != 1 && static_cast<int>(m.attention.size()) != m.layers)
    throw Error(where + ": model.attention lists " + std::to_string(m.attention.size()) +
                " mechanisms but model.layers is " + std::to_string(m.layers) +
                " (give one name for all layers, or one per layer)");
  const bool one_name = m.attention.size() == 1;
  if (one_name) m.attention.assign(m.layers, m.attention[0]);
  for (auto it = m.attention_options.begin(); it != m.attention_options.end(); ++it) {
    const auto& names = attention_mechanism_names();
    if (it.key() == "rope")
      throw Error(where +
                  ": model.attention_options.rope: \"rope\" is no longer a mechanism; its base "
                  "is model.rope_base (with \"position\": \"rope\")");
    if (std::find(names.begin(), names.end(), it.key()) == names.end())
      throw Error(where + ": unknown key 'model.attention_options." + it.key() +
                  "' (allowed: " + join_names(names) + ")");
    try {
      validate_attention_options(it.key(), it.value());
    } catch (const Error& e) {
      throw Error(where + ": " + e.what());
    }
  }
  // Each named mechanism's own rules on the whole model (core/attention/mechanism.h).
  try {
    const bool classifier = m.head == "classifier";  // + its CLS token
    resolve_attention_layout(m.attention_options, m.attention, one_name, !classifier,
                             task_shape(task).tokens + (classifier ? 1 : 0),
                             "task \"" + task.name + "\"");
  } catch (const Error& e) {
    throw Error(where + ": " + e.what());
  }
  check_position(m, where);
}

void read_train(KeyReader& r, TrainConfig& t) {
  // Absent: every evaluation, resolved so that config.json shows it; 0: no views.rec.
  const bool record_every_given = r.find("record_every", ConfigType::integer) != nullptr;
  read_scalars(r, t);
  if (!record_every_given) t.record_every = t.eval_every;
  r.finish();
}

}  // namespace

const std::vector<std::string>& architecture_names() {
  static const std::vector<std::string> names = {"transformer", "conn"};
  return names;
}

const std::vector<std::string>& task_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = {"copy",   "reverse",   "sort", "recall",
                                  "modadd", "induction", "text", "fashion-mnist"};
    for (const auto& b : benchmark_task_names()) n.push_back(b);
    return n;
  }();
  return names;
}

// Nesting depth of a JSON value, walked iteratively: hostile input nests 10^5 levels deep, and
// any recursive walk of it (dump() in a message, comparisons) overflows the stack.
size_t json_depth(const json& root) {
  size_t deepest = 0;
  std::vector<std::pair<const json*, size_t>> stack = {{&root, 1}};
  while (!stack.empty()) {
    const auto [v, depth] = stack.back();
    stack.pop_back();
    deepest = std::max(deepest, depth);
    if (v->is_structured())
      for (const auto& child : *v) stack.emplace_back(&child, depth + 1);
  }
  return deepest;
}

namespace {

// name with control characters shown as \xNN, so a message never carries them to a terminal.
std::string printable(const std::string& name) {
  std::string out;
  for (unsigned char ch : name) {
    if (ch < 0x20 || ch == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", ch);
      out += hex;
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out;
}

// The name becomes a directory's name (runs/<name>, the window's <name>-<time>): it must be one
// plain path component, never a way out of the runs folder or into it.
void check_run_name(const std::string& name, const std::string& where) {
  auto refuse = [&](const std::string& why) {
    throw Error(where + ": name \"" + printable(name) + "\" " + why +
                "; a run's name becomes its directory's name: use letters, digits, '-', '_' and "
                "'.', e.g. \"copy-small\"");
  };
  constexpr size_t kMaxName = 100;
  if (name.empty()) refuse("is empty");
  if (name.size() > kMaxName) refuse("is longer than " + std::to_string(kMaxName) + " bytes");
  if (name == "." || name == "..") refuse("names a directory itself");
  if (name[0] == '.') refuse("starts with '.' (a hidden directory)");
  if (name[0] == '-') refuse("starts with '-' (it would read as an option)");
  for (unsigned char ch : name) {
    if (ch == '/' || ch == '\\') refuse("contains a path separator");
    if (ch < 0x20 || ch == 0x7f) refuse("contains a control character");
  }
}

}  // namespace

void check_config_depth(const json& j, const std::string& where) {
  constexpr size_t kMaxDepth = 32;  // a real config nests 4 levels (model.attention_options.x.y)
  if (json_depth(j) > kMaxDepth)
    throw Error(where + ": nested more than " + std::to_string(kMaxDepth) +
                " levels deep; an attnlab config has at most 4 (see assets/configs/)");
}

ExperimentConfig parse_config(const json& j, const std::string& where) {
  check_config_depth(j, where);
  ExperimentConfig c;
  KeyReader top(j, "", where);
  json fields{{"name", c.name}, {"seed", c.seed}, {"device", c.device}, {"threads", c.threads}};
  top.scalars(fields);
  fields.at("name").get_to(c.name);
  check_run_name(c.name, where);
  fields.at("seed").get_to(c.seed);
  fields.at("device").get_to(c.device);
  fields.at("threads").get_to(c.threads);
  if (const json* t = top.find("task", ConfigType::section)) {
    KeyReader r(*t, "task", where);
    read_task(r, c.task);
  }
  if (const json* m = top.find("model", ConfigType::section)) {
    KeyReader r(*m, "model", where);
    read_model(r, c.model, c.task, where);
  } else {
    c.model.attention.assign(c.model.layers, c.model.attention.at(0));
  }
  if (const json* t = top.find("train", ConfigType::section)) {
    KeyReader r(*t, "train", where);
    read_train(r, c.train);
  }
  top.finish();

  const bool lm = c.model.head == "lm";
  const bool image = c.task.name == "fashion-mnist";
  if (!lm && !image)
    throw Error(where +
                ": model.head \"classifier\" needs a classification task (fashion-mnist); task \"" +
                c.task.name + "\" is a language-modelling task (use \"lm\")");
  if (lm && image)
    throw Error(where +
                ": model.head \"lm\" needs a token task; task \"fashion-mnist\" is image "
                "classification (use \"classifier\")");
  if (image) {
    if (c.model.classes == 0) c.model.classes = 10;  // resolved, so config.json shows it
    if (c.model.classes != 10)
      throw Error(where +
                  ": model.classes must be 10 for task \"fashion-mnist\" (its ten clothing "
                  "classes), got " +
                  std::to_string(c.model.classes));
    if (c.task.data_dir.empty())
      throw Error(where + ": task.data_dir must name the directory of the Fashion-MNIST IDX files");
  }
  if (c.model.architecture == "conn") {
    const auto& cc = c.model.conn;
    if (!lm)
      throw Error(where +
                  ": model.architecture \"conn\" is a causal token model; it needs model.head "
                  "\"lm\" and a token task, not task \"" +
                  c.task.name + "\"");
    if (cc.mixing == "literal" && cc.slots != c.model.d_model)
      throw Error(where +
                  ": model.conn.mixing \"literal\" is the seed's H_state @ C with "
                  "H_state [B, N, D] and C [N, N], which only type-checks when N == D; got "
                  "model.conn.slots N = " +
                  std::to_string(cc.slots) +
                  " and model.d_model D = " + std::to_string(c.model.d_model) +
                  ". Even then it mixes feature columns inside "
                  "each slot, not slots. Use mixing \"slots\" (any N, D) or set N == D.");
  }
  if (c.model.classes != 0 && lm)
    throw Error(where + ": model.classes is only used with model.head \"classifier\"");
  if (c.train.warmup >= c.train.steps && c.train.warmup > 0)
    throw Error(where + ": train.warmup (" + std::to_string(c.train.warmup) +
                ") must be smaller than train.steps (" + std::to_string(c.train.steps) + ")");
  check_kept_checkpoints(c.train, where);
  const auto& t = c.task;
  if ((t.name == "recall" || t.name == "induction") && t.length > t.vocab)
    throw Error(where + ": task.length (" + std::to_string(t.length) +
                ") must not exceed task.vocab (" + std::to_string(t.vocab) + ") for task \"" +
                t.name + "\": its keys/prefix tokens are distinct symbols");
  check_benchmark_task(t, where);
  check_train_examples(t, where);
  if (t.name == "text" && t.text_path.empty())
    throw Error(where + ": task.text_path must name a UTF-8 file or a directory of them");
  return c;
}

int64_t kept_checkpoint_count(const TrainConfig& t) {
  return t.keep_checkpoints > 0 ? (t.steps + t.keep_checkpoints - 1) / t.keep_checkpoints : 0;
}

bool keeps_checkpoint_at(const TrainConfig& t, int64_t step) {
  return t.keep_checkpoints > 0 && step > 0 && (step % t.keep_checkpoints == 0 || step == t.steps);
}

void check_kept_checkpoints(const TrainConfig& t, const std::string& where) {
  const int64_t n = kept_checkpoint_count(t);
  if (n > kMaxKeptCheckpoints)
    throw Error(where + ": train.keep_checkpoints " + std::to_string(t.keep_checkpoints) +
                " keeps " + std::to_string(n) + " checkpoints over train.steps " +
                std::to_string(t.steps) + "; at most " + std::to_string(kMaxKeptCheckpoints) +
                " are kept: give at least " +
                std::to_string((t.steps + kMaxKeptCheckpoints - 1) / kMaxKeptCheckpoints) +
                " (or 0 to keep none)");
}

json read_config_json(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error("config file " + path + " is a directory; give a .json file");
  std::string text;
  try {
    text = read_regular_file(path, 64 << 20);  // configs are kilobytes
  } catch (const Error& e) {
    throw Error("cannot open config file " + path + " (" + e.what() + ")");
  }
  const json j = parse_json_strict(text, path);  // duplicate keys, comments, NUL, UTF-16 refused
  check_config_depth(j, path);
  return j;
}

json read_json_file(const std::string& path) {
  const std::string text = read_regular_file(path);  // a FIFO or device is refused, not waited on
  const json j = parse_json_strict(text, path);
  check_config_depth(j, path);  // callers walk it recursively: a hostile nesting would crash
  return j;
}

ExperimentConfig load_config_file(const std::string& path) {
  return parse_config(read_config_json(path), path);
}

json to_json_every_key(const ExperimentConfig& c) {
  return json{{"name", c.name}, {"seed", c.seed},   {"device", c.device}, {"threads", c.threads},
              {"task", c.task}, {"model", c.model}, {"train", c.train}};
}

json to_json(const ExperimentConfig& c) {
  json j = to_json_every_key(c);
  // Keys added after runs were recorded appear only when set, so an older run's config (and its
  // config_hash, which a resume and a sweep compare) reads the same as before.
  json& task = j["task"];
  const TaskConfig defaults;
  if (c.task.split == defaults.split) {
    task.erase("split");
    task.erase("validation_fraction");
  }
  if (c.task.validation_examples == defaults.validation_examples) task.erase("validation_examples");
  const TrainConfig train_defaults;
  if (c.train.record_attribution == train_defaults.record_attribution)
    j["train"].erase("record_attribution");
  if (c.train.record_importance_batches == train_defaults.record_importance_batches)
    j["train"].erase("record_importance_batches");
  if (c.train.keep_checkpoints == train_defaults.keep_checkpoints)
    j["train"].erase("keep_checkpoints");
  return j;
}

std::string config_hash(const ExperimentConfig& c) {
  // FNV-1a over the canonical dump: stable across runs and platforms.
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : to_json(c).dump()) h = (h ^ ch) * 1099511628211ull;
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace attn
