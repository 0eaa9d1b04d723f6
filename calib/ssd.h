// ssd.h - O_DIRECT reads and writes by request size and queue depth, through
// io_uring, on a file in a directory the caller names.
//
// ks_ssd_open creates a file named ks_calib_XXXXXX in the directory with
// O_DIRECT, refusing a filesystem that does not take O_DIRECT (tmpfs among
// them), and fills it with random data (requests to holes would not reach
// the device). ks_ssd_run times one point: qd requests of `bytes` at random
// offsets (aligned to `bytes`) kept in flight, a closed loop: each
// completion issues the next request. The first qd completions are a
// warm-up; the window opens at the batch of completions that ends it and
// closes at the first batch at least `seconds` and at least qd completions
// later, and counts the completions in between, the closing batch's whole
// (qd requests in flight all along); the rest drain untimed. Each
// request in flight has its own memory: 4 KiB pages of which no two are
// neighbours in physical memory, one iovec each (readv / writev), because
// on a virtual disk the number of physically contiguous pieces changes the
// speed several-fold (ssd.c); 2 x qd x bytes of memory, kept for the next
// point; the data read is not looked at. ks_ssd_close fsyncs, closes and
// unlinks the file and frees that memory.
#ifndef KS_SSD_H
#define KS_SSD_H

#include <stddef.h>
#include <stdint.h>

struct ks_ssd;

enum ks_ssd_op { KS_SSD_READ, KS_SSD_WRITE };

struct ks_ssd_point {
    enum ks_ssd_op op;
    size_t bytes;    // per request, a multiple of 4096
    unsigned qd;     // requests in flight, 1..KS_SSD_MAX_QD
    double seconds;  // timed window, at least (and at least qd completions long)
};
#define KS_SSD_MAX_QD 256

struct ks_ssd_result {
    unsigned long long requests; // completed in the timed window
    double elapsed;              // seconds, the timed window
    double t;                    // seconds per request, issue to completion: qd * elapsed / requests
    double bytes_per_s;          // requests * bytes / elapsed
};

// Checks that dir is a directory this process can create a file in, before
// any measurement, so that a mistyped path fails at once (O_DIRECT itself is
// checked by ks_ssd_open). KS_OK, or KS_EINVAL (not a directory) or KS_EIO
// (missing, not writable) with the reason, naming dir, in err.
int ks_ssd_check_dir(const char *dir, char *err, size_t len);

// Opens a benchmark file of file_bytes (a multiple of 4 MiB, >= 4 MiB) in dir,
// seeded by seed. NULL with the reason in err (dir missing or not writable,
// no O_DIRECT, disk full...).
struct ks_ssd *ks_ssd_open(const char *dir, uint64_t file_bytes, uint64_t seed, char *err, size_t len);

// Runs one point. KS_OK, KS_EINVAL (bad point, bytes larger than the file)
// or KS_EIO with the reason in err.
int ks_ssd_run(struct ks_ssd *s, const struct ks_ssd_point *p, struct ks_ssd_result *r, char *err, size_t len);

// The benchmark file's path (valid until ks_ssd_close).
const char *ks_ssd_path(const struct ks_ssd *s);

// Syncs, closes and removes the file; frees s. NULL is a no-op. KS_OK, or
// KS_EIO with the reason in err when the sync or the unlink failed (s is
// freed all the same).
int ks_ssd_close(struct ks_ssd *s, char *err, size_t len);

// The filesystem type and the device that holds dir ("ext4 on /dev/vda"),
// from statfs and /proc/self/mountinfo; "unknown" parts when not found.
void ks_ssd_describe_dir(const char *dir, char *buf, size_t len);

#endif
