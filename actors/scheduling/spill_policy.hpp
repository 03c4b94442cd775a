#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace swarm::actors {

/// A node a busy or too small node could spill a task to, as the spilling node's own
/// view of the cluster shows it (as of the last node table it got).
struct spill_candidate {
  std::string name;
  /// Its resources not held by running work fit the task now.
  bool room = false;
  /// Bytes of the task's inputs already stored there.
  uint64_t input_bytes = 0;
  /// Work the task would wait behind there (of its priority or higher).
  uint64_t ahead = 0;
};

/// Bottom-up spillback without the head (Ray's hybrid policy): a node weighs the nodes
/// holding the task's inputs and a few drawn at random (`spill_draw`), and takes the best
/// of them: one with room first, then the most input bytes, then the least work ahead.
/// Empty when there is none.
std::string best_spill_target(const std::vector<spill_candidate>& candidates);

/// The indices 0..n-1, each once, in an order drawn from `draw`: a random start and a
/// random stride coprime to `n`. A spill probes nodes in this order until it has found
/// a few that could run the task, so that its cost does not grow with the cluster and a
/// burst of spills from one stale view spreads over the nodes it shows equally free.
class spill_draw {
public:
  spill_draw(size_t n, uint64_t draw);

  /// The next index; `n` once every index was given.
  size_t next();
  size_t size() const { return n_; }

private:
  size_t n_;
  size_t start_ = 0;
  size_t stride_ = 1;
  size_t given_ = 0;
};

/// Adds to `weighed` the nodes `weigh(i)` makes candidates of, i in `draw`'s order, until
/// it has `sample` of them and one of `weighed` has room, or after `probes` draws;
/// `weigh` gives none for a node that could not run the task or was weighed already. A
/// full cluster costs a spill `probes` looks, a cluster with room about `sample`.
template <class Weigh>
void draw_spill_candidates(spill_draw draw, size_t sample, size_t probes,
                           std::vector<spill_candidate>& weighed, Weigh&& weigh) {
  bool room = false;
  for (auto& c : weighed)
    room |= c.room;
  size_t drawn = 0;
  for (size_t i = draw.next(), k = 0;
       i != draw.size() && k < probes && (drawn < sample || !room); i = draw.next(), ++k)
    if (std::optional<spill_candidate> c = weigh(i)) {
      room |= c->room;
      weighed.push_back(std::move(*c));
      ++drawn;
    }
}

} // namespace swarm::actors
