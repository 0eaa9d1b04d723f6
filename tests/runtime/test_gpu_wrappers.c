// test_gpu_wrappers.c - the stream, event, copy and pinned-memory wrappers of
// kernels/kernel.h that the runtime's GPU mode is built on, each tested
// alone on streams of its own (never the default stream).
//
// Without a device every wrapper must answer KS_KERNEL_ENODEV with a reason
// in err (that runs everywhere); then the test exits 77 (CTest: skipped).
// With one: pinned memory is page-aligned (O_DIRECT); a copy chain host ->
// device -> device -> host on one stream returns the bytes; a batched copy
// of scattered pieces lands every piece where it was sent; an event
// recorded after a copy on one stream makes a second stream's copy wait for
// it on the device; timing events around a copy give a positive time, and
// events made without timing refuse to give one.
// It lives with the runtime's tests because the runtime's GPU mode is what
// uses these wrappers (tests/kernels holds the kernels' own).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "kernel.h"

#define BIG (64u << 20) // bytes: a copy long enough to be in flight when the next call is made

// st is KS_KERNEL_OK, else the test fails with what and the reason.
static void ok(int st, const char *what, const char *why)
{
    if (st != KS_KERNEL_OK)
        fail_msg("%s: %s (%s)", what, ks_kernel_status_str(st), why);
}

// A wrapper's answer without a device: ENODEV and a reason.
static void nodev(int st, const char *what, const char *why)
{
    if (st != KS_KERNEL_ENODEV || why[0] == '\0')
        fail_msg("%s without a device: %s, reason \"%s\" (want KS_KERNEL_ENODEV and a reason)", what,
                 ks_kernel_status_str(st), why);
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        p[i] = (unsigned char)(x >> 24);
    }
}

// Every wrapper, with no device to answer.
static void no_device_answers_enodev(void **state)
{
    (void)state;
    char why[KS_KERNEL_ERR_LEN];
    unsigned char host[64];
    void *p = host, *dst[1] = {host};
    const void *src[1] = {host};
    size_t size[1] = {sizeof host};
    struct CUstream_st *s = (struct CUstream_st *)host;
    struct CUevent_st *e = (struct CUevent_st *)host;
    double sec = 1;
#define NODEV(call, name) do { why[0] = '\0'; nodev((call), name, why); } while (0)
    NODEV(ks_stream_new(&s, why, sizeof why), "ks_stream_new");
    assert_null(s);
    NODEV(ks_stream_sync(NULL, why, sizeof why), "ks_stream_sync");
    NODEV(ks_pinned_alloc(&p, 4096, why, sizeof why), "ks_pinned_alloc");
    assert_null(p);
    NODEV(ks_copy_async(host, host + 32, 32, NULL, why, sizeof why), "ks_copy_async");
    NODEV(ks_copy_batch_async(dst, src, size, 1, NULL, why, sizeof why), "ks_copy_batch_async");
    NODEV(ks_event_new(&e, why, sizeof why), "ks_event_new");
    assert_null(e);
    e = (struct CUevent_st *)host;
    NODEV(ks_event_new_timing(&e, why, sizeof why), "ks_event_new_timing");
    assert_null(e);
    NODEV(ks_event_record(NULL, NULL, why, sizeof why), "ks_event_record");
    NODEV(ks_event_stream_wait(NULL, NULL, why, sizeof why), "ks_event_stream_wait");
    NODEV(ks_event_sync(NULL, why, sizeof why), "ks_event_sync");
    NODEV(ks_event_elapsed(&sec, NULL, NULL, why, sizeof why), "ks_event_elapsed");
    assert_true(sec == 0);
    NODEV(ks_devbuf_alloc(&p, 64, why, sizeof why), "ks_devbuf_alloc");
    NODEV(ks_devbuf_sync(why, sizeof why), "ks_devbuf_sync");
#undef NODEV
    // the releases take NULL
    ks_stream_free(NULL);
    ks_event_free(NULL);
    ks_pinned_free(NULL);
    ks_devbuf_free(NULL);
}

// Pinned memory, and a chain of copies on one stream of its own.
static void copies_on_a_stream(void **state)
{
    (void)state;
    char why[KS_KERNEL_ERR_LEN] = "";
    unsigned char *a, *b;
    void *d1, *d2;
    struct CUstream_st *s;
    ok(ks_pinned_alloc((void **)&a, BIG, why, sizeof why), "ks_pinned_alloc", why);
    ok(ks_pinned_alloc((void **)&b, BIG, why, sizeof why), "ks_pinned_alloc", why);
    assert_int_equal((uintptr_t)a % 4096, 0); // the runtime's O_DIRECT stages rely on it (and check it)
    assert_int_equal((uintptr_t)b % 4096, 0);
    // small sizes too: cudaHostAlloc carves these out of a pool, unaligned
    // (a lane's 24 KiB stage came at ...ac00 on an H200)
    const size_t small[] = {1, 100, 3000, 4096, 5000, 24576};
    void *sp[sizeof small / sizeof *small];
    for (size_t i = 0; i < sizeof small / sizeof *small; i++) {
        ok(ks_pinned_alloc(&sp[i], small[i], why, sizeof why), "ks_pinned_alloc (small)", why);
        assert_int_equal((uintptr_t)sp[i] % 4096, 0);
        memset(sp[i], 0x5a, small[i]);
    }
    for (size_t i = 0; i < sizeof small / sizeof *small; i++)
        ks_pinned_free(sp[i]);
    ok(ks_devbuf_alloc(&d1, BIG, why, sizeof why), "ks_devbuf_alloc", why);
    ok(ks_devbuf_alloc(&d2, BIG, why, sizeof why), "ks_devbuf_alloc", why);
    ok(ks_stream_new(&s, why, sizeof why), "ks_stream_new", why);
    assert_non_null(s);
    fill(a, BIG, 1);
    memset(b, 0, BIG);
    ok(ks_copy_async(d1, a, BIG, s, why, sizeof why), "host to device", why);
    ok(ks_copy_async(d2, d1, BIG, s, why, sizeof why), "device to device", why);
    ok(ks_copy_async(b, d2, BIG, s, why, sizeof why), "device to host", why);
    ok(ks_copy_async(b, d2, 0, s, why, sizeof why), "an empty copy", why);
    ok(ks_stream_sync(s, why, sizeof why), "ks_stream_sync", why);
    assert_memory_equal(a, b, BIG);
    ks_stream_free(s);
    ks_devbuf_free(d1);
    ks_devbuf_free(d2);
    ks_pinned_free(a);
    ks_pinned_free(b);
}

// A batched copy of scattered pieces, up and back, in reversed order.
static void batched_copy(void **state)
{
    (void)state;
    enum { N = 96, PIECE = 4096 };
    char why[KS_KERNEL_ERR_LEN] = "";
    unsigned char *h, *back;
    void *d;
    struct CUstream_st *s;
    ok(ks_pinned_alloc((void **)&h, N * PIECE, why, sizeof why), "ks_pinned_alloc", why);
    ok(ks_pinned_alloc((void **)&back, N * PIECE, why, sizeof why), "ks_pinned_alloc", why);
    ok(ks_devbuf_alloc(&d, N * PIECE, why, sizeof why), "ks_devbuf_alloc", why);
    ok(ks_stream_new(&s, why, sizeof why), "ks_stream_new", why);
    fill(h, N * PIECE, 2);
    memset(back, 0, N * PIECE);
    void *dst[N];
    const void *src[N];
    size_t size[N];
    for (size_t i = 0; i < N; i++) { // piece i to slot (7 i + 3) mod N, a permutation (7 and 96 are coprime)
        dst[i] = (unsigned char *)d + (7 * i + 3) % N * PIECE;
        src[i] = h + i * PIECE;
        size[i] = PIECE - (i % 3) * 512; // unequal sizes
    }
    ok(ks_copy_batch_async(dst, src, size, N, s, why, sizeof why), "batch up", why);
    ok(ks_copy_batch_async(dst, src, size, 0, s, why, sizeof why), "an empty batch", why);
    void *bdst[N];
    const void *bsrc[N];
    for (size_t i = 0; i < N; i++) {
        bdst[N - 1 - i] = back + i * PIECE;
        bsrc[N - 1 - i] = dst[i];
    }
    size_t bsize[N];
    for (size_t i = 0; i < N; i++)
        bsize[N - 1 - i] = size[i];
    ok(ks_copy_batch_async(bdst, bsrc, bsize, N, s, why, sizeof why), "batch back", why);
    ok(ks_stream_sync(s, why, sizeof why), "ks_stream_sync", why);
    for (size_t i = 0; i < N; i++)
        assert_memory_equal(back + i * PIECE, h + i * PIECE, size[i]);
    ks_stream_free(s);
    ks_devbuf_free(d);
    ks_pinned_free(h);
    ks_pinned_free(back);
}

// An event orders two streams on the device: s2's download waits for s1's
// upload (a long one, still running when the wait is enqueued) without the
// host waiting; timing events measure the upload.
static void events_order_streams(void **state)
{
    (void)state;
    char why[KS_KERNEL_ERR_LEN] = "";
    unsigned char *a, *b;
    void *d;
    struct CUstream_st *s1, *s2;
    struct CUevent_st *e, *t0, *t1;
    ok(ks_pinned_alloc((void **)&a, BIG, why, sizeof why), "ks_pinned_alloc", why);
    ok(ks_pinned_alloc((void **)&b, BIG, why, sizeof why), "ks_pinned_alloc", why);
    ok(ks_devbuf_alloc(&d, BIG, why, sizeof why), "ks_devbuf_alloc", why);
    ok(ks_stream_new(&s1, why, sizeof why), "ks_stream_new", why);
    ok(ks_stream_new(&s2, why, sizeof why), "ks_stream_new", why);
    ok(ks_event_new(&e, why, sizeof why), "ks_event_new", why);
    ok(ks_event_new_timing(&t0, why, sizeof why), "ks_event_new_timing", why);
    ok(ks_event_new_timing(&t1, why, sizeof why), "ks_event_new_timing", why);
    for (unsigned round = 0; round < 4; round++) {
        fill(a, BIG, 10 + round);
        memset(b, 0, BIG);
        ok(ks_event_record(t0, s1, why, sizeof why), "ks_event_record", why);
        ok(ks_copy_async(d, a, BIG, s1, why, sizeof why), "upload", why);
        ok(ks_event_record(t1, s1, why, sizeof why), "ks_event_record", why);
        ok(ks_event_record(e, s1, why, sizeof why), "ks_event_record", why);
        ok(ks_event_stream_wait(s2, e, why, sizeof why), "ks_event_stream_wait", why);
        ok(ks_copy_async(b, d, BIG, s2, why, sizeof why), "download", why);
        ok(ks_stream_sync(s2, why, sizeof why), "ks_stream_sync", why);
        assert_memory_equal(a, b, BIG);
        ok(ks_event_sync(t1, why, sizeof why), "ks_event_sync", why);
        double sec = 0;
        ok(ks_event_elapsed(&sec, t0, t1, why, sizeof why), "ks_event_elapsed", why);
        assert_true(sec > 0 && sec < 10);
        if (round == 0)
            printf("64 MiB upload: %.3f ms by events\n", sec * 1e3);
    }
    // an event made without timing gives no time, and says why
    double sec = 1;
    why[0] = '\0';
    assert_int_equal(ks_event_elapsed(&sec, e, e, why, sizeof why), KS_KERNEL_ECUDA);
    assert_true(why[0] != '\0' && sec == 0);
    ks_event_free(e);
    ks_event_free(t0);
    ks_event_free(t1);
    ks_stream_free(s1);
    ks_stream_free(s2);
    ks_devbuf_free(d);
    ks_pinned_free(a);
    ks_pinned_free(b);
}

int main(void)
{
    char why[KS_KERNEL_ERR_LEN] = "";
    if (ks_device_count(why, sizeof why) <= 0) {
        const struct CMUnitTest none[] = {cmocka_unit_test(no_device_answers_enodev)};
        if (cmocka_run_group_tests(none, NULL, NULL) != 0)
            return 1;
        printf("no GPU (%s): every wrapper answered KS_KERNEL_ENODEV with a reason; skipped\n", why);
        return KS_TEST_SKIP_CODE;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(copies_on_a_stream),
        cmocka_unit_test(batched_copy),
        cmocka_unit_test(events_order_streams),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
