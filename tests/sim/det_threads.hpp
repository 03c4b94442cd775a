#pragma once

// A deterministic schedule for every thread of this process, in virtual time: the
// simulation's way to run real cluster nodes (their actor systems, timers, detached
// actors, the drivers' threads) so that a seed replays the same run.
//
// Once `start` is called, one thread runs at a time. The thread running hands the turn
// on only where it would block or wait (a mutex held by another, a condition variable,
// a sleep, a yield, a join), and now and then at a mutex it takes, so that each seed
// tries another interleaving; the thread that runs next is drawn from the seed among
// those that can. Mutexes, condition variables, read-write locks, futexes, sleeps and
// the clocks are the schedule's (det_libc.cpp defines the C library's pthread, time and
// syscall functions in the executable, which exports them, so every library's calls
// land there first): no thread waits in real time, and
// time moves only as the schedule says, a little with every hand-over, and to the next
// deadline when every thread waits. A thread that blocks in a way this file cannot see
// (a futex of its own, a socket) stops the run: the watchdog says so.
//
// Start it in a process with one thread (a child forked for the run): threads that
// exist before it are not scheduled.

#include <cstdint>
#include <string>

namespace swarm::sim::det {

/// Starts the schedule, drawn from `seed`, in virtual time. The calling thread runs.
void start(uint64_t seed);

/// Whether the schedule runs in this process.
bool running();

/// Hand-overs so far, and the virtual seconds since `start`.
uint64_t switches();
double virtual_seconds();

/// Mixes `what` into the run's fingerprint (what happened, in order: equal runs, equal
/// fingerprints), and the fingerprint so far.
void observe(const std::string& what);
uint64_t fingerprint();

} // namespace swarm::sim::det
