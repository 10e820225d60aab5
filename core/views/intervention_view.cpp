#include "core/views/intervention_view.h"

#include <algorithm>
#include <cmath>

#include "core/base/decimal.h"
#include "core/base/error.h"

namespace attn {

std::string small_difference_warning(double clean, double corrupt) {
  const double d = std::fabs(clean - corrupt);
  if (d >= kMinPatchDifference) return "";
  return "the clean and corrupted metrics differ by " + fixed_decimal(d, 4) + ", below " +
         fixed_decimal(kMinPatchDifference, 2) +
         ": a share restored is a ratio of noise; corrupt a token the answer depends on";
}

const char* ablation_mode_name(AblationMode mode) {
  switch (mode) {
    case AblationMode::zero:
      return "zero";
    case AblationMode::mean:
      return "mean";
    case AblationMode::uniform:
      return "uniform";
  }
  return "zero";
}

AblationMode parse_ablation_mode(const std::string& text, const std::string& what) {
  for (const AblationMode m : {AblationMode::zero, AblationMode::mean, AblationMode::uniform})
    if (text == ablation_mode_name(m)) return m;
  throw Error(what + ": \"" + text + "\" is not an ablation mode (allowed: zero, mean, uniform)");
}

std::vector<HeadRef> parse_head_list(const std::string& text, int layers, int heads,
                                     const std::string& what) {
  std::vector<HeadRef> out;
  size_t start = 0;
  const std::string range = " (this model has layers 0.." + std::to_string(layers - 1) +
                            " and heads 0.." + std::to_string(heads - 1) + ")";
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    start = comma + 1;
    const size_t dot = item.find('.');
    auto number = [&](const std::string& s) {
      if (s.empty() || s.size() > 6 || !std::all_of(s.begin(), s.end(), ::isdigit))
        throw Error(what + ": \"" + item + "\" is not LAYER.HEAD (e.g. 0.1)" + range);
      return std::stoi(s);
    };
    if (dot == std::string::npos)
      throw Error(what + ": \"" + item + "\" is not LAYER.HEAD (e.g. 0.1)" + range);
    const HeadRef ref{number(item.substr(0, dot)), number(item.substr(dot + 1))};
    if (ref.layer >= layers)
      throw Error(what + ": layer " + std::to_string(ref.layer) + " in \"" + item +
                  "\" does not exist" + range);
    if (ref.head >= heads)
      throw Error(what + ": head " + std::to_string(ref.head) + " in \"" + item +
                  "\" does not exist" + range);
    if (std::find(out.begin(), out.end(), ref) == out.end()) out.push_back(ref);
    if (comma == text.size()) break;
  }
  return out;
}

std::string head_list_text(const std::vector<HeadRef>& heads) {
  std::string s;
  for (const HeadRef& h : heads)
    s += (s.empty() ? "" : ",") + std::to_string(h.layer) + "." + std::to_string(h.head);
  return s;
}

float ImportanceTable::loss_change(int layer, int head) const {
  return loss.at(static_cast<size_t>(layer) * heads + head) - static_cast<float>(baseline.loss);
}

float ImportanceTable::accuracy_change(int layer, int head) const {
  return accuracy.at(static_cast<size_t>(layer) * heads + head) -
         static_cast<float>(baseline.accuracy);
}

}  // namespace attn
