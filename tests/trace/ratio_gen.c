// ratio_gen.c - two traces at the bound on a compressed table's claimed
// expansion (README "Writing and reading files safely": every size and count
// is checked against "the file's size (x 1100 when compressed)";
// sim/results/h5read.c, extent_ok: a filtered table may claim at most
// file_bytes / record_bytes x 1100 rows).
//
// Both hold one decode step (request 0, step 0, layer 0, a context of 64
// tokens) that selects row 0 of /selected, and a deflated /selected of 8-byte
// rows that claims ROWS = 2048 x 1100 = 2252800 rows, written only as far as
// its first chunk (the rest read as the fill value; a trace's rows past those
// its steps select are not looked at). HDF5 writes about 8.8 KB; the files
// are padded with zero bytes past HDF5's end of file to
//   ratio_at.h5    16384 bytes: 2048 rows of 8 bytes, x 1100 = ROWS (accepted)
//   ratio_over.h5  16383 bytes: 2047 rows, x 1100 = 2251700 < ROWS (refused)
// that is, a claimed expansion of exactly 1100 (18022400 bytes of rows from
// 16384) and of 1100.07 (from 16383).
//
// Usage: ratio_gen DIR
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
            fprintf(stderr, "ratio_gen: %s:%d: %s failed\n", __FILE__, __LINE__, #x);                           \
            exit(1);                                                                                               \
        }                                                                                                          \
    } while (0)

enum { FILE_BYTES = 16384, REC = 8, RATIO = 1100, CHUNK = 1024 };
#define ROWS ((hsize_t)FILE_BYTES / REC * RATIO)

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

// A 1-D chunked, deflated table of `type` claiming `rows` rows, the first
// `n` written from `data`.
static void table(hid_t f, const char *name, hid_t type, hsize_t rows, hsize_t chunk, const void *data, hsize_t n)
{
    hid_t sp = H5Screate_simple(1, &rows, NULL), pl = H5Pcreate(H5P_DATASET_CREATE);
    CHECK(H5Pset_chunk(pl, 1, &chunk));
    CHECK(H5Pset_deflate(pl, 6));
    hid_t d = H5Dcreate2(f, name, type, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
    CHECK(d);
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, &n, NULL);
    hsize_t start = 0;
    CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &n, NULL));
    CHECK(H5Dwrite(d, type, ms, fs, H5P_DEFAULT, data));
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
    H5Pclose(pl);
    H5Sclose(sp);
}

struct step {
    uint32_t request, step, layer, context;
    uint64_t first;
    uint32_t n;
    double kernel_time;
};
struct sel {
    uint32_t block;
    float mass;
};

static void write_trace(const char *path, off_t pad_to)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(f);
    attr_str(f, "format", "kvstrata-trace");
    attr_int(f, "version", 1);
    attr_int(f, "block_size", 16);
    attr_int(f, "layers", 1);
    attr_int(f, "kv_heads", 8);
    attr_int(f, "q_heads", 32);
    attr_int(f, "head_dim", 128);
    attr_str(f, "dtype", "fp16");
    attr_str(f, "source", "tests/trace/ratio_gen.c");
    hid_t st = H5Tcreate(H5T_COMPOUND, sizeof(struct step));
    H5Tinsert(st, "request", offsetof(struct step, request), H5T_NATIVE_UINT32);
    H5Tinsert(st, "step", offsetof(struct step, step), H5T_NATIVE_UINT32);
    H5Tinsert(st, "layer", offsetof(struct step, layer), H5T_NATIVE_UINT32);
    H5Tinsert(st, "context", offsetof(struct step, context), H5T_NATIVE_UINT32);
    H5Tinsert(st, "first", offsetof(struct step, first), H5T_NATIVE_UINT64);
    H5Tinsert(st, "n", offsetof(struct step, n), H5T_NATIVE_UINT32);
    H5Tinsert(st, "kernel_time", offsetof(struct step, kernel_time), H5T_NATIVE_DOUBLE);
    struct step s = {.request = 0, .step = 0, .layer = 0, .context = 64, .first = 0, .n = 1, .kernel_time = -1};
    table(f, "/steps", st, 1, 1, &s, 1);
    H5Tclose(st);
    hid_t se = H5Tcreate(H5T_COMPOUND, sizeof(struct sel));
    H5Tinsert(se, "block", offsetof(struct sel, block), H5T_NATIVE_UINT32);
    H5Tinsert(se, "mass", offsetof(struct sel, mass), H5T_NATIVE_FLOAT);
    static struct sel rows[CHUNK]; // block 0 at mass 1, then zeros: the fill value's rows
    rows[0] = (struct sel){0, 1.0f};
    table(f, "/selected", se, ROWS, CHUNK, rows, CHUNK);
    H5Tclose(se);
    CHECK(H5Fclose(f));
    struct stat sb;
    CHECK(stat(path, &sb));
    if (sb.st_size > pad_to) {
        fprintf(stderr, "ratio_gen: %s: HDF5 wrote %lld bytes, more than the %lld to pad to\n", path,
                (long long)sb.st_size, (long long)pad_to);
        exit(1);
    }
    CHECK(truncate(path, pad_to)); // zero bytes past HDF5's end of file
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: ratio_gen DIR\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/ratio_at.h5", argv[1]);
    write_trace(path, FILE_BYTES);
    snprintf(path, sizeof path, "%s/ratio_over.h5", argv[1]);
    write_trace(path, FILE_BYTES - 1);
    printf("ratio_gen: /selected claims %llu rows of %d bytes; files of %d and %d bytes\n", (unsigned long long)ROWS,
           REC, FILE_BYTES, FILE_BYTES - 1);
    return 0;
}
