#pragma once

#include <cstddef>
#include <string>

namespace swarm {

/// A snapshot of one node, for status output and tests.
struct node_stats {
  size_t store_objects = 0;    ///< objects in the object store (not inline ones)
  size_t store_bytes = 0;      ///< their bytes, and those of copies pulled here
  size_t store_capacity = 0;   ///< the store's limit in bytes
  size_t store_rejected = 0;   ///< puts and results refused for lack of room
  size_t queued_tasks = 0;     ///< ready tasks waiting for a worker
  size_t dispatched_tasks = 0; ///< tasks at workers, running or next
  size_t running_tasks = 0;    ///< of those, the ones running now
  size_t workers = 0;          ///< task workers started
  size_t blocked_workers = 0;  ///< workers whose task waits in get/wait
  size_t named_actors = 0;     ///< names in the control store
  size_t control_rows = 0;     ///< rows in its node, job and object tables
  size_t pulled_entries = 0;   ///< values pulled from other nodes it remembers (bounded
                               ///< by those still alive, with slack)
  /// Bytes of copies pulled from other nodes held here, part of `store_bytes`: kept
  /// (secondary copies), still read, or still arriving.
  size_t pulled_bytes = 0;
  /// Memory of freed large values kept to copy new ones into, beside `store_bytes`
  /// within the capacity; given up whenever an object needs the room.
  size_t store_pooled_bytes = 0;
  size_t store_pool_reuses = 0; ///< values copied into kept memory, since the start
  size_t spilled_objects = 0;   ///< objects on disk only now (not in `store_bytes`)
  size_t spilled_bytes = 0;     ///< bytes of their spill files
  size_t spills = 0;            ///< objects moved to disk, since the start
  size_t restores = 0;          ///< spilled objects read back, since the start
  size_t cached_bytes = 0;      ///< copies of other nodes' objects kept after reads
  size_t cache_hits = 0;        ///< reads of other nodes' objects found here
  size_t cache_misses = 0;      ///< reads of other nodes' objects that pulled them
  size_t evictions = 0;         ///< kept copies dropped to make room
  size_t lent_objects = 0;     ///< objects owned here kept for other nodes' borrowed refs
  size_t borrowed_objects = 0; ///< other nodes' objects whose refs are held here
  std::string available;        ///< resources not held by running work
};

} // namespace swarm
