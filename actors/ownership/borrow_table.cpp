#include "actors/ownership/borrow_table.hpp"

#include <algorithm>

#include "framework/detail/wire_convert.hpp"

namespace swarm::actors {

namespace {

using detail::from_wire;
using detail::to_wire;
using state = wire_msg::object_borrowed::state_type;

wire_msg::object_ref_id wire_id(const object_key& k) {
  return {k.first, k.second};
}

std::string name_of(const object_key& k) {
  return object_id{k.first, k.second}.to_string();
}

} // namespace

borrow_table::borrow_table(borrow_config cfg) : cfg_(std::move(cfg)) {}

// -- as the lender --------------------------------------------------------------------

void borrow_table::on_borrow(const std::string& from, const wire_msg::object_borrow& m) {
  auto k = detail::key_of(m.id);
  auto i = lent_.find(k);
  if (i == lent_.end()) {
    auto slot = cfg_.find ? cfg_.find(k) : nullptr;
    if (!slot) {
      wire_msg::object_borrowed out;
      out.id = m.id;
      out.ack = true;
      out.state = state::failed;
      out.error = to_wire(error{errc::object_freed,
                                "object " + name_of(k) +
                                    " was freed on its owner, node '" + cfg_.node +
                                    "', before node '" + from + "' read a ref of it"});
      return cfg_.send(from, std::move(out));
    }
    i = lent_.emplace(k, lent_object{std::move(slot), {}, std::nullopt, {}, false}).first;
  }
  ++i->second.borrows[from];
  answer(from, k, i->second, true);
}

void borrow_table::answer(const std::string& to, const object_key& k, lent_object& o,
                          bool ack) {
  wire_msg::object_borrowed out;
  out.id = wire_id(k);
  out.ack = ack;
  auto& slot = *o.slot;
  if (!slot.done()) {
    out.state = state::pending;
    if (!o.watching && cfg_.notify_done) {
      o.watching = true;
      slot.when_done([notify = cfg_.notify_done, k] { notify(k); });
    }
  } else if (auto v = slot.read(); !v) {
    out.state = state::failed;
    out.error = to_wire(v.err());
  } else {
    if (!o.value) o.value = cfg_.export_value(o.slot, o.held);
    out.state = state::ready;
    out.value = *o.value;
  }
  cfg_.send(to, std::move(out));
}

void borrow_table::on_done(const object_key& k) {
  auto i = lent_.find(k);
  if (i == lent_.end()) return;
  for (auto& b : i->second.borrows)
    answer(b.first, k, i->second, false);
}

void borrow_table::on_unborrow(const std::string& from,
                               const wire_msg::object_unborrow& m) {
  auto i = lent_.find(detail::key_of(m.id));
  if (i == lent_.end()) return;
  auto b = i->second.borrows.find(from);
  if (b == i->second.borrows.end()) return;
  if (--b->second <= 0) i->second.borrows.erase(b);
  if (i->second.borrows.empty()) let_go(i);
}

int borrow_table::borrows_of(const object_key& k, const std::string& node) const {
  auto i = lent_.find(k);
  if (i == lent_.end()) return 0;
  auto b = i->second.borrows.find(node);
  return b == i->second.borrows.end() ? 0 : b->second;
}

void borrow_table::let_go(std::map<object_key, lent_object>::iterator i) {
  if (!i->second.held.empty() && cfg_.release) cfg_.release(std::move(i->second.held));
  lent_.erase(i);
}

// -- as a borrower --------------------------------------------------------------------

void borrow_table::borrow(const detail::slot_ptr& slot,
                          const detail::type_descriptor* type) {
  auto k = detail::key_of(slot->id());
  auto& o = borrowed_[k];
  if (o.owner.empty()) o.owner = owner_node_of(k, cfg_.nodes, cfg_.joined);
  o.type = type;
  o.slots.erase(
      std::remove_if(o.slots.begin(), o.slots.end(), [](auto& w) { return w.expired(); }),
      o.slots.end());
  o.slots.push_back(slot);
  ++o.live;
  auto ask = next_ask_++;
  o.asks.push_back(ask);
  outstanding_.insert(ask);
  cfg_.send(o.owner, wire_msg::object_borrow{wire_id(k)});
}

void borrow_table::dropped(const object_key& k) {
  auto i = borrowed_.find(k);
  if (i == borrowed_.end() || i->second.live == 0) return;
  --i->second.live;
  cfg_.send(i->second.owner, wire_msg::object_unborrow{wire_id(k)});
  erase_if_idle(i);
}

void borrow_table::on_borrowed(const std::string& from, wire_msg::object_borrowed& m) {
  auto i = borrowed_.find(detail::key_of(m.id));
  if (i == borrowed_.end() || i->second.owner != from) return;
  auto& o = i->second;
  if (m.ack && !o.asks.empty()) {
    auto ask = o.asks.front();
    o.asks.pop_front();
    answered(ask);
  }
  if (m.state == state::ready)
    resolve(i->first, o, m);
  else if (m.state == state::failed)
    fail(o, from_wire(m.error));
  erase_if_idle(i);
}

void borrow_table::resolve(const object_key& k, borrowed_object& o,
                           const wire_msg::object_borrowed& m) {
  std::vector<std::weak_ptr<detail::object_slot>> waiting;
  for (auto& w : o.slots)
    if (auto s = w.lock(); s && !s->done()) waiting.push_back(w);
  if (waiting.empty()) return;
  auto set = [waiting, k, owner = o.owner](result<detail::boxed_value> v) {
    for (auto& w : waiting)
      if (auto s = w.lock()) {
        if (v)
          s->set_value(*v);
        else
          s->set_error({v.err().code, "reading object " + name_of(k) + " of node '" +
                                          owner + "': " + v.err().message});
      }
  };
  if (auto* v = std::get_if<wire_msg::value>(&m.value)) {
    auto before = cfg_.borrows_made ? cfg_.borrows_made() : 0;
    auto d = detail::decode(*v, o.type, cfg_.values);
    // The refs inside are known to their owners before anyone here holds them.
    if (d && cfg_.borrows_made && cfg_.borrows_made() != before && cfg_.after_borrows)
      return cfg_.after_borrows([set, d]() mutable { set(std::move(d)); });
    return set(std::move(d));
  }
  cfg_.fetch(std::get<wire_msg::remote_ref>(m.value), o.type, std::move(set));
}

void borrow_table::fail(borrowed_object& o, const error& e) {
  for (auto& w : o.slots)
    if (auto s = w.lock()) s->set_error(e);
}

void borrow_table::barrier(std::function<void()> f) {
  if (outstanding_.empty()) return f();
  barriers_.emplace_back(next_ask_, std::move(f));
}

void borrow_table::answered(uint64_t ask) {
  outstanding_.erase(ask);
  auto oldest = outstanding_.empty() ? next_ask_ : *outstanding_.begin();
  std::vector<std::function<void()>> due;
  for (auto b = barriers_.begin(); b != barriers_.end();) {
    if (b->first <= oldest) {
      due.push_back(std::move(b->second));
      b = barriers_.erase(b);
    } else {
      ++b;
    }
  }
  for (auto& f : due)
    f();
}

void borrow_table::erase_if_idle(std::map<object_key, borrowed_object>::iterator i) {
  if (i->second.live == 0 && i->second.asks.empty()) borrowed_.erase(i);
}

// -- both -------------------------------------------------------------------------------

void borrow_table::lost(const std::string& node, const std::string& why) {
  for (auto i = lent_.begin(); i != lent_.end();) {
    auto next = std::next(i);
    if (i->second.borrows.erase(node) > 0 && i->second.borrows.empty()) let_go(i);
    i = next;
  }
  std::vector<uint64_t> gone;
  for (auto i = borrowed_.begin(); i != borrowed_.end();) {
    if (i->second.owner != node) {
      ++i;
      continue;
    }
    gone.insert(gone.end(), i->second.asks.begin(), i->second.asks.end());
    fail(i->second,
         {errc::owner_died, "object " + name_of(i->first) + "'s owner, node '" + node +
                                "', was lost before its value reached " + "node '" +
                                cfg_.node + "': " + why});
    i = borrowed_.erase(i);
  }
  for (auto ask : gone)
    answered(ask);
}

void borrow_table::stop(const std::string& why) {
  for (auto& [k, o] : borrowed_)
    fail(o, {errc::runtime_stopped, "node '" + cfg_.node + "' stopped before borrowed " +
                                        "object " + name_of(k) + " came: " + why});
  borrowed_.clear();
  lent_.clear();
  outstanding_.clear();
  barriers_.clear();
}

} // namespace swarm::actors
