#include "app/figures/runs/length_figure.h"

#include "core/base/error.h"

namespace attn::figures {

fig::Figure length_figure(const std::vector<LengthCurve>& curves) {
  bool any = false;
  for (const LengthCurve& c : curves) any = any || !c.lengths.empty();
  if (!any) throw Error("no length was evaluated: nothing to draw");
  const std::string key = curves.front().key;
  fig::Figure f;
  f.name = "length";
  f.title = "eval at other lengths (squares: the training length)";
  fig::Panel acc = fig::axes_panel(key, "eval accuracy", true);
  fig::Panel loss = fig::axes_panel(key, "eval loss (nats)", true);
  acc.x.log = loss.x.log = true;
  loss.y.log = true;
  for (const LengthCurve& c : curves) {
    fig::LineSeries a, l;
    a.name = l.name = c.name;
    for (size_t i = 0; i < c.lengths.size(); ++i) {
      a.x.push_back(c.lengths[i]);
      a.y.push_back(c.accuracy[i]);
      l.x.push_back(c.lengths[i]);
      l.y.push_back(c.loss[i]);
    }
    acc.lines.push_back(a);
    loss.lines.push_back(l);
    for (size_t i = 0; i < c.lengths.size(); ++i)
      if (c.lengths[i] == c.trained) {
        fig::ScatterSeries s;
        s.x = {static_cast<double>(c.trained)};
        s.y = {c.accuracy[i]};
        s.marker = fig::Marker::Square;
        acc.scatters.push_back(s);
        s.y = {c.loss[i]};
        loss.scatters.push_back(s);
      }
  }
  loss.legend = false;
  f.panels = {acc, loss};
  f.rows = 1;
  f.cols = 2;
  f.aspect = 0.45;
  return f;
}

}  // namespace attn::figures
