// engine.h - one simulation: a scenario's requests decoded on its platform.
//
// SimGrid owns time and contention; per GPU a step driver (step/step.h)
// runs the iterations and decode steps over that GPU's cache manager, and
// this engine gives it time. Actors, all long-lived:
//   router      (node 0's CPU) releases the workload's requests at their
//               arrival times to the GPUs: in turn, to the least loaded, or
//               by prefix affinity (scenario field `router`);
//   decode      (one per GPU) runs the GPU's step driver: its waits are
//               SimGrid condition waits on the lanes' landings, its modelled
//               work SimGrid sleeps, a layer's attention its modelled time
//               after the reads outside L1 (a miss whose promotion found no
//               room is read where it lies, into a scratch page before its
//               layer: one transfer after the other over its tier's route to
//               the GPU, as the runtime does);
//   lane        (KS_STEP_LANES per GPU, the staging pool) execute migration
//               batches in priority order, each one SimGrid transfer from the
//               source tier's host to the destination tier's host, and mark
//               them landed (the driver confirms them at the step's end);
//   prefill     (disaggregated prefill only: prefill.gpus workers on the
//               pool's host) prefill requests in arrival order and send
//               their KV over the network to the decode GPU's host DRAM.
// The step's cost model (step/cost.h): the host's scheduling cost
// (sched_overhead), a rebuild of the resident-block pointer table
// (table_rebuild) when L1's mapping changed since the last step, the stall
// for needed blocks, the reads outside L1, and per layer the weight bytes /
// HBM bandwidth plus, for each decoding request, its attention: with
// sparse.kernel_time = "trace", the replayed trace's kernel_time for that
// (step, layer) when measured (>= 0), else the profile's kernel-time table
// at its selected blocks, else the KV bytes of its selected tokens / HBM
// bandwidth. Prefill produces the first token; each decode step one more.
// Colocated, a GPU's prefill holds up its decode steps; disaggregated, the
// pool prefills and the prompt's KV lands in L2.
//
// A process runs one simulation (SimGrid initialises once per process).
#ifndef KS_ENGINE_H
#define KS_ENGINE_H

#include <stddef.h>

#include "runresult.h"
#include "scenario.h"

// Every check ks_engine_run makes before it simulates, without simulating:
// the cache's sizing, the workload and its traces, the selection policy and
// its trace or model, the Lua policies, the platform. KS_OK, or the status
// and reason run would give (what `scenario check` reports).
int ks_engine_check(const struct ks_scenario *s, char *err, size_t len);

// Runs the scenario: until its duration, or, with workload.requests, until
// they have all finished (the duration is then a limit, and r->truncated
// says whether it was reached first). KS_OK with *r filled (release with
// ks_run_result_fini), or a status with the reason in err. After ks_engine_stop, KS_ESTATE with
// "interrupted by SIGNAL" in err. SimGrid's own SIGINT handler (which calls
// exit() from inside the signal) is not left in place: the caller's SIGINT
// disposition stands.
//
// threads: the threads the run may use, the simulation's own included (0:
// ks_engine_threads_default()). Beyond one, where the sparse policy allows
// it (ks_selection_ahead: topk, retrieval, model, dsa), threads - 1 workers
// draw each GPU's next decode step's selections while its current step runs
// (step/ahead.h); everything else, Lua policies included, stays on the
// simulation's thread. The result is the same for any count.
int ks_engine_run(const struct ks_scenario *s, unsigned threads, struct ks_run_result *r, char *err, size_t len);

// The threads a run uses by default: the online CPUs, at most
// KS_ENGINE_THREADS. The simulation's thread stays the bottleneck: drawing
// the selections is a third of a model-policy cluster run's work (README
// "kvstrata run"), and with 3 workers the simulation never had to draw one
// itself.
#define KS_ENGINE_THREADS 4
unsigned ks_engine_threads_default(void);

// Asks the running simulation (or the next one) to stop: each GPU stops at
// its next iteration, the router at its next request. Only stores sig, so a
// signal handler may call it.
void ks_engine_stop(int sig);

// The signal ks_engine_stop was given, 0 when none.
int ks_engine_stopped(void);

#endif
