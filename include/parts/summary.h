/* summary.h: the exit summary's sums. The writer feeds every event it writes
 * here, in each thread's close order, so this is the profiler's per-event
 * work beyond the recording itself (issue 22): a few adds per event, no
 * division, no call in the common path. Per call site it keeps the sums of
 * table.h's scopeprof__sitesum; per thread, one level per depth holding what
 * the scopes closed at that depth since their parent opened (the children a
 * parent's self time subtracts). The table's rows are made from the site sums
 * when it is printed (scopeprof__sum_fold), grouped by name as key_averages()
 * does, in the order each site's first event was written (the order ties
 * keep); the sums are in clock ticks, converted and compensated once per
 * row there (scopeprof_agg_flush, table.h). All under `lock` (g->sum). */
#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON
#ifdef __cplusplus
extern "C" {
#endif

/* The exit table's row of the steps (PROFILE_STEP), PyTorch's name: made
 * here, and left out of the profiler's own cost (file.h). */
#define SCOPEPROF__STEPS_ROW "ProfilerStep*"

/* The most levels a thread keeps (128 bytes each: 8 MiB): a bound against
 * a depth that only grows (a scope that never closes, in a loop). A scope
 * at depth D takes levels D and D + 1 (its children's); from depth 65535
 * on, scopeprof__sum_deep sums it. Short records hold depths under 4096. */
#define SCOPEPROF__SUM_MAX_DEPTH 65536u

/* The array arr of *cap elements of `size` bytes with room for `need`: the
 * same, or grown by doubling (from `first`) with the new elements zeroed and
 * *cap updated; NULL when out of memory (arr is then unchanged). One rule
 * for the summary's arrays. */
SCOPEPROF__INTERNAL void *scopeprof__sum_grow(void *arr, uint32_t *cap, uint32_t need, size_t size, uint32_t first) {
    if (need <= *cap) return arr;
    uint32_t c = *cap ? *cap : first;
    while (c < need) c *= 2;
    char *v = (char *)realloc(arr, (size_t)c * size);
    if (!v) return NULL;
    memset(v + (size_t)*cap * size, 0, (size_t)(c - *cap) * size);
    *cap = c;
    return v;
}

/* Append v to the first-seen order (a site id, or a shaped sum's index with
 * SCOPEPROF__SHAPED_ORDER). 0, or -1 when out of memory. */
SCOPEPROF__INTERNAL int scopeprof__sum_order(scopeprof__state *g, uint32_t v) {
    uint32_t *o = (uint32_t *)scopeprof__sum_grow(g->sum.order, &g->sum.order_cap, g->sum.norder + 1, sizeof *o, 64);
    if (!o) return -1;
    g->sum.order = o;
    g->sum.order[g->sum.norder++] = v;
    return 0;
}

/* Room for site `site`, thread slot `slot` and a scope at `depth` (its level
 * and its children's), and the site's place in the first-seen order. Out of
 * line: the first event of a site or a thread, a new depth. 0, or -1 when out
 * of memory (the event is then left out of the summary, as per-event
 * aggregation left out what it could not place). site UINT32_MAX: none. */
SCOPEPROF__INTERNAL int scopeprof__sum_room(scopeprof__state *g, uint32_t slot, uint32_t site,
                                           uint32_t depth) {
    if (site != UINT32_MAX) {
        scopeprof__sitesum *v = (scopeprof__sitesum *)scopeprof__sum_grow(g->sum.site, &g->sum.site_cap, site + 1,
                                                                           sizeof *v, 256);
        if (!v) return -1;
        g->sum.site = v;
    }
    scopeprof__levels *t = (scopeprof__levels *)scopeprof__sum_grow(g->sum.thr, &g->sum.thr_cap, slot + 1, sizeof *t, 16);
    if (!t) return -1;
    g->sum.thr = t;
    scopeprof__levels *L = &g->sum.thr[slot];
    if (depth + 2 <= SCOPEPROF__SUM_MAX_DEPTH) { /* doubling from 16: never past it */
        scopeprof__level *v = (scopeprof__level *)scopeprof__sum_grow(L->lv, &L->cap, depth + 2, sizeof *v, 16);
        if (!v) return -1;
        L->lv = v;
    }
    if (site != UINT32_MAX && !g->sum.site[site].seen) {
        if (scopeprof__sum_order(g, site) != 0) return -1;
        g->sum.site[site].seen = 1;
    }
    return 0;
}

/* Gather the levels above `keep` into level `keep`. They hold scopes whose
 * parent did not close before the scope now closing at keep - 1 (or the
 * innermost open one, for memory). When a longjmp (Lua's errors and
 * yields, libpng's) left that parent, they lie in the closing scope's
 * interval, after what the levels above them hold: its children for self
 * time, as a trace read by time nests them (dropped, their time counted
 * twice: Lua's catcher showed 73 ms of self time of 97 in all). A range
 * (PROFILE_BEGIN) closes at the depth it began at, after scopes shallower
 * than it: a level that began before the levels above it ended holds one,
 * overlaps them, and is dropped as before (gathered, main{ f{ BEGIN R }
 * g{} END R } lost R's time twice from main's self). Out of line: only
 * scopes left without closing, and ranges that outlive their scope, need
 * it. */
SCOPEPROF__INTERNAL void scopeprof__sum_gather(scopeprof__levels *L, uint32_t keep) {
    scopeprof__level *to = &L->lv[keep];
    for (uint32_t k = keep + 1; k <= L->top && k < L->cap; k++) {
        scopeprof__level *x = &L->lv[k];
        if (x->n && to->n && ~x->not_start < to->max_end) { /* overlaps: a range's */
            memset(x, 0, sizeof *x);
            continue;
        }
        to->sum += x->sum;
        if (x->not_start > to->not_start) to->not_start = x->not_start;
        if (x->max_end > to->max_end) to->max_end = x->max_end;
        to->nested += x->nested, to->nested_short += x->nested_short;
        to->n += x->n, to->n_short += x->n_short, to->rare |= x->rare;
        to->gpu_ns += x->gpu_ns;
        for (int m = 0; m < 2; m++) to->mem_direct[m] += x->mem_direct[m], to->mem_kids[m] += x->mem_kids[m];
        memset(x, 0, sizeof *x);
    }
    if (L->top > keep) L->top = keep;
}

/* GPU time and memory of one scope (rare: a GPU scope, or children that
 * allocated): scopeprof__agg_event's rules for them. */
SCOPEPROF__INTERNAL void scopeprof__sum_rare(scopeprof__state *g, scopeprof__sitesum *s,
                                             const scopeprof__level *kids, int inside,
                                             scopeprof__level *mine, int64_t gpu_ns) {
    int64_t kids_gpu = kids && inside ? kids->gpu_ns : 0, gpu_total = kids_gpu, gpu_self = 0;
    if (gpu_ns >= 0) {
        g->sum.has_gpu = 1;
        gpu_total = gpu_ns;
        gpu_self = kids_gpu <= gpu_ns ? gpu_ns - kids_gpu : 0;
    }
    s->gpu_total_ns += gpu_total;
    if (gpu_self > 0) s->gpu_self_ns += gpu_self;
    int64_t mem_total[2] = {0, 0};
    if (kids) {
        for (int m = 0; m < 2; m++) mem_total[m] = kids->mem_direct[m] + kids->mem_kids[m];
        s->cpu_mem += mem_total[0];
        s->self_cpu_mem += kids->mem_direct[0];
        s->gpu_mem += mem_total[1];
        s->self_gpu_mem += kids->mem_direct[1];
    }
    if (!mine) return;
    mine->gpu_ns += gpu_total;
    mine->mem_kids[0] += mem_total[0];
    mine->mem_kids[1] += mem_total[1];
    mine->rare |= (gpu_total | mem_total[0] | mem_total[1]) != 0;
}

/* The children of a scope that scopeprof__sum_at's common path leaves: they
 * do not lie inside it, or hold GPU time or memory, or it is a GPU scope
 * (gpu_ns >= 0). Their sums go to s as there, and their level `kids` is
 * emptied. Returns the scopes nested in it, and in *up the short ones among
 * them for its parent (0 when the children are not its own). */
SCOPEPROF__INTERNAL uint64_t scopeprof__sum_kids(scopeprof__state *g, scopeprof__sitesum *s, scopeprof__level *kids,
                                                 uint64_t start, uint64_t end, int has_parent, int64_t gpu_ns,
                                                 int comp, uint64_t *up) {
    int64_t sum = kids->sum;
    uint32_t children = kids->n;
    uint64_t nested = kids->nested;
    if (kids->not_start > ~start || kids->max_end > end) sum = 0, nested = 0, children = 0; /* not inside */
    int64_t self = (int64_t)(end - start) - sum, lo = comp ? INT64_MIN : 0; /* clamped at 0 without compensation */
    s->t.self += self < lo ? lo : self;
    s->t.nested += nested;
    s->t.children += children;
    *up = 0;
    if (children) { /* inside */
        *up = kids->nested_short;
        s->t.nested_short += *up;
        s->t.children_short += kids->n_short;
    }
    if (kids->rare | (gpu_ns >= 0))
        scopeprof__sum_rare(g, s, kids->rare ? kids : NULL, children != 0, has_parent ? kids - 1 : NULL, gpu_ns);
    memset(kids, 0, sizeof *kids); /* emptied, the rare sums too */
    return nested;
}

/* A scope that closed at `depth` (start, end: ticks), added to its level
 * for its parent to take: itself and the scopes nested in it (`nested`
 * with itself, `nested_short` of the short class), `is_short` whether it
 * is short itself. Its depth is the deepest that may hold something now. */
static inline __attribute__((always_inline)) void
scopeprof__sum_up(scopeprof__levels *L, uint32_t depth, uint64_t start, uint64_t end, uint64_t nested,
                  uint64_t nested_short, uint64_t is_short) {
    if (depth) {
        scopeprof__level *mine = &L->lv[depth];
        mine->sum += (int64_t)(end - start);
        mine->nested += nested;
        mine->n++;
        mine->nested_short += nested_short;
        mine->n_short += is_short;
        if (~start > mine->not_start) mine->not_start = ~start;
        if (end > mine->max_end) mine->max_end = end;
    }
    L->top = depth;
}

/* A scope too deep for its children's level (SCOPEPROF__SUM_MAX_DEPTH, or
 * out of memory): its children were not kept. Where its own level is kept,
 * it takes all its time as self and goes to that level for its parent, as
 * a leaf; deeper, it takes none: its time stays in the self time of the
 * nearest scope around it that the levels keep (a recursion's scope at the
 * last level; main, past scopes a computed goto left open). So the self
 * times still add up to the threads' time (before, each took its total as
 * self: a 59 ms recursion 140,000 deep showed 50 s). Counted, said at exit;
 * `scopeprof table` on the trace has them exact. */
SCOPEPROF__INTERNAL void scopeprof__sum_deep(scopeprof__state *g, scopeprof__levels *L, scopeprof__sitesum *s,
                                             uint64_t start, uint64_t end, uint32_t depth, int64_t gpu_ns,
                                             uint64_t is_short) {
    if (!g->life.deep++ || depth < g->life.deep_at) g->life.deep_at = depth;
    if (depth < L->cap) {
        s->t.self += (int64_t)(end - start);
        scopeprof__sum_up(L, depth, start, end, 1, is_short, is_short);
    }
    if (gpu_ns >= 0) scopeprof__sum_rare(g, s, NULL, 0, NULL, gpu_ns);
}

/* One finished scope (start <= end, ticks) at `depth` of the thread whose
 * levels are L, once scopeprof__sum_lacks said nothing is missing.
 * gpu_ns: its GPU time, or -1 for a CPU scope. `comp`: compensation is
 * applied (self sums are then not clamped per event: table.h); `below`:
 * a scope shorter than that (ticks) is in compensation's short class. The caller
 * counts the events (g->sum.events). A scope takes its level below as its
 * children (a leaf's, past `top`, is empty: not read) unless they do not
 * lie inside it, empties it, and adds itself to its own level for its
 * parent. Children that began before it: a range that outlived the scope
 * it began in; that ended after it: a signal handler's scope that landed in
 * its close after its clock read, written first (docs/DESIGN.md). Those,
 * GPU time and memory take scopeprof__sum_kids, out of line: the inlined
 * path is a leaf's, or a parent's whose CPU children lie inside it. */
static inline __attribute__((always_inline)) void
scopeprof__sum_at(scopeprof__state *g, scopeprof__levels *L, scopeprof__sitesum *s, uint64_t start,
                  uint64_t end, uint32_t depth, int64_t gpu_ns, int comp, uint64_t below) {
    int64_t dur = (int64_t)(end - start);
    const uint64_t is_short = end - start < below; /* compensation's class */
    s->t.count++;
    s->t.count_short += is_short;
    s->t.total += dur;
    if (__builtin_expect(depth + 2 > L->cap, 0)) { /* no level for its children */
        scopeprof__sum_deep(g, L, s, start, end, depth, gpu_ns, is_short);
        return;
    }
    if (__builtin_expect(L->top <= depth && gpu_ns < 0, 1)) { /* a leaf */
        s->t.self += dur;
        scopeprof__sum_up(L, depth, start, end, 1, is_short, is_short);
        return;
    }
    uint64_t nested, up; /* scopes nested in it; the short ones, for its parent */
    if (L->top > depth + 1) scopeprof__sum_gather(L, depth + 1);
    scopeprof__level *kids = &L->lv[depth + 1];
    if (__builtin_expect((kids->not_start > ~start) | (kids->max_end > end) | kids->rare | (gpu_ns >= 0), 0)) {
        nested = scopeprof__sum_kids(g, s, kids, start, end, depth != 0, gpu_ns, comp, &up);
    } else { /* its children, CPU scopes inside it */
        int64_t self = dur - kids->sum, lo = comp ? INT64_MIN : 0; /* clamped at 0 without compensation */
        s->t.self += self < lo ? lo : self;
        nested = kids->nested, up = kids->nested_short;
        s->t.nested += nested;
        s->t.children += kids->n;
        s->t.nested_short += up;
        s->t.children_short += kids->n_short;
        memset(kids, 0, offsetof(scopeprof__level, gpu_ns)); /* emptied (the rest is 0 unless rare) */
    }
    scopeprof__sum_up(L, depth, start, end, 1 + nested, is_short + up, is_short);
}

/* n more scopes of the site whose sums are s, at `depth`, of durations
 * summing to dur, the last ending at `last_end`, n_short of them short (all
 * or none): each closed right after one of the same site and depth that
 * scopeprof__sum_at summed, and neither started before the one before it
 * nor ended before it ended. So each is a leaf (nothing closed between
 * them), their level's earliest start stays, and its latest end is the
 * last one's: what n calls of scopeprof__sum_at would do. */
static inline void scopeprof__sum_run(scopeprof__levels *L, scopeprof__sitesum *s, uint32_t depth, uint32_t n,
                                      uint64_t dur, uint64_t last_end, uint64_t n_short) {
    s->t.count += n;
    s->t.count_short += n_short;
    s->t.total += (int64_t)dur;
    s->t.self += (int64_t)dur;
    if (depth) {
        scopeprof__level *mine = &L->lv[depth];
        mine->n += n;
        mine->n_short += n_short;
        mine->nested += n;
        mine->nested_short += n_short;
        mine->sum += (int64_t)dur;
        if (last_end > mine->max_end) mine->max_end = last_end;
    }
}

/* Whether the site's sums (sites[site], of site_cap: g->sum's, or the
 * writer's copies in locals) or the depth's levels are missing, for
 * scopeprof__sum_room to make. (The writer's common path writes the same
 * test out: writer.h, scopeprof__sum_span.) */
static inline int scopeprof__sum_lacks(const scopeprof__sitesum *sites, uint32_t site_cap, const scopeprof__levels *L,
                                       uint32_t site, uint32_t depth) {
    return site >= site_cap || !sites[site].seen || depth + 2 > L->cap;
}

/* ---- Input shapes (SCOPEPROF_GROUP_BY=shape) -----------------------------
 * A scope recorded with its input shapes (PROFILE_SCOPE_SHAPE) is summed per
 * call site and shape: one sitesum per distinct pair, made at its first
 * event, in g->sum.shaped, found through an open-addressing hash of the
 * pair. Its place in the first-seen order is its index with the top bit
 * set (site ids stay far below it). Only records with a shape come here;
 * without the setting, they sum to their site as any scope. */
#define SCOPEPROF__SHAPED_ORDER 0x80000000u
typedef struct scopeprof__shapesum {
    scopeprof__sitesum s;
    uint32_t site, m;
    uint64_t hash;
    uint64_t *w; /* the m words (format.h, "Input shapes") */
} scopeprof__shapesum;

/* The index of the sums of (site, the shape in `units` slots at u), made on
 * first use; UINT32_MAX when the words do not parse (the scope then sums to
 * its site) or out of memory. */
SCOPEPROF__INTERNAL uint32_t scopeprof__sum_shaped(scopeprof__state *g, uint32_t site, const scopeprof__slot *u,
                                                   uint32_t units) {
    uint64_t m = u[0].start, h = site * 0x9E3779B97F4A7C15ull;
    if (m > 2 * (uint64_t)units - 1 || m > SCOPEPROF_SHAPE_MAX_WORDS) return UINT32_MAX;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const scopeprof__word *w = (const scopeprof__word *)(const void *)u + 1; /* as emit_shaped stored them */
#else
    uint64_t w[SCOPEPROF_SHAPE_MAX_WORDS];
    for (uint32_t j = 1; j <= m; j++)
        w[j - 1] = j & 1 ? (uint64_t)u[j / 2].dur | (uint64_t)u[j / 2].key << 32 : u[j / 2].start;
#endif
    for (uint32_t j = 0; j < m; j++) h = (h ^ w[j]) * 0x100000001B3ull;
    h ^= h >> 29;
    uint32_t i = g->sum.shaped_hcap ? (uint32_t)h & (g->sum.shaped_hcap - 1) : 0;
    for (uint32_t k; g->sum.shaped_hcap && (k = g->sum.shaped_hash[i]) != 0; i = (i + 1) & (g->sum.shaped_hcap - 1)) {
        const scopeprof__shapesum *x = &g->sum.shaped[k - 1];
        if (x->hash != h || x->site != site || x->m != m) continue;
        uint32_t j = 0;
        while (j < m && x->w[j] == w[j]) j++;
        if (j == m) return k - 1; /* found: its words were checked when it was made */
    }
    /* A new one: checked, then made. */
    if (scopeprof_shape_check((const uint64_t *)w, (uint32_t)m) < 0) return UINT32_MAX;
    if (2 * (g->sum.nshaped + 1) > g->sum.shaped_hcap) { /* grow (and make) the hash */
        uint32_t cap = g->sum.shaped_hcap ? 2 * g->sum.shaped_hcap : 64;
        uint32_t *v = (uint32_t *)calloc(cap, sizeof *v);
        if (!v) return UINT32_MAX;
        for (uint32_t k = 0; k < g->sum.nshaped; k++) {
            uint32_t at = (uint32_t)g->sum.shaped[k].hash & (cap - 1);
            while (v[at]) at = (at + 1) & (cap - 1);
            v[at] = k + 1;
        }
        free(g->sum.shaped_hash);
        g->sum.shaped_hash = v;
        g->sum.shaped_hcap = cap;
    }
    i = (uint32_t)h & (g->sum.shaped_hcap - 1);
    while (g->sum.shaped_hash[i]) i = (i + 1) & (g->sum.shaped_hcap - 1);
    scopeprof__shapesum *v = (scopeprof__shapesum *)scopeprof__sum_grow(g->sum.shaped, &g->sum.shaped_cap,
                                                                         g->sum.nshaped + 1, sizeof *v, 16);
    if (!v) return UINT32_MAX;
    g->sum.shaped = v;
    scopeprof__shapesum *x = &g->sum.shaped[g->sum.nshaped];
    if (!(x->w = (uint64_t *)malloc(m ? m * sizeof *x->w : 1))) return UINT32_MAX;
    if (scopeprof__sum_order(g, SCOPEPROF__SHAPED_ORDER | g->sum.nshaped) != 0) {
        free(x->w);
        return UINT32_MAX;
    }
    for (uint32_t j = 0; j < m; j++) x->w[j] = w[j];
    x->site = site, x->m = (uint32_t)m, x->hash = h;
    x->s.seen = 1;
    g->sum.shaped_hash[i] = g->sum.nshaped + 1;
    return g->sum.nshaped++;
}

/* scopeprof__sum_at with the room made first if needed: for the records
 * off the common path (long ones, a schedule's or GPU scopes' spans), out of
 * line, so that the common path alone has sum_at inlined. `units` slots at
 * `shape` hold its input shapes (0: none). */
SCOPEPROF__INTERNAL __attribute__((noinline)) void scopeprof__sum_event(scopeprof__state *g, scopeprof__levels *L, uint32_t site, uint64_t start,
                                        uint64_t end, uint32_t depth, int64_t gpu_ns, int comp, uint64_t below,
                                        const scopeprof__slot *shape, uint32_t units) {
    uint32_t slot = (uint32_t)(L - g->sum.thr), k = UINT32_MAX;
    if (units && g->cfg.group_shape) k = scopeprof__sum_shaped(g, site, shape, units);
    if (k != UINT32_MAX) { /* the sums of its site and shapes: room for its levels only */
        if (depth + 2 > L->cap && scopeprof__sum_room(g, slot, UINT32_MAX, depth) != 0) return;
    } else if (__builtin_expect(scopeprof__sum_lacks(g->sum.site, g->sum.site_cap, L, site, depth), 0) &&
               scopeprof__sum_room(g, slot, site, depth) != 0) {
        return;
    }
    scopeprof__sum_at(g, L, k != UINT32_MAX ? &g->sum.shaped[k].s : &g->sum.site[site], start, end, depth, gpu_ns,
                      comp, below);
}

/* An allocation (bytes > 0) or free on `device` (0: CPU) made while `depth`
 * scopes were open on the thread: it counts to the innermost of them. */
SCOPEPROF__INTERNAL void scopeprof__sum_mem(scopeprof__state *g, uint32_t slot, uint32_t depth,
                                            uint32_t device, int64_t bytes) {
    if (device) g->sum.has_gpu_mem = 1;
    else g->sum.has_mem = 1;
    if (depth == 0 || depth >= SCOPEPROF__SUM_MAX_DEPTH) return; /* outside every scope: no row; or too deep */
    if (slot >= g->sum.thr_cap || depth + 1 > g->sum.thr[slot].cap) { /* its level only: a scope's at depth - 1 */
        if (scopeprof__sum_room(g, slot, UINT32_MAX, depth - 1) != 0) return;
    }
    scopeprof__levels *L = &g->sum.thr[slot];
    if (L->top > depth) scopeprof__sum_gather(L, depth);
    L->lv[depth].mem_direct[device ? 1 : 0] += bytes;
    L->lv[depth].rare = 1;
    if (L->top < depth) L->top = depth;
}

/* A thread slot's levels are all closed (its thread is gone): free them for
 * the slot's next thread. */
static inline void scopeprof__sum_thread_gone(scopeprof__state *g, uint32_t slot) {
    if (slot >= g->sum.thr_cap) return;
    free(g->sum.thr[slot].lv);
    memset(&g->sum.thr[slot], 0, sizeof g->sum.thr[slot]);
}

/* The table's rows (g->sum.agg) from the site sums: one row per name, in
 * first-seen order; by_shape: one per name and input shapes, with the
 * Input Shapes column (the reporter's --group-by shape: key and text alike). */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__sum_fold(scopeprof__state *g, int by_shape) {
    /* Made afresh from the site sums, which hold the whole file so far: a
     * second fold (MPI_Finalize's job table, then the exit's) still converts
     * each row's sums once, as the reporter does. The calibration stays. */
    scopeprof_agg *a = &g->sum.agg;
    scopeprof_agg kept = *a;
    scopeprof_agg_free(a);
    scopeprof_agg_init(a);
    a->comp_inside_ps = kept.comp_inside_ps, a->comp_outside_ps = kept.comp_outside_ps;
    a->comp_short_inside_ps = kept.comp_short_inside_ps, a->comp_short_outside_ps = kept.comp_short_outside_ps;
    a->comp_short_below = kept.comp_short_below;
    a->comp_state = kept.comp_state, a->comp_lo_ps = kept.comp_lo_ps, a->comp_hi_ps = kept.comp_hi_ps;
    a->comp_short_lo_ps = kept.comp_short_lo_ps, a->comp_short_hi_ps = kept.comp_short_hi_ps;
    scopeprof__calibrate(g);
    scopeprof_agg_units(a, g->clock.ns_per_tick); /* the sums below are in ticks */
    a->has_gpu |= g->sum.has_gpu;
    a->has_mem |= g->sum.has_mem;
    a->has_gpu_mem |= g->sum.has_gpu_mem;
    if (by_shape) a->extra_header = "Input Shapes";
    char text[4096], key[8192];
    for (uint32_t i = 0; i < g->sum.norder; i++) {
        uint32_t site = g->sum.order[i];
        scopeprof__sitesum *s;
        const char *shape = "[]"; /* a scope without shapes, as PyTorch shows one */
        if (site & SCOPEPROF__SHAPED_ORDER) {
            scopeprof__shapesum *x = &g->sum.shaped[site & ~SCOPEPROF__SHAPED_ORDER];
            s = &x->s;
            site = x->site;
            scopeprof_shape_format(text, sizeof text, x->w, x->m);
            shape = text;
        } else {
            s = &g->sum.site[site];
        }
        if (s->t.count == 0 && !s->gpu_total_ns && !s->cpu_mem && !s->gpu_mem) continue;
        const scopeprof__siterec *sr = scopeprof__site_find(g, site);
        const char *name = sr ? sr->name : "<unknown>";
        if (by_shape) snprintf(key, sizeof key, "%s\x1f%s", name, shape);
        uint32_t row = scopeprof_agg_row(a, by_shape ? key : name, name, by_shape ? shape : NULL);
        if (row != UINT32_MAX) {
            scopeprof_row *r = &a->rows[row];
            a->events += s->t.count;
            r->unit.count += s->t.count;
            scopeprof__add(&r->unit.total, s->t.total);
            scopeprof__add(&r->unit.self, s->t.self);
            r->unit.nested += s->t.nested;
            r->unit.children += s->t.children;
            r->unit.count_short += s->t.count_short;
            r->unit.nested_short += s->t.nested_short;
            r->unit.children_short += s->t.children_short;
            scopeprof__add(&r->gpu_total_ns, s->gpu_total_ns);
            scopeprof__add(&r->gpu_self_ns, s->gpu_self_ns);
            scopeprof__add(&r->cpu_mem, s->cpu_mem);
            scopeprof__add(&r->self_cpu_mem, s->self_cpu_mem);
            scopeprof__add(&r->gpu_mem, s->gpu_mem);
            scopeprof__add(&r->self_gpu_mem, s->self_gpu_mem);
        }
    }
    /* The steps as PyTorch's ProfilerStep* row, as the reporter makes it
     * from the file's STEPS chunk: a call per step, CPU total their time
     * (ns as written there), no self time (which thread's scopes a step
     * holds is not known). */
    uint32_t steps = UINT32_MAX;
    for (uint32_t i = g->sum.step_first; i < g->sched.nsteps; i++) {
        if (!scopeprof__step_kept(g, i)) continue;
        if (steps == UINT32_MAX &&
            (steps = scopeprof_agg_row(a, by_shape ? SCOPEPROF__STEPS_ROW "\x1f[]" : SCOPEPROF__STEPS_ROW,
                                       SCOPEPROF__STEPS_ROW, by_shape ? "[]" : NULL)) == UINT32_MAX)
            break;
        scopeprof_row *r = &a->rows[steps];
        r->count++;
        a->events++;
        scopeprof__add(&r->total_ns, (int64_t)(scopeprof__to_ns(g, g->sched.steps[i].end) -
                                               scopeprof__to_ns(g, g->sched.steps[i].start)));
    }
    scopeprof_agg_flush(a); /* converted once per row, as the reporter does once per row of a file */
}

/* A new file starts a new summary (a schedule's cycle, a forked child). */
SCOPEPROF__INTERNAL void scopeprof__sum_reset(scopeprof__state *g) {
    free(g->sum.site);
    free(g->sum.order);
    for (uint32_t i = 0; i < g->sum.nshaped; i++) free(g->sum.shaped[i].w);
    free(g->sum.shaped);
    free(g->sum.shaped_hash);
    for (uint32_t i = 0; i < g->sum.thr_cap; i++) free(g->sum.thr[i].lv);
    free(g->sum.thr);
    scopeprof_agg agg = g->sum.agg;
    memset(&g->sum, 0, sizeof g->sum);
    g->sum.agg = agg;
    g->sum.step_first = g->sched.nsteps; /* the file's own steps, from here on */
}

#ifdef __cplusplus
}
#endif
#endif /* summary.h */
