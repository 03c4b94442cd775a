#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/objects/object_manager.hpp"
#include "base/result.hpp"
#include "framework/detail/object_slot.hpp"
#include "framework/detail/type_descriptor.hpp"
#include "transport/wire_message.hpp"

namespace swarm::actors {

/// What the borrow table needs of its node. Every function is called on the thread
/// running the table's actor (the owner) and must not block.
struct borrow_config {
  /// This node's name, for errors.
  std::string node;
  /// Every node of the cluster file, in its order, and those that joined otherwise (see
  /// `owner_node_of`).
  std::vector<std::string> nodes;
  joined_names joined;
  /// Sends a message to a node; never blocks.
  std::function<void(const std::string&, wire_msg::message)> send;
  /// The slot of an object owned here, while it lives (refs of it were written).
  std::function<detail::slot_ptr(const object_key&)> find;
  /// The value of a done slot as it travels to a borrower: inline, or held here for
  /// pulls (its key added to `held`), or named where its primary copy is.
  std::function<wire_msg::arg(const detail::slot_ptr&, std::vector<object_key>& held)>
      export_value;
  /// Lets go of values held for pulls.
  std::function<void(std::vector<object_key>)> release;
  /// Reads a value held elsewhere; `done` runs on any thread, once the objects that
  /// reading it borrowed are known to their owners.
  std::function<void(const wire_msg::remote_ref&, const detail::type_descriptor*,
                     std::function<void(result<detail::boxed_value>)>)>
      fetch;
  /// Tells the table, through its actor, that the slot of lent object `k` is done.
  std::function<void(const object_key&)> notify_done;
  /// Runs `f` through the table's actor once every borrow asked for before has been
  /// answered (see `borrow_table::barrier`), after the messages queued there now.
  std::function<void(std::function<void()>)> after_borrows;
  /// Refs of other nodes' objects read on this node, ever (`node_link::borrows_made`).
  std::function<uint64_t()> borrows_made;
  /// The node that reads borrowed values (the refs in them); may be null.
  codec_context* values = nullptr;
};

/// The node's side of the borrower protocol (Ray's, with the owner's table of
/// borrowers), kept by its owner actor.
///
/// As the lender (this node owns the object): a node that read a ref of it asks to
/// borrow it (`object_borrow`). The table keeps the object alive while any node has a
/// borrow left, counting them per node, and answers at once with the object if it is
/// done, else once it is (`object_borrowed`: inline, or where to pull it). Each
/// `object_unborrow` gives one back; a lost node gives back all of its own.
///
/// As a borrower (a ref of another node's object was read here): each borrowed slot
/// asks the owner and resolves with its answer; when the slot goes, its borrow is given
/// back. A borrowed slot pending when its owner is lost fails with `owner_died`.
///
/// Safety: whoever sends a value holding a ref keeps that ref until the reader's borrow
/// was answered (a task's arguments until its result, a result held where it was made
/// until its owner lets go, and a reader of either completes only after `barrier`); so
/// an owner never lets go of an object a reader still has to borrow.
class borrow_table {
public:
  explicit borrow_table(borrow_config cfg);

  // -- as the lender ------------------------------------------------------------------
  void on_borrow(const std::string& from, const wire_msg::object_borrow& m);
  void on_unborrow(const std::string& from, const wire_msg::object_unborrow& m);
  /// The slot of lent object `k` is done: borrowers waiting for it get it.
  void on_done(const object_key& k);
  /// Objects kept for borrowers now.
  size_t lent() const noexcept { return lent_.size(); }
  /// Borrows of `k` node `node` has now.
  int borrows_of(const object_key& k, const std::string& node) const;

  // -- as a borrower ------------------------------------------------------------------
  /// Asks the owner of `slot`'s object to lend it, as a `type`.
  void borrow(const detail::slot_ptr& slot, const detail::type_descriptor* type);
  /// A borrowed slot of `k` went: its borrow is given back.
  void dropped(const object_key& k);
  void on_borrowed(const std::string& from, wire_msg::object_borrowed& m);
  /// Runs `f` once every borrow asked for so far has been answered (or its owner lost).
  void barrier(std::function<void()> f);
  /// Objects borrowed from other nodes now (with a slot alive here, or asked).
  size_t borrowed() const noexcept { return borrowed_.size(); }

  /// The connection to `node` closed: its borrows are given back, and the objects it
  /// owns that are borrowed here fail if they had not come.
  void lost(const std::string& node, const std::string& why);
  /// The node stops: borrowed slots still pending fail, nothing is kept.
  void stop(const std::string& why);

private:
  struct lent_object {
    detail::slot_ptr slot;
    std::map<std::string, int> borrows;
    /// The value as it travels, once the slot is done; what it holds for pulls.
    std::optional<wire_msg::arg> value;
    std::vector<object_key> held;
    bool watching = false;
  };
  struct borrowed_object {
    std::string owner;
    const detail::type_descriptor* type = nullptr;
    std::vector<std::weak_ptr<detail::object_slot>> slots;
    /// Borrowed slots alive here (each gives its borrow back as it goes).
    uint32_t live = 0;
    /// The borrows asked for and not answered yet, oldest first.
    std::deque<uint64_t> asks;
  };

  void answer(const std::string& to, const object_key& k, lent_object& o, bool ack);
  void let_go(std::map<object_key, lent_object>::iterator i);
  void resolve(const object_key& k, borrowed_object& o,
               const wire_msg::object_borrowed& m);
  void fail(borrowed_object& o, const error& e);
  void answered(uint64_t ask);
  void erase_if_idle(std::map<object_key, borrowed_object>::iterator i);

  borrow_config cfg_;
  std::map<object_key, lent_object> lent_;
  std::map<object_key, borrowed_object> borrowed_;
  uint64_t next_ask_ = 0;
  std::set<uint64_t> outstanding_;
  std::vector<std::pair<uint64_t, std::function<void()>>> barriers_;
};

} // namespace swarm::actors
