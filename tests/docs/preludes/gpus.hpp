// The names of the fragments of docs/guide/gpus.md.
#pragma once

#include <cstddef>

#include <swarm/swarm.hpp>

// As in examples/gpu_matmul_kernel.cu: a kernel launch behind a plain C++ function.
void launch_my_kernel(const float* in, float* out, size_t n, void* stream);

#define SWARM_FRAGMENT_PARAMETERS swarm::application& app
