// The KY Transform lab's figures, built from the lab's inputs (f, x0, the kind and its settings),
// not from a run: shown by the KY lab panel (app/panels/mechanisms/ky_lab_panel.h) and written by
// `attnlab ky --figure ky-theta|ky-fit --out FILE`. Torch-free.
// Contract:
//  - ky_other_reading(): for the polynomial kinds, the other reading of the same f at x0
//    (poly <-> poly-literal, the seed's two-constraint system against the (n+1)-point fit);
//    std::nullopt for the other kinds. Throws what ky_transform throws.
//  - ky_theta_figure() ("ky-theta"): theta(h) against h (log x), one line per component named
//    after it (r.names) with its points and its limit as a dashed two-point line; `other`'s
//    history (when given) drawn faded and unnamed behind each component. `component` >= 0 shows
//    that component only (-1: all); out of range: throws attn::Error.
//  - ky_fit_figure() ("ky-fit"): f, g(t; limit) and g(t; theta(h_k)) for k = `step` over
//    [x0 - span, x0 + span] (ky_fit_span()), and the points the fit at h_k goes through. Throws
//    attn::Error for a result without steps or `step` outside its history.
//  - ky_convergence_figure() ("ky-convergence"): |theta(h_k) estimate change| against h_k
//    (log-log), and f beside the connection function g(t; theta) of the limit over t in
//    [lo, hi] around x0. Throws attn::Error for a result without steps.
#pragma once
#include <optional>
#include <vector>

#include "core/analysis/ky_transform.h"
#include "render/plot/figure.h"

namespace attn::figures {

std::optional<KyResult> ky_other_reading(const KyFunction& f, double x0, const KySettings& s);

fig::Figure ky_theta_figure(const KyResult& r, const KyResult* other, int component = -1);

// The half-width of the fit figure's t range around x0: 1.5 times the span the fit's points
// cover at h0 (degree steps for poly, one for the others), at least 1.5e-6.
double ky_fit_span(const KyResult& r, const KySettings& s);
fig::Figure ky_fit_figure(const KyResult& r, const KyFunction& f, double x0, const KySettings& s,
                          int step);

fig::Figure ky_convergence_figure(const KyResult& result, const KyFunction& f, double x0, double lo,
                                  double hi);

}  // namespace attn::figures
