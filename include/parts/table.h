/* table.h: the aggregation (events -> key_averages rows, self times in one
 * streaming pass, overhead compensation) and the table in PyTorch's layout.
 * One implementation serves the exit summary and the reporter. */
#ifdef SCOPEPROF__IMPL
#ifdef __cplusplus
extern "C" {
#endif

/* ---- Aggregation ---------------------------------------------------------- */
static inline uint64_t scopeprof__hash(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static inline char *scopeprof__strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = (char *)malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

SCOPEPROF__API void scopeprof_agg_init(scopeprof_agg *a) { memset(a, 0, sizeof *a); }

SCOPEPROF__API void scopeprof_agg_free(scopeprof_agg *a) {
    for (uint32_t i = 0; i < a->nrows; i++) {
        free(a->rows[i].key);
        free(a->rows[i].name);
        free(a->rows[i].extra);
    }
    for (uint32_t i = 0; i < a->nthreads; i++) free(a->threads[i].pend);
    free(a->rows);
    free(a->hash);
    free(a->threads);
    memset(a, 0, sizeof *a);
}

SCOPEPROF__INTERNAL int scopeprof__agg_rehash(scopeprof_agg *a, uint32_t hcap) {
    uint32_t *h = (uint32_t *)calloc(hcap, sizeof *h);
    if (!h) return -1;
    for (uint32_t i = 0; i < a->nrows; i++) {
        uint32_t j = (uint32_t)scopeprof__hash(a->rows[i].key) & (hcap - 1);
        while (h[j]) j = (j + 1) & (hcap - 1);
        h[j] = i + 1;
    }
    free(a->hash);
    a->hash = h;
    a->hcap = hcap;
    return 0;
}

SCOPEPROF__API uint32_t scopeprof_agg_row(scopeprof_agg *a, const char *key,
                                          const char *name, const char *extra) {
    if (a->hcap == 0 && scopeprof__agg_rehash(a, 64) != 0) return UINT32_MAX;
    uint32_t j = (uint32_t)scopeprof__hash(key) & (a->hcap - 1);
    for (; a->hash[j]; j = (j + 1) & (a->hcap - 1))
        if (strcmp(a->rows[a->hash[j] - 1].key, key) == 0) return a->hash[j] - 1;
    if (a->nrows == a->cap) {
        uint32_t cap = a->cap ? a->cap * 2 : 64;
        scopeprof_row *r = (scopeprof_row *)realloc(a->rows, cap * sizeof *r);
        if (!r) return UINT32_MAX;
        a->rows = r;
        a->cap = cap;
    }
    scopeprof_row *r = &a->rows[a->nrows];
    memset(r, 0, sizeof *r);
    r->key = scopeprof__strdup(key);
    r->name = scopeprof__strdup(name);
    r->extra = extra ? scopeprof__strdup(extra) : NULL;
    if (!r->key || !r->name || (extra && !r->extra)) {
        free(r->key);
        free(r->name);
        free(r->extra);
        return UINT32_MAX;
    }
    a->hash[j] = ++a->nrows;
    if (a->nrows * 2 > a->hcap) scopeprof__agg_rehash(a, a->hcap * 2); /* keeps old on failure */
    return a->nrows - 1;
}

/* Sums saturate: a reader feeding crafted input must not overflow them. */
static inline void scopeprof__add(int64_t *sum, int64_t v) {
    if (__builtin_add_overflow(*sum, v, sum)) *sum = v > 0 ? INT64_MAX : INT64_MIN;
}

/* Overhead compensation: how much of a scope's measured times its own
 * recording and that of the scopes nested in it added (docs/DESIGN.md,
 * "Overhead compensation"). Let a scope S do work W(S) of its own, and let
 * recording one scope add I inside its own measured interval and O outside
 * it, within its parent's interval (the code between the parent's clock
 * reads and the child's: the emit, the other half of each clock read). I
 * and O depend on the scope's class (below); for one class, S lasts
 *     D(S) = W(S) + I + sum over its children c of (D(c) + O),
 * where without profiling it would last T(S) = W(S) + sum T(c). By
 * induction, D(S) - T(S) = I + nested(S) * (I + O), nested(S) counting all
 * scopes closed inside S at any depth. So
 *     total = D(S) - I - nested(S) * (I + O)
 *     self  = total - sum over children of their totals
 *           = D(S) - sum D(c) - I - children(S) * O   (the measured self, less)
 * Two classes: a short scope (its D under comp_short_below: about as short
 * as an empty one) costs I_s and O_s, one with work in it I and O, so each
 * count above splits in two (the short ones: scopeprof_sums' *_short). Both
 * are linear in the sums of D, the calls, nested and children, so they
 * are applied to a row's sums (scopeprof__agg_add_sums), never per event;
 * self + children's totals = total still holds exactly, as it does for raw
 * times. What is taken out is in picoseconds, and a row keeps what is under
 * a nanosecond (carry): a million 3.6 ns scopes make 3.6 ms, not 4 ms. A
 * sum may come out negative (scopes that ran faster than the typical cost):
 * it is kept as is, so that later sums stay unbiased; what a row shows is
 * scopeprof__comp_shown. */
/* The sum of n[k] * ps[k] over four k: picoseconds to take out, held at
 * INT64_MAX. */
static inline int64_t scopeprof__comp_cut(const uint64_t n[4], const uint64_t ps[4]) {
    uint64_t sum = 0, p;
    for (int k = 0; k < 4; k++)
        if (__builtin_mul_overflow(n[k], ps[k], &p) || __builtin_add_overflow(sum, p, &sum)) return INT64_MAX;
    return sum > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)sum;
}

/* Whether anything is taken out (the self sums are then not clamped per
 * event: scopeprof__comp_shown clamps what is shown). */
static inline int scopeprof__comp_on(const scopeprof_agg *a) {
    return (a->comp_inside_ps | a->comp_outside_ps | a->comp_short_inside_ps | a->comp_short_outside_ps) != 0;
}

/* Add v picoseconds to a compensated sum: *sum ns and *carry ps, kept as
 * floor(value / 1000) and the rest in [0, 1000), so that a value has one
 * form whatever the order and grouping of what was added (the exit summary
 * adds sums per site, the reporter events one by one: the same digits). */
static inline void scopeprof__add_ps(int64_t *sum, int32_t *carry, int64_t v) {
    int64_t c = *carry + v % 1000, whole = v / 1000;
    if (c < 0) c += 1000, whole--;
    else if (c >= 1000) c -= 1000, whole++;
    *carry = (int32_t)c;
    scopeprof__add(sum, whole);
}

/* What a row shows of its compensated sums: total as max(sum, 0), self as
 * that clamped to [0, shown total]. Clamping the sums rather than each event
 * keeps self + children's totals = total. Self can only exceed total when
 * the children's sum is negative (scopes about as short as the calibration,
 * shown as 0): the self shown is then the total, which is total - 0, so the
 * identity still holds for what is shown. */
static inline int64_t scopeprof__comp_shown(const scopeprof_row *r, int self) {
    int64_t t = r->comp_ns[0] > 0 ? r->comp_ns[0] : 0, s = r->comp_ns[1] > 0 ? r->comp_ns[1] : 0;
    return !self ? t : s < t ? s : t;
}

/* Whether what a row shows of its compensated sums was clamped (a sum below
 * zero, or self above the total): its scopes are about as short as the
 * calibration, so its time is not to be trusted: the notes under the table
 * name it (scopeprof_table_notes), which leaves the table's cells as
 * PyTorch's layout has them for the scripts that read them. A row summed
 * from tables (files, ranks) is clamped if a part of it was, though the
 * sum may not be (a rank's self at 0, another's at 8 us). */
static inline int scopeprof__comp_clamped(const scopeprof_agg *a, const scopeprof_row *r) {
    if (a->comp_state != SCOPEPROF_COMP_ON || !r->count) return 0;
    return r->comp_clamped || r->comp_ns[0] < 0 || r->comp_ns[1] < 0 || r->comp_ns[1] > r->comp_ns[0];
}

/* ---- Sums of many events -------------------------------------------------
 * Rows (r->unit) and the exit summary's call sites (summary.h) keep the
 * sums of scopeprof_sums in the units fed; scopeprof_agg_flush adds them to
 * the rows' ns columns here. Everything the table shows is linear in these
 * sums, so the row comes out as if each event had been converted and
 * compensated: compensation takes out I per call, I + O per scope nested in
 * a call (total) and O per direct child (self), by the formulas above. */
typedef struct scopeprof__sitesum {
    scopeprof_sums t; /* in clock ticks */
    int64_t gpu_total_ns, gpu_self_ns;
    int64_t cpu_mem, self_cpu_mem, gpu_mem, self_gpu_mem;
    uint64_t seen; /* the writer's: the site is in its first-seen order (summary.h) */
    uint64_t unused_; /* 128 bytes in all: the writer finds a site's sums with a shift */
} scopeprof__sitesum;

/* A sum in the units fed, in ns (truncated, as scopeprof_ticks_ns). */
static inline int64_t scopeprof__unit_ns(const scopeprof_agg *a, int64_t v) {
    if (a->unit_ns == 0 || a->unit_ns == 1.0) return v;
    double x = (double)v * a->unit_ns;
    return x >= 9.2e18 ? INT64_MAX : x <= -9.2e18 ? INT64_MIN : (int64_t)x;
}

SCOPEPROF__INTERNAL void scopeprof__agg_add_sums(scopeprof_agg *a, uint32_t row,
                                                 const scopeprof_sums *s) {
    scopeprof_row *r = &a->rows[row];
    r->count += s->count;
    int64_t total = scopeprof__unit_ns(a, s->total), self = scopeprof__unit_ns(a, s->self);
    if (scopeprof__comp_on(a)) {
        /* Compensated sums in ns and ps (scopeprof__add_ps); what the row
         * shows moves by the change of its clamped value. Each count in
         * two: the scopes with work, the short ones. */
        const uint64_t in = a->comp_inside_ps, out = a->comp_outside_ps;
        const uint64_t in_s = a->comp_short_inside_ps, out_s = a->comp_short_outside_ps;
        const uint64_t calls[2] = {s->count - s->count_short, s->count_short};
        const uint64_t total_n[4] = {calls[0], calls[1], s->nested - s->nested_short, s->nested_short};
        const uint64_t total_ps[4] = {in, in_s, in + out, in_s + out_s};
        const uint64_t self_n[4] = {calls[0], calls[1], s->children - s->children_short, s->children_short};
        const uint64_t self_ps[4] = {in, in_s, out, out_s};
        int64_t shown_total = scopeprof__comp_shown(r, 0), shown_self = scopeprof__comp_shown(r, 1);
        scopeprof__add(&r->comp_ns[0], total);
        scopeprof__add_ps(&r->comp_ns[0], &r->comp_carry_ps[0], -scopeprof__comp_cut(total_n, total_ps));
        scopeprof__add(&r->comp_ns[1], self);
        scopeprof__add_ps(&r->comp_ns[1], &r->comp_carry_ps[1], -scopeprof__comp_cut(self_n, self_ps));
        scopeprof__add(&r->total_ns, scopeprof__comp_shown(r, 0) - shown_total);
        scopeprof__add(&r->self_ns, scopeprof__comp_shown(r, 1) - shown_self);
        r->count_short += s->count_short;
    } else {
        scopeprof__add(&r->total_ns, total);
        scopeprof__add(&r->self_ns, self);
    }
}

SCOPEPROF__API void scopeprof_agg_flush(scopeprof_agg *a) {
    for (uint32_t i = 0; i < a->nrows; i++) {
        scopeprof_sums *u = &a->rows[i].unit;
        if (!(u->count | (uint64_t)u->total | (uint64_t)u->self)) continue;
        scopeprof__agg_add_sums(a, i, u);
        memset(u, 0, sizeof *u);
    }
}

SCOPEPROF__API void scopeprof_agg_units(scopeprof_agg *a, double unit_ns) {
    if (a->unit_ns == unit_ns) return;
    scopeprof_agg_flush(a);
    a->unit_ns = unit_ns;
}

/* ---- Event by event: the reporter's (SCOPEPROF_AGGREGATION) --------------------
 * The exit summary sums per call site (summary.h) and never feeds events one
 * by one: a recording program compiles none of this. */
#ifdef SCOPEPROF_AGGREGATION
SCOPEPROF__INTERNAL scopeprof_agg_thread *scopeprof__agg_thread(scopeprof_agg *a, uint32_t thread) {
    if (thread >= a->nthreads) {
        uint32_t n = thread + 1 > a->nthreads * 2 ? thread + 1 : a->nthreads * 2;
        scopeprof_agg_thread *t = (scopeprof_agg_thread *)realloc(a->threads, (size_t)n * sizeof *t);
        if (!t) return NULL;
        memset(t + a->nthreads, 0, (size_t)(n - a->nthreads) * sizeof *t);
        a->threads = t;
        a->nthreads = n;
    }
    return &a->threads[thread];
}

/* Fold the pending levels deeper than `depth` into level `depth` (made if
 * missing): their scopes' parent did not close first (a longjmp left it),
 * so they belong to the scope that closes at depth - 1, or to the innermost
 * open one; a level that overlaps what is gathered holds a range, and is
 * dropped. The writer's rule (summary.h, scopeprof__sum_gather). Out of
 * line. */
SCOPEPROF__INTERNAL void scopeprof__agg_fold(scopeprof_agg_thread *th, uint32_t depth) {
    uint32_t i = th->n;
    while (i && th->pend[i - 1].depth > depth) i--;
    if (i == th->n) return;
    uint32_t to = i && th->pend[i - 1].depth == depth ? i - 1 : i++;
    scopeprof_agg_pending *p = &th->pend[to];
    p->depth = depth;
    for (; i < th->n; i++) {
        const scopeprof_agg_pending *x = &th->pend[i];
        if (x->n && p->n && x->min_start < p->max_end) continue; /* overlaps: a range's, dropped */
        if (x->n && (p->n == 0 || x->min_start < p->min_start)) p->min_start = x->min_start;
        if (x->n && (p->n == 0 || x->max_end > p->max_end)) p->max_end = x->max_end;
        p->n += x->n, p->n_short += x->n_short, p->nested += x->nested, p->nested_short += x->nested_short;
        scopeprof__add(&p->sum, x->sum);
        scopeprof__add(&p->gpu_ns, x->gpu_ns);
        for (int m = 0; m < 2; m++) scopeprof__add(&p->mem_direct[m], x->mem_direct[m]), scopeprof__add(&p->mem_kids[m], x->mem_kids[m]);
    }
    th->n = to + 1;
}

/* The pending level of children at `depth`, pushed empty if it is not on
 * top (deeper ones folded into it first). NULL if out of memory. */
SCOPEPROF__INTERNAL scopeprof_agg_pending *scopeprof__agg_level(scopeprof_agg_thread *th,
                                                                 uint32_t depth) {
    if (th->n && th->pend[th->n - 1].depth > depth) scopeprof__agg_fold(th, depth);
    if (th->n && th->pend[th->n - 1].depth == depth) return &th->pend[th->n - 1];
    if (th->n == th->cap) {
        uint32_t n = th->cap ? th->cap * 2 : 8;
        scopeprof_agg_pending *p = (scopeprof_agg_pending *)realloc(th->pend, (size_t)n * sizeof *p);
        if (!p) return NULL;
        th->pend = p;
        th->cap = n;
    }
    scopeprof_agg_pending *p = &th->pend[th->n++];
    memset(p, 0, sizeof *p);
    p->depth = depth;
    return p;
}

/* Self time in one pass over events in close order. Children close before
 * their parent, so when a scope at depth d closes, the scopes that closed at
 * depth d+1 since the last scope at depth d closed are exactly its direct
 * children: the pending level d+1 holds the sum of their durations. Children
 * that do not lie inside the parent (mismatched BEGIN/END) are not
 * subtracted. Any depth the writer can write (30 bits) is counted. Times are
 * in the units fed (a_units); the row's CPU sums wait in r->unit until
 * scopeprof_agg_flush converts and compensates them. Speed: a leaf (no
 * pending level, the usual case) reads and adds nothing for its children,
 * and sums that would only add 0 (no GPU time, no memory) are skipped. */
static inline __attribute__((always_inline)) int
scopeprof__agg_event(scopeprof_agg *a, uint32_t thread, uint32_t row, uint64_t start, uint64_t end,
                     uint32_t depth, int64_t gpu_ns) {
    scopeprof_row *r = &a->rows[row];
    int64_t dur = end < start ? 0 : end - start > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)(end - start);
    const uint32_t is_short = (uint64_t)dur < a->comp_short_below; /* compensation's class */
    a->events++;
    r->unit.count++;
    r->unit.count_short += is_short;
    scopeprof__add(&r->unit.total, dur);
    if (gpu_ns >= 0) a->has_gpu = 1;
    scopeprof_agg_thread *th = thread < a->nthreads ? &a->threads[thread] : scopeprof__agg_thread(a, thread);
    if (!th) {
        scopeprof__add(&r->unit.self, dur);
        if (gpu_ns > 0) scopeprof__add(&r->gpu_total_ns, gpu_ns), scopeprof__add(&r->gpu_self_ns, gpu_ns);
        return -1;
    }
    /* Input not in close order (a file we did not write) gives wrong self
     * times, and cannot be put right in one pass: count it so the caller can
     * say so. */
    if (end < th->last_end && a->unordered++ == 0) a->unordered_thread = thread;
    if (end > th->last_end) th->last_end = end;
    /* Our children's level is consumed (deeper ones folded into it first).
     * It is read in place: nothing is pushed on the stack before we are
     * done. */
    const scopeprof_agg_pending *kids = NULL;
    if (th->n && th->pend[th->n - 1].depth > (uint64_t)depth + 1) scopeprof__agg_fold(th, depth + 1);
    uint32_t n = th->n; /* in a register: the stores below could alias th->n */
    if (n && th->pend[n - 1].depth == (uint64_t)depth + 1) kids = &th->pend[--n];
    th->n = n;
    int64_t self = dur, kids_gpu = 0;
    int has_mem = 0; /* else this scope's memory sums are all 0 */
    int inside = 0;
    if (kids) {
        inside = kids->n && kids->min_start >= start && kids->max_end <= end;
        if (inside && __builtin_sub_overflow(dur, kids->sum, &self)) self = INT64_MIN;
        kids_gpu = inside ? kids->gpu_ns : 0;
        has_mem = (kids->mem_direct[0] | kids->mem_direct[1] | kids->mem_kids[0] | kids->mem_kids[1]) != 0;
    }
    int64_t gpu_total = kids_gpu, gpu_self = 0;
    if (gpu_ns >= 0) {
        gpu_total = gpu_ns;
        gpu_self = kids_gpu <= gpu_ns ? gpu_ns - kids_gpu : 0;
    }
    /* Children that were not subtracted (not inside) are not compensated
     * for either. Self is clamped per event only when nothing will be
     * compensated (the raw times PyTorch shows); compensated sums stay
     * unclamped until shown (scopeprof__comp_shown). */
    uint64_t nested = inside ? kids->nested : 0, nested_short = inside ? kids->nested_short : 0;
    scopeprof__add(&r->unit.self, scopeprof__comp_on(a) || self > 0 ? self : 0);
    r->unit.nested += nested;
    r->unit.children += inside ? kids->n : 0;
    r->unit.nested_short += nested_short;
    r->unit.children_short += inside ? kids->n_short : 0;
    if (gpu_total) scopeprof__add(&r->gpu_total_ns, gpu_total);
    if (gpu_self > 0) scopeprof__add(&r->gpu_self_ns, gpu_self);
    int64_t mem_total[2] = {0, 0}; /* CPU, GPU: made in this scope or its children */
    if (has_mem) { /* self: made directly in it */
        for (int m = 0; m < 2; m++) {
            mem_total[m] = kids->mem_direct[m];
            scopeprof__add(&mem_total[m], kids->mem_kids[m]);
        }
        scopeprof__add(&r->cpu_mem, mem_total[0]);
        scopeprof__add(&r->self_cpu_mem, kids->mem_direct[0]);
        scopeprof__add(&r->gpu_mem, mem_total[1]);
        scopeprof__add(&r->self_gpu_mem, kids->mem_direct[1]);
    }
    if (depth == 0) { /* no parent to tell: the thread holds nothing now */
        th->n = 0;
        if (th->pend) {
            free(th->pend);
            th->pend = NULL;
            th->cap = 0;
        }
        return 0;
    }
    /* Our level is usually on top already: the call only to push it. */
    scopeprof_agg_pending *mine = n && th->pend[n - 1].depth == depth ? &th->pend[n - 1]
                                                                       : scopeprof__agg_level(th, depth);
    if (!mine) return -1;
    if (mine->n == 0 || start < mine->min_start) mine->min_start = start;
    if (mine->n == 0 || end > mine->max_end) mine->max_end = end;
    mine->n++;
    mine->n_short += is_short;
    mine->nested += 1 + nested; /* at most one per event: cannot overflow */
    mine->nested_short += is_short + nested_short;
    scopeprof__add(&mine->sum, dur);
    if (gpu_total) scopeprof__add(&mine->gpu_ns, gpu_total);
    if (has_mem) {
        scopeprof__add(&mine->mem_kids[0], mem_total[0]);
        scopeprof__add(&mine->mem_kids[1], mem_total[1]);
    }
    return 0;
}

SCOPEPROF__API int scopeprof_agg_event_gpu(scopeprof_agg *a, uint32_t thread, uint32_t row,
                                           uint64_t start, uint64_t end, uint32_t depth,
                                           int64_t gpu_ns) {
    return scopeprof__agg_event(a, thread, row, start, end, depth, gpu_ns);
}

SCOPEPROF__API int scopeprof_agg_mem(scopeprof_agg *a, uint32_t thread, uint32_t depth,
                                     uint32_t device, int64_t bytes) {
    if (device) a->has_gpu_mem = 1;
    else a->has_mem = 1;
    if (depth == 0) return 0; /* made outside every scope: no row holds it */
    scopeprof_agg_thread *th = scopeprof__agg_thread(a, thread);
    scopeprof_agg_pending *p = th ? scopeprof__agg_level(th, depth) : NULL;
    if (!p) return -1;
    scopeprof__add(&p->mem_direct[device ? 1 : 0], bytes);
    return 0;
}

SCOPEPROF__API int scopeprof_agg_event(scopeprof_agg *a, uint32_t thread, uint32_t row,
                                       uint64_t start, uint64_t end, uint32_t depth) {
    return scopeprof_agg_event_gpu(a, thread, row, start, end, depth, -1);
}

#endif /* SCOPEPROF_AGGREGATION */

SCOPEPROF__API int64_t scopeprof_agg_gpu_self_total(const scopeprof_agg *a) {
    int64_t s = 0;
    for (uint32_t i = 0; i < a->nrows; i++)
        if (a->rows[i].gpu_role != SCOPEPROF_ROW_LAUNCHER) scopeprof__add(&s, a->rows[i].gpu_self_ns);
    return s;
}

SCOPEPROF__API int64_t scopeprof_agg_self_total(const scopeprof_agg *a) {
    int64_t s = 0;
    for (uint32_t i = 0; i < a->nrows; i++) scopeprof__add(&s, a->rows[i].self_ns);
    return s;
}

static const char *const scopeprof__sort_names[] = {
    "cpu_time_total",   "self_cpu_time_total",   "cpu_time",
    "count",            "gpu_time_total",        "self_gpu_time_total",
    "gpu_time",         "cpu_memory_usage",      "self_cpu_memory_usage",
    "gpu_memory_usage", "self_gpu_memory_usage",
};

SCOPEPROF__API int scopeprof_sort_parse(const char *s, scopeprof_sort *out) {
    char buf[64];
    if (!s) return -1;
    /* PyTorch's cuda_* spellings, and its current device_* ones, are
     * aliases of gpu_* (self_ before them too). */
    size_t self = strncmp(s, "self_", 5) == 0 ? 5 : 0;
    size_t dev = strncmp(s + self, "cuda_", 5) == 0 ? 5 : strncmp(s + self, "device_", 7) == 0 ? 7 : 0;
    if (dev) {
        if (strlen(s) >= sizeof buf) return -1;
        snprintf(buf, sizeof buf, "%.*sgpu_%s", (int)self, s, s + self + dev);
        s = buf;
    }
    for (size_t i = 0; i < sizeof scopeprof__sort_names / sizeof *scopeprof__sort_names; i++)
        if (strcmp(s, scopeprof__sort_names[i]) == 0) {
            *out = (scopeprof_sort)i;
            return 0;
        }
    return -1;
}

SCOPEPROF__API const char *scopeprof_sort_keys(void) {
    return "cpu_time_total self_cpu_time_total cpu_time count gpu_time_total "
           "self_gpu_time_total gpu_time cpu_memory_usage self_cpu_memory_usage "
           "gpu_memory_usage self_gpu_memory_usage (cuda_*, device_* = gpu_*)";
}

static inline double scopeprof__sort_value(const scopeprof_row *r, scopeprof_sort k) {
    double n = r->count ? (double)r->count : 1.0;
    switch (k) {
    case SCOPEPROF_SORT_CPU_TIME_TOTAL: return (double)r->total_ns;
    case SCOPEPROF_SORT_SELF_CPU_TIME_TOTAL: return (double)r->self_ns;
    case SCOPEPROF_SORT_CPU_TIME: return (double)r->total_ns / n;
    case SCOPEPROF_SORT_COUNT: return (double)r->count;
    case SCOPEPROF_SORT_GPU_TIME_TOTAL: return (double)r->gpu_total_ns;
    case SCOPEPROF_SORT_SELF_GPU_TIME_TOTAL: return (double)r->gpu_self_ns;
    case SCOPEPROF_SORT_GPU_TIME: return (double)r->gpu_total_ns / n;
    case SCOPEPROF_SORT_CPU_MEMORY_USAGE: return (double)r->cpu_mem;
    case SCOPEPROF_SORT_SELF_CPU_MEMORY_USAGE: return (double)r->self_cpu_mem;
    case SCOPEPROF_SORT_GPU_MEMORY_USAGE: return (double)r->gpu_mem;
    case SCOPEPROF_SORT_SELF_GPU_MEMORY_USAGE: return (double)r->self_gpu_mem;
    }
    return 0;
}

/* How many rows a table of `rows` rows shows under `row_limit` (<= 0: all):
 * the first that many in scopeprof_agg_sorted's order. One rule for the
 * tables (the exit's, the MPI job's) and the notes under them. */
static inline uint32_t scopeprof__rows_shown(uint32_t rows, int row_limit) {
    return row_limit > 0 && (uint32_t)row_limit < rows ? (uint32_t)row_limit : rows;
}

SCOPEPROF__ONCE SCOPEPROF__API uint32_t *scopeprof_agg_sorted(const scopeprof_agg *a, scopeprof_sort key) {
    uint32_t n = a->nrows;
    uint32_t *idx = (uint32_t *)malloc((n ? n : 1) * sizeof *idx);
    uint32_t *tmp = (uint32_t *)malloc((n ? n : 1) * sizeof *tmp);
    double *v = (double *)malloc((n ? n : 1) * sizeof *v); /* each row's key, once */
    if (!idx || !tmp || !v) {
        free(idx);
        free(tmp);
        free(v);
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++) idx[i] = i, v[i] = scopeprof__sort_value(&a->rows[i], key);
    /* Bottom-up merge sort: stable, so ties keep first-seen order. */
    for (uint32_t w = 1; w < n; w *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * w) {
            uint32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            uint32_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) tmp[o++] = v[idx[j]] > v[idx[i]] ? idx[j++] : idx[i++];
            while (i < mid) tmp[o++] = idx[i++];
            while (j < hi) tmp[o++] = idx[j++];
        }
        uint32_t *s = idx;
        idx = tmp;
        tmp = s;
    }
    free(tmp);
    free(v);
    return idx;
}

SCOPEPROF__API char *scopeprof_format_time(char *buf, size_t n, double us) {
    if (us >= 1e6 || us <= -1e6) snprintf(buf, n, "%.3fs", us / 1e6);
    else if (us >= 1e3 || us <= -1e3) snprintf(buf, n, "%.3fms", us / 1e3);
    else snprintf(buf, n, "%.3fus", us);
    return buf;
}

SCOPEPROF__API char *scopeprof_format_mem(char *buf, size_t n, int64_t bytes) {
    const double kb = 1024.0, mb = kb * 1024, gb = mb * 1024;
    double a = bytes < 0 ? -(double)bytes : (double)bytes;
    if (a >= gb) snprintf(buf, n, "%.2f Gb", (double)bytes / gb);
    else if (a >= mb) snprintf(buf, n, "%.2f Mb", (double)bytes / mb);
    else if (a >= kb) snprintf(buf, n, "%.2f Kb", (double)bytes / kb);
    else snprintf(buf, n, "%" PRId64 " b", bytes);
    return buf;
}

static inline void scopeprof__percent(char *buf, size_t n, int64_t num, int64_t den) {
    if (den == 0) snprintf(buf, n, "NaN");
    else snprintf(buf, n, "%.2f%%", 100.0 * (double)num / (double)den);
}

/* Text as a table shows it: a name (of a scope, a thread, a file) may hold
 * anything, and printed raw an escape sequence in it retitles or clears the
 * user's terminal, a newline breaks the table (issue 25). C0 controls and
 * DEL become \xNN, the C1 controls (U+0080-U+009F, UTF-8 C2 80-C2 9F)
 * \u00NN; the rest is kept. Writes what fits in n bytes (whole escapes
 * only, NUL-terminated) and returns the whole length, as snprintf. */
static inline size_t scopeprof__escaped(char *dst, size_t n, const char *src) {
    static const char hex[] = "0123456789abcdef";
    size_t len = 0, put = 0;
    for (const unsigned char *p = (const unsigned char *)src; *p; p++) {
        char e[8];
        size_t k = 0;
        if (*p < 0x20 || *p == 0x7f) {
            e[k++] = '\\', e[k++] = 'x', e[k++] = hex[*p >> 4], e[k++] = hex[*p & 15];
        } else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
            p++;
            memcpy(e, "\\u00", 4), k = 4, e[k++] = hex[*p >> 4], e[k++] = hex[*p & 15];
        } else {
            e[k++] = (char)*p;
        }
        if (dst && put == len && len + k < n) memcpy(dst + len, e, k), put += k;
        len += k;
    }
    if (dst && n) dst[put] = 0;
    return len;
}

/* s as shown (scopeprof__escaped): s itself when nothing in it needs an
 * escape, else a copy in *copy, to free (s again if out of memory). */
static inline const char *scopeprof__shown(const char *s, char **copy) {
    size_t l = scopeprof__escaped(NULL, 0, s);
    *copy = l == strlen(s) ? NULL : (char *)malloc(l + 1);
    if (!*copy) return s;
    scopeprof__escaped(*copy, l + 1, s);
    return *copy;
}

/* A name as the Name column shows it, in dst (SCOPEPROF__NAME_W + 1 bytes):
 * escaped, and cut to `w` with "..." at its end. The notes under the table
 * name rows the same way, so no line grows with a name. */
enum { SCOPEPROF__NAME_W = 55 }; /* PyTorch's widest Name column */
static inline const char *scopeprof__name_cell(char *dst, const char *raw, int w) {
    char *copy;
    const char *s = scopeprof__shown(raw, &copy);
    int cut = (int)strlen(s) > w;
    snprintf(dst, SCOPEPROF__NAME_W + 1, "%.*s%s", cut ? w - 3 : w, s, cut ? "..." : "");
    free(copy);
    return dst;
}

SCOPEPROF__API const char *scopeprof_more_rows(char *b, size_t n, uint32_t rows, long limit, const char *knob,
                                               const char *all) {
    if (limit <= 0 || (uint64_t)limit >= rows) return NULL;
    uint32_t more = rows - (uint32_t)limit;
    snprintf(b, n, "... %u more row%s (%s%ld of %u; %s shows all)", more, more == 1 ? "" : "s", knob, limit, rows, all);
    return b;
}

/* One table cell: right-aligned in `w`, then two spaces (the last cell too). */
static inline void scopeprof__cell(FILE *out, const char *s, int w) {
    fprintf(out, "%*s  ", w, s);
}

SCOPEPROF__ONCE SCOPEPROF__API void scopeprof_table_print(FILE *out, const scopeprof_agg *a,
                                          scopeprof_sort key, int row_limit) {
    enum { NUM_W = 12, SHAPES_MAX_W = 80, SRC_MAX_W = 75 }; /* PyTorch's */
    static const char *const heads[] = {
        "Self CPU %", "Self CPU",     "CPU total %", "CPU total", "CPU time avg",
        "Self GPU",   "Self GPU %",   "GPU total",   "GPU time avg",
        "CPU Mem",    "Self CPU Mem", "GPU Mem",     "Self GPU Mem", "# of Calls"};
    int show[14];
    for (int c = 0; c < 14; c++)
        show[c] = c < 5 || c == 13 || (c < 9 ? a->has_gpu : c < 11 ? a->has_mem : a->has_gpu_mem);
    uint32_t *idx = scopeprof_agg_sorted(a, key);
    if (!idx) return;
    uint32_t nshow = scopeprof__rows_shown(a->nrows, row_limit);

    /* Widths come from every row, shown or not, as PyTorch's _build_table
     * does: a table keeps its shape whatever the row limit. */
    int name_w = 4, extra_w = 0;
    for (uint32_t i = 0; i < a->nrows; i++) {
        const scopeprof_row *r = &a->rows[i];
        int l = (int)scopeprof__escaped(NULL, 0, r->name) + 4;
        if (l > name_w) name_w = l;
        if (r->extra && (int)scopeprof__escaped(NULL, 0, r->extra) > extra_w)
            extra_w = (int)scopeprof__escaped(NULL, 0, r->extra);
    }
    if (name_w > SCOPEPROF__NAME_W) name_w = SCOPEPROF__NAME_W;
    const char *eh = a->extra_header;
    if (eh && (int)strlen(eh) > extra_w) extra_w = (int)strlen(eh);
    /* PyTorch's text columns: Input Shapes at most 80 wide, cut at the end;
     * a source location (or our stack) at most 75, keeping its end, the
     * innermost part, behind "...". */
    int shapes = eh && strcmp(eh, "Input Shapes") == 0;
    if (extra_w > (shapes ? SHAPES_MAX_W : SRC_MAX_W)) extra_w = shapes ? SHAPES_MAX_W : SRC_MAX_W;

    char sep[512];
    size_t sl = 0;
    int widths[16], nw = 0;
    widths[nw++] = name_w;
    for (int c = 0; c < 14; c++)
        if (show[c]) widths[nw++] = NUM_W;
    if (eh) widths[nw++] = extra_w;
    for (int c = 0; c < nw; c++) { /* at most 55 + 14 * 12 + 75 + 2 * 16 < 512 */
        memset(sep + sl, '-', (size_t)widths[c]);
        sl += (size_t)widths[c];
        sep[sl++] = ' ';
        sep[sl++] = ' ';
    }
    sep[sl] = 0;

    fprintf(out, "%s\n", sep);
    scopeprof__cell(out, "Name", name_w);
    for (int c = 0; c < 14; c++)
        if (show[c]) scopeprof__cell(out, heads[c], NUM_W);
    if (eh) scopeprof__cell(out, eh, extra_w);
    fprintf(out, "\n%s\n", sep);

    int64_t self_total = scopeprof_agg_self_total(a), gpu_self_total = scopeprof_agg_gpu_self_total(a);
    for (uint32_t i = 0; i < nshow; i++) {
        const scopeprof_row *r = &a->rows[idx[i]];
        char name[SCOPEPROF__NAME_W + 1], b[64], *extra_copy = NULL;
        double n = r->count ? (double)r->count : 1.0;
        scopeprof__cell(out, scopeprof__name_cell(name, r->name, name_w), name_w);
        scopeprof__percent(b, sizeof b, r->self_ns, self_total);
        scopeprof__cell(out, b, NUM_W);
        scopeprof__cell(out, scopeprof_format_time(b, sizeof b, (double)r->self_ns / 1e3), NUM_W);
        scopeprof__percent(b, sizeof b, r->total_ns, self_total);
        scopeprof__cell(out, b, NUM_W);
        scopeprof__cell(out, scopeprof_format_time(b, sizeof b, (double)r->total_ns / 1e3), NUM_W);
        scopeprof__cell(out, scopeprof_format_time(b, sizeof b, (double)r->total_ns / 1e3 / n), NUM_W);
        if (a->has_gpu) {
            scopeprof__cell(out, scopeprof_format_time(b, sizeof b, (double)r->gpu_self_ns / 1e3), NUM_W);
            scopeprof__percent(b, sizeof b, r->gpu_self_ns, gpu_self_total);
            scopeprof__cell(out, b, NUM_W);
            scopeprof__cell(out, scopeprof_format_time(b, sizeof b, (double)r->gpu_total_ns / 1e3), NUM_W);
            scopeprof__cell(out, scopeprof_format_time(b, sizeof b, (double)r->gpu_total_ns / 1e3 / n), NUM_W);
        }
        if (a->has_mem) {
            scopeprof__cell(out, scopeprof_format_mem(b, sizeof b, r->cpu_mem), NUM_W);
            scopeprof__cell(out, scopeprof_format_mem(b, sizeof b, r->self_cpu_mem), NUM_W);
        }
        if (a->has_gpu_mem) {
            scopeprof__cell(out, scopeprof_format_mem(b, sizeof b, r->gpu_mem), NUM_W);
            scopeprof__cell(out, scopeprof_format_mem(b, sizeof b, r->self_gpu_mem), NUM_W);
        }
        snprintf(b, sizeof b, "%" PRIu64, r->count);
        scopeprof__cell(out, b, NUM_W);
        if (eh) {
            const char *x = r->extra ? scopeprof__shown(r->extra, &extra_copy) : "";
            char cut[SHAPES_MAX_W + 1];
            size_t xl = strlen(x);
            if ((int)xl > extra_w && shapes) x = (snprintf(cut, sizeof cut, "%.*s", extra_w, x), cut);
            else if ((int)xl > extra_w) x = (snprintf(cut, sizeof cut, "...%s", x + xl - (size_t)(extra_w - 3)), cut);
            scopeprof__cell(out, x, extra_w);
            free(extra_copy);
        }
        fputc('\n', out);
    }
    char b[64];
    fprintf(out, "%s\nSelf CPU time total: %s\n", sep,
            scopeprof_format_time(b, sizeof b, (double)self_total / 1e3));
    if (a->has_gpu)
        fprintf(out, "Self GPU time total: %s\n",
                scopeprof_format_time(b, sizeof b, (double)gpu_self_total / 1e3));
    free(idx);
}

/* Widen the footer's range [*lo, *hi] (ps) by inside + outside (held at
 * UINT32_MAX); `first`: the range is empty, and starts there. */
static inline void scopeprof__comp_range(uint32_t *lo, uint32_t *hi, uint32_t inside_ps, uint32_t outside_ps,
                                         int first) {
    uint32_t each = inside_ps + outside_ps < inside_ps ? UINT32_MAX : inside_ps + outside_ps;
    if (first || each < *lo) *lo = each;
    if (first || each > *hi) *hi = each;
}

SCOPEPROF__API void scopeprof_agg_calibration(scopeprof_agg *a, uint32_t inside_ps,
                                              uint32_t outside_ps, int apply) {
    if (a->comp_inside_ps != (apply ? inside_ps : 0) || a->comp_outside_ps != (apply ? outside_ps : 0) ||
        (!apply && a->comp_short_below))
        scopeprof_agg_flush(a); /* what was fed before keeps its own calibration */
    a->comp_inside_ps = apply ? inside_ps : 0;
    a->comp_outside_ps = apply ? outside_ps : 0;
    if (!apply) a->comp_short_inside_ps = a->comp_short_outside_ps = 0, a->comp_short_below = 0; /* raw: none */
    scopeprof__comp_range(&a->comp_lo_ps, &a->comp_hi_ps, inside_ps, outside_ps,
                          a->comp_state != SCOPEPROF_COMP_ON && a->comp_state != SCOPEPROF_COMP_OFF_RAW);
    a->comp_state = apply ? SCOPEPROF_COMP_ON : SCOPEPROF_COMP_OFF_RAW;
}

SCOPEPROF__ONCE SCOPEPROF__API void scopeprof_agg_short_class(scopeprof_agg *a, uint32_t inside_ps, uint32_t outside_ps,
                                              uint64_t below) {
    const int apply = a->comp_state == SCOPEPROF_COMP_ON && below;
    if (a->comp_short_inside_ps != (apply ? inside_ps : 0) || a->comp_short_outside_ps != (apply ? outside_ps : 0) ||
        a->comp_short_below != (apply ? below : 0))
        scopeprof_agg_flush(a); /* what was fed before keeps its own calibration */
    a->comp_short_inside_ps = apply ? inside_ps : 0;
    a->comp_short_outside_ps = apply ? outside_ps : 0;
    a->comp_short_below = apply ? below : 0;
    if (below) scopeprof__comp_range(&a->comp_short_lo_ps, &a->comp_short_hi_ps, inside_ps, outside_ps, !a->comp_short_hi_ps);
}

/* "X ns" or "X-Y ns" (a range over files). */
static inline void scopeprof__ns_range(char *b, size_t n, uint32_t lo_ps, uint32_t hi_ps) {
    if (lo_ps == hi_ps) snprintf(b, n, "%.1f ns", lo_ps / 1e3);
    else snprintf(b, n, "%.1f-%.1f ns", lo_ps / 1e3, hi_ps / 1e3);
}

/* Whether a row's times are mostly the profiler's own: most of its calls
 * were in the short class, and a call shows on average less than one short
 * scope costs (the short class's inside + outside, the largest over files).
 * By calls alone, a wait that is mostly found ready but sometimes blocks
 * for milliseconds (pigz's writer: 1573 of 2289 calls under 50 ns, 8.9 s in
 * all) was named. The average is over all calls: against the short calls'
 * cost alone, a leaf whose calls were 60% short on a loaded machine (19 ns a
 * call shown, 26 ns a scope) was not. */
static inline int scopeprof__mostly_own(const scopeprof_agg *a, const scopeprof_row *r) {
    return r->count_short > r->count / 2 && (double)r->total_ns * 1e3 < (double)r->count * a->comp_short_hi_ps;
}

/* One line: `head`, then the names (the first 10, each name once: rows of
 * one name per thread, say) of the rows whose shown compensated times were
 * clamped, or with short_calls 1, of those whose times are mostly the
 * profiler's own and that were not clamped (a row is named once). Only rows
 * the table showed are named (shown[i], or all when shown is NULL); the
 * others are counted. Nothing if there are none. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__note_rows(FILE *out, const scopeprof_agg *a,
                                                              const unsigned char *shown, int short_calls,
                                                              const char *head) {
    uint32_t n = 0, hidden = 0;
    char names[10][SCOPEPROF__NAME_W + 1]; /* as in the table */
    for (uint32_t i = 0; i < a->nrows; i++) {
        const scopeprof_row *r = &a->rows[i];
        int clamped = scopeprof__comp_clamped(a, r), seen = 0;
        if (short_calls ? clamped || !scopeprof__mostly_own(a, r) : !clamped) continue;
        char name[SCOPEPROF__NAME_W + 1];
        scopeprof__name_cell(name, r->name, SCOPEPROF__NAME_W);
        for (uint32_t k = 0; k < n && k < 10; k++) seen |= strcmp(names[k], name) == 0;
        if (seen) continue;
        if (shown && !shown[i]) {
            hidden++;
            continue;
        }
        if (n == 0) fputs(head, out);
        if (n < 10) { /* comma-separated: C++ names hold spaces (`void ns::f(int) [with T = int]`) */
            memcpy(names[n], name, sizeof name);
            fprintf(out, n ? ", %s" : " %s", name);
        }
        n++;
    }
    if (n > 10) fprintf(out, " and %u more", n - 10);
    if (hidden) fprintf(out, "%s%s%u row(s) not shown above", n ? " (and " : head, n ? "" : " ", hidden);
    if (n && hidden) fputc(')', out);
    if (n || hidden) fputc('\n', out);
}

/* One line each, so that a script that stops at "Self CPU time total"
 * (PyTorch's last line) reads the table as before. The rows named are those
 * of a table printed with `key` and `row_limit` (scopeprof_table_print's). */
SCOPEPROF__ONCE SCOPEPROF__API void scopeprof_table_notes_shown(FILE *out, const scopeprof_agg *a, scopeprof_sort key,
                                                                int row_limit) {
    fprintf(out, "CPU time is wall time on the thread, as in PyTorch: a thread's waits "
                 "(locks, I/O, sleep) count as its self time\n");
    char each[48], short_ns[48], short_each[128] = "";
    scopeprof__ns_range(each, sizeof each, a->comp_lo_ps, a->comp_hi_ps);
    if (a->comp_short_hi_ps) { /* the short class */
        scopeprof__ns_range(short_ns, sizeof short_ns, a->comp_short_lo_ps, a->comp_short_hi_ps);
        snprintf(short_each, sizeof short_each, "; %s per short one, about as short as an empty scope", short_ns);
    }
    unsigned char *shown = NULL; /* the rows printed, when a limit cut some */
    uint32_t nshow = scopeprof__rows_shown(a->nrows, row_limit);
    uint32_t *idx = a->comp_state == SCOPEPROF_COMP_ON && nshow < a->nrows ? scopeprof_agg_sorted(a, key) : NULL;
    if (idx && (shown = (unsigned char *)calloc(a->nrows, 1)) != NULL)
        for (uint32_t i = 0; i < nshow; i++) shown[idx[i]] = 1;
    free(idx);
    switch (a->comp_state) {
    case SCOPEPROF_COMP_ON:
        fprintf(out, "Overhead compensation: %s per nested scope taken out (calibrated at start-up%s; "
                     "raw times: SCOPEPROF_COMPENSATE=0, or scopeprof table --no-compensate)\n", each, short_each);
        scopeprof__note_rows(out, a, shown, 0, "Overhead compensation clamped at 0 or at their total (scopes about as "
                                               "short as the calibration; --no-compensate shows raw times):");
        scopeprof__note_rows(out, a, shown, 1, "Mostly the profiler's own cost (most calls about as short as an empty "
                                               "scope; their times are not to be trusted):");
        break;
    case SCOPEPROF_COMP_OFF_RAW:
        fprintf(out, "Overhead compensation: off (--no-compensate); calibrated at start-up: %s per "
                     "nested scope%s\n", each, short_each);
        break;
    case SCOPEPROF_COMP_OFF_ENV:
        fprintf(out, "Overhead compensation: off (SCOPEPROF_COMPENSATE=0)\n");
        break;
    default: break;
    }
    free(shown);
}

SCOPEPROF__ONCE SCOPEPROF__API void scopeprof_table_notes(FILE *out, const scopeprof_agg *a) {
    scopeprof_table_notes_shown(out, a, SCOPEPROF_SORT_CPU_TIME_TOTAL, 0);
}

#ifdef __cplusplus
}
#endif
#endif /* table.h */
