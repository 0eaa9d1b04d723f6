// hostile_gen.c - writes the damaged traces and results of
// tests/fixtures/hostile/ that the HDF5 API can make (issue 16, class 5):
// sizes, counts and signs a reader must refuse by name before it allocates.
// The bit-flipped files found by fuzzing (trace_flip_*.h5) are kept as found.
//
// Usage: hostile_gen DIR   (writes DIR/trace_*.h5 and DIR/result_*.h5)
//        hostile_gen --ratio DIR   (writes DIR/ratio_at.h5 and DIR/ratio_over.h5, below)
#define _POSIX_C_SOURCE 200809L // truncate

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHECK(x)                                                                                                   \
    do {                                                                                                           \
        if ((x) < 0) {                                                                                             \
            fprintf(stderr, "hostile_gen: %s:%d: %s failed\n", __FILE__, __LINE__, #x);                         \
            exit(1);                                                                                               \
        }                                                                                                          \
    } while (0)

static void attr_int(hid_t loc, const char *name, long long v)
{
    hid_t sp = H5Screate(H5S_SCALAR), a = H5Acreate2(loc, name, H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(a);
    CHECK(H5Awrite(a, H5T_NATIVE_LLONG, &v));
    H5Aclose(a);
    H5Sclose(sp);
}

static void attr_str(hid_t loc, const char *name, const char *v)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, strlen(v) + 1);
    hid_t sp = H5Screate(H5S_SCALAR), a = H5Acreate2(loc, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(a);
    CHECK(H5Awrite(a, t, v));
    H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(t);
}

// A 1-D table of `type` compressed in chunks of `chunk` rows, with `rows`
// rows claimed and the first `n` of them written from `data`.
static void table_chunked(hid_t f, const char *name, hid_t type, hsize_t rows, hsize_t chunk, const void *data,
                          hsize_t n)
{
    hsize_t max = H5S_UNLIMITED;
    hid_t sp = H5Screate_simple(1, &rows, &max), pl = H5Pcreate(H5P_DATASET_CREATE);
    CHECK(H5Pset_chunk(pl, 1, &chunk));
    CHECK(H5Pset_deflate(pl, 4));
    hid_t d = H5Dcreate2(f, name, type, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
    CHECK(d);
    if (n) {
        hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, &n, NULL);
        hsize_t start = 0;
        CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &n, NULL));
        CHECK(H5Dwrite(d, type, ms, fs, H5P_DEFAULT, data));
        H5Sclose(ms);
        H5Sclose(fs);
    }
    H5Dclose(d);
    H5Pclose(pl);
    H5Sclose(sp);
}

// The same in chunks of 64 rows.
static void table(hid_t f, const char *name, hid_t type, hsize_t rows, const void *data, hsize_t n)
{
    table_chunked(f, name, type, rows, 64, data, n);
}

// ---- traces ---------------------------------------------------------------------------

struct step {
    int32_t request; // signed on purpose: -1 must be refused, not read as 0
    uint32_t step, layer, context;
    uint64_t first;
    uint32_t n;
    double kernel_time;
};
struct sel {
    uint32_t block;
    float mass;
};

static hid_t step_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(struct step));
    H5Tinsert(t, "request", offsetof(struct step, request), H5T_NATIVE_INT32);
    H5Tinsert(t, "step", offsetof(struct step, step), H5T_NATIVE_UINT32);
    H5Tinsert(t, "layer", offsetof(struct step, layer), H5T_NATIVE_UINT32);
    H5Tinsert(t, "context", offsetof(struct step, context), H5T_NATIVE_UINT32);
    H5Tinsert(t, "first", offsetof(struct step, first), H5T_NATIVE_UINT64);
    H5Tinsert(t, "n", offsetof(struct step, n), H5T_NATIVE_UINT32);
    H5Tinsert(t, "kernel_time", offsetof(struct step, kernel_time), H5T_NATIVE_DOUBLE);
    return t;
}

static hid_t sel_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(struct sel));
    H5Tinsert(t, "block", offsetof(struct sel, block), H5T_NATIVE_UINT32);
    H5Tinsert(t, "mass", offsetof(struct sel, mass), H5T_NATIVE_FLOAT);
    return t;
}

// A trace's attributes: its format, shape and source.
static void trace_attrs(hid_t f, long long layers, long long block_size)
{
    attr_str(f, "format", "kvstrata-trace");
    attr_int(f, "version", 1);
    attr_int(f, "block_size", block_size);
    attr_int(f, "layers", layers);
    attr_int(f, "kv_heads", 8);
    attr_int(f, "q_heads", 32);
    attr_int(f, "head_dim", 128);
    attr_str(f, "dtype", "fp16");
    attr_str(f, "source", "tests/trace/hostile_gen.c");
}

// A one-layer trace: attributes, then /steps (rows claimed, records given)
// and /selected (one block per record).
static void trace(const char *dir, const char *name, long long layers, long long block_size, hsize_t rows,
                  const struct step *recs, hsize_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(f);
    trace_attrs(f, layers, block_size);
    hid_t st = step_type(), se = sel_type();
    table(f, "/steps", st, rows, recs, n);
    struct sel s[4] = {{0, 1.0f}, {0, 1.0f}, {0, 1.0f}, {0, 1.0f}};
    table(f, "/selected", se, n, s, n);
    H5Tclose(st);
    H5Tclose(se);
    H5Fclose(f);
}

// The bound on a compressed table's claimed expansion (README "Writing and
// reading files safely": "the file's size (x 1100 when compressed)";
// sim/results/h5read.c, extent_ok: a filtered table may claim at most
// file_bytes / record_bytes x 1100 rows). One decode step (a context of 64
// tokens) selects row 0 of a deflated /selected of 8-byte rows that claims
// RATIO_ROWS = 2048 x 1100 = 2252800 rows, written only as far as its first
// chunk (the rest read as the fill value; rows no step selects are not
// looked at). HDF5 writes about 9 KB; the file is padded with zero bytes
// past HDF5's end of file to `pad_to`: 16384 bytes (2048 rows of 8 bytes,
// x 1100: accepted) or 16383 (2047 x 1100 = 2251700 < RATIO_ROWS: refused).
enum { RATIO_FILE = 16384, RATIO = 1100, RATIO_CHUNK = 1024 };
#define RATIO_ROWS ((hsize_t)RATIO_FILE / sizeof(struct sel) * RATIO)

static void ratio_trace(const char *dir, const char *name, off_t pad_to)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(f);
    trace_attrs(f, 1, 16);
    hid_t st = step_type(), se = sel_type();
    struct step s = {.request = 0, .step = 0, .layer = 0, .context = 64, .first = 0, .n = 1, .kernel_time = -1};
    table(f, "/steps", st, 1, &s, 1);
    static struct sel rows[RATIO_CHUNK]; // block 0 at mass 1, then the fill value's rows
    rows[0] = (struct sel){0, 1.0f};
    table_chunked(f, "/selected", se, RATIO_ROWS, RATIO_CHUNK, rows, RATIO_CHUNK);
    H5Tclose(st);
    H5Tclose(se);
    CHECK(H5Fclose(f));
    struct stat sb;
    CHECK(stat(path, &sb));
    if (sb.st_size > pad_to) {
        fprintf(stderr, "hostile_gen: %s: HDF5 wrote %lld bytes, more than the %lld to pad to\n", path,
                (long long)sb.st_size, (long long)pad_to);
        exit(1);
    }
    CHECK(truncate(path, pad_to)); // zero bytes past HDF5's end of file
}

// ---- results --------------------------------------------------------------------------

// A run's result with the columns `kvstrata report` reads: one request, one
// step, GPU 0's three tiers, one link and one sample; `gpu` is the first
// tier row's GPU (signed), `rows` the rows /requests claims, and the root
// attribute complete = 1 when `complete`.
static void result(const char *dir, const char *name, int64_t gpu, hsize_t rows, int complete)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(f);
    hid_t g = H5Gcreate2(f, "/summary", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    attr_str(g, "name", "hostile");
    attr_int(g, "steps", 1);
    H5Gclose(g);
    struct {
        double generated, tpot, itl_max;
    } req = {2, 1e-3, 1e-3};
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof req);
    H5Tinsert(t, "generated", 0, H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "tpot", 8, H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "itl_max", 16, H5T_NATIVE_DOUBLE);
    table(f, "/requests", t, rows, &req, 1);
    H5Tclose(t);
    static const char *const step_cols[] = {"t", "gpu", "batch", "pending", "step_time", "stall", "found_l1",
                                            "found_l2", "found_l3", "occupancy_l1", "occupancy_l2", "occupancy_l3"};
    double sv[12] = {1, 0, 1, 0, 1e-3, 0, 1, 0, 0, 1, 0, 0};
    t = H5Tcreate(H5T_COMPOUND, sizeof sv);
    for (int i = 0; i < 12; i++)
        H5Tinsert(t, step_cols[i], (size_t)i * 8, H5T_NATIVE_DOUBLE);
    table(f, "/steps", t, 1, sv, 1);
    H5Tclose(t);
    struct {
        int64_t gpu, tier;
        double capacity;
    } tiers[3] = {{gpu, 0, 100}, {0, 1, 1000}, {0, 2, 0}};
    t = H5Tcreate(H5T_COMPOUND, sizeof tiers[0]);
    H5Tinsert(t, "gpu", 0, H5T_NATIVE_INT64);
    H5Tinsert(t, "tier", 8, H5T_NATIVE_INT64);
    H5Tinsert(t, "capacity", 16, H5T_NATIVE_DOUBLE);
    table(f, "/tiers", t, 3, tiers, 3);
    H5Tclose(t);
    double link[2] = {1e9, 1e6};
    t = H5Tcreate(H5T_COMPOUND, sizeof link);
    H5Tinsert(t, "bandwidth", 0, H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "bytes", 8, H5T_NATIVE_DOUBLE);
    table(f, "/links", t, 1, link, 1);
    H5Tclose(t);
    double ls[3] = {1, 0, 1e6};
    t = H5Tcreate(H5T_COMPOUND, sizeof ls);
    H5Tinsert(t, "t", 0, H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "link", 8, H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "bytes", 16, H5T_NATIVE_DOUBLE);
    table(f, "/link_samples", t, 1, ls, 1);
    H5Tclose(t);
    if (complete)
        attr_int(f, "complete", 1);
    H5Fclose(f);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--ratio") == 0) {
        ratio_trace(argv[2], "ratio_at.h5", RATIO_FILE);
        ratio_trace(argv[2], "ratio_over.h5", RATIO_FILE - 1);
        printf("hostile_gen: /selected claims %llu rows of %zu bytes; files of %d and %d bytes\n",
               (unsigned long long)RATIO_ROWS, sizeof(struct sel), RATIO_FILE, RATIO_FILE - 1);
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: hostile_gen DIR | hostile_gen --ratio DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    struct step ok = {.request = 0, .step = 0, .layer = 0, .context = 64, .first = 0, .n = 1, .kernel_time = -1};
    // 2.3e18 rows claimed in a file of a few KB: refused before any allocation
    trace(dir, "trace_rows_huge.h5", 1, 16, 2305843009213693952ull, &ok, 1);
    // request -1 in a signed field: refused by name, not read as request 0
    struct step neg = ok;
    neg.request = -1;
    trace(dir, "trace_signed_minus1.h5", 1, 16, 1, &neg, 1);
    // a context of 4294967295 tokens in blocks of 1: 4 G blocks to track
    struct step ctx = ok;
    ctx.context = 4294967295u;
    trace(dir, "trace_context_huge.h5", 1, 1, 1, &ctx, 1);
    // a record whose context holds no token (found by fuzzing: the readers'
    // buffers of 0 blocks were never made, and a memset of them was undefined)
    struct step zero = ok;
    zero.context = 0;
    zero.n = 0;
    trace(dir, "trace_context_zero.h5", 1, 16, 1, &zero, 1);
    // 4 G layers and no record: every per-layer table would be 4 G long
    trace(dir, "trace_layers_huge.h5", 4294967295ll, 16, 0, &ok, 0);
    result(dir, "result_ok.h5", 0, 1, 1);
    // a result that never got its completion mark
    result(dir, "result_incomplete.h5", 0, 1, 0);
    // GPU -1 in a signed column: refused by name, never an index
    result(dir, "result_gpu_minus1.h5", -1, 1, 1);
    // 2.3e18 requests claimed
    result(dir, "result_rows_huge.h5", 0, 2305843009213693952ull, 1);
    // a complete file under the name of a write that never finished
    result(dir, "result_ok.h5.part-4242", 0, 1, 1);
    return 0;
}
