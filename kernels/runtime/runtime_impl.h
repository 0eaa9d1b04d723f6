// runtime_impl.h - what the runtime's files share (see runtime.h): the run's
// state, its lanes and requests' buffers, and the functions one file calls
// in another's.
//
// Threads: the decode thread (the caller) owns the cache manager; every call
// into it is made there. Lanes only copy bytes: they take a batch, move its
// blocks between arenas and the L3 file, and mark it landed. In GPU mode a
// lane first enqueues the batch's copies on its stream, records the job
// slot's event and marks the job enqueued, then waits for the event and
// marks it landed; the decode thread waits on the host only until a batch it
// needs is enqueued, and makes the decode stream wait for its event. The job
// list, its flags (enqueued included) and the error string are guarded by
// rt.mu.
//
// Files: runtime.c sets a run up, runs the step driver and tears it down;
// tiers.c holds the tiers' memory and writes new blocks; lanes.c moves
// batches; reads.c locates and reads a layer's blocks and launches the
// kernel; ops.c is the step driver's operations. A file that includes this
// header defines _GNU_SOURCE first (O_DIRECT).
#ifndef KS_RUNTIME_IMPL_H
#define KS_RUNTIME_IMPL_H

#include "runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "clock.h"
#include "decode.h"
#include "hist.h"
#include "kernel.h"
#include "rng.h"
#include "selection.h"
#include "step.h"
#include "workload.h"

#define ALIGN 4096
#define RING_DEPTH 64 // io_uring entries per lane
#define STAMP_SLOTS 64 // GPU mode: new blocks made before the decode stream is synchronised
#define KS_ENOSYS_ 1  // copy_batch_gpu: not a GPU copy (L2 <-> L3), take the CPU path

// An admitted request's selection buffers (its ks_active's user state).
// ent is the request's resident-pointer table: per layer and block, where
// the block was when the kernel last read it (page, tier, generation); an
// entry is checked against the block's generation before every read and
// located afresh only when the block has moved since (NO_ENTRY: never read).
struct selbuf {
    uint32_t *sel;      // [layers][cap_blocks] this step's selection per layer (layer 0 only when shared)
    float *mass;        // [layers][cap_blocks]
    uint32_t *n_sel;    // [layers]
    struct ks_loc *ent; // [layers][cap_blocks]
};

#define NO_ENTRY UINT32_MAX

struct rt;

struct lane {
    struct rt *rt;
    pthread_t th;
    struct io_uring ring;
    int ring_ok, started;
    struct iovec iov[RING_DEPTH][2];
    struct CUstream_st *stream; // GPU mode: the lane's copies
    unsigned char *stage;       // GPU mode: pinned, RING_DEPTH blocks between the L3 file and L1
    // GPU mode: the arrays of one batched copy (two halves per block), grown
    // by the lane to the largest batch it has moved
    void **cdst;
    const void **csrc;
    size_t *csize;
    size_t n_copies, cap_copies;
};

// GPU mode: a job slot's event, made once for the slot and recorded by the
// lane that takes the slot's batch, after it has enqueued the copies.
struct job_event {
    struct CUevent_st *ev;
    uint8_t enqueued; // this step's batch in the slot: copies enqueued, event recorded (rt.mu)
    uint8_t waited;   // decode thread: the decode stream waits for it (or will, at the next launch)
};

struct rt {
    const struct ks_scenario *s;
    struct ks_run_result *r;
    struct ks_runtime_extra *x;
    struct ks_step_sizing z;
    struct ks_cache *c;
    struct ks_workload *wl;
    struct ks_selection *sp;
    struct ks_step d;      // the requests, iterations and decode steps (the decode thread's)
    int d_ok;              // d initialised
    // memory
    size_t half;           // bytes of K (or V) of one block
    size_t elems;          // fp16 elements of K (or V) of one block
    uint32_t l1p, scratch; // L1 pages; scratch pages after them
    uint16_t *l1k, *l1v;   // [l1p + scratch][elems]
    unsigned char *l2;     // [l2 pages][2 * half]
    int l3fd;
    char l3path[4096];
    unsigned char *stamp;  // [stamp_slots][2 * half] new blocks' KV made here before their copy
                           // (pinned in GPU mode); ALIGN-aligned for O_DIRECT
    uint32_t stamp_slots;  // 1 in CPU mode, STAMP_SLOTS in GPU mode
    uint16_t *kvtab;       // [3][2 * elems] per value of a block: multiplier (odd), offset, salt
                           // (ks_rt_kv_block)
    int gpu;               // GPU mode: L1 and the kernel buffers on the device, L2 pinned
    int skip_gen_check;    // tests only: trust the table's entries unchecked (a negative control)
    int stale_limited;     // tests only: ... but only stale_left more stale entries (params.stale_reads)
    size_t stale_left;
    uint16_t *kvcheck;     // [2 * elems] a block's KV, made to compare with a page (stale_limited)
    int progress;          // a progress line on stderr
    uint64_t shown;        // requests finished when the progress line was last drawn
    struct CUstream_st *ds; // GPU mode: the decode stream
    struct CUevent_st *k0, *k1; // GPU mode: timing events around a launch's kernel
    unsigned char *dstage; // GPU mode: pinned, one block read from the L3 file for a scratch page
    // lanes and jobs
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    int quit, lane_failed;
    char lane_err[256];
    struct lane lanes[KS_STEP_LANES];
    struct ks_step_job *jobs;
    uint32_t n_jobs, cap_jobs;
    uint32_t layer_reached; // the layer the step has reached (KS_NONE: all of them); where a selection is
                            // made as its layer runs, needed batches of later layers wait for it
    uint32_t *job_of; // [n_blocks] this step's job of a block in flight + 1; 0: none
    uint32_t n_ids;
    struct job_event *jev; // GPU mode: [cap_jev] per job slot
    uint32_t cap_jev;
    uint32_t *pend;        // GPU mode: [cap_jev] job slots the next launch makes the decode stream wait for
    uint32_t n_pend;
    // requests
    struct ks_request_spec drawn; // the workload's next request, drawn
    int have_drawn, wl_done;
    uint64_t in_flight;
    int release_st;             // a release at a finish failed (t->err): reported by the next iteration
    uint32_t cap_blocks;
    // kernel buffers, for up to cap_seqs sequences
    uint32_t cap_seqs;
    float *q, *out, *acc_mass;
    uint32_t *seq_len, *table, *ksel, *kn_sel, *acc_blocks, *n_acc, *missing, *n_missing;
    uint32_t *kreq;        // [cap_seqs] the request of each packed sequence (the launch log's)
    void *ws;
    size_t ws_bytes;
    // GPU mode: device copies of the kernel buffers (the host ones are built, then uploaded);
    // d_table holds a block table per layer, [layers][cap_seqs][cap_blocks], and tshadow what
    // it holds (rows whose tshadow_ok is 0 hold nothing uploaded since it was allocated)
    float *d_q, *d_out, *d_acc_mass;
    uint32_t *d_seq_len, *d_table, *d_ksel, *d_kn_sel, *d_acc_blocks, *d_n_acc, *d_missing, *d_n_missing;
    void *d_ws;
    uint32_t *tshadow;     // [layers][cap_seqs][cap_blocks]
    uint8_t *tshadow_ok;   // [layers][cap_seqs]
    struct ks_loc *locs;   // [cap_locs] a launch's located reads, validated after it
    size_t cap_locs;
    double *step_kernel;   // [n_steps] each step's kernel seconds per block read
    size_t n_steps, cap_steps;
    size_t keep_rows;      // launch log: rows it may keep (params.keep_rows)
    int log_full;          // a launch did not fit: the log stopped
    uint32_t log_layer, log_part; // the last launch's layer and its part
    uint64_t log_step;     // the last launch's step + 1 (0: none yet)
    size_t cap_launches;   // x->launches' room
    double kernel0;        // kernel seconds when the current step's plan was queued
    uint64_t reads0;       // block reads then
    // clock
    double t0, paused, pause_at;
    char err[1024];
};

static inline uint16_t *page_k(const struct rt *t, uint32_t page)
{
    return t->l1k + (size_t)page * t->elems;
}

static inline uint16_t *page_v(const struct rt *t, uint32_t page)
{
    return t->l1v + (size_t)page * t->elems;
}

static inline unsigned char *page_l2(const struct rt *t, uint32_t page)
{
    return t->l2 + (size_t)page * 2 * t->half;
}

static inline off_t page_l3(const struct rt *t, uint32_t page)
{
    return (off_t)page * (off_t)(2 * t->half);
}

static inline int full_io(ssize_t got, size_t want, const char *what, char *err, size_t len)
{
    if (got == (ssize_t)want)
        return KS_OK;
    snprintf(err, len, "%s: %s", what, got < 0 ? strerror(errno) : "short transfer");
    return KS_EIO;
}

// ---- runtime.c ----
double ks_rt_now(const struct rt *t);

void ks_rt_pause(struct rt *t);

void ks_rt_resume(struct rt *t);

int ks_rt_fail(struct rt *t, int st, const char *fmt, const char *what);

// A failed kernel-library call (status st, its reason why as the call
// wrote it, kernel.h) into err, after what the runtime was doing. KS_EIO.
int ks_rt_cuda_fail(char *err, size_t len, const char *what, int st, const char *why);

// ---- tiers.c ----
// Fills blocks [from, to) of every layer of req: they were just created.
// On the GPU it returns once every copy into L1 has completed: a lane may
// move the block, or the kernel read it, right after.
int ks_rt_fill_new(struct rt *t, uint32_t req, uint32_t from, uint32_t to);

// Block (req, l, b)'s KV, 2 * elems fp16 (K then V), into dst.
void ks_rt_kv_block(const struct rt *t, uint32_t req, uint32_t l, uint32_t b, uint16_t *dst);

// Pinned host memory (GPU mode): *p receives bytes of it; with direct, it
// must be ALIGN-aligned (O_DIRECT), checked. KS_OK, or KS_EIO with the
// reason in err (*p then may hold memory to free).
int ks_rt_pinned(void **p, size_t bytes, int direct, const char *what, char *err, size_t len);

// KS_OK when p is ALIGN-aligned, else KS_EIO with a reason naming what.
int ks_rt_direct_aligned(const void *p, const char *what, char *err, size_t len);

// The kernel's host buffers: pinned in GPU mode, malloc in CPU mode; NULL on
// failure. Released with ks_rt_host_free (NULL: a no-op).
void *ks_rt_host_alloc(struct rt *t, size_t bytes);
void ks_rt_host_free(struct rt *t, void *p);

int ks_rt_open_l3(struct rt *t, const char *dir, uint32_t pages, char *err, size_t len);

// The tiers' memory: L1 and L2 arenas (a device pool and pinned memory in
// GPU mode), each allocated once and touched, and the new-block stamp.
int ks_rt_alloc_tiers(struct rt *t, const struct ks_cache_params *cp, char *err, size_t len);

// ---- lanes.c ----
// The migration lanes: a ring each for the L3 file, a stream and a pinned
// stage each in GPU mode, and their threads.
int ks_rt_start_lanes(struct rt *t, char *err, size_t len);

// ---- reads.c ----
// Waits (mu held) until no needed batch for layers <= layer is on its way,
// or job j (>= 0) has landed. Returns KS_EIO when a lane failed.
int ks_rt_wait_landed(struct rt *t, uint32_t layer, int j);

// GPU mode's wait_landed (mu held): waits until every needed batch for
// layers <= layer, or job j (>= 0), has landed or at least been enqueued;
// those not landed yet are noted for the next launch, whose kernel waits for
// them on the device. Returns KS_EIO when a lane failed.
int ks_rt_wait_enqueued(struct rt *t, uint32_t layer, int j);

// GPU mode (mu held, no job running): an event for each of n job slots,
// made once per slot.
int ks_rt_grow_events(struct rt *t, uint32_t n);

void ks_rt_free_device_buffers(struct rt *t);

// Frees the kernel's host buffers (ks_rt_host_free for the pinned ones).
void ks_rt_free_host_buffers(struct rt *t);

// (Re)sizes the kernel buffers for n sequences (host, and device in GPU mode).
int ks_rt_grow_seqs(struct rt *t, uint32_t n);

// One layer's attention for every decoding request, in as few launches as
// the scratch pages allow.
int ks_rt_attend(struct rt *t, uint32_t l, int per_layer);

int ks_rt_note_step(struct rt *t, double per_block);

// ---- ops.c ----
void ks_rt_free_selbuf(struct selbuf *b);

// The step driver's operations over the run t.
struct ks_step_ops ks_rt_step_ops(struct rt *t);

#endif
