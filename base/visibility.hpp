#pragma once

/// Marks a declaration of an internal layer (actors/, gpu/) that libswarm.so still
/// exports: in a shared build those layers are compiled with hidden visibility, so only
/// the public API and these entry points of the `swarm` tool's own benchmarks are seen
/// from outside the library. A static build exports everything, as always.
#define SWARM_EXPORT __attribute__((visibility("default")))
