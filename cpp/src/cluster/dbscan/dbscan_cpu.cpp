// CPU backend of DBSCAN's labelling (twinlearn/cluster/dbscan.hpp), and the
// host steps the CUDA backend shares.
#include <algorithm>
#include <atomic>
#include <vector>

#include "cluster/dbscan/dbscan_common.hpp"
#include "twinlearn/core/parallel.hpp"

namespace tl::detail {

void dbscan_expand_host(std::int64_t n, const std::int64_t* offsets, const std::int64_t* ind,
                        const std::uint8_t* is_core, std::int64_t* labels) {
  std::fill(labels, labels + n, std::int64_t(-1));
  std::vector<std::int64_t> stack;
  std::int64_t label = 0;
  for (std::int64_t s = 0; s < n; ++s) {
    if (labels[s] != -1 || !is_core[s]) continue;
    std::int64_t i = s;
    while (true) {
      if (labels[i] == -1) {
        labels[i] = label;
        if (is_core[i])
          for (std::int64_t k = offsets[i]; k < offsets[i + 1]; ++k)
            if (labels[ind[k]] == -1) stack.push_back(ind[k]);
      }
      if (stack.empty()) break;
      i = stack.back();
      stack.pop_back();
    }
    ++label;
  }
}

void dbscan_cluster_ids(std::int64_t n, const std::int64_t* root, const std::uint8_t* is_core, std::int64_t* cid) {
  std::int64_t next = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (!is_core[i]) {
      cid[i] = -1;
    } else if (root[i] == i) {
      cid[i] = next++;
    } else {
      cid[i] = cid[root[i]];  // root[i] < i: its id is set
    }
  }
}

namespace {
std::int64_t find_root(std::vector<std::int64_t>& parent, std::int64_t x) {
  std::int64_t r = x;
  while (parent[r] != r) r = parent[r];
  while (parent[x] != r) {
    const std::int64_t next = parent[x];
    parent[x] = r;
    x = next;
  }
  return r;
}
}  // namespace

void dbscan_from_graph_cpu(const Context& ctx, std::int64_t n, const std::int64_t* offsets, const std::int64_t* ind,
                           const double* weight, const DbscanParams& params, std::int64_t* labels,
                           std::uint8_t* is_core) {
  parallel_for(ctx, n, [&](std::int64_t i) {
    is_core[i] = dbscan_is_core(offsets, ind, weight, i, params.min_samples) ? 1 : 0;
  });
  // Is the relation symmetric on every pair with a core point? (Always, for
  // distances of X; a precomputed input may not be.)
  std::atomic<bool> asym{false};
  parallel_for(ctx, n, [&](std::int64_t i) {
    if (asym.load(std::memory_order_relaxed)) return;
    for (std::int64_t k = offsets[i]; k < offsets[i + 1]; ++k) {
      if (dbscan_edge_breaks_symmetry(offsets, ind, is_core, i, ind[k])) {
        asym.store(true, std::memory_order_relaxed);
        return;
      }
    }
  });
  if (asym.load()) {
    dbscan_expand_host(n, offsets, ind, is_core, labels);
    return;
  }
  // Components of the core graph by union-find, the lower root winning: every
  // root is its component's lowest index whatever the order of the unions.
  std::vector<std::int64_t> parent(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) parent[i] = i;
  for (std::int64_t i = 0; i < n; ++i) {
    if (!is_core[i]) continue;
    for (std::int64_t k = offsets[i]; k < offsets[i + 1]; ++k) {
      const std::int64_t j = ind[k];
      if (j <= i || !is_core[j]) continue;  // symmetric: each edge once
      const std::int64_t a = find_root(parent, i), b = find_root(parent, j);
      if (a != b) parent[std::max(a, b)] = std::min(a, b);
    }
  }
  for (std::int64_t i = 0; i < n; ++i) parent[i] = find_root(parent, i);
  std::vector<std::int64_t> cid(static_cast<std::size_t>(n));
  dbscan_cluster_ids(n, parent.data(), is_core, cid.data());
  // Core points take their cluster's id; the others the lowest id among the
  // core points whose neighbourhood holds them (the relation is symmetric
  // here, so: among their own core neighbours).
  parallel_for(ctx, n, [&](std::int64_t i) {
    if (is_core[i]) {
      labels[i] = cid[i];
      return;
    }
    std::int64_t best = -1;
    for (std::int64_t k = offsets[i]; k < offsets[i + 1]; ++k) {
      const std::int64_t c = cid[ind[k]];
      if (c >= 0 && (best < 0 || c < best)) best = c;
    }
    labels[i] = best;
  });
}

}  // namespace tl::detail
