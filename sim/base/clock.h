// clock.h - the monotonic clock, in seconds, for measuring wall time.
//
// CLOCK_MONOTONIC never steps back when the system time is set, so
// differences of two readings are durations; a single reading means nothing.
// Simulated time never comes from here. Declared for C++ too (calib's
// CUDA files call it).
#ifndef KS_CLOCK_H
#define KS_CLOCK_H

#ifdef __cplusplus
extern "C" {
#endif

// Seconds on CLOCK_MONOTONIC (nanosecond resolution where the system has it).
double ks_clock_mono(void);

#ifdef __cplusplus
}
#endif

#endif
