#pragma once

// Kernels of the CUDA device tests, behind plain C++ functions (built by nvcc from
// cuda_kernels.cu). Each queues its work on `stream` (a cudaStream_t) and returns the
// launch's error name, or an empty string when it launched.

#include <cstddef>
#include <cstdint>
#include <string>

namespace swarm::gpu_test {

/// p[i] = pattern ^ i, for n words; starts after spinning `delay_ms` on the device.
std::string launch_fill(uint32_t* p, size_t n, uint32_t pattern, double delay_ms,
                        void* stream);

/// Writes to an address that is not mapped: an illegal-address fault, which is sticky.
std::string launch_illegal_address(void* stream);

/// A launch with more threads per block than any device allows: refused at launch,
/// with no harm to the context.
std::string launch_bad_configuration(void* stream);

/// The same launch, its error left for whoever asks the runtime next.
void launch_bad_configuration_unchecked(void* stream);

/// Waits for the work on `stream`; the error's name, or empty.
std::string wait_stream(void* stream);

/// The device the calling thread makes current.
int current_device();

/// The device's free and total memory, as the driver reports them.
void memory_info(size_t& free, size_t& total);

} // namespace swarm::gpu_test
