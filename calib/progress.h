// progress.h - what a long measurement says it is doing, for its caller to
// show or not.
//
// The calib library never prints: a measurement that runs for seconds tells
// its progress to the caller's function (kvstrata shows it as one line on a
// terminal and nothing otherwise). A NULL struct, or one without a function,
// says nothing.
#ifndef KS_PROGRESS_H
#define KS_PROGRESS_H

struct ks_progress {
    void (*fn)(void *ctx, const char *line); // line NULL: the step is over, the line may go
    void *ctx;
};

// Formats a line ("calib: SSD reads of 4 KiB at queue depth 1") and passes it on.
void ks_progress_say(const struct ks_progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// Says that the step is over (fn with a NULL line).
void ks_progress_done(const struct ks_progress *p);

#endif
