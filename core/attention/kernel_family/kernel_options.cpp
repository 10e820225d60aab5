// Descriptors of the kernel attention family (seed 002; docs/design/MECHANISMS.md §3). The
// parameter counts are the closed forms documented in
// core/attention/kernel_family/kernel_attention.h; projections = U, b1, P, b2 = 2D^2 + 2D.
#include "core/attention/kernel_family/kernel_options.h"

#include <algorithm>
#include <cmath>

#include "core/attention/mechanism.h"
#include "core/json/json_reader.h"

namespace attn {

// Their scores are not q.k: rotating X~ by position would not make them relative (x~ A x~ is
// invariant only if A commutes with every rotation), and the values are X~ itself.
constexpr const char* kKernelRopeRefusal =
    "its score x~_s^T A x~_r (or the Gaussian / simulated map) is not a dot product of rotated "
    "queries and keys, so rotating X~ would not make it depend on i - j only";

namespace {
// What the family shares: no rope (kKernelRopeRefusal), ALiBi on the softmax logits.
MechanismDescriptor kernel_family(const char* name, const char* description,
                                  const char* options_help, void (*validate)(const nlohmann::json&),
                                  int64_t (*count)(int64_t, int64_t, const nlohmann::json&)) {
  return {name,
          description,
          options_help,
          validate,
          count,
          /*supports_rope=*/false,
          /*supports_alibi=*/true,
          kKernelRopeRefusal};
}

void read_init(JsonReader& r, KernelInit& init) {
  std::string name = init == KernelInit::xavier ? "xavier" : "default";
  r.string("init", name, {"default", "xavier"});
  init = name == "xavier" ? KernelInit::xavier : KernelInit::standard;
}
}  // namespace

KernelCommonOptions parse_kernel_common_options(const nlohmann::json& options,
                                                const std::string& mechanism) {
  return read_json_object<KernelCommonOptions>(
      options, options_path(mechanism),
      [](JsonReader& r, KernelCommonOptions& o) { read_init(r, o.init); });
}

GaussianOptions parse_gaussian_options(const nlohmann::json& options) {
  JsonReader r(options, options_path("gaussian"));
  GaussianOptions o;
  read_init(r, o.init);
  if (const nlohmann::json* v = r.find("sigma")) {
    if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() <= 0)
      r.fail(r.path("sigma"), "must be a finite number > 0, got " + v->dump());
    o.sigma = v->get<double>();
  }
  r.finish();
  return o;
}

LinearSimOptions parse_linear_sim_options(const nlohmann::json& options) {
  return read_json_object<LinearSimOptions>(
      options, options_path("linear-sim"), [](JsonReader& r, LinearSimOptions& o) {
        r.integer("max_len", o.max_len, 1, 4096);  // W holds max_len n Dh^2 weights per layer
        read_init(r, o.init);
      });
}

namespace {
// Linear-Sim: projections + one weight slot per position, max_len n Dh^2.
int64_t linear_sim_parameter_count(int64_t D, int64_t n, const LinearSimOptions& o) {
  return 2 * D * D + 2 * D + int64_t(o.max_len) * (D * D / n);
}
}  // namespace

// Pseudo-MHSA: projections + A [n, Dh, Dh] = 2D^2 + 2D + n Dh^2.
const MechanismDescriptor& pseudo_mechanism() {
  static const MechanismDescriptor d = kernel_family(
      "pseudo",
      "Pseudo-MHSA (seed 002's Param-Fusion): softmax(X~_i A_i X~_i^T / Dh) X~_i with X~ = X U + "
      "b1, one Dh x Dh kernel A_i per head",
      "init (default | xavier)",
      [](const nlohmann::json& o) { parse_kernel_common_options(o, "pseudo"); },
      [](int64_t D, int64_t n, const nlohmann::json&) -> int64_t {
        return 2 * D * D + 2 * D + D * D / n;
      });
  return d;
}

// Semi-Fusion: U, A, Wv [n, Dh, Dh], W^O, b_O = 2D^2 + 2 n Dh^2 + D.
const MechanismDescriptor& semi_fusion_mechanism() {
  static const MechanismDescriptor d = kernel_family(
      "semi-fusion",
      "Semi-Fusion (seed 002): Pseudo-MHSA without b1, with a per-head value matrix Wv_i and the "
      "output projection W^O kept",
      "init (default | xavier)",
      [](const nlohmann::json& o) { parse_kernel_common_options(o, "semi-fusion"); },
      [](int64_t D, int64_t n, const nlohmann::json&) -> int64_t {
        return 2 * D * D + 2 * (D * D / n) + D;
      });
  return d;
}

const MechanismDescriptor& gaussian_mechanism() {
  static const MechanismDescriptor d = [] {
    MechanismDescriptor g = kernel_family(
        "gaussian",
        "Gaussian-MHSA (seed 002): score sum_{d1,d2} exp(-(x~_s,d1 - x~_r,d2)^2 / (2 sigma^2)) / "
        "Dh, i.e. A_i fixed to ones (no score parameters)",
        "sigma (1.0, finite, > 0), init (default | xavier)",
        &validate_by_parsing<parse_gaussian_options>,
        [](int64_t D, int64_t, const nlohmann::json&) -> int64_t { return 2 * D * D + 2 * D; });
    // gaussian_kernel_map's [chunk of B H T T Dh Dh] differences (fused_attention.h), two live.
    g.memory = [](const nlohmann::json&, double B, double H, double T, double Dh) {
      AttentionMemory m;
      m.scores = H * T * T;
      m.fixed = 2.0 * std::min<double>(double(int64_t(1) << 24), B * H * T * T * Dh * Dh);
      return m;
    };
    return g;
  }();
  return d;
}

const MechanismDescriptor& linear_sim_mechanism() {
  static const MechanismDescriptor d = [] {
    MechanismDescriptor l = kernel_family(
        "linear-sim",
        "Linear-Sim (seed 002): a simulated map x~_s^T W_o pool(X~) / Dh with one Dh x Dh weight "
        "per key position o; the key's own content never enters its score",
        "max_len (256, 1..4096): the longest sequence, one weight slot per position; init "
        "(default | xavier)",
        &validate_by_parsing<parse_linear_sim_options>,
        &count_parsed<parse_linear_sim_options, linear_sim_parameter_count>);
    // One weight slot per position: a config whose input is longer is refused when it is
    // resolved, naming the key, instead of at the first step.
    l.input_length_option = "max_len";
    l.memory = [](const nlohmann::json&, double, double H, double T, double Dh) {
      AttentionMemory m;
      m.scores = H * T * T;
      m.extra = 2 * H * T * Dh * Dh;  // the [B, H, T, Dh^2] outer products and their product
      return m;
    };
    return l;
  }();
  return d;
}

}  // namespace attn
