#pragma once

/// Everything a Swarm program needs: include this one header.

#include "base/error.hpp"
#include "base/result.hpp"
#include "framework/actor.hpp"
#include "framework/actor_handle.hpp"
#include "framework/application.hpp"
#include "framework/cluster.hpp"
#include "framework/context.hpp"
#include "framework/device_buffer.hpp"
#include "framework/latency.hpp"
#include "framework/local_cluster.hpp"
#include "framework/object_ref.hpp"
#include "framework/options.hpp"
#include "framework/pipeline.hpp"
#include "framework/placement_group.hpp"
#include "framework/resources.hpp"
#include "framework/runtime.hpp"
#include "framework/runtime_config.hpp"
#include "framework/stream.hpp"
#include "framework/version.hpp"
