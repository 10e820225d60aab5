#include "app/panels/attention/interventions_model.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "app/figures/runs/causal_figures.h"
#include "app/figures/runs/intervention_figures.h"
#include "core/base/decimal.h"

namespace attn::gui {
namespace {

std::string percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * v);
  return buf;
}

// The heads' rows ("L0.H1") of a direct logit attribution as a layer-major [layers x heads]
// table (NaN where the record holds none); the other components' "name +value" go to `rest`.
std::vector<float> dla_heads(const RecordedLogitAttribution& d, int layers, int heads,
                             std::string* rest) {
  std::vector<float> out(static_cast<size_t>(layers) * heads, std::nanf(""));
  for (size_t i = 0; i < d.names.size() && i < d.values.size(); ++i) {
    int l = -1, h = -1;
    char tail = 0;
    if (std::sscanf(d.names[i].c_str(), "L%d.H%d%c", &l, &h, &tail) == 2 && l >= 0 && l < layers &&
        h >= 0 && h < heads) {
      out[static_cast<size_t>(l) * heads + h] = d.values[i];
      continue;
    }
    char item[96];
    std::snprintf(item, sizeof item, "%s%s %+.3f", rest->empty() ? "" : ", ", d.names[i].c_str(),
                  d.values[i]);
    *rest += item;
  }
  return out;
}

#define kItem "\x1f"  // an item boundary in the summary's format strings (a unit separator)

std::vector<std::string> split_items(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, '\x1f');)
    if (!item.empty()) items.push_back(item);
  return items;
}

std::string join_items(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : " ") + item;
  return out;
}

}  // namespace

std::vector<std::string> wrap_items(const std::vector<std::string>& items, float width,
                                    const std::function<float(const std::string&)>& measure) {
  std::vector<std::string> lines;
  std::string line;
  // Appends `piece` to the line when it fits, else starts the next line with it.
  const auto put = [&](const std::string& piece) {
    const std::string joined = line.empty() ? piece : line + " " + piece;
    if (line.empty() || measure(joined) <= width) {
      line = joined;
      return;
    }
    lines.push_back(line);
    line = piece;
  };
  for (const std::string& item : items) {
    if (item.empty()) continue;
    if (measure(item) <= width) {
      put(item);
      continue;
    }
    std::istringstream words(item);  // wider than a line: broken at its spaces only
    for (std::string word; words >> word;) put(word);
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

bool InterventionsModel::first_show(InterventionRequest& r) {
  if (sent_) return false;
  sent_ = true;
  r.importance = true;
  return true;
}

bool InterventionsModel::set_mode(InterventionRequest& r, int mode) {
  if (mode < 0 || mode > static_cast<int>(AblationMode::uniform) ||
      mode == static_cast<int>(r.mode))
    return false;
  r.mode = static_cast<AblationMode>(mode);
  return true;
}

bool InterventionsModel::restore_all(InterventionRequest& r) {
  if (r.ablate.empty()) return false;
  r.ablate.clear();
  return true;
}

bool InterventionsModel::patch(InterventionRequest& r) const {
  r.patch = true;
  r.clean = clean_;
  r.corrupt = corrupt_;
  return true;
}

bool InterventionsModel::stop_patching(InterventionRequest& r) {
  if (!r.patch) return false;
  r.patch = false;
  return true;
}

void InterventionsModel::build(const InterventionView* v) {
  if (v == built_view_ && show_accuracy == built_accuracy_) return;
  built_view_ = v;
  built_accuracy_ = show_accuracy;
  have_importance_ = v && !v->importance.empty();
  have_patch_ = v && !v->patch.empty();
  if (have_importance_)
    importance_figure_ = figures::importance_figure(v->importance, show_accuracy);
  if (have_patch_) patch_figure_ = figures::patch_figure(v->patch, true);
}

InterventionsModel::Summary InterventionsModel::summary(const InterventionView* v,
                                                        int64_t timeline_step) {
  Summary s;
  if (!v) {
    s.waiting = true;
    s.text = "Asking the trainer...";
    return s;
  }
  s.error = v->error;
  const AblationResult& a = v->ablation;
  const ImportanceTable& t = v->importance;
  // kItem marks where a line may break (Summary::items); a space where it may only when an item
  // alone is wider than the line.
  char text[1024];
  if (!a.heads.empty()) {
    std::snprintf(text, sizeof text,
                  "%s ablation of %s" kItem "at step %lld" kItem "(%d eval batch%s):" kItem
                  "loss %.4f -> %.4f," kItem "accuracy %s -> %s;" kItem "the probe predicts" kItem
                  "%s (%.2f) -> %s (%.2f)",
                  ablation_mode_name(a.mode), head_list_text(a.heads).c_str(),
                  static_cast<long long>(v->step), a.batches, a.batches == 1 ? "" : "es",
                  a.baseline.loss, a.ablated.loss, percent(a.baseline.accuracy).c_str(),
                  percent(a.ablated.accuracy).c_str(), v->prediction.c_str(),
                  v->prediction_probability, v->ablated_prediction.c_str(), v->ablated_probability);
    s.text = text;
    // The ablation runs on the model; the maps may show a recorded step.
    const int64_t shown = !t.empty() ? t.step : timeline_step;
    if (timeline_step >= 0 && shown >= 0 && shown != v->step)
      s.text += kItem "(the model at step " + std::to_string(v->step) +
                ";" kItem "the timeline shows step " + std::to_string(shown) + ")";
  } else if (v->step >= 0 && !v->prediction.empty()) {
    // The importance map's own baseline, at the map's step (a recorded one on the timeline).
    const bool map = !t.empty();
    const EvalFigures& e = map ? t.baseline : a.baseline;
    const int batches = map ? t.batches : a.batches;
    std::snprintf(text, sizeof text,
                  "No head ablated:" kItem "click a cell of the importance map" kItem
                  "(or right-click a map in the Attention panel)." kItem "Eval loss %.4f," kItem
                  "accuracy %s" kItem "at step %lld" kItem "(%d eval batch%s).",
                  e.loss, percent(e.accuracy).c_str(),
                  static_cast<long long>(map ? t.step : v->step), batches,
                  batches == 1 ? "" : "es");
    s.text = text;
    s.dimmed = true;
  }
  s.items = split_items(s.text);
  s.text = join_items(s.items);
  return s;
}

std::string InterventionsModel::importance_note(const InterventionView& v) {
  if (v.importance.empty() || v.importance.step == v.step || v.step < 0) return "";
  return "importance recorded at step " + std::to_string(v.importance.step);
}

std::vector<HeadRef> InterventionsModel::outlined(const ImportanceTable& t,
                                                  const std::vector<HeadRef>& ablate) {
  std::vector<HeadRef> out;
  for (const HeadRef& head : ablate)
    if (head.layer < t.layers && head.head < t.heads) out.push_back(head);
  return out;
}

std::string InterventionsModel::importance_text(const ImportanceTable& t, int layer, int head,
                                                float value, bool ablated) const {
  char text[256];
  std::snprintf(text, sizeof text,
                "layer %d head %d: %s ablated alone changes the eval %s by %+.4f\n"
                "click: %s this head",
                layer, head, ablation_mode_name(t.mode),
                show_accuracy ? "accuracy (points)" : "loss (nats)", value,
                ablated ? "restore" : "ablate");
  return text;
}

std::string InterventionsModel::patch_text(const PatchTable& p, int panel, int row, int col,
                                           float value) {
  char text[256];
  if (panel == 0)
    std::snprintf(text, sizeof text, "layer %d head %d restores %.3f of the %s difference", row,
                  col, value, p.metric.c_str());
  else
    std::snprintf(text, sizeof text, "layer %d head %d at position %d (%s): restores %.3f",
                  row / p.heads, row % p.heads, col,
                  col < static_cast<int>(p.tokens.size()) ? p.tokens[col].c_str() : "?", value);
  return text;
}

void InterventionsModel::build_recorded(const ViewRecord* r, int64_t timeline_step,
                                        int64_t model_step) {
  if (r == built_record_ && timeline_step == built_timeline_step_ &&
      model_step == built_model_step_)
    return;
  built_record_ = r;
  built_timeline_step_ = timeline_step;
  built_model_step_ = model_step;
  recorded_step_ = r ? r->step : -1;
  recorded_attribution_ = r && !r->attribution.empty();
  recorded_dla_ = r && !r->dla.empty();
  have_recorded_figure_ = recorded_attribution_;
  recorded_line_.clear();
  if (!r) return;
  const std::string step = std::to_string(r->step);
  const std::string which =
      timeline_step >= 0 ? " (the timeline's step " + std::to_string(timeline_step) + ")"
      : model_step >= 0 && model_step != r->step
          ? " (the newest record; the model is at step " + std::to_string(model_step) + ")"
          : " (the newest record)";
  if (!recorded_attribution_) {
    recorded_line_ = "no attribution recorded at step " + step + which +
                     ": an older run, an image task, or train.record_attribution false";
    return;
  }
  const RecordedAttribution& a = r->attribution;
  recorded_figure_ = figures::recorded_attribution_figure(a, r->step);
  recorded_figure_.name = "recorded-attribution";
  recorded_figure_.panels.at(0).title = "attribution (" + a.metric + ")";
  recorded_figure_.panels.at(0).short_title = "attribution";
  recorded_figure_.title =
      "attribution patching and direct logit attribution recorded at step " + step;
  recorded_line_ = "attribution patching recorded at step " + step + which + ": " + a.metric +
                   " clean " + fixed_decimal(a.clean, 3) + ", corrupted " +
                   fixed_decimal(a.corrupt, 3);
  if (!recorded_dla_) {
    recorded_line_ += "; no direct logit attribution recorded";
    return;
  }
  std::string rest;
  std::vector<float> heads = dla_heads(r->dla, a.layers, a.heads, &rest);
  fig::Panel p = figures::layer_head_panel("dla", "logit units", a.layers, a.heads,
                                           std::move(heads), render::Colormap::Diverging);
  p.title = "DLA of " + r->dla.answer;
  p.short_title = "DLA";
  recorded_figure_.panels.push_back(std::move(p));
  recorded_figure_.cols = 2;
  recorded_line_ += "; direct logit attribution of " + r->dla.answer + " (logit " +
                    fixed_decimal(r->dla.answer_logit, 3) + "): " + rest;
}

std::string InterventionsModel::recorded_text(int panel, int layer, int head, float value,
                                              int64_t step) {
  char text[200];
  std::snprintf(
      text, sizeof text, "layer %d head %d: %s %+.4f (recorded at step %lld)", layer, head,
      panel == 0 ? "attribution patching, metric units" : "direct logit attribution, logit units",
      value, static_cast<long long>(step));
  return text;
}

void InterventionsModel::observe(const InterventionRequest& r, const InterventionView* v) {
  report_ = {{"ablate", head_list_text(r.ablate)},
             {"mode", ablation_mode_name(r.mode)},
             {"importance", v && !v->importance.empty()},
             {"patch", v && !v->patch.empty()},
             {"step", v ? v->step : -1},
             {"error", v ? v->error : ""}};
  if (v && !v->ablation.heads.empty()) {
    report_["ablated_loss"] = v->ablation.ablated.loss;
    report_["baseline_loss"] = v->ablation.baseline.loss;
  }
  if (v && !v->importance.empty()) report_["importance_step"] = v->importance.step;
  report_["recorded_step"] = recorded_step_;
  report_["recorded_attribution"] = recorded_attribution_;
  report_["recorded_dla"] = recorded_dla_;
  report_["cells"] = cells_;
  report_["patch_button"] = patch_button_;
}

std::vector<std::string> InterventionsModel::figures(const Snapshot& snap) {
  std::vector<std::string> names;
  if (snap.interventions && !snap.interventions->importance.empty()) names.push_back("importance");
  if (snap.interventions && !snap.interventions->patch.empty()) names.push_back("patching");
  return names;
}

const fig::Figure* InterventionsModel::shown_figure(const std::string& name) const {
  if (name == "importance" && have_importance_) return &importance_figure_;
  if (name == "patching" && have_patch_) return &patch_figure_;
  if (name == "recorded-attribution" && have_recorded_figure_) return &recorded_figure_;
  return nullptr;
}

}  // namespace attn::gui
