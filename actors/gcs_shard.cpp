#include "actors/gcs_shard.hpp"

#include <caf/all.hpp>

#include "actors/messages.hpp"

namespace swarm::actors {

namespace {

struct gcs_state {
  gcs_shard_config config;
  std::map<std::string, detail::actor_record_ptr> named_actors;
  std::map<std::string, std::map<std::string, table_row>> tables;

  bool owns(const std::string& key) const {
    return shard_of(key, config.count) == config.index;
  }
};

caf::error not_found(const std::string& what) {
  return caf::make_error(caf::sec::runtime_error, what);
}

caf::behavior gcs_shard(caf::stateful_actor<gcs_state>* self, gcs_shard_config cfg) {
  self->state.config = std::move(cfg);
  return {
      [self](register_atom, const std::string& name,
             detail::actor_record_ptr& rec) -> caf::result<bool> {
        if (!self->state.owns(name))
          return not_found("actor name '" + name + "' belongs to another shard");
        // A name whose actor died for good may be taken again.
        auto& slot = self->state.named_actors[name];
        if (slot && !slot->dead()) return false;
        slot = std::move(rec);
        return true;
      },
      [self](lookup_atom,
             const std::string& name) -> caf::result<detail::actor_record_ptr> {
        auto& actors = self->state.named_actors;
        auto i = actors.find(name);
        if (i == actors.end() || i->second->dead())
          return not_found("no live actor is named '" + name + "'");
        return i->second;
      },
      [self](forget_atom, const std::string& name) {
        self->state.named_actors.erase(name);
      },
      [self](lookup_atom, const std::string& table,
             const std::string& name) -> caf::result<std::string> {
        if (table != "function") return not_found("unknown table '" + table + "'");
        auto& fns = self->state.config.functions;
        auto i = fns.find(name);
        if (i == fns.end()) return not_found("no function named '" + name + "'");
        return i->second;
      },
      [self](put_atom, const std::string& table, const std::string& key,
             table_row& row) { self->state.tables[table][key] = std::move(row); },
      [self](erase_atom, const std::string& table, const std::string& key) {
        auto t = self->state.tables.find(table);
        if (t != self->state.tables.end()) t->second.erase(key);
      },
      [self](get_atom, const std::string& table,
             const std::string& key) -> caf::result<table_row> {
        auto& t = self->state.tables[table];
        auto i = t.find(key);
        if (i == t.end()) return not_found("no row '" + key + "' in table '" + table + "'");
        return i->second;
      },
      [self](scan_atom, const std::string& table) {
        std::vector<table_row> rows;
        if (auto t = self->state.tables.find(table); t != self->state.tables.end())
          for (auto& [k, row] : t->second)
            rows.push_back(row);
        return rows;
      },
      [self](stats_atom) {
        size_t rows = 0;
        for (auto& [name, t] : self->state.tables)
          rows += t.size();
        return caf::make_message(self->state.config.functions.size(),
                                 self->state.named_actors.size(), rows);
      },
  };
}

} // namespace

size_t shard_of(const std::string& key, size_t count) {
  // FNV-1a: stable across processes and builds, unlike std::hash.
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return count == 0 ? 0 : static_cast<size_t>(h % count);
}

caf::actor spawn_gcs_shard(caf::actor_system& sys, gcs_shard_config cfg) {
  return sys.spawn(gcs_shard, std::move(cfg));
}

} // namespace swarm::actors
