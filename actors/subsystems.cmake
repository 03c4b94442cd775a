# The subsystems of actors/, lowest first, each with the subsystems it builds on. The
# build (actors/CMakeLists.txt) and the layer check (cmake/check_layers.cmake) both read
# this list: a subsystem may include and link only itself and what it builds on,
# directly or through them, and any subsystem's protocol.hpp (its atoms and messages).
set(swarm_subsystems
  common          # what every system actor shares: common verbs, hwloc topology
  control_store   # the global control store's shards, chains, log and client
  objects         # the object store and manager: values, pulls, spills, replicas
  workers         # task workers on CPUs and GPUs
  scheduling      # the local and global schedulers, placement groups
  user_actors     # hosting users' actors, their directory and restarts
  ownership       # owners: results, lineage, borrows, streams
  observability   # metrics and the dashboard
  node)           # the node: its supervisor, the cluster protocol and membership
set(swarm_subsystem_deps_common "")
set(swarm_subsystem_deps_control_store common)
set(swarm_subsystem_deps_objects common)
set(swarm_subsystem_deps_workers common)
set(swarm_subsystem_deps_scheduling workers)
set(swarm_subsystem_deps_user_actors scheduling)
set(swarm_subsystem_deps_ownership control_store objects user_actors)
set(swarm_subsystem_deps_observability user_actors)
set(swarm_subsystem_deps_node ownership observability)

# swarm_subsystem_closure_<name>: everything <name> builds on, directly or not.
foreach(sub IN LISTS swarm_subsystems)
  set(closure "")
  foreach(dep IN LISTS swarm_subsystem_deps_${sub})
    list(FIND swarm_subsystems "${dep}" at)
    if(at EQUAL -1 OR NOT DEFINED swarm_subsystem_closure_${dep})
      message(FATAL_ERROR "actors/subsystems.cmake: '${sub}' builds on '${dep}', "
                          "which is not a subsystem listed before it")
    endif()
    list(APPEND closure ${dep} ${swarm_subsystem_closure_${dep}})
  endforeach()
  list(REMOVE_DUPLICATES closure)
  set(swarm_subsystem_closure_${sub} "${closure}")
endforeach()
