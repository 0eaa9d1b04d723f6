// ahead.h - a GPU's next decode step's selections, drawn on a worker thread
// while the current step runs.
//
// Drawing selections (the access model's streams, DSA's scores, synthetic
// attention) is most of a decode step's own work, and it reads nothing but
// the request's selection state: where the policy allows it
// (ks_selection_ahead), the step driver lists, once its step's accesses are
// done, each request that will decode in the next step with the exact step
// and context it will then ask for, and a worker draws those selections
// while the simulation goes on with the other GPUs. The next step takes them
// in place of drawing them; the draws happen in the same order on the same
// streams, so the blocks are the same whoever drew them (the driver asserts
// that each one it takes was drawn for the step and context it needs).
//
// Between ks_step_ahead_start and ks_step_ahead_wait the listed requests'
// selection state is the worker's: the caller must not draw from, close or
// move it. Everything else (the cache manager, the run's result) stays with
// the caller.
#ifndef KS_AHEAD_H
#define KS_AHEAD_H

#include <stddef.h>
#include <stdint.h>

#include "pool.h"
#include "selection.h"

struct ks_step_ahead;

// For a driver whose selections differ by layer (per_layer: one draw per
// request, step and group, group g drawing the model's layer
// ks_step_layer_of(scale, g, request id), sizing.h) or not (one draw). NULL when
// out of memory. Free with ks_step_ahead_free (NULL: no-op), which waits for
// a job in flight.
struct ks_step_ahead *ks_step_ahead_new(struct ks_pool *pool, uint32_t groups, uint32_t scale, int per_layer);
void ks_step_ahead_free(struct ks_step_ahead *x);

// Forgets the last job's selections and starts a new list.
void ks_step_ahead_clear(struct ks_step_ahead *x);
// Lists request `id` (selection state sr, borrowed) for its decode step
// `step` over nb blocks of context. KS_OK or KS_ENOMEM.
int ks_step_ahead_add(struct ks_step_ahead *x, struct ks_selection_req *sr, uint64_t id, uint32_t step, uint32_t nb);
// Hands the list to a worker (nothing when it is empty).
void ks_step_ahead_start(struct ks_step_ahead *x);
// Returns once the job started last has run (at once when none runs).
void ks_step_ahead_wait(struct ks_step_ahead *x);

// Request id's selection in group `layer` (0 when the selection does not
// differ by layer), if it was drawn ahead: 1 with *sel, *mass (valid until the next
// clear) and *k; 0 when it was not listed. A listed request must ask for
// the step and context it was listed with (asserted). A draw that failed
// returns its status (< 0) with its reason in err, in the layer it failed.
int ks_step_ahead_take(struct ks_step_ahead *x, uint64_t id, uint32_t step, uint32_t layer, uint32_t nb,
                       const uint32_t **sel, const float **mass, uint32_t *k, char *err, size_t len);

// Request id's selection in group `layer`, if it was drawn ahead and did
// not fail, without taking it: 1 with *sel and *k, else 0. For fetching
// what its accesses will read.
int ks_step_ahead_peek(const struct ks_step_ahead *x, uint64_t id, uint32_t layer, const uint32_t **sel, uint32_t *k);

// For a driver drawing a request's per-layer selections itself (no worker),
// about to draw group g of `groups`: warms the request's next draws as the
// worker warms its list (ks_selection_warm's stages, each one draw apart),
// within the request; at g == 0 the first draws' earlier stages too. It
// changes no result.
void ks_step_warm_request(const struct ks_selection_req *sr, uint64_t id, uint32_t scale, uint32_t groups,
                          uint32_t g);

#endif
