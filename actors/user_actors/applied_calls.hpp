#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "actors/workers/call_executor.hpp"
#include "framework/object_id.hpp"

namespace swarm::actors {

/// The last calls an actor with saved states ran, with their answers, kept in each state
/// it saves: the last `actor_options::answers_kept` of each of the callers that called
/// last. When the actor's node dies after its owner kept the state with a call's effect
/// but before the caller had the answer, the caller sends the call again; the instance
/// restored from that state answers it from here instead of running it twice. Kept by
/// caller (the owner of the call's result), so that other callers' calls meanwhile never
/// push a caller's out. The host owns it.
class applied_calls {
public:
  /// Answers larger than this are not kept.
  static constexpr size_t max_answer_bytes = 64 << 10;

  /// Callers kept, the last to call: a caller called by no more goes first.
  static constexpr size_t default_callers = 64;

  /// Keeps the last `window` calls of each of the last `callers` callers; a window of 0
  /// keeps none.
  explicit applied_calls(size_t window, size_t callers = default_callers)
      : window_(window), max_callers_(std::max<size_t>(callers, 1)) {}

  /// Keeps call `id`'s outcome (its value when it is plain data that fits; else only
  /// that it ran, and why its answer is not kept). A crash is not kept: its effect is
  /// not in any state.
  void add(const object_id& id, const call_outcome& outcome);

  struct entry;

  /// Call `id`, kept when it ran; null when it did not.
  const entry* find(const object_id& id) const;

  /// The outcome `e` keeps, its value decoded as `type`. `what` names the call and the
  /// actor, for an answer that was not kept.
  static call_outcome outcome_of(const entry& e, const detail::type_descriptor* type,
                                 const std::string& what);

  /// The state to save: the actor's own bytes `user` with the calls kept.
  std::vector<uint8_t> wrap(std::vector<uint8_t> user) const;

  /// The actor's own bytes in `saved` (a state `wrap` made, or bytes saved without
  /// calls, as they are); the calls kept in it replace these. Throws `failure` when
  /// `saved` says it is a wrapped state but is not one.
  std::vector<uint8_t> unwrap(const std::vector<uint8_t>& saved);

  /// How many calls are kept.
  size_t size() const noexcept;

  /// One call that ran, as a state keeps it.
  struct entry {
    object_id id;
    uint8_t kind = 0; // call_outcome::kind; `not_kept` when only its running is
    uint32_t code = 0;
    std::string message; // the error; or why the answer is not kept
    std::vector<uint8_t> value;
  };

private:
  struct caller {
    uint64_t last = 0;       // when it called last, counted in calls kept
    std::deque<entry> calls; // oldest first, `window_` at most
  };

  void keep(entry e);

  size_t window_;
  size_t max_callers_;
  uint64_t count_ = 0;
  std::map<uint64_t, caller> callers_; // by the owner of their calls' results
};

template <class Inspector> bool inspect(Inspector& f, applied_calls::entry& x) {
  return f(x.id, x.kind, x.code, x.message, x.value);
}

} // namespace swarm::actors
