// reads.c - a layer's attention for real: every selected block located
// through its request's resident-pointer table, read where the reading
// rule allows, the kernel launched and its report checked (see
// runtime_impl.h).
#define _GNU_SOURCE // O_DIRECT

#include "runtime_impl.h"

// Waits (mu held) until no needed batch for layers <= layer is on its way,
// or job j (>= 0) has landed. Returns KS_EIO when a lane failed.
int ks_rt_wait_landed(struct rt *t, uint32_t layer, int j)
{
    for (;;) {
        if (t->lane_failed)
            return KS_EIO;
        int busy = j >= 0 ? !t->jobs[j].landed : ks_step_needed_unlanded(t->jobs, t->n_jobs, layer);
        if (!busy)
            return KS_OK;
        pthread_cond_wait(&t->done, &t->mu);
    }
}

// GPU mode: job slot j's event, for the next launch to make the decode
// stream wait for (once per step: a stream wait holds for all later work).
static void note_wait(struct rt *t, uint32_t j)
{
    if (!t->jev[j].waited) {
        t->jev[j].waited = 1;
        t->pend[t->n_pend++] = j;
    }
}

// GPU mode's wait_landed (mu held): waits until every needed batch for
// layers <= layer, or job j (>= 0), has landed or at least been enqueued;
// those not landed yet are noted for the next launch, whose kernel waits for
// them on the device. Returns KS_EIO when a lane failed.
int ks_rt_wait_enqueued(struct rt *t, uint32_t layer, int j)
{
    for (;;) {
        if (t->lane_failed)
            return KS_EIO;
        int busy = 0;
        for (uint32_t i = 0; !busy && i < t->n_jobs; i++) {
            const struct ks_step_job *jb = &t->jobs[i];
            int want = j >= 0 ? i == (uint32_t)j : jb->needed && jb->layer <= layer;
            busy = want && !jb->landed && !t->jev[i].enqueued;
        }
        if (!busy)
            break;
        pthread_cond_wait(&t->done, &t->mu);
    }
    for (uint32_t i = 0; i < t->n_jobs; i++) {
        const struct ks_step_job *jb = &t->jobs[i];
        int want = j >= 0 ? i == (uint32_t)j : jb->needed && jb->layer <= layer;
        if (want && !jb->landed)
            note_wait(t, i);
    }
    return KS_OK;
}

// GPU mode (mu held, no job running): an event for each of n job slots,
// made once per slot.
int ks_rt_grow_events(struct rt *t, uint32_t n)
{
    if (n <= t->cap_jev)
        return KS_OK;
    struct job_event *e = realloc(t->jev, n * sizeof *e);
    if (!e)
        return ks_rt_fail(t, KS_ENOMEM, "%s: %s", "job events");
    t->jev = e;
    memset(e + t->cap_jev, 0, (n - t->cap_jev) * sizeof *e);
    uint32_t from = t->cap_jev;
    t->cap_jev = n; // every slot freed at teardown, made or not
    uint32_t *p = realloc(t->pend, n * sizeof *p);
    if (!p)
        return ks_rt_fail(t, KS_ENOMEM, "%s: %s", "job events");
    t->pend = p;
    for (uint32_t i = from; i < n; i++) {
        char why[KS_KERNEL_ERR_LEN];
        int st = ks_event_new(&e[i].ev, why, sizeof why);
        if (st != KS_KERNEL_OK)
            return ks_rt_cuda_fail(t->err, sizeof t->err, "a job slot's event", st, why);
    }
    return KS_OK;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

void ks_rt_free_device_buffers(struct rt *t)
{
    void *d[] = {t->d_q, t->d_out, t->d_acc_mass, t->d_seq_len, t->d_table, t->d_ksel, t->d_kn_sel,
                 t->d_acc_blocks, t->d_n_acc, t->d_missing, t->d_n_missing, t->d_ws};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        ks_devbuf_free(d[i]);
    t->d_q = t->d_out = t->d_acc_mass = NULL;
    t->d_seq_len = t->d_table = t->d_ksel = t->d_kn_sel = t->d_acc_blocks = t->d_n_acc = NULL;
    t->d_missing = t->d_n_missing = NULL;
    t->d_ws = NULL;
}

void ks_rt_free_host_buffers(struct rt *t)
{
    void *h[] = {t->q, t->out, t->seq_len, t->table, t->ksel, t->kn_sel, t->n_acc, t->n_missing};
    for (size_t i = 0; i < sizeof h / sizeof h[0]; i++)
        ks_rt_host_free(t, h[i]);
    free(t->acc_mass); free(t->acc_blocks); free(t->missing); free(t->ws); free(t->kreq);
    t->kreq = NULL;
    t->q = t->out = t->acc_mass = NULL;
    t->seq_len = t->table = t->ksel = t->kn_sel = t->acc_blocks = t->n_acc = t->missing = t->n_missing = NULL;
    t->ws = NULL;
}

// (Re)sizes the kernel buffers for n sequences (host, and device in GPU mode).
int ks_rt_grow_seqs(struct rt *t, uint32_t n)
{
    if (n <= t->cap_seqs)
        return KS_OK;
    const struct ks_scenario *s = t->s;
    size_t qe = (size_t)s->model.q_heads * s->model.head_dim, mb = t->cap_blocks;
    ks_rt_free_host_buffers(t);
    // what travels to and from the device is pinned in GPU mode
    t->q = ks_rt_host_alloc(t, n * qe * sizeof *t->q);
    t->out = ks_rt_host_alloc(t, n * qe * sizeof *t->out);
    t->acc_mass = malloc(n * mb * sizeof *t->acc_mass);
    t->seq_len = ks_rt_host_alloc(t, n * sizeof *t->seq_len);
    t->table = ks_rt_host_alloc(t, n * mb * sizeof *t->table);
    t->ksel = ks_rt_host_alloc(t, n * mb * sizeof *t->ksel);
    t->kn_sel = ks_rt_host_alloc(t, n * sizeof *t->kn_sel);
    t->acc_blocks = malloc(n * mb * sizeof *t->acc_blocks);
    t->n_acc = ks_rt_host_alloc(t, n * sizeof *t->n_acc);
    t->missing = malloc(n * mb * sizeof *t->missing);
    t->n_missing = ks_rt_host_alloc(t, n * sizeof *t->n_missing);
    t->kreq = malloc(n * sizeof *t->kreq);
    struct ks_decode_params p = {.n_seqs = n, .q_heads = s->model.q_heads, .kv_heads = s->model.kv_heads,
                                 .head_dim = s->model.head_dim, .block_size = s->cache.block_size,
                                 .max_blocks = t->cap_blocks, .max_sel = t->cap_blocks, .report_cap = t->cap_blocks};
    t->ws_bytes = ks_decode_workspace(&p, 1);
    t->ws = malloc(t->ws_bytes ? t->ws_bytes : 1);
    t->cap_seqs = n;
    if (!t->q || !t->out || !t->acc_mass || !t->seq_len || !t->table || !t->ksel || !t->kn_sel ||
        !t->acc_blocks || !t->n_acc || !t->missing || !t->n_missing || !t->ws || !t->kreq)
        return KS_ENOMEM;
    struct ks_rng r;
    ks_rng_seed(&r, t->s->seed ^ 0x9e3779b97f4a7c15ull);
    for (size_t i = 0; i < n * qe; i++)
        t->q[i] = (float)(2 * ks_rng_unit(&r) - 1);
    if (!t->gpu)
        return KS_OK;
    ks_rt_free_device_buffers(t);
    // the device's tables: nothing uploaded yet (the host table is zeroed so
    // that a row's unread entries, uploaded with it, are defined)
    size_t tables = (size_t)s->model.layers * n * mb;
    memset(t->table, 0, n * mb * sizeof *t->table);
    free(t->tshadow);
    free(t->tshadow_ok);
    t->tshadow = malloc(tables * sizeof *t->tshadow);
    t->tshadow_ok = calloc((size_t)s->model.layers * n, 1);
    if (!t->tshadow || !t->tshadow_ok)
        return KS_ENOMEM;
    int st = KS_KERNEL_OK;
    char why[KS_KERNEL_ERR_LEN];
#define DEV(ptr, bytes) \
    do { if (st == KS_KERNEL_OK) st = ks_devbuf_alloc((void **)&(ptr), (bytes), why, sizeof why); } while (0)
    DEV(t->d_q, n * qe * sizeof *t->q);
    DEV(t->d_out, n * qe * sizeof *t->out);
    DEV(t->d_acc_mass, n * mb * sizeof *t->acc_mass);
    DEV(t->d_seq_len, n * sizeof *t->seq_len);
    DEV(t->d_table, tables * sizeof *t->table);
    DEV(t->d_ksel, n * mb * sizeof *t->ksel);
    DEV(t->d_kn_sel, n * sizeof *t->kn_sel);
    DEV(t->d_acc_blocks, n * mb * sizeof *t->acc_blocks);
    DEV(t->d_n_acc, n * sizeof *t->n_acc);
    DEV(t->d_missing, n * mb * sizeof *t->missing);
    DEV(t->d_n_missing, n * sizeof *t->n_missing);
    DEV(t->d_ws, t->ws_bytes ? t->ws_bytes : 1);
#undef DEV
    // on the decode stream, which the kernel runs on
    if (st == KS_KERNEL_OK)
        st = ks_copy_async(t->d_q, t->q, n * qe * sizeof *t->q, t->ds, why, sizeof why);
    if (st == KS_KERNEL_OK)
        st = ks_stream_sync(t->ds, why, sizeof why);
    return st == KS_KERNEL_OK ? KS_OK
                              : ks_rt_cuda_fail(t->err, sizeof t->err, "the kernel's device buffers", st, why);
}

// The negative control (skip_gen_check): whether entry e, which the generation
// check would not pass (or was not asked), is read as it stands. Every entry
// is, unless params.stale_reads limits them: then only that many stale
// entries are, each one of an L1 page that holds other data than block (req,
// l, b)'s (CPU mode), so that each makes its launch read wrong data.
static int trust_unchecked(struct rt *t, const struct ks_loc *e, uint32_t req, uint32_t l, uint32_t b)
{
    if (!t->stale_limited)
        return 1;
    if (t->stale_left == 0 || t->gpu || e->tier != KS_L1 || ks_cache_current(t->c, e))
        return 0;
    ks_rt_kv_block(t, req, l, b, t->kvcheck);
    if (memcmp(page_k(t, e->page), t->kvcheck, t->half) == 0 &&
        memcmp(page_v(t, e->page), t->kvcheck + t->elems, t->half) == 0)
        return 0;
    t->stale_left--;
    return 1;
}

// Where the kernel reads block b of request a in layer l: its L1 page, or a
// scratch page it is copied into (*scratch counts the scratch pages used).
// The page comes from the request's table entry e once its generation check
// has passed; a block that moved since is located afresh (counted), and so
// is a block in this step's batches, whose state (in flight) decides. A
// block in flight is read at its destination once its batch has landed.
// *loc is what was read, for the check after the launch.
static int page_for(struct rt *t, struct ks_loc *e, const struct ks_active *a, uint32_t l, uint32_t b,
                    uint32_t *scratch, uint32_t *page, struct ks_loc *loc)
{
    int st = KS_OK, kept = e->id != NO_ENTRY;
    int moving = kept && e->id < t->n_ids && t->job_of[e->id];
    int checked = kept && !moving && (!t->skip_gen_check || !trust_unchecked(t, e, a->req, l, b));
    if (!kept || moving || (checked && !ks_cache_current(t->c, e))) {
        if (kept && !moving)
            t->x->table_refreshed++;
        if ((st = ks_cache_locate(t->c, a->req, l, b, e)) != KS_OK)
            return st;
    }
    *loc = *e;
    unsigned tier = loc->tier;
    uint32_t pg = loc->page;
    uint32_t j = loc->id < t->n_ids ? t->job_of[loc->id] : 0;
    if (j && loc->state != KS_BLK_RESIDENT) {
        const struct ks_batch *bt = t->jobs[j - 1].b;
        pthread_mutex_lock(&t->mu);
        // GPU mode: a block landing in L1 is read by a kernel that waits for
        // its batch's event; one landing elsewhere goes to a scratch page
        // from its destination, once landed
        if (t->gpu && bt->dst == KS_L1)
            st = ks_rt_wait_enqueued(t, 0, (int)(j - 1));
        else
            st = ks_rt_wait_landed(t, 0, (int)(j - 1));
        pthread_mutex_unlock(&t->mu);
        if (st != KS_OK)
            return st;
        for (uint32_t i = 0; i < bt->n; i++)
            if (bt->blocks[i] == loc->id) {
                tier = bt->dst;
                pg = bt->dst_pages[i];
            }
        t->x->reads_inflight++;
    }
    t->x->reads++;
    if (tier == KS_L1) {
        *page = pg;
        return KS_OK;
    }
    // not in L1: into a scratch page of the L1 arrays
    uint32_t sp = t->l1p + (*scratch)++;
    t->x->reads_scratch++;
    t->r->outside_reads++;
    if (t->gpu) {
        const unsigned char *src = tier == KS_L2 ? page_l2(t, pg) : t->dstage;
        if (tier == KS_L3) {
            char msg[256];
            if (full_io(pread(t->l3fd, t->dstage, 2 * t->half, page_l3(t, pg)), 2 * t->half,
                        "reading a block from the L3 file", msg, sizeof msg) != KS_OK) {
                snprintf(t->err, sizeof t->err, "%s", msg);
                return KS_EIO;
            }
        }
        char why[KS_KERNEL_ERR_LEN];
        st = ks_copy_async(page_k(t, sp), src, t->half, t->ds, why, sizeof why);
        if (st == KS_KERNEL_OK)
            st = ks_copy_async(page_v(t, sp), src + t->half, t->half, t->ds, why, sizeof why);
        if (st == KS_KERNEL_OK)
            st = ks_stream_sync(t->ds, why, sizeof why);
        if (st != KS_KERNEL_OK)
            return ks_rt_cuda_fail(t->err, sizeof t->err, "copying a block into a scratch page", st, why);
        *page = sp;
        return KS_OK;
    }
    if (tier == KS_L2) {
        memcpy(page_k(t, sp), page_l2(t, pg), t->half);
        memcpy(page_v(t, sp), page_l2(t, pg) + t->half, t->half);
    } else {
        struct iovec iov[2] = {{page_k(t, sp), t->half}, {page_v(t, sp), t->half}};
        char msg[256];
        if (full_io(preadv(t->l3fd, iov, 2, page_l3(t, pg)), 2 * t->half, "reading a block from the L3 file", msg,
                    sizeof msg) != KS_OK) {
            snprintf(t->err, sizeof t->err, "%s", msg);
            return KS_EIO;
        }
    }
    *page = sp;
    return KS_OK;
}

// GPU mode: brings layer l's device table (dtab) up to date for the n
// sequences packed in the kernel buffers: the span of rows from the first to
// the last whose entries this launch reads (its selection's) differ from what
// the device holds, or that hold nothing yet, in one copy on the decode
// stream; none when all match (the device reads no other entry). Kernel
// status, the reason in why.
static int upload_table(struct rt *t, uint32_t n, uint32_t l, uint32_t *dtab, char *why, size_t len)
{
    size_t mb = t->cap_blocks;
    uint32_t *sh = t->tshadow + (size_t)l * t->cap_seqs * mb;
    uint8_t *ok = t->tshadow_ok + (size_t)l * t->cap_seqs;
    uint32_t lo = n, hi = 0;
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t *row = t->table + i * mb, *sel = t->ksel + i * mb;
        int changed = !ok[i];
        for (uint32_t j = 0; !changed && j < t->kn_sel[i]; j++)
            changed = sh[i * mb + sel[j]] != row[sel[j]];
        if (changed) {
            lo = lo < i ? lo : i;
            hi = i;
        }
    }
    if (lo == n) {
        t->x->table_uploads_skipped++;
        return KS_KERNEL_OK;
    }
    size_t at = lo * mb, count = (size_t)(hi - lo + 1) * mb;
    memcpy(sh + at, t->table + at, count * sizeof *sh);
    memset(ok + lo, 1, hi - lo + 1);
    t->x->table_uploads++;
    return ks_copy_async(dtab + at, t->table + at, count * sizeof *dtab, t->ds, why, len);
}

// The launch log (runtime.h): the launch that just ran in layer l over n
// sequences, with their outputs, while they fit in t->keep_rows rows.
// Returns its record, or NULL (not logged).
static struct ks_runtime_launch *log_launch(struct rt *t, uint32_t n, uint32_t l)
{
    struct ks_runtime_extra *x = t->x;
    uint64_t step = t->n_steps;
    uint32_t part = t->log_step == step + 1 && t->log_layer == l ? t->log_part + 1 : 0;
    t->log_step = step + 1, t->log_layer = l, t->log_part = part;
    if (t->log_full || x->n_rows + n > t->keep_rows) {
        t->log_full = 1;
        x->launches_unlogged++;
        return NULL;
    }
    size_t re = (size_t)t->s->model.q_heads * t->s->model.head_dim;
    if (!x->out_rows) { // the rows once, at their bound; the launches grow (at most one per row)
        x->out_rows = malloc(t->keep_rows * re * sizeof *x->out_rows);
        x->row_req = malloc(t->keep_rows * sizeof *x->row_req);
        x->row_elems = re;
    }
    if (x->n_launches == t->cap_launches) {
        size_t cap = t->cap_launches ? 2 * t->cap_launches : 256;
        struct ks_runtime_launch *p = realloc(x->launches, cap * sizeof *p);
        if (p) {
            x->launches = p;
            t->cap_launches = cap;
        }
        if (!p || !x->out_rows || !x->row_req) {
            t->log_full = 1;
            x->launches_unlogged++;
            return NULL;
        }
    }
    struct ks_runtime_launch *g = &x->launches[x->n_launches++];
    *g = (struct ks_runtime_launch){.step = (uint32_t)step, .layer = l, .part = part, .n_seqs = n, .row = x->n_rows};
    memcpy(x->out_rows + x->n_rows * re, t->out, n * re * sizeof *t->out);
    memcpy(x->row_req + x->n_rows, t->kreq, n * sizeof *t->kreq);
    x->n_rows += n;
    return g;
}

// Runs the sparse kernel in layer l over the n sequences packed in the
// kernel buffers. GPU mode: the kernel's time is the device's, from an event
// recorded after the decode stream's waits for copies to one after the
// kernel; the host's whole launch is launch_seconds.
static int launch(struct rt *t, uint32_t n, uint32_t l, struct ks_runtime_launch **logged)
{
    const struct ks_scenario *s = t->s;
    struct ks_decode_params p = {
        .n_seqs = n, .q_heads = s->model.q_heads, .kv_heads = s->model.kv_heads, .head_dim = s->model.head_dim,
        .block_size = s->cache.block_size, .n_pages = t->l1p + t->scratch, .max_blocks = t->cap_blocks,
        .scale = 1.0f / sqrtf((float)s->model.head_dim), .q = t->q, .seq_len = t->seq_len,
        .block_table = t->table, .k = t->l1k, .v = t->l1v, .max_sel = t->cap_blocks, .sel = t->ksel,
        .n_sel = t->kn_sel, .out = t->out, .report_cap = t->cap_blocks, .acc_blocks = t->acc_blocks,
        .acc_mass = t->acc_mass, .n_acc = t->n_acc, .missing = t->missing, .n_missing = t->n_missing,
        .workspace = t->ws, .workspace_bytes = t->ws_bytes};
    double t0 = ks_clock_mono();
    int st;
    if (t->gpu) {
        // the step's inputs up, the kernel on the decode stream, the report's counts down
        char why[KS_KERNEL_ERR_LEN];
        size_t rows = (size_t)n * t->cap_blocks * sizeof(uint32_t);
        st = ks_copy_async(t->d_seq_len, t->seq_len, n * sizeof *t->seq_len, t->ds, why, sizeof why);
        uint32_t *dtab = t->d_table + (size_t)l * t->cap_seqs * t->cap_blocks;
        if (st == KS_KERNEL_OK)
            st = upload_table(t, n, l, dtab, why, sizeof why);
        if (st == KS_KERNEL_OK)
            st = ks_copy_async(t->d_ksel, t->ksel, rows, t->ds, why, sizeof why);
        if (st == KS_KERNEL_OK)
            st = ks_copy_async(t->d_kn_sel, t->kn_sel, n * sizeof *t->kn_sel, t->ds, why, sizeof why);
        // then the batches carrying blocks it reads: the kernel waits for
        // their copies on the device (the uploads' sources are pinned: none
        // of them waits on the host)
        for (uint32_t i = 0; st == KS_KERNEL_OK && i < t->n_pend; i++)
            st = ks_event_stream_wait(t->ds, t->jev[t->pend[i]].ev, why, sizeof why);
        t->n_pend = 0;
        p.q = t->d_q, p.seq_len = t->d_seq_len, p.block_table = dtab, p.sel = t->d_ksel;
        p.n_sel = t->d_kn_sel, p.out = t->d_out, p.acc_blocks = t->d_acc_blocks, p.acc_mass = t->d_acc_mass;
        p.n_acc = t->d_n_acc, p.missing = t->d_missing, p.n_missing = t->d_n_missing, p.workspace = t->d_ws;
        // k0 after the waits: the device passes it once the copies are done
        if (st == KS_KERNEL_OK)
            st = ks_event_record(t->k0, t->ds, why, sizeof why);
        if (st == KS_KERNEL_OK)
            st = ks_sparse_decode_cuda(&p, t->ds, why, sizeof why);
        if (st == KS_KERNEL_OK)
            st = ks_event_record(t->k1, t->ds, why, sizeof why);
        if (st == KS_KERNEL_OK)
            st = ks_copy_async(t->n_acc, t->d_n_acc, n * sizeof *t->n_acc, t->ds, why, sizeof why);
        if (st == KS_KERNEL_OK)
            st = ks_copy_async(t->n_missing, t->d_n_missing, n * sizeof *t->n_missing, t->ds, why, sizeof why);
        if (st == KS_KERNEL_OK)
            st = ks_copy_async(t->out, t->d_out, (size_t)n * s->model.q_heads * s->model.head_dim * sizeof *t->out,
                               t->ds, why, sizeof why);
        if (st == KS_KERNEL_OK)
            st = ks_stream_sync(t->ds, why, sizeof why);
        double dev = 0;
        if (st == KS_KERNEL_OK)
            st = ks_event_elapsed(&dev, t->k0, t->k1, why, sizeof why);
        t->x->launch_seconds += ks_clock_mono() - t0;
        t->x->kernel_seconds += dev;
        if (st != KS_KERNEL_OK && st != KS_KERNEL_EINVAL)
            return ks_rt_cuda_fail(t->err, sizeof t->err, "the CUDA sparse decode kernel", st, why);
    } else {
        st = ks_sparse_decode_ref(&p);
        double dt = ks_clock_mono() - t0;
        t->x->kernel_seconds += dt;
        t->x->launch_seconds += dt;
    }
    if (st != KS_KERNEL_OK) {
        snprintf(t->err, sizeof t->err, "the sparse decode kernel refused layer %u: %s", l, ks_kernel_status_str(st));
        return KS_EINVAL;
    }
    t->x->kernel_launches++;
    for (size_t i = 0; i < (size_t)n * s->model.q_heads * s->model.head_dim; i++) {
        t->x->out_checksum += t->out[i];
        t->x->out_magnitude += fabs(t->out[i]);
    }
    for (uint32_t i = 0; i < n; i++)
        if (t->n_acc[i] != t->kn_sel[i] || t->n_missing[i] != 0) {
            snprintf(t->err, sizeof t->err, "the kernel's access report disagrees with the selection (layer %u)", l);
            return KS_EINVAL;
        }
    *logged = log_launch(t, n, l);
    return KS_OK;
}

// One layer's attention for every decoding request, in as few launches as
// the scratch pages allow.
int ks_rt_attend(struct rt *t, uint32_t l, int per_layer)
{
    uint32_t n = 0, scratch = 0;
    struct ks_loc *locs = t->locs;
    size_t n_locs = 0;
    int st = KS_OK;
    const struct ks_active_set *act = &t->d.act;
    for (uint32_t i = 0; st == KS_OK && i <= act->n; i++) {
        const struct ks_active *a = i < act->n ? &act->a[i] : NULL;
        if (a && !ks_active_decodes(a))
            continue;
        const struct selbuf *sb = a ? a->user : NULL;
        uint32_t k = a ? sb->n_sel[per_layer ? l : 0] : 0;
        // launch what is packed when the batch ends or this request could
        // overflow the scratch pages
        if (n > 0 && (!a || scratch + k > t->scratch)) {
            struct ks_runtime_launch *g;
            if ((st = launch(t, n, l, &g)) != KS_OK)
                break;
            for (size_t v = 0; v < n_locs; v++)
                if (ks_cache_validate(t->c, &locs[v]) != KS_OK) {
                    t->x->stale_refused++;
                    if (g)
                        g->stale_refused++;
                }
            n = 0;
            scratch = 0;
            n_locs = 0;
        }
        if (!a)
            break;
        const uint32_t *sel = sb->sel + (size_t)(per_layer ? l : 0) * t->cap_blocks;
        uint32_t *ks = t->ksel + (size_t)n * t->cap_blocks;
        memcpy(ks, sel, k * sizeof *ks);
        qsort(ks, k, sizeof *ks, cmp_u32); // the kernel reads its selection in ascending order
        if (n_locs + k > t->cap_locs) {
            size_t cap = t->cap_locs ? 2 * t->cap_locs : 1024;
            while (cap < n_locs + k)
                cap *= 2;
            struct ks_loc *p = realloc(locs, cap * sizeof *p);
            if (!p) {
                st = ks_rt_fail(t, KS_ENOMEM, "%s: %s", "a layer's reads");
                break;
            }
            locs = t->locs = p;
            t->cap_locs = cap;
        }
        uint32_t *row = t->table + (size_t)n * t->cap_blocks;
        struct ks_loc *ent = sb->ent + (size_t)l * t->cap_blocks;
        for (uint32_t j = 0; st == KS_OK && j < k; j++)
            st = page_for(t, &ent[ks[j]], a, l, ks[j], &scratch, &row[ks[j]], &locs[n_locs++]);
        t->seq_len[n] = a->ctx;
        t->kn_sel[n] = k;
        t->kreq[n] = a->req;
        n++;
    }
    if (st != KS_OK && !t->err[0])
        ks_rt_fail(t, st, "%s: %s", "reading a layer's blocks");
    return st;
}

int ks_rt_note_step(struct rt *t, double per_block)
{
    if (t->n_steps == t->cap_steps) {
        size_t cap = t->cap_steps ? 2 * t->cap_steps : 256;
        double *p = realloc(t->step_kernel, cap * sizeof *p);
        if (!p)
            return KS_ENOMEM;
        t->step_kernel = p;
        t->cap_steps = cap;
    }
    t->step_kernel[t->n_steps++] = per_block;
    return KS_OK;
}
