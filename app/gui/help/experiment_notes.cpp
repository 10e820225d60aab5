#include "app/gui/help/experiment_notes.h"

namespace attn::gui {

// Outcomes are the guide's measurements (docs/guide/) (2-core CPU machines, seed 1); keep them in
// step.
const std::vector<ExperimentNote>& experiment_notes() {
  static const std::vector<ExperimentNote> notes = {
      {"copy.json", "synthetic", false,
       "Dot-product attention copies 8 symbols: accuracy 1.0 within a few hundred steps, the "
       "sanity check (Attention shows each answer reading its source token)."},
      {"reverse.json", "synthetic", false,
       "Reversing 8 symbols: accuracy 1.0; the maps show the anti-diagonal."},
      {"sort.json", "synthetic", false, "Sorting 8 symbols with dot attention: accuracy 1.0."},
      {"recall.json", "synthetic", false,
       "Associative recall (find a key, answer the value after it) with dot attention: accuracy "
       "1.0."},
      {"induction.json", "synthetic", false,
       "Induction: two dot layers learn to find the earlier occurrence of a token and copy its "
       "successor (accuracy 1.0); layer 0 looks back one token, layer 1 looks at the match."},
      {"modadd.json", "synthetic", false,
       "(a + b) mod 23 with 20% of the pairs held out, one dot layer and weight decay 2.0: eval "
       "accuracy is generalisation to unseen pairs, not memory (1.0 for 48 of 50 seeds)."},
      {"copy_gap_ky.json", "synthetic", true,
       "Meant to fail: ky with a window of 4 in two layers reaches 6 tokens back, copying needs "
       "9, so it sits at chance (accuracy 0.10, eval loss ln 10 = 2.30 nats) whatever g_h(t) "
       "learns."},
      {"copy_gap_window.json", "synthetic", true,
       "Meant to fail: the same 4-token window without the learned connection (connection: "
       "none), also at chance: the control for copy_gap_ky."},
      {"copy_gap_mixed.json", "synthetic", false,
       "A ky layer (window 4) then a dot layer: the dot layer supplies the reach copy_gap_ky "
       "lacks, accuracy 1.0; Connections and Attention side by side."},
      {"fortunes.json", "text", false,
       "Character LM on Debian's fortunes with dot attention: eval loss about 2.04 nats against "
       "the unigram baseline 3.50; the text baseline the others are compared with."},
      {"ky_fortunes.json", "text", false,
       "Condor's Neural KY-Attention (causal window 32) on fortunes: eval loss 1.93 against "
       "dot's 2.04; Connections draws g_h(t), a preference for recent tokens (t = 1 is the "
       "current one)."},
      {"window_fortunes.json", "text", false,
       "ky's window of 32 with g = 0 (plain sliding-window attention): the baseline that "
       "isolates what the learned connection adds in ky_fortunes."},
      {"rope_fortunes.json", "text", false,
       "Dot attention with rotary positions on fortunes: eval loss 1.93, so on this seed "
       "relative position alone closes the ky-dot gap."},
      {"neural_fortunes.json", "text", false,
       "Neural Attention in the first layer (d' = 2) on fortunes: the Neural panel shows its "
       "learned score surface beside the dot product's paraboloid."},
      {"fmnist_dot.json", "images", false,
       "ViT on Fashion-MNIST (7x7 patches, CLS token) with dot attention: 0.876 test accuracy, "
       "about 14 minutes on one thread; Image attention shows where CLS looks."},
      {"fmnist_pseudo.json", "images", false,
       "Pseudo kernel attention: 44% fewer attention parameters than dot for 0.868 test "
       "accuracy."},
      {"fmnist_semi_fusion.json", "images", false,
       "Semi-fusion kernel attention: 0.868 test accuracy, the fastest of the family (7 steps/s "
       "against dot's 4.9)."},
      {"fmnist_gaussian.json", "images", false,
       "Gaussian kernel attention at D = 32 (shrunk as in the paper): 0.828 test accuracy with "
       "28k parameters."},
      {"fmnist_linear_sim.json", "images", false,
       "Linear-similarity attention: 0.861 test accuracy in 1600 steps, with more attention "
       "parameters than dot."},
      {"fmnist_neural.json", "images", false,
       "Neural Attention in the first layer: matches dot's 0.876 test accuracy at 2.2x the step "
       "time."},
      {"conn_recall.json", "Connection Transformer", false,
       "The Connection Transformer on recall with the norm-bound control: rho(I+C) stays below "
       "r = 0.95 while C grows, but accuracy stalls near 0.60 (chance 1/8; dot_recall reaches "
       "1.0)."},
      {"conn_recall_none.json", "Connection Transformer", true,
       "Shows what the control prevents: with no control rho(I+C) rises well above 1 (max "
       "1.69); accuracy stays near 0.60."},
      {"conn_recall_spec.json", "Connection Transformer", true,
       "Meant to fail: the seed's spectral control rescales C, which cannot bring rho(I+C) "
       "below 1 when trace(C) >= 0, so it rescales at every step and C decays toward 0 "
       "(accuracy 0.54)."},
      {"dot_recall.json", "Connection Transformer", false,
       "A dot transformer of conn_recall's width at lr 1e-3: solves recall (accuracy 1.0), the "
       "comparison for the conn runs."},
      {"conn_fortunes.json", "Connection Transformer", false,
       "The Connection Transformer as a character LM (32 slots, 2 steps): eval loss 2.72 nats, "
       "below the unigram 3.50 but well behind dot's 2.04."},
  };
  return notes;
}

const ExperimentNote* experiment_note(const std::string& file) {
  for (const ExperimentNote& n : experiment_notes())
    if (file == n.file) return &n;
  return nullptr;
}

}  // namespace attn::gui
