// status.h - status codes shared by every kvstrata library module.
//
// Fallible functions return KS_OK (zero) or a negative code; ks_status_str
// names the code. Constructors return NULL instead. Broken invariants are not
// statuses: they hit KS_ASSERT, which stays on in release builds.
#ifndef KS_STATUS_H
#define KS_STATUS_H

enum ks_status {
    KS_OK = 0,
    KS_EINVAL = -1,   // an argument is out of range or inconsistent
    KS_ENOSPC = -2,   // no page free in any tier that could take the block
    KS_ESTALE = -3,   // a reader's migration generation is out of date
    KS_ESTATE = -4,   // the object is not in a state that allows the call
    KS_ENOMEM = -5,   // an allocation failed
    KS_ECORRUPT = -6, // the invariant checker found a broken invariant
    KS_EIO = -7,      // reading or writing a file failed
};

const char *ks_status_str(int status);

#include <stddef.h>

// An invariant checker's verdict: writes the broken invariant to msg (when
// msg is not NULL and len > 0), printf-style, and returns KS_ECORRUPT.
int ks_corrupt(char *msg, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

// Aborts with file, line and the failed expression; never compiled out.
void ks_assert_fail(const char *expr, const char *file, int line);
#define KS_ASSERT(x) ((x) ? (void)0 : ks_assert_fail(#x, __FILE__, __LINE__))

#endif
