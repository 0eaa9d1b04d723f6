// h5read.c - checked reads of untrusted HDF5 files (see h5read.h).
#define _POSIX_C_SOURCE 200809L // fstat, fork, waitpid

#include "h5read.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "status.h"

enum {
    MAX_RECORD = 1 << 16,  // bytes of one table record
    MAX_MEMBERS = 1024,    // members of one record
    MAX_CHUNK = 1 << 30,   // bytes of one chunk (HDF5's own bound is 4 GiB)
    MAX_STRING = 1 << 20,  // bytes of one string attribute
    MAX_RATIO = 1100,      // rows' bytes per file byte when compressed (deflate: about 1032)
};

static int bad(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return KS_EINVAL;
}

// ---- the metadata walk, in a child process -----------------------------------

enum { WALK_DEPTH = 32, WALK_OBJECTS = 100000, WALK_SECONDS = 60 };

// Opens the attribute by name, then reads it by name as the readers do
// (ks_h5read_attr_*: a lookup, an open, a conversion of its value): a lookup
// by name takes a path through the object header that opening by index does
// not, and a damaged value can kill HDF5's conversion.
static herr_t walk_attr(hid_t loc, const char *name, const H5A_info_t *info, void *ud)
{
    (void)info;
    int *left = ud;
    if (--*left < 0)
        return -1;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0)
        return -1;
    hid_t t = H5Aget_type(a), sp = H5Aget_space(a);
    H5T_class_t c = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
    if (t >= 0) {
        H5Tget_size(t);
        H5Tclose(t);
    }
    if (sp >= 0) {
        H5Sget_simple_extent_npoints(sp);
        H5Sclose(sp);
    }
    H5Aclose(a);
    H5Aexists(loc, name);
    char buf[256], why[256];
    int64_t i;
    double d;
    if (c == H5T_STRING)
        ks_h5read_attr_str(loc, name, buf, sizeof buf, why, sizeof why);
    else if (c == H5T_INTEGER)
        ks_h5read_attr_int(loc, name, &i, why, sizeof why);
    if (c == H5T_INTEGER || c == H5T_FLOAT)
        ks_h5read_attr_num(loc, name, &d, why, sizeof why);
    return 0;
}

// The names kvstrata's readers look up (results/README.md's schemas of traces
// and results). NOTE: a lookup by name takes its own path through a group's
// B-tree and heap, which listing the group by index does not, and a name the
// file lacks is looked up too: each is probed in the child, found or not.
static const char *const probe_links[] = {"/requests", "/steps", "/tiers", "/links", "/link_samples",
                                          "/summary", "/summary_notes", "/scenario", "/selected"};
static const char *const probe_attrs[] = {"format", "version", "block_size", "layers", "kv_heads", "q_heads",
                                          "head_dim", "dtype", "source", "complete"};

// Creation order: a reader lists a group's attributes that way (report.c's
// /summary), and HDF5 builds another table for it, which damage can break.
static herr_t count_attr(hid_t loc, const char *name, const H5A_info_t *info, void *ud)
{
    (void)loc, (void)name, (void)info;
    return --*(int *)ud < 0 ? -1 : 0;
}

// Every attribute of o, by name and in creation order (an object that does
// not track that order refuses the second cleanly). 0, or -1.
static int walk_attrs(hid_t o, int *left)
{
    hsize_t idx = 0;
    int rc = H5Aiterate2(o, H5_INDEX_NAME, H5_ITER_INC, &idx, walk_attr, left) < 0 ? -1 : 0;
    idx = 0;
    H5Aiterate2(o, H5_INDEX_CRT_ORDER, H5_ITER_INC, &idx, count_attr, left);
    return rc;
}

static uint64_t probe_file_bytes; // the file's size, in the probe child

static int chunks_inflate_whole(hid_t d, size_t rec_file, const char *name, char *why, size_t len);

// Reads every row of a one-dimensional dataset, a slab at a time, in its
// file type: the bytes a reader's H5Dread moves, through the chunks'
// filters (a deflated chunk that inflates to less than HDF5 then copies
// out of it is read past its end). A dataset that claims more rows than the
// file can hold is left to the readers, which refuse it by name.
static void read_rows(hid_t d, hid_t t, hid_t sp, H5D_layout_t layout)
{
    enum { SLAB = 4096 };
    hsize_t n = 0;
    size_t rec = H5Tget_size(t);
    if (H5Sget_simple_extent_ndims(sp) != 1 || H5Sget_simple_extent_dims(sp, &n, NULL) != 1 || n == 0 ||
        rec == 0 || rec > MAX_RECORD || (double)n * (double)rec > (double)probe_file_bytes * MAX_RATIO)
        return;
    // storage too small for its rows, unfiltered or once inflated: the readers
    // refuse it by name (ks_h5read_table)
    char why[256];
    if (layout != H5D_CHUNKED && (double)H5Dget_storage_size(d) < (double)n * (double)rec)
        return;
    if (layout == H5D_CHUNKED && chunks_inflate_whole(d, rec, "", why, sizeof why) != KS_OK)
        return;
    hsize_t slab = SLAB;
    void *buf = malloc(SLAB * rec);
    hid_t mem = H5Screate_simple(1, &slab, NULL), fs = H5Scopy(sp);
    for (hsize_t at = 0; buf && mem >= 0 && fs >= 0 && at < n; at += SLAB) {
        hsize_t k = n - at < SLAB ? n - at : SLAB, zero = 0;
        if (H5Sselect_hyperslab(fs, H5S_SELECT_SET, &at, NULL, &k, NULL) < 0 ||
            H5Sselect_hyperslab(mem, H5S_SELECT_SET, &zero, NULL, &k, NULL) < 0 ||
            H5Dread(d, t, mem, fs, H5P_DEFAULT, buf) < 0)
            break;
    }
    if (fs >= 0)
        H5Sclose(fs);
    if (mem >= 0)
        H5Sclose(mem);
    free(buf);
}

// Opens every object under g (and their attributes, datatypes, extents and
// layouts), by index and by name, as the readers will, and reads each table's
// rows (read_rows). It goes on past an
// object HDF5 refuses, so that what lies beyond is probed too. 0, or -1 when
// anything failed.
static int walk(hid_t g, int depth, int *left)
{
    int rc = walk_attrs(g, left);
    H5G_info_t gi;
    if (H5Gget_info(g, &gi) < 0)
        return -1;
    for (hsize_t i = 0; i < gi.nlinks; i++) {
        if (--*left < 0)
            return -1;
        char name[256];
        hid_t o = -1;
        ssize_t nl = H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name, H5P_DEFAULT);
        if (nl > 0 && (size_t)nl < sizeof name && H5Lexists(g, name, H5P_DEFAULT) > 0)
            o = H5Oopen(g, name, H5P_DEFAULT);
        if (o < 0)
            o = H5Oopen_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, H5P_DEFAULT);
        if (o < 0)
            continue; // a dangling or external link: the readers meet it as missing
        H5I_type_t k = H5Iget_type(o);
        if (k == H5I_GROUP) {
            if (depth >= WALK_DEPTH || walk(o, depth + 1, left) < 0)
                rc = -1;
        } else if (k == H5I_DATASET) {
            hid_t t = H5Dget_type(o), sp = H5Dget_space(o), pl = H5Dget_create_plist(o);
            hsize_t dims[H5S_MAX_RANK];
            if (sp >= 0)
                H5Sget_simple_extent_dims(sp, dims, NULL);
            if (t >= 0)
                H5Tget_size(t);
            H5Dget_storage_size(o); // walks the chunk index
            hsize_t chunk[H5S_MAX_RANK];
            if (pl >= 0 && H5Pget_layout(pl) == H5D_CHUNKED)
                H5Pget_chunk(pl, H5S_MAX_RANK, chunk);
            if (t >= 0 && sp >= 0 && pl >= 0)
                read_rows(o, t, sp, H5Pget_layout(pl));
            if (walk_attrs(o, left) < 0)
                rc = -1;
            if (pl >= 0)
                H5Pclose(pl);
            if (sp >= 0)
                H5Sclose(sp);
            if (t >= 0)
                H5Tclose(t);
        }
        H5Oclose(o);
    }
    return rc;
}

// The lookups by name of probe_links and probe_attrs, from the root.
static void probe_names(hid_t f)
{
    for (size_t i = 0; i < sizeof probe_links / sizeof probe_links[0]; i++)
        H5Lexists(f, probe_links[i], H5P_DEFAULT);
    for (size_t i = 0; i < sizeof probe_attrs / sizeof probe_attrs[0]; i++)
        H5Aexists(f, probe_attrs[i]);
}

// NOTE: some damage makes HDF5 itself divide by zero or read out of bounds
// when it opens an object (a chunk dimension of 0 in a layout message, a
// broken attribute message), before any of its answers could be checked. A
// child process opens every object first; if it dies, the file is refused
// and this process never touches what killed it.
static int metadata_survives(const char *path, uint64_t bytes, char *why, size_t len)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return KS_OK; // no probe: the checks of each read still apply
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, STDERR_FILENO); // a sanitizer's report of the crash is not ours to show
        alarm(WALK_SECONDS);
        probe_file_bytes = bytes;
        hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
        int left = WALK_OBJECTS;
        if (f >= 0)
            probe_names(f);
        int rc = f >= 0 && walk(f, 0, &left) == 0 ? 0 : 3;
        _exit(rc); // no exit handlers: HDF5's would flush what the parent owns
    }
    int ws;
    while (waitpid(pid, &ws, 0) < 0)
        if (errno != EINTR)
            return KS_OK;
    if (WIFSIGNALED(ws) && WTERMSIG(ws) == SIGALRM)
        return bad(why, len, "HDF5 does not finish reading its metadata (%d s in a process that opened it): the "
                   "file is damaged", WALK_SECONDS);
    if (WIFSIGNALED(ws))
        return bad(why, len, "HDF5 fails on its metadata (%s in a process that opened it): the file is damaged",
                   strsignal(WTERMSIG(ws)));
    if (WEXITSTATUS(ws) != 0 && WEXITSTATUS(ws) != 3)
        return bad(why, len, "HDF5 fails on its metadata (a process that opened it exited with %d): the file is "
                   "damaged", WEXITSTATUS(ws));
    return KS_OK; // 3: an object HDF5 refuses cleanly, which the reads will name
}

hid_t ks_h5read_open(const char *path, uint64_t *bytes, char *why, size_t len)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    // NOTE: O_NONBLOCK so that a FIFO given as the file does not block here
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        bad(why, len, "%s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    if (!S_ISREG(st.st_mode)) {
        bad(why, len, "%s", S_ISDIR(st.st_mode) ? strerror(EISDIR) : "not a regular file");
        return -1;
    }
    *bytes = (uint64_t)st.st_size;
    // the probe first: opening the file reads its superblock and root group,
    // which can be what kills HDF5
    if (metadata_survives(path, *bytes, why, len) != KS_OK)
        return -1;
    hid_t f;
    H5E_BEGIN_TRY { f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT); }
    H5E_END_TRY;
    if (f < 0) {
        bad(why, len, "cannot be opened as an HDF5 file");
        return -1;
    }
    return f;
}

// An integer or float type whose declared bits lie inside its bytes (a
// corrupted precision, offset or field position makes HDF5's conversions
// shift and divide by what it claims).
static int number_type_ok(hid_t t)
{
    H5T_class_t c = H5Tget_class(t);
    size_t size = H5Tget_size(t), prec = H5Tget_precision(t);
    int off = H5Tget_offset(t);
    if ((c != H5T_INTEGER && c != H5T_FLOAT) || size < 1 || size > 8 || prec < 1 || off < 0 ||
        (size_t)off + prec > size * 8)
        return 0;
    if (c == H5T_INTEGER)
        return 1;
    size_t spos, epos, esize, mpos, msize;
    if (H5Tget_fields(t, &spos, &epos, &esize, &mpos, &msize) < 0)
        return 0;
    return esize >= 1 && msize >= 1 && spos < prec && epos + esize <= prec && mpos + msize <= prec &&
           esize < 8 * sizeof(size_t) - 2;
}

// The kind of member a field needs: numbers, or strings for KS_F_S32.
static int member_ok(hid_t mt, const struct ks_field *f)
{
    if (f->type == KS_F_S32)
        return H5Tget_class(mt) == H5T_STRING && H5Tis_variable_str(mt) == 0 && H5Tget_size(mt) >= 1;
    return number_type_ok(mt);
}

// The record type: size, members inside it, the fields present and of a
// kind that converts. KS_OK or KS_EINVAL.
static int record_ok(hid_t ft, const char *name, const struct ks_field *fields, size_t n_fields, char *why,
                     size_t len)
{
    if (H5Tget_class(ft) != H5T_COMPOUND)
        return bad(why, len, "%s: not a table of records (its datatype is not compound)", name);
    size_t size = H5Tget_size(ft);
    int n = H5Tget_nmembers(ft);
    if (size < 1 || size > MAX_RECORD)
        return bad(why, len, "%s: a record of %zu bytes (1 to %d)", name, size, MAX_RECORD);
    if (n < 1 || n > MAX_MEMBERS)
        return bad(why, len, "%s: %d fields in a record (1 to %d)", name, n, MAX_MEMBERS);
    for (int i = 0; i < n; i++) {
        hid_t mt = H5Tget_member_type(ft, (unsigned)i);
        size_t msize = mt < 0 ? 0 : H5Tget_size(mt), off = H5Tget_member_offset(ft, (unsigned)i);
        char *mname = H5Tget_member_name(ft, (unsigned)i);
        int ok = mt >= 0 && msize >= 1 && off <= size && msize <= size - off;
        if (mt >= 0)
            H5Tclose(mt);
        if (!ok) {
            bad(why, len, "%s: field '%s' (%zu bytes at offset %zu) lies outside the %zu-byte record", name,
                mname ? mname : "?", msize, off, size);
            H5free_memory(mname);
            return KS_EINVAL;
        }
        H5free_memory(mname);
    }
    for (size_t i = 0; i < n_fields; i++) {
        int k = H5Tget_member_index(ft, fields[i].name);
        if (k < 0)
            return bad(why, len, "%s has no field '%s'", name, fields[i].name);
        hid_t mt = H5Tget_member_type(ft, (unsigned)k);
        int ok = mt >= 0 && member_ok(mt, &fields[i]);
        if (mt >= 0)
            H5Tclose(mt);
        if (!ok)
            return bad(why, len, "%s: field '%s' is not %s", name, fields[i].name,
                       fields[i].type == KS_F_S32 ? "a fixed-length string" : "a well-formed number");
    }
    return KS_OK;
}

// Bytes that the deflated data in[0..n) inflates to, counted in a buffer of
// cap bytes (more than cap: cap + 1); -1 when it is not zlib data.
static long long inflated_size(const unsigned char *in, size_t n, unsigned char *buf, size_t cap)
{
    z_stream z = {.next_in = (unsigned char *)in, .avail_in = (uInt)n};
    if (n > UINT_MAX || inflateInit(&z) != Z_OK)
        return -1;
    unsigned long long total = 0;
    int zr = Z_OK;
    while (zr == Z_OK && total <= cap) {
        z.next_out = buf;
        z.avail_out = (uInt)(cap + 1 < UINT_MAX ? cap + 1 : UINT_MAX);
        zr = inflate(&z, Z_NO_FLUSH);
        total += (cap + 1 < UINT_MAX ? cap + 1 : UINT_MAX) - z.avail_out;
        if (zr == Z_BUF_ERROR && z.avail_in == 0)
            break;
    }
    inflateEnd(&z);
    if (zr != Z_STREAM_END && zr != Z_OK)
        return total > cap ? (long long)cap + 1 : -1;
    return total > cap ? (long long)cap + 1 : (long long)total;
}

// A chunked table whose filters are those kvstrata writes (shuffle, deflate;
// or deflate alone): each chunk must inflate to exactly its rows x record
// bytes. HDF5 trusts the inflated size and copies rows out of a chunk that
// inflated to less (a damaged file read 16 KB past a 7.5 KB buffer:
// tests/fixtures/hostile/result_chunk_short.h5). Other filter pipelines are
// left to HDF5. KS_OK or KS_EINVAL.
static int chunks_inflate_whole(hid_t d, size_t rec_file, const char *name, char *why, size_t len)
{
    hid_t dcpl = H5Dget_create_plist(d);
    hsize_t rows = 0;
    int nf = dcpl >= 0 ? H5Pget_nfilters(dcpl) : -1, deflate = -1, ok = nf >= 1 && nf <= 2;
    for (int i = 0; ok && i < nf; i++) {
        unsigned flags, cd[8];
        size_t ncd = 8;
        H5Z_filter_t f = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, 0, NULL, NULL);
        if (f == H5Z_FILTER_DEFLATE)
            deflate = i;
        else if (f != H5Z_FILTER_SHUFFLE)
            ok = 0;
    }
    if (dcpl >= 0 && H5Pget_chunk(dcpl, 1, &rows) != 1)
        ok = 0;
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (!ok || deflate < 0)
        return KS_OK; // not kvstrata's pipeline (or no deflate): sizes do not change
    size_t want = (size_t)rows * rec_file; // at most MAX_CHUNK (extent_ok)
    hsize_t n_chunks = 0;
    hid_t all = H5Dget_space(d); // every chunk (H5S_ALL is not taken here)
    herr_t got_n = all >= 0 ? H5Dget_num_chunks(d, all, &n_chunks) : -1;
    if (got_n < 0) {
        if (all >= 0)
            H5Sclose(all);
        return bad(why, len, "%s: its chunk index cannot be read: the file is damaged", name);
    }
    unsigned char *raw = NULL, *out = malloc(want + 1);
    size_t raw_cap = 0;
    int rc = out ? KS_OK : bad(why, len, "%s: out of memory", name);
    for (hsize_t i = 0; rc == KS_OK && i < n_chunks; i++) {
        hsize_t off = 0, size = 0;
        unsigned mask = 0;
        haddr_t addr;
        if (H5Dget_chunk_info(d, all, i, &off, &mask, &addr, &size) < 0) {
            rc = bad(why, len, "%s: chunk %llu cannot be located: the file is damaged", name, (unsigned long long)i);
            break;
        }
        if (mask & (1u << deflate))
            continue; // stored without deflate: the size checks before the read cover it
        if (size > raw_cap) {
            unsigned char *p = realloc(raw, size);
            if (!p) {
                rc = bad(why, len, "%s: out of memory", name);
                break;
            }
            raw = p;
            raw_cap = size;
        }
        uint32_t got_mask = 0;
        if (H5Dread_chunk(d, H5P_DEFAULT, &off, &got_mask, raw) < 0) {
            rc = bad(why, len, "%s: chunk %llu (row %llu) is indexed with %llu bytes that cannot be read: the file "
                     "is damaged", name, (unsigned long long)i, (unsigned long long)off, (unsigned long long)size);
            break;
        }
        long long got = inflated_size(raw, size, out, want);
        if (got < 0)
            rc = bad(why, len, "%s: chunk %llu (row %llu) does not inflate: the file is damaged", name,
                     (unsigned long long)i, (unsigned long long)off);
        else if (got != (long long)want)
            rc = bad(why, len, "%s: chunk %llu (row %llu) inflates to %s%lld bytes, not the %zu its %llu rows take: "
                     "the file is damaged", name, (unsigned long long)i, (unsigned long long)off,
                     got > (long long)want ? "more than " : "", got > (long long)want ? (long long)want : got, want,
                     (unsigned long long)rows);
    }
    H5Sclose(all);
    free(raw);
    free(out);
    return rc;
}

// Rows and layout: one dimension, a chunk of at least one row, and no more
// rows than the file's bytes can hold.
static int extent_ok(hid_t d, hid_t sp, size_t rec_file, const char *name, uint64_t file_bytes, uint64_t *rows,
                     char *why, size_t len)
{
    if (H5Sget_simple_extent_type(sp) != H5S_SIMPLE || H5Sget_simple_extent_ndims(sp) != 1)
        return bad(why, len, "%s must be a one-dimensional table of records", name);
    hsize_t dims = 0;
    if (H5Sget_simple_extent_dims(sp, &dims, NULL) != 1)
        return bad(why, len, "%s: its row count cannot be read", name);
    hid_t dcpl = H5Dget_create_plist(d);
    if (dcpl < 0)
        return bad(why, len, "%s: its layout cannot be read", name);
    int rc = KS_OK, filters = 0;
    H5D_layout_t layout = H5Pget_layout(dcpl);
    if (layout == H5D_CHUNKED) {
        hsize_t chunk = 0;
        if (H5Pget_chunk(dcpl, 1, &chunk) != 1 || chunk < 1 || chunk > MAX_CHUNK / rec_file)
            rc = bad(why, len, "%s: a chunk of %llu rows of %zu bytes (at least one row, at most %d bytes)", name,
                     (unsigned long long)chunk, rec_file, MAX_CHUNK);
        filters = H5Pget_nfilters(dcpl);
    } else if (layout != H5D_CONTIGUOUS && layout != H5D_COMPACT) {
        rc = bad(why, len, "%s: an unknown storage layout", name);
    }
    H5Pclose(dcpl);
    if (rc != KS_OK)
        return rc;
    if (filters < 0)
        return bad(why, len, "%s: its filters cannot be read", name);
    uint64_t cap = file_bytes / rec_file * (filters ? MAX_RATIO : 1);
    if (dims > cap || dims > SIZE_MAX / MAX_RECORD / 2)
        return bad(why, len, "%s claims %llu rows of %zu bytes; a %llu-byte file holds at most %llu", name,
                   (unsigned long long)dims, rec_file, (unsigned long long)file_bytes, (unsigned long long)cap);
    *rows = dims;
    return KS_OK;
}

// NOTE: without this, HDF5 converts a value that does not fit its target by
// clamping it (-1 into an unsigned field reads as 0); aborting the
// conversion fails the read instead.
static H5T_conv_ret_t refuse_out_of_range(H5T_conv_except_t e, hid_t src, hid_t dst, void *s, void *d, void *ud)
{
    (void)src, (void)dst, (void)s, (void)d, (void)ud;
    return e == H5T_CONV_EXCEPT_PRECISION ? H5T_CONV_UNHANDLED : H5T_CONV_ABORT;
}

static hid_t memory_type(const struct ks_field *f)
{
    switch (f->type) {
    case KS_F_U8: return H5Tcopy(H5T_NATIVE_UINT8);
    case KS_F_U32: return H5Tcopy(H5T_NATIVE_UINT32);
    case KS_F_U64: return H5Tcopy(H5T_NATIVE_UINT64);
    case KS_F_I64: return H5Tcopy(H5T_NATIVE_INT64);
    case KS_F_F32: return H5Tcopy(H5T_NATIVE_FLOAT);
    case KS_F_F64: return H5Tcopy(H5T_NATIVE_DOUBLE);
    case KS_F_S32: {
        hid_t t = H5Tcopy(H5T_C_S1);
        H5Tset_size(t, 32);
        H5Tset_strpad(t, H5T_STR_NULLTERM);
        return t;
    }
    }
    return -1;
}

// Reads fields [0, n) of d into buf (rec bytes a row). 0 or -1.
static int read_fields(hid_t d, hid_t dxpl, const struct ks_field *fields, size_t n, size_t rec, void *buf)
{
    hid_t mt = H5Tcreate(H5T_COMPOUND, rec);
    int ok = mt >= 0;
    for (size_t i = 0; ok && i < n; i++) {
        hid_t t = memory_type(&fields[i]);
        ok = t >= 0 && H5Tinsert(mt, fields[i].name, fields[i].offset, t) >= 0;
        if (t >= 0)
            H5Tclose(t);
    }
    ok = ok && H5Dread(d, mt, H5S_ALL, H5S_ALL, dxpl, buf) >= 0;
    if (mt >= 0)
        H5Tclose(mt);
    return ok ? 0 : -1;
}

int ks_h5read_table(hid_t f, const char *name, const struct ks_field *fields, size_t n_fields, size_t rec,
                    uint64_t file_bytes, void **out, size_t *rows, char *why, size_t len)
{
    *out = NULL;
    *rows = 0;
    htri_t there;
    H5E_BEGIN_TRY { there = H5Lexists(f, name, H5P_DEFAULT); }
    H5E_END_TRY;
    if (there <= 0)
        return bad(why, len, "%s is missing", name);
    hid_t d, ft = -1, sp = -1, dxpl = -1;
    H5E_BEGIN_TRY { d = H5Dopen2(f, name, H5P_DEFAULT); }
    H5E_END_TRY;
    if (d < 0)
        return bad(why, len, "%s cannot be opened as a table", name);
    int rc = KS_OK;
    uint64_t n = 0;
    H5E_BEGIN_TRY
    {
        ft = H5Dget_type(d);
        sp = H5Dget_space(d);
        if (ft < 0 || sp < 0)
            rc = bad(why, len, "%s: its datatype or extent cannot be read", name);
        if (rc == KS_OK)
            rc = record_ok(ft, name, fields, n_fields, why, len);
        if (rc == KS_OK)
            rc = extent_ok(d, sp, H5Tget_size(ft), name, file_bytes, &n, why, len);
        // a chunk's stored size comes from the chunk index, and HDF5 allocates
        // it before reading: the sizes together must fit in the file
        hsize_t stored = rc == KS_OK ? H5Dget_storage_size(d) : 0;
        if (rc == KS_OK && stored > file_bytes)
            rc = bad(why, len, "%s claims %llu bytes stored in a file of %llu bytes: the file is damaged", name,
                     (unsigned long long)stored, (unsigned long long)file_bytes);
        // a contiguous or compact table is read whole from its storage (HDF5
        // reads the two through one path): it must hold rows x record bytes,
        // and a contiguous one's address must lie in the file (a damaged
        // layout made HDF5 copy from a null buffer: tests/fuzz/fuzz_result.c)
        hid_t dcpl = rc == KS_OK && n > 0 ? H5Dget_create_plist(d) : -1;
        H5D_layout_t layout = dcpl >= 0 ? H5Pget_layout(dcpl) : H5D_LAYOUT_ERROR;
        if (dcpl >= 0)
            H5Pclose(dcpl);
        uint64_t need = rc == KS_OK ? n * (uint64_t)H5Tget_size(ft) : 0;
        haddr_t at = layout == H5D_CONTIGUOUS ? H5Dget_offset(d) : 0;
        if (rc == KS_OK && n > 0 && (layout == H5D_CONTIGUOUS || layout == H5D_COMPACT) &&
            (stored < need || at == HADDR_UNDEF || at > file_bytes || need > file_bytes - at))
            rc = bad(why, len, "%s: %llu rows need %llu bytes, its storage holds %llu: the file is damaged", name,
                     (unsigned long long)n, (unsigned long long)need, (unsigned long long)stored);
        if (rc == KS_OK && n > 0 && layout == H5D_CHUNKED)
            rc = chunks_inflate_whole(d, H5Tget_size(ft), name, why, len);
        if (rc == KS_OK && n > 0 && (rec == 0 || n > SIZE_MAX / rec || !(*out = malloc((size_t)n * rec))))
            rc = bad(why, len, "%s: out of memory for %llu rows", name, (unsigned long long)n);
        if (rc == KS_OK && n > 0) {
            dxpl = H5Pcreate(H5P_DATASET_XFER);
            if (dxpl < 0 || H5Pset_type_conv_cb(dxpl, refuse_out_of_range, NULL) < 0)
                rc = bad(why, len, "%s: out of memory", name);
        }
        if (rc == KS_OK && n > 0 && read_fields(d, dxpl, fields, n_fields, rec, *out) != 0) {
            // which field: each alone (the rows were checked, so this allocates no more)
            size_t bad_field = n_fields;
            for (size_t i = 0; i < n_fields && bad_field == n_fields; i++)
                if (read_fields(d, dxpl, &fields[i], 1, rec, *out) != 0)
                    bad_field = i;
            rc = bad_field < n_fields
                     ? bad(why, len,
                           "%s: field '%s' holds a value its type cannot take (negative, fractional, NaN or too "
                           "large), or its data are damaged",
                           name, fields[bad_field].name)
                     : bad(why, len, "%s cannot be read (its data are damaged)", name);
        }
    }
    H5E_END_TRY;
    if (dxpl >= 0)
        H5Pclose(dxpl);
    if (sp >= 0)
        H5Sclose(sp);
    if (ft >= 0)
        H5Tclose(ft);
    H5Dclose(d);
    if (rc != KS_OK) {
        free(*out);
        *out = NULL;
        return rc;
    }
    *rows = (size_t)n;
    return KS_OK;
}

// Opens attribute `name` of loc when it holds one value of class c.
static hid_t scalar_attr(hid_t loc, const char *name, H5T_class_t c, const char *what, char *why, size_t len)
{
    htri_t there;
    H5E_BEGIN_TRY { there = H5Aexists(loc, name); }
    H5E_END_TRY;
    if (there <= 0) {
        bad(why, len, "is missing");
        return -1;
    }
    hid_t a, t = -1, sp = -1;
    H5E_BEGIN_TRY
    {
        a = H5Aopen(loc, name, H5P_DEFAULT);
        t = a < 0 ? -1 : H5Aget_type(a);
        sp = a < 0 ? -1 : H5Aget_space(a);
    }
    H5E_END_TRY;
    int ok = t >= 0 && sp >= 0;
    H5S_class_t sc = ok ? H5Sget_simple_extent_type(sp) : H5S_NO_CLASS;
    hssize_t np = ok ? H5Sget_simple_extent_npoints(sp) : -1;
    H5T_class_t tc = ok ? H5Tget_class(t) : H5T_NO_CLASS;
    if (!ok)
        bad(why, len, "cannot be opened");
    else if ((sc != H5S_SCALAR && sc != H5S_SIMPLE) || np != 1)
        ok = 0, bad(why, len, "holds %lld values, not one", (long long)np);
    else if (tc != c && !(c == H5T_FLOAT && tc == H5T_INTEGER))
        ok = 0, bad(why, len, "is not %s", what);
    else if (c != H5T_STRING && !number_type_ok(t))
        ok = 0, bad(why, len, "has a damaged number type");
    if (sp >= 0)
        H5Sclose(sp);
    if (t >= 0)
        H5Tclose(t);
    if (!ok && a >= 0)
        H5Aclose(a), a = -1;
    return a;
}

// Reads a numeric attribute into *v of memory type mt, range-checked.
static int read_number(hid_t a, hid_t mt, void *v, char *why, size_t len)
{
    hid_t fixed = H5Aget_type(a);
    // NOTE: H5Aread takes no transfer list, so the range check is ours: the
    // value is read as the widest type of its class first
    int rc = KS_OK;
    if (H5Tget_class(fixed) == H5T_INTEGER && H5Tequal(mt, H5T_NATIVE_INT64) > 0) {
        int sign = H5Tget_sign(fixed);
        if (sign == H5T_SGN_NONE) {
            unsigned long long u = 0;
            if (H5Aread(a, H5T_NATIVE_ULLONG, &u) < 0 || u > INT64_MAX)
                rc = bad(why, len, "is %llu, more than a 64-bit integer holds", u);
            else
                *(int64_t *)v = (int64_t)u;
        } else if (H5Aread(a, H5T_NATIVE_INT64, v) < 0) {
            rc = bad(why, len, "cannot be read");
        }
    } else if (H5Aread(a, mt, v) < 0) {
        rc = bad(why, len, "cannot be read");
    }
    H5Tclose(fixed);
    return rc;
}

int ks_h5read_attr_int(hid_t loc, const char *name, int64_t *v, char *why, size_t len)
{
    hid_t a = scalar_attr(loc, name, H5T_INTEGER, "an integer", why, len);
    if (a < 0)
        return KS_EINVAL;
    int rc;
    H5E_BEGIN_TRY { rc = read_number(a, H5T_NATIVE_INT64, v, why, len); }
    H5E_END_TRY;
    H5Aclose(a);
    return rc;
}

int ks_h5read_attr_num(hid_t loc, const char *name, double *v, char *why, size_t len)
{
    hid_t a = scalar_attr(loc, name, H5T_FLOAT, "a number", why, len);
    if (a < 0)
        return KS_EINVAL;
    int rc;
    H5E_BEGIN_TRY { rc = read_number(a, H5T_NATIVE_DOUBLE, v, why, len); }
    H5E_END_TRY;
    H5Aclose(a);
    return rc;
}

int ks_h5read_attr_str(hid_t loc, const char *name, char *buf, size_t cap, char *why, size_t len)
{
    buf[0] = '\0';
    htri_t there;
    H5E_BEGIN_TRY { there = H5Aexists(loc, name); }
    H5E_END_TRY;
    if (there <= 0)
        return 1;
    hid_t a = scalar_attr(loc, name, H5T_STRING, "a string", why, len);
    if (a < 0)
        return KS_EINVAL;
    hid_t ft = H5Aget_type(a), sp = H5Aget_space(a), mt = -1;
    H5T_cset_t cset = H5Tget_cset(ft);
    int vlen = H5Tis_variable_str(ft) > 0;
    size_t n = vlen ? 0 : H5Tget_size(ft);
    int rc = KS_EINVAL;
    if (!vlen && (n < 1 || n > MAX_STRING)) {
        bad(why, len, "is a string of %zu bytes (1 to %d)", n, MAX_STRING);
        goto done;
    }
    mt = H5Tcopy(H5T_C_S1);
    // a fixed-length string may fill all n bytes with no terminator: one more in memory.
    // NOTE: read with the file's charset: HDF5 converts neither way between ASCII and UTF-8
    if (mt < 0 || H5Tset_size(mt, vlen ? H5T_VARIABLE : n + 1) < 0 || H5Tset_cset(mt, cset) < 0)
        goto failed;
    H5E_BEGIN_TRY
    {
        if (vlen) {
            char *s = NULL;
            if (H5Aread(a, mt, &s) >= 0) {
                snprintf(buf, cap, "%s", s ? s : "");
                rc = KS_OK;
#if H5_VERSION_GE(1, 12, 0)
                H5Treclaim(mt, sp, H5P_DEFAULT, &s);
#else
                H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, &s);
#endif
            }
        } else {
            char *s = calloc(n + 1, 1);
            if (s && H5Aread(a, mt, s) >= 0) {
                snprintf(buf, cap, "%s", s);
                rc = KS_OK;
            }
            free(s);
        }
    }
    H5E_END_TRY;
failed:
    if (rc != KS_OK)
        bad(why, len, "(a %s-length %s string) cannot be read", vlen ? "variable" : "fixed",
            cset == H5T_CSET_UTF8 ? "UTF-8" : "ASCII");
done:
    if (mt >= 0)
        H5Tclose(mt);
    H5Sclose(sp);
    H5Tclose(ft);
    H5Aclose(a);
    return rc;
}
