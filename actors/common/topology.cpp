#include "actors/common/topology.hpp"

#include <hwloc.h>

#include <algorithm>
#include <thread>

namespace swarm::actors {

topology::topology() {
  hwloc_topology_t t = nullptr;
  if (hwloc_topology_init(&t) != 0 || hwloc_topology_load(t) != 0) {
    if (t) hwloc_topology_destroy(t);
    cores_ = std::max(1u, std::thread::hardware_concurrency());
    return;
  }
  topo_ = t;
  int n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
  if (n <= 0) n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
  cores_ = n > 0 ? static_cast<size_t>(n) : 1;
  if (auto* root = hwloc_get_root_obj(t))
    memory_ = static_cast<size_t>(root->total_memory);
}

topology::~topology() {
  if (topo_) hwloc_topology_destroy(static_cast<hwloc_topology_t>(topo_));
}

bool topology::pin_current_thread(size_t index) const {
  if (!topo_) return false;
  auto t = static_cast<hwloc_topology_t>(topo_);
  auto type =
      hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
  auto* obj = hwloc_get_obj_by_type(t, type, static_cast<unsigned>(index % cores_));
  if (!obj || !obj->cpuset) return false;
  return hwloc_set_cpubind(t, obj->cpuset, HWLOC_CPUBIND_THREAD) == 0;
}

} // namespace swarm::actors
