// wake.h - how long a thread idle on a condition variable takes to run again
// after another thread signals it.
//
// ks_wake_run starts one waiter thread and times `samples` wake-ups of it.
// Each round: the waiter announces the round and waits in pthread_cond_wait;
// the caller sees the announcement, takes and drops the mutex (the waiter
// lets go of it only inside pthread_cond_wait, so from then on it waits),
// spins on the clock for `idle` seconds (busy, as a decode thread computing
// while the migration lanes sleep), then, under the mutex, stores the time
// and broadcasts, as the runtime (kernels/runtime/runtime.c) does. The waiter's first
// clock read after pthread_cond_wait returns (the mutex held again) ends the
// sample: a wake-up is that time minus the stored one. A spurious return
// finds its round not yet signalled and waits again, so every sample is a
// real signal. All times are CLOCK_MONOTONIC. Nothing outlives the call: the
// waiter is joined before it returns. The call takes at least samples * idle
// seconds (the caller's spins) plus the wake-ups themselves.
#ifndef KS_WAKE_H
#define KS_WAKE_H

#define KS_WAKE_MAX_IDLE 60.0       // seconds
#define KS_WAKE_MAX_SAMPLES 1000000u

struct ks_wake_params {
    double idle;      // seconds the waiter sleeps before it is signalled, > 0 and <= KS_WAKE_MAX_IDLE
    unsigned samples; // wake-ups timed, 1..KS_WAKE_MAX_SAMPLES
};

// Order statistics of the samples' wake-up times (seconds from the signal to
// the waiter running); p10, median and p90 interpolate linearly between
// neighbouring sorted samples, so min <= p10 <= median <= p90 <= max.
struct ks_wake_result {
    unsigned samples;
    double median, p10, p90, min, max; // seconds
};

// Times p->samples wake-ups after p->idle seconds idle each. KS_OK,
// KS_EINVAL (p out of range; *r zeroed), KS_ENOMEM, or KS_EIO when the waiter
// thread cannot start (nothing is timed then).
int ks_wake_run(const struct ks_wake_params *p, struct ks_wake_result *r);

#endif
