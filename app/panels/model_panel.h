// ModelPanel<Model>: the base of a panel split into a plain model (its controls' state, the
// figures it shows and its report; no ImGui) and a thin ImGui view, the derived class.
// Contract: holds the model as model_ and answers from it the Panel questions a model answers:
// report() always; figures() and shown_figure() when Model declares
//   std::vector<std::string> figures(const Snapshot&) const;
//   const fig::Figure* shown_figure(const std::string&) const;
// otherwise Panel's defaults (none). The view implements draw() and anything else it decides.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "app/gui/panel.h"

namespace attn::gui {

// True when a model of type T names the figures it shows (figures(), shown_figure()).
template <class T, class = void>
constexpr bool kModelShowsFigures = false;
template <class T>
constexpr bool kModelShowsFigures<
    T, std::void_t<decltype(std::declval<const T&>().figures(std::declval<const Snapshot&>())),
                   decltype(std::declval<const T&>().shown_figure(std::string()))>> = true;

template <class M>
class ModelPanel : public Panel {
 public:
  nlohmann::json report() const override { return model_.report(); }
  std::vector<std::string> figures([[maybe_unused]] const Snapshot& snap) const override {
    if constexpr (kModelShowsFigures<M>) return model_.figures(snap);
    return {};
  }
  const fig::Figure* shown_figure([[maybe_unused]] const std::string& name) const override {
    if constexpr (kModelShowsFigures<M>) return model_.shown_figure(name);
    return nullptr;
  }

 protected:
  using Model = M;
  Model model_;
};

}  // namespace attn::gui
