// HDBSCAN's tree steps on the host (twinlearn/cluster/hdbscan.hpp, step 3),
// written after scikit-learn's sklearn/cluster/_hdbscan/_linkage.pyx
// (make_single_linkage) and _tree.pyx (_condense_tree, _compute_stability,
// _get_clusters, _do_labelling, get_probabilities) step by step: the same
// traversal orders, the same comparisons and the same sums in the same
// order, so a spanning tree gives scikit-learn's labels and probabilities.
// Two orders that scikit-learn leaves to NumPy and Python are fixed here:
// the edges are sorted by a stable sort (NumPy's default sort is not stable
// for equal weights), and the epsilon search visits its leaves in
// increasing id order (scikit-learn iterates a Python set).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "twinlearn/cluster/hdbscan.hpp"
#include "twinlearn/core/error.hpp"

namespace tl {

namespace {

using i64 = std::int64_t;
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Hierarchy {
  std::vector<i64> left, right, size;
  std::vector<double> value;
};

struct Condensed {
  std::vector<i64> parent, child, size;
  std::vector<double> value;
  void push(i64 p, i64 c, double v, i64 s) {
    parent.push_back(p);
    child.push_back(c);
    value.push_back(v);
    size.push_back(s);
  }
  std::size_t rows() const { return parent.size(); }
};

// make_single_linkage over the edges sorted by weight (stable).
Hierarchy single_linkage(i64 n, const i64* src, const i64* dst, const double* w) {
  std::vector<i64> order(static_cast<std::size_t>(n - 1));
  std::iota(order.begin(), order.end(), i64(0));
  std::stable_sort(order.begin(), order.end(), [&](i64 a, i64 b) { return w[a] < w[b]; });
  std::vector<i64> parent(static_cast<std::size_t>(2 * n - 1), -1), size(static_cast<std::size_t>(2 * n - 1), 0);
  for (i64 i = 0; i < n; ++i) size[static_cast<std::size_t>(i)] = 1;
  i64 next_label = n;
  auto find = [&](i64 x) {
    i64 p = x;
    while (parent[static_cast<std::size_t>(x)] != -1) x = parent[static_cast<std::size_t>(x)];
    while (p != x && parent[static_cast<std::size_t>(p)] != x) {
      const i64 q = parent[static_cast<std::size_t>(p)];
      parent[static_cast<std::size_t>(p)] = x;
      p = q;
    }
    return x;
  };
  Hierarchy h;
  h.left.resize(static_cast<std::size_t>(n - 1));
  h.right.resize(static_cast<std::size_t>(n - 1));
  h.size.resize(static_cast<std::size_t>(n - 1));
  h.value.resize(static_cast<std::size_t>(n - 1));
  for (i64 k = 0; k < n - 1; ++k) {
    const i64 e = order[static_cast<std::size_t>(k)];
    const i64 a = find(src[e]), b = find(dst[e]);
    h.left[static_cast<std::size_t>(k)] = a;
    h.right[static_cast<std::size_t>(k)] = b;
    h.value[static_cast<std::size_t>(k)] = w[e];
    const i64 s = size[static_cast<std::size_t>(a)] + size[static_cast<std::size_t>(b)];
    h.size[static_cast<std::size_t>(k)] = s;
    parent[static_cast<std::size_t>(a)] = next_label;
    parent[static_cast<std::size_t>(b)] = next_label;
    size[static_cast<std::size_t>(next_label)] = s;
    ++next_label;
  }
  return h;
}

// bfs_from_hierarchy: level by level, the children of internal nodes left
// then right (a FIFO queue visits them in that order).
void bfs_hierarchy(const Hierarchy& h, i64 n, i64 root, std::vector<i64>& out) {
  out.clear();
  out.push_back(root);
  for (std::size_t q = 0; q < out.size(); ++q) {
    const i64 x = out[q];
    if (x >= n) {
      out.push_back(h.left[static_cast<std::size_t>(x - n)]);
      out.push_back(h.right[static_cast<std::size_t>(x - n)]);
    }
  }
}

Condensed condense(const Hierarchy& h, i64 n, i64 min_cluster_size) {
  const i64 root = 2 * (n - 1);
  i64 next_label = n + 1;
  std::vector<i64> nodes, sub;
  bfs_hierarchy(h, n, root, nodes);
  std::vector<i64> relabel(static_cast<std::size_t>(root + 1), 0);
  relabel[static_cast<std::size_t>(root)] = n;
  std::vector<std::uint8_t> ignore(nodes.size(), 0);
  Condensed c;
  auto count = [&](i64 x) { return x >= n ? h.size[static_cast<std::size_t>(x - n)] : i64(1); };
  auto fall_out = [&](i64 from, i64 parent_label, double lambda) {
    bfs_hierarchy(h, n, from, sub);
    for (const i64 s : sub) {
      if (s < n) c.push(parent_label, s, lambda, 1);
      ignore[static_cast<std::size_t>(s)] = 1;
    }
  };
  for (const i64 node : nodes) {
    if (ignore[static_cast<std::size_t>(node)] || node < n) continue;
    const std::size_t k = static_cast<std::size_t>(node - n);
    const i64 left = h.left[k], right = h.right[k];
    const double distance = h.value[k];
    const double lambda = distance > 0.0 ? 1.0 / distance : kInf;
    const i64 lc = count(left), rc = count(right);
    const i64 me = relabel[static_cast<std::size_t>(node)];
    if (lc >= min_cluster_size && rc >= min_cluster_size) {
      relabel[static_cast<std::size_t>(left)] = next_label++;
      c.push(me, relabel[static_cast<std::size_t>(left)], lambda, lc);
      relabel[static_cast<std::size_t>(right)] = next_label++;
      c.push(me, relabel[static_cast<std::size_t>(right)], lambda, rc);
    } else if (lc < min_cluster_size && rc < min_cluster_size) {
      fall_out(left, me, lambda);
      fall_out(right, me, lambda);
    } else if (lc < min_cluster_size) {
      relabel[static_cast<std::size_t>(right)] = me;
      fall_out(left, me, lambda);
    } else {
      relabel[static_cast<std::size_t>(left)] = me;
      fall_out(right, me, lambda);
    }
  }
  return c;
}

// Children (cluster ids) of each cluster in the cluster tree (the condensed
// rows of size > 1), in row order; index id - root.
std::vector<std::vector<i64>> cluster_children(const Condensed& ct, i64 root, i64 nclusters) {
  std::vector<std::vector<i64>> ch(static_cast<std::size_t>(nclusters));
  for (std::size_t r = 0; r < ct.rows(); ++r) ch[static_cast<std::size_t>(ct.parent[r] - root)].push_back(ct.child[r]);
  return ch;
}

}  // namespace

void hdbscan_labels(std::int64_t n, const std::int64_t* src, const std::int64_t* dst, const double* weight,
                    const HdbscanParams& params, std::int64_t* labels, double* probabilities) {
  TL_REQUIRE(params.min_cluster_size >= 2, ValueError,
             "The 'min_cluster_size' parameter of HDBSCAN must be an int in the range [2, inf). Got ",
             params.min_cluster_size, " instead.");
  TL_REQUIRE(params.cluster_selection_epsilon >= 0.0, ValueError,
             "The 'cluster_selection_epsilon' parameter of HDBSCAN must be >= 0. Got ",
             params.cluster_selection_epsilon, " instead.");
  TL_REQUIRE(params.max_cluster_size >= 0, ValueError, "max_cluster_size must be >= 1 (or 0 for no limit)");
  TL_REQUIRE(n >= 2, ValueError, "n_samples=", n, " while HDBSCAN requires more than one sample");
  for (i64 e = 0; e < n - 1; ++e)
    TL_REQUIRE(src[e] >= 0 && src[e] < n && dst[e] >= 0 && dst[e] < n, ValueError,
               "HDBSCAN: spanning-tree edge ", e, " has an endpoint outside [0, n)");
  const Hierarchy h = single_linkage(n, src, dst, weight);
  const Condensed c = condense(h, n, params.min_cluster_size);
  const std::size_t nrows = c.rows();

  // _compute_stability
  const i64 root = *std::min_element(c.parent.begin(), c.parent.end());
  const i64 max_parent = *std::max_element(c.parent.begin(), c.parent.end());
  const i64 largest_child = std::max(*std::max_element(c.child.begin(), c.child.end()), root);
  const i64 ncl = max_parent - root + 1;
  std::vector<double> births(static_cast<std::size_t>(largest_child + 1), std::numeric_limits<double>::quiet_NaN());
  for (std::size_t r = 0; r < nrows; ++r) births[static_cast<std::size_t>(c.child[r])] = c.value[r];
  births[static_cast<std::size_t>(root)] = 0.0;
  std::vector<double> stability(static_cast<std::size_t>(ncl), 0.0);
  for (std::size_t r = 0; r < nrows; ++r) {
    const i64 p = c.parent[r];
    stability[static_cast<std::size_t>(p - root)] +=
        (c.value[r] - births[static_cast<std::size_t>(p)]) * static_cast<double>(c.size[r]);
  }

  // _get_clusters
  Condensed ct;  // the cluster tree
  for (std::size_t r = 0; r < nrows; ++r)
    if (c.size[r] > 1) ct.push(c.parent[r], c.child[r], c.value[r], c.size[r]);
  const auto children = cluster_children(ct, root, ncl);
  auto idx = [&](i64 id) { return static_cast<std::size_t>(id - root); };
  std::vector<std::uint8_t> key(static_cast<std::size_t>(ncl), 0), is_cluster(static_cast<std::size_t>(ncl), 0);
  std::vector<i64> node_list;  // descending ids
  for (i64 id = max_parent; id >= root; --id)
    if (id != root || params.allow_single_cluster) node_list.push_back(id);
  for (const i64 id : node_list) key[idx(id)] = is_cluster[idx(id)] = 1;
  i64 n_points = 0;
  for (std::size_t r = 0; r < nrows; ++r)
    if (c.size[r] == 1) n_points = std::max(n_points, c.child[r] + 1);
  const i64 max_size = params.max_cluster_size > 0 ? params.max_cluster_size : n_points + 1;
  std::vector<i64> csize(static_cast<std::size_t>(ncl), 0);
  for (std::size_t r = 0; r < ct.rows(); ++r) csize[idx(ct.child[r])] = ct.size[r];
  if (params.allow_single_cluster) {
    i64 s = 0;
    for (std::size_t r = 0; r < ct.rows(); ++r)
      if (ct.parent[r] == root) s += ct.size[r];
    csize[idx(root)] = s;
  }
  // bfs_from_cluster_tree(node) without node itself.
  std::vector<i64> q;
  auto descendants = [&](i64 node) {
    q.clear();
    q.push_back(node);
    for (std::size_t k = 0; k < q.size(); ++k)
      for (const i64 ch : children[idx(q[k])]) q.push_back(ch);
    return std::vector<i64>(q.begin() + 1, q.end());
  };
  const double eps = params.cluster_selection_epsilon;
  // The cluster tree's parent of a cluster and the value of its row.
  std::vector<i64> up(static_cast<std::size_t>(ncl), -1);
  std::vector<double> birth_value(static_cast<std::size_t>(ncl), 0.0);
  for (std::size_t r = ct.rows(); r-- > 0;) {  // the first row with that child wins
    up[idx(ct.child[r])] = ct.parent[r];
    birth_value[idx(ct.child[r])] = ct.value[r];
  }
  auto traverse_upwards = [&](i64 leaf) {
    for (;;) {
      const i64 parent = up[idx(leaf)];
      if (parent < 0) return leaf;  // the root itself (scikit-learn has no row to read there)
      if (parent == root) return params.allow_single_cluster ? parent : leaf;
      const double parent_eps = 1.0 / birth_value[idx(parent)];
      if (parent_eps > eps) return parent;
      leaf = parent;
    }
  };
  auto epsilon_search = [&](std::vector<i64> leaves) {  // ascending ids
    std::sort(leaves.begin(), leaves.end());
    std::vector<std::uint8_t> processed(static_cast<std::size_t>(ncl), 0), selected(static_cast<std::size_t>(ncl), 0);
    for (const i64 leaf : leaves) {
      if (leaf == root) {  // no row of its own: kept as it is
        selected[idx(leaf)] = 1;
        continue;
      }
      const double leaf_eps = 1.0 / birth_value[idx(leaf)];
      if (leaf_eps < eps) {
        if (!processed[idx(leaf)]) {
          const i64 ec = traverse_upwards(leaf);
          selected[idx(ec)] = 1;
          for (const i64 s : descendants(ec)) processed[idx(s)] = 1;
        }
      } else {
        selected[idx(leaf)] = 1;
      }
    }
    return selected;
  };
  auto keep_selected = [&](const std::vector<std::uint8_t>& selected) {
    for (i64 id = root; id <= max_parent; ++id)
      if (key[idx(id)]) is_cluster[idx(id)] = selected[idx(id)];
  };
  if (!params.leaf) {
    for (const i64 node : node_list) {
      const auto& ch = children[idx(node)];
      double sub = 0.0;
      if (!ch.empty()) {
        sub = stability[idx(ch[0])];
        for (std::size_t k = 1; k < ch.size(); ++k) sub += stability[idx(ch[k])];
      }
      if (sub > stability[idx(node)] || csize[idx(node)] > max_size) {
        is_cluster[idx(node)] = 0;
        stability[idx(node)] = sub;
      } else {
        for (const i64 s : descendants(node)) {
          key[idx(s)] = 1;
          is_cluster[idx(s)] = 0;
        }
      }
    }
    if (eps != 0.0 && ct.rows() > 0) {
      std::vector<i64> eom;
      for (const i64 id : node_list)
        if (is_cluster[idx(id)]) eom.push_back(id);
      std::vector<std::uint8_t> selected(static_cast<std::size_t>(ncl), 0);
      if (eom.size() == 1 && eom[0] == root) {
        if (params.allow_single_cluster) selected[idx(root)] = 1;
      } else {
        selected = epsilon_search(eom);
      }
      keep_selected(selected);
    }
  } else {
    std::vector<i64> leaves;
    if (ct.rows() > 0) {  // recurse_leaf_dfs from the root
      std::vector<i64> stack{root};
      while (!stack.empty()) {
        const i64 x = stack.back();
        stack.pop_back();
        const auto& ch = children[idx(x)];
        if (ch.empty()) leaves.push_back(x);
        for (std::size_t k = ch.size(); k-- > 0;) stack.push_back(ch[k]);
      }
    }
    if (leaves.empty()) key[idx(root)] = 1;
    std::vector<std::uint8_t> selected(static_cast<std::size_t>(ncl), 0);
    if (eps != 0.0) {
      selected = epsilon_search(leaves);
    } else {
      for (const i64 l : leaves) selected[idx(l)] = 1;
    }
    keep_selected(selected);
  }
  std::vector<i64> label_of(static_cast<std::size_t>(ncl), -1), cluster_of;  // cluster id <-> label
  i64 nsel = 0;
  for (i64 id = root; id <= max_parent; ++id)
    if (key[idx(id)] && is_cluster[idx(id)]) {
      label_of[idx(id)] = nsel++;
      cluster_of.push_back(id);
    }

  // _do_labelling: TreeUnionFind over the rows whose child is not selected.
  const i64 uf_size = max_parent + 1;
  std::vector<i64> uf_parent(static_cast<std::size_t>(uf_size)), uf_rank(static_cast<std::size_t>(uf_size), 0);
  std::iota(uf_parent.begin(), uf_parent.end(), i64(0));
  auto uf_find = [&](i64 x) {
    i64 r = x;
    while (uf_parent[static_cast<std::size_t>(r)] != r) r = uf_parent[static_cast<std::size_t>(r)];
    while (uf_parent[static_cast<std::size_t>(x)] != r) {
      const i64 nx = uf_parent[static_cast<std::size_t>(x)];
      uf_parent[static_cast<std::size_t>(x)] = r;
      x = nx;
    }
    return r;
  };
  auto selected_cluster = [&](i64 id) { return id >= root && id <= max_parent && key[idx(id)] && is_cluster[idx(id)]; };
  for (std::size_t r = 0; r < nrows; ++r) {
    const i64 child = c.child[r];
    if (selected_cluster(child)) continue;
    const i64 xr = uf_find(c.parent[r]), yr = uf_find(child);
    if (uf_rank[static_cast<std::size_t>(xr)] < uf_rank[static_cast<std::size_t>(yr)]) {
      uf_parent[static_cast<std::size_t>(xr)] = yr;
    } else if (uf_rank[static_cast<std::size_t>(xr)] > uf_rank[static_cast<std::size_t>(yr)]) {
      uf_parent[static_cast<std::size_t>(yr)] = xr;
    } else {
      uf_parent[static_cast<std::size_t>(yr)] = xr;
      uf_rank[static_cast<std::size_t>(xr)] += 1;
    }
  }
  std::vector<double> point_lambda(static_cast<std::size_t>(n), 0.0);
  for (std::size_t r = 0; r < nrows; ++r)
    if (c.child[r] < root) point_lambda[static_cast<std::size_t>(c.child[r])] = c.value[r];
  double root_max = -kInf;
  for (std::size_t r = 0; r < nrows; ++r)
    if (c.parent[r] == root) root_max = std::max(root_max, c.value[r]);
  for (i64 p = 0; p < n; ++p) {
    const i64 cl = uf_find(p);
    i64 label = -1;
    if (cl != root) {
      if (selected_cluster(cl)) label = label_of[idx(cl)];
    } else if (nsel == 1 && params.allow_single_cluster) {
      const double threshold = eps != 0.0 ? 1.0 / eps : root_max;
      if (point_lambda[static_cast<std::size_t>(p)] >= threshold && selected_cluster(root)) label = label_of[idx(root)];
    }
    labels[p] = label;
  }

  // get_probabilities, with max_lambdas' run-by-run deaths.
  std::vector<double> deaths(static_cast<std::size_t>(max_parent + 1), 0.0);
  {
    i64 current = c.parent[0];
    double ml = c.value[0];
    for (std::size_t r = 1; r < nrows; ++r) {
      if (c.parent[r] == current) {
        ml = std::max(ml, c.value[r]);
      } else {
        deaths[static_cast<std::size_t>(current)] = ml;
        current = c.parent[r];
        ml = c.value[r];
      }
    }
    deaths[static_cast<std::size_t>(current)] = ml;
  }
  for (i64 p = 0; p < n; ++p) probabilities[p] = 0.0;
  for (std::size_t r = 0; r < nrows; ++r) {
    const i64 point = c.child[r];
    if (point >= root) continue;
    const i64 lab = labels[point];
    if (lab == -1) continue;
    const double max_lambda = deaths[static_cast<std::size_t>(cluster_of[static_cast<std::size_t>(lab)])];
    if (max_lambda == 0.0 || std::isinf(c.value[r])) {
      probabilities[point] = 1.0;
    } else {
      probabilities[point] = std::min(c.value[r], max_lambda) / max_lambda;
    }
  }
}

}  // namespace tl
