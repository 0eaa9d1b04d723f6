// results.c - HDF5 result files written whole or not at all (see results.h).
//
// NOTE: HDF5 builds the file in memory (the core driver, no backing store)
// and this file writes its image through atomicfile.h. HDF5 1.10 meets a
// full disk badly: a failed H5Fclose leaves a half-closed file registered,
// and its exit handler then crashes on it. Here HDF5 never does I/O, so no
// HDF5 call fails for want of space; a short write, ENOSPC or EFBIG is seen
// by our own write and fsync, with errno, and the partial file is removed.
// The cost: the file's bytes are held in memory until commit (a result's
// records are in memory anyway; a trace is read back whole to be used).
#define _POSIX_C_SOURCE 200809L // strdup, unlink

#include "results.h"

#include <errno.h>
#include <hdf5.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomicfile.h"
#include "status.h"

struct ks_table {
    struct ks_results *r;
    hid_t dset, mtype;
    size_t rec_size, chunk_rows;
    uint64_t rows;      // rows in the file
    unsigned char *buf; // [chunk_rows * rec_size]
    size_t n_buf;       // rows waiting in buf
    struct ks_table *next;
};

struct ks_results {
    hid_t file;
    char *path, *partial;
    struct ks_atomicfile out; // the partial file, written at commit
    struct ks_table *tables;
    char *err;      // the caller's (borrowed): the reason of the last failure
    size_t err_len;
};

// The reason of a failure into the caller's buffer, after the result's path.
static int fail(struct ks_results *r, const char *fmt, ...)
{
    if (r->err && r->err_len) {
        int n = snprintf(r->err, r->err_len, "%s: ", r->path);
        if (n >= 0 && (size_t)n < r->err_len) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(r->err + n, r->err_len - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return KS_EINVAL;
}

// NOTE: the core driver grows its buffer by this much at a time.
enum { CORE_INCREMENT = 1 << 20 };

int ks_results_check_target(const char *path, const char *const *inputs, size_t n_inputs, char *err, size_t len)
{
    struct stat out, in;
    if (!path || !path[0]) {
        snprintf(err, len, "an output needs a file name");
        return KS_EINVAL;
    }
    if (stat(path, &out) != 0) {
        if (errno == ENOENT)
            return KS_OK; // absent: made by commit
        snprintf(err, len, "%s: %s", path, strerror(errno));
        return KS_EINVAL;
    }
    if (!S_ISREG(out.st_mode)) {
        snprintf(err, len, "%s: is %s, not a regular file; kvstrata writes over regular files only", path,
                 S_ISDIR(out.st_mode)    ? "a folder"
                 : S_ISFIFO(out.st_mode) ? "a FIFO"
                 : S_ISCHR(out.st_mode) || S_ISBLK(out.st_mode) ? "a device"
                 : S_ISSOCK(out.st_mode) ? "a socket"
                                         : "something else");
        return KS_EINVAL;
    }
    for (size_t i = 0; i < n_inputs; i++)
        if (inputs[i] && stat(inputs[i], &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
            snprintf(err, len, "%s: is %s, an input of this run; choose another output", path, inputs[i]);
            return KS_EINVAL;
        }
    return KS_OK;
}

void ks_results_safe_name(const char *name, char *out, size_t len)
{
    if (len == 0)
        return;
    size_t n = 0;
    for (const unsigned char *c = (const unsigned char *)(name ? name : ""); *c && n + 1 < len && n < 200; c++)
        out[n++] = *c == '/' || *c == '\\' || *c < 0x20 || *c == 0x7f ? '_' : (char)*c;
    out[n] = '\0';
    for (size_t i = 0; i < n && out[i] == '.'; i++)
        out[i] = '_'; // no ".", nor a hidden file
    for (size_t i = 1; i < n; i++)
        if (out[i] == '.' && out[i - 1] == '.')
            out[i] = '_'; // no ".." anywhere
    if (n == 0)
        snprintf(out, len, "run");
}

struct ks_results *ks_results_open(const char *path, char *err, size_t errlen)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); // our messages, not HDF5's error stack on stderr
    char why[512];
    if (ks_results_check_target(path, NULL, 0, why, sizeof why) != KS_OK) {
        if (err)
            snprintf(err, errlen, "%s", why);
        return NULL;
    }
    struct ks_results *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        if (err)
            snprintf(err, errlen, "out of memory");
        free(r);
        return NULL;
    }
    // the partial file now, so that a folder that cannot take it fails early
    if (ks_atomicfile_open(&r->out, path, &(struct ks_atomicfile_params){.sync = 1}, why, sizeof why) != KS_OK) {
        if (err)
            snprintf(err, errlen, "%s (does its directory exist and allow writing?)", why);
        free(r->path);
        free(r);
        return NULL;
    }
    r->partial = r->out.tmp;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    r->file = fapl < 0 || H5Pset_fapl_core(fapl, CORE_INCREMENT, 0) < 0
                  ? -1
                  : H5Fcreate(r->partial, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (fapl >= 0)
        H5Pclose(fapl);
    if (r->file < 0) {
        if (err)
            snprintf(err, errlen, "%s: HDF5 cannot create the file in memory", r->partial);
        ks_atomicfile_abandon(&r->out);
        free(r->path);
        free(r);
        return NULL;
    }
    r->err = err;
    r->err_len = err ? errlen : 0;
    return r;
}

// Opens the group at `path`, creating it and its parents as needed.
static hid_t open_group(struct ks_results *r, const char *path)
{
    if (!path || !path[0] || strcmp(path, "/") == 0)
        return H5Gopen2(r->file, "/", H5P_DEFAULT);
    char buf[256];
    size_t len = strlen(path);
    if (len >= sizeof buf || path[0] != '/')
        return -1;
    memcpy(buf, path, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        htri_t there = H5Lexists(r->file, buf, H5P_DEFAULT);
        if (there < 0)
            return -1;
        if (!there) {
            hid_t g = H5Gcreate2(r->file, buf, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            if (g < 0)
                return -1;
            H5Gclose(g);
        }
        buf[i] = c;
    }
    return H5Gopen2(r->file, path, H5P_DEFAULT);
}

static int write_attr(struct ks_results *r, hid_t loc, const char *name, hid_t ftype, hid_t mtype, const void *v)
{
    if (H5Aexists(loc, name) > 0 && H5Adelete(loc, name) < 0)
        return fail(r, "attribute %s: cannot replace", name);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(loc, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT);
    int bad = a < 0 || H5Awrite(a, mtype, v) < 0;
    if (a >= 0)
        H5Aclose(a);
    H5Sclose(sp);
    return bad ? fail(r, "attribute %s: cannot write", name) : KS_OK;
}

static int group_attr(struct ks_results *r, const char *group, const char *name, hid_t ftype, hid_t mtype,
                      const void *v)
{
    hid_t g = open_group(r, group);
    if (g < 0)
        return fail(r, "group %s: cannot open or create", group);
    int st = write_attr(r, g, name, ftype, mtype, v);
    H5Gclose(g);
    return st;
}

int ks_results_attr_num(struct ks_results *r, const char *group, const char *name, double v)
{
    return group_attr(r, group, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v);
}

int ks_results_attr_int(struct ks_results *r, const char *group, const char *name, int64_t v)
{
    return group_attr(r, group, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &v);
}

static hid_t string_type(const char *v)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, strlen(v) + 1);
    H5Tset_strpad(t, H5T_STR_NULLTERM);
    return t;
}

int ks_results_attr_str(struct ks_results *r, const char *group, const char *name, const char *v)
{
    hid_t t = string_type(v);
    int st = group_attr(r, group, name, t, t, v);
    H5Tclose(t);
    return st;
}

static hid_t native_of(enum ks_field_type t)
{
    switch (t) {
    case KS_F_U8: return H5T_NATIVE_UINT8;
    case KS_F_U32: return H5T_NATIVE_UINT32;
    case KS_F_U64: return H5T_NATIVE_UINT64;
    case KS_F_I64: return H5T_NATIVE_INT64;
    case KS_F_F32: return H5T_NATIVE_FLOAT;
    case KS_F_F64: return H5T_NATIVE_DOUBLE;
    case KS_F_S32: return -1; // made by member_type
    }
    return -1;
}

static hid_t file_of(enum ks_field_type t)
{
    switch (t) {
    case KS_F_U8: return H5T_STD_U8LE;
    case KS_F_U32: return H5T_STD_U32LE;
    case KS_F_U64: return H5T_STD_U64LE;
    case KS_F_I64: return H5T_STD_I64LE;
    case KS_F_F32: return H5T_IEEE_F32LE;
    case KS_F_F64: return H5T_IEEE_F64LE;
    case KS_F_S32: return -1; // made by member_type
    }
    return -1;
}

static size_t size_of(enum ks_field_type t)
{
    switch (t) {
    case KS_F_U8: return 1;
    case KS_F_U32: case KS_F_F32: return 4;
    case KS_F_U64: case KS_F_I64: case KS_F_F64: return 8;
    case KS_F_S32: return 32;
    }
    return 0;
}

// Inserts one member into a compound type, in memory (native) or file form.
static void insert_member(hid_t compound, const struct ks_field *f, int native)
{
    if (f->type != KS_F_S32) {
        H5Tinsert(compound, f->name, f->offset, native ? native_of(f->type) : file_of(f->type));
        return;
    }
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, 32);
    H5Tset_strpad(st, H5T_STR_NULLTERM);
    H5Tinsert(compound, f->name, f->offset, st); // copies st
    H5Tclose(st);
}

struct ks_table *ks_results_table(struct ks_results *r, const char *path, const struct ks_field *fields,
                                  size_t n_fields, size_t rec_size, size_t chunk_rows)
{
    const char *slash = strrchr(path, '/');
    if (!slash || !slash[1] || n_fields == 0 || rec_size == 0) {
        fail(r, "table %s: needs an absolute path and at least one field", path);
        return NULL;
    }
    for (size_t i = 0; i < n_fields; i++)
        if (fields[i].offset + size_of(fields[i].type) > rec_size) {
            fail(r, "table %s: field %s lies outside the %zu-byte record", path, fields[i].name, rec_size);
            return NULL;
        }
    char parent[256];
    size_t plen = (size_t)(slash - path);
    if (plen >= sizeof parent) {
        fail(r, "table %s: path too long", path);
        return NULL;
    }
    memcpy(parent, path, plen);
    parent[plen] = '\0';
    struct ks_table *t = calloc(1, sizeof *t);
    if (!t) {
        fail(r, "out of memory");
        return NULL;
    }
    t->r = r;
    t->rec_size = rec_size;
    t->chunk_rows = chunk_rows ? chunk_rows : 4096;
    t->buf = malloc(t->chunk_rows * rec_size);
    t->mtype = H5Tcreate(H5T_COMPOUND, rec_size);
    hid_t ftype = H5Tcreate(H5T_COMPOUND, rec_size);
    for (size_t i = 0; i < n_fields; i++) {
        insert_member(t->mtype, &fields[i], 1);
        insert_member(ftype, &fields[i], 0);
    }
    H5Tpack(ftype); // no padding in the file
    hsize_t dims = 0, maxdims = H5S_UNLIMITED, chunk = t->chunk_rows;
    hid_t space = H5Screate_simple(1, &dims, &maxdims);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, &chunk);
    H5Pset_shuffle(dcpl);
    H5Pset_deflate(dcpl, 4);
    hid_t g = open_group(r, plen ? parent : "/");
    t->dset = g < 0 ? -1 : H5Dcreate2(g, slash + 1, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (g >= 0)
        H5Gclose(g);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Tclose(ftype);
    if (t->dset < 0 || !t->buf || t->mtype < 0) {
        fail(r, "table %s: cannot create", path);
        if (t->dset >= 0)
            H5Dclose(t->dset);
        if (t->mtype >= 0)
            H5Tclose(t->mtype);
        free(t->buf);
        free(t);
        return NULL;
    }
    for (size_t i = 0; i < n_fields; i++) {
        if (!fields[i].desc)
            continue;
        char name[128];
        snprintf(name, sizeof name, "%s.desc", fields[i].name);
        hid_t st = string_type(fields[i].desc);
        write_attr(r, t->dset, name, st, st, fields[i].desc);
        H5Tclose(st);
    }
    t->next = r->tables;
    r->tables = t;
    return t;
}

static int flush(struct ks_table *t)
{
    if (t->n_buf == 0)
        return KS_OK;
    hsize_t start = t->rows, count = t->n_buf, total = t->rows + t->n_buf;
    int bad = H5Dset_extent(t->dset, &total) < 0;
    hid_t fs = bad ? -1 : H5Dget_space(t->dset);
    hid_t ms = H5Screate_simple(1, &count, NULL);
    bad = bad || fs < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL) < 0 ||
          H5Dwrite(t->dset, t->mtype, ms, fs, H5P_DEFAULT, t->buf) < 0;
    if (fs >= 0)
        H5Sclose(fs);
    H5Sclose(ms);
    if (bad)
        return fail(t->r, "cannot write %zu rows", t->n_buf);
    t->rows = total;
    t->n_buf = 0;
    return KS_OK;
}

int ks_results_append(struct ks_table *t, const void *recs, size_t n)
{
    const unsigned char *p = recs;
    while (n > 0) {
        size_t k = t->chunk_rows - t->n_buf;
        if (k > n)
            k = n;
        memcpy(t->buf + t->n_buf * t->rec_size, p, k * t->rec_size);
        t->n_buf += k;
        p += k * t->rec_size;
        n -= k;
        if (t->n_buf == t->chunk_rows && flush(t) != KS_OK)
            return KS_EINVAL;
    }
    return KS_OK;
}

// Closes every table (flushing it first when `keep`) and the file; with
// `keep`, the file's image goes to the partial file first. Every HDF5
// object r made is closed whatever fails, so HDF5's exit handler finds
// none open.
static int close_all(struct ks_results *r, int keep)
{
    int st = KS_OK;
    while (r->tables) {
        struct ks_table *t = r->tables;
        r->tables = t->next;
        if (keep && st == KS_OK && flush(t) != KS_OK)
            st = KS_EINVAL;
        H5Dclose(t->dset);
        H5Tclose(t->mtype);
        free(t->buf);
        free(t);
    }
    void *image = NULL;
    ssize_t n = -1;
    if (keep && st == KS_OK) {
        if (H5Fflush(r->file, H5F_SCOPE_GLOBAL) >= 0)
            n = H5Fget_file_image(r->file, NULL, 0);
        image = n > 0 ? malloc((size_t)n) : NULL;
        if (!image || H5Fget_file_image(r->file, image, (size_t)n) != n)
            st = fail(r, "HDF5 cannot make the file's image (%zd bytes)", n);
    }
    if (H5Fclose(r->file) < 0 && keep && st == KS_OK)
        st = fail(r, "HDF5 cannot close the file");
    if (keep && st == KS_OK && fwrite(image, 1, (size_t)n, r->out.f) != (size_t)n) {
        int why = errno ? errno : EIO;
        st = fail(r, "cannot write %s (%s)", r->partial, strerror(why));
    }
    free(image);
    return st;
}

static void destroy(struct ks_results *r)
{
    free(r->path);
    free(r);
}

int ks_results_commit(struct ks_results *r)
{
    errno = 0;
    int st = close_all(r, 1);
    char why[1024];
    if (st == KS_OK && ks_atomicfile_commit(&r->out, why, sizeof why) != KS_OK)
        st = fail(r, "%s", why); // flush, fsync, close or rename: the partial file is gone
    ks_atomicfile_abandon(&r->out); // a no-op after a commit
    destroy(r);
    return st;
}

void ks_results_abort(struct ks_results *r)
{
    if (!r)
        return;
    close_all(r, 0);
    ks_atomicfile_abandon(&r->out);
    destroy(r);
}
