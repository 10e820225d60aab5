// Connection statistics of C (torch-free): the seed's analyze_connections plus cycles found
// by Tarjan's strongly connected components and shortest cycles by breadth-first search.
#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>

#include "core/models/conn/conn_view.h"

namespace attn {

ConnStats compute_conn_stats(const float* c, int n, double threshold) {
  ConnStats s;
  s.threshold = threshold;
  if (n <= 0) return s;
  const size_t nn = static_cast<size_t>(n) * n;
  std::vector<int> order(nn);
  for (size_t k = 0; k < nn; ++k) order[k] = static_cast<int>(k);
  const size_t top = std::min<size_t>(10, nn);
  std::partial_sort(order.begin(), order.begin() + top, order.end(),
                    [&](int a, int b) { return c[a] > c[b]; });
  for (size_t k = 0; k < top; ++k) s.strongest.push_back({order[k] / n, order[k] % n, c[order[k]]});
  double fro = 0;
  int sparse = 0;
  std::vector<std::vector<int>> adj(n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double v = c[static_cast<size_t>(i) * n + j];
      fro += v * v;
      s.max_abs = std::max(s.max_abs, std::abs(v));
      if (std::abs(v) < 0.01) ++sparse;
      if (v < -threshold) ++s.inhibitory;
      if (v > threshold) {
        ++s.edges;
        adj[i].push_back(j);
        if (i == j) ++s.self_loops;
      }
    }
  s.frobenius = std::sqrt(fro);
  s.sparsity = static_cast<double>(sparse) / nn;

  // Tarjan (iterative) for strongly connected components.
  std::vector<int> index(n, -1), low(n, 0), comp(n, -1), stack;
  std::vector<bool> on_stack(n, false);
  int counter = 0, components = 0;
  for (int root = 0; root < n; ++root) {
    if (index[root] >= 0) continue;
    std::vector<std::pair<int, size_t>> work{{root, 0}};
    index[root] = low[root] = counter++;
    stack.push_back(root);
    on_stack[root] = true;
    while (!work.empty()) {
      auto& [v, next] = work.back();
      if (next < adj[v].size()) {
        const int w = adj[v][next++];
        if (index[w] < 0) {
          index[w] = low[w] = counter++;
          stack.push_back(w);
          on_stack[w] = true;
          work.push_back({w, 0});
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      if (low[v] == index[v]) {
        int w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = false;
          comp[w] = components;
        } while (w != v);
        ++components;
      }
      const int done = v;
      work.pop_back();
      if (!work.empty()) low[work.back().first] = std::min(low[work.back().first], low[done]);
    }
  }
  std::vector<int> size(components, 0);
  std::vector<bool> cyclic(components, false);
  for (int v = 0; v < n; ++v) ++size[comp[v]];
  for (int v = 0; v < n; ++v) {
    if (size[comp[v]] > 1) cyclic[comp[v]] = true;
    for (int w : adj[v])
      if (w == v) cyclic[comp[v]] = true;
  }
  for (int k = 0; k < components; ++k) s.cyclic_components += cyclic[k] ? 1 : 0;
  for (int v = 0; v < n; ++v) s.nodes_on_cycles += cyclic[comp[v]] ? 1 : 0;

  // Shortest cycle through each of the first few slots on cycles (BFS back to the start).
  std::vector<std::vector<int>> found;
  int tried = 0;
  for (int v = 0; v < n && tried < 16; ++v) {
    if (!cyclic[comp[v]]) continue;
    ++tried;
    std::vector<int> parent(n, -2);
    std::queue<int> q;
    q.push(v);
    parent[v] = -1;
    int last = -1;
    while (!q.empty() && last < 0) {
      const int u = q.front();
      q.pop();
      for (int w : adj[u]) {
        if (w == v) {
          last = u;
          break;
        }
        if (parent[w] == -2) {
          parent[w] = u;
          q.push(w);
        }
      }
    }
    if (last < 0) continue;
    std::vector<int> cycle;
    for (int u = last; u != -1; u = parent[u]) cycle.push_back(u);
    std::reverse(cycle.begin(), cycle.end());
    std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
    if (std::find(found.begin(), found.end(), cycle) == found.end()) found.push_back(cycle);
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return a.size() < b.size(); });
  if (found.size() > 5) found.resize(5);
  s.cycles = std::move(found);
  return s;
}

}  // namespace attn
