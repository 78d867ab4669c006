/* agg_reference.h -- the straightforward form of scopeprof_agg_event_gpu
 * (as it was before the writer's per-event cost was cut, issue 15), kept as
 * the oracle of test_agg's test_agg_fast_path_same: the header's version
 * skips work that cannot change a sum, and must give exactly these numbers.
 * Whoever changes what aggregation computes changes both. */
#ifndef AGG_REFERENCE_H
#define AGG_REFERENCE_H

static int ref_agg_event_gpu(scopeprof_agg *a, uint32_t thread, uint32_t row, uint64_t start,
                             uint64_t end, uint32_t depth, int64_t gpu_ns) {
    scopeprof_row *r = &a->rows[row];
    int64_t dur = end < start ? 0 : end - start > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)(end - start);
    a->events++;
    r->count++;
    scopeprof__add(&r->total_ns, dur);
    if (gpu_ns >= 0) a->has_gpu = 1;
    scopeprof_agg_thread *th = scopeprof__agg_thread(a, thread);
    if (!th) {
        scopeprof__add(&r->self_ns, dur);
        if (gpu_ns > 0) scopeprof__add(&r->gpu_total_ns, gpu_ns), scopeprof__add(&r->gpu_self_ns, gpu_ns);
        return -1;
    }
    /* Input not in close order (a file we did not write) gives wrong self
     * times, and cannot be put right in one pass: count it so the caller can
     * say so. */
    if (end < th->last_end && a->unordered++ == 0) a->unordered_thread = thread;
    if (end > th->last_end) th->last_end = end;
    /* Our children's level is consumed, and every deeper one with it: their
     * scopes' parent never closed (a longjmp left it), so they are ours. */
    scopeprof_agg_pending kids;
    memset(&kids, 0, sizeof kids);
    uint32_t first = th->n;
    while (first && th->pend[first - 1].depth >= (uint64_t)depth + 1) first--;
    for (uint32_t k = first; k < th->n; k++) { /* shallowest first: sums saturate, so the order is the header's */
        const scopeprof_agg_pending *x = &th->pend[k];
        if (x->n && kids.n && x->min_start < kids.max_end) continue; /* a range's level, over the others: dropped */
        if (x->n && (kids.n == 0 || x->min_start < kids.min_start)) kids.min_start = x->min_start;
        if (x->n && (kids.n == 0 || x->max_end > kids.max_end)) kids.max_end = x->max_end;
        kids.n += x->n;
        scopeprof__add(&kids.sum, x->sum);
        scopeprof__add(&kids.gpu_ns, x->gpu_ns);
        for (int m = 0; m < 2; m++) scopeprof__add(&kids.mem_direct[m], x->mem_direct[m]),
                                    scopeprof__add(&kids.mem_kids[m], x->mem_kids[m]);
    }
    th->n = first;
    int inside = kids.n && kids.min_start >= start && kids.max_end <= end;
    int64_t self = inside && kids.sum <= dur ? dur - kids.sum : inside ? 0 : dur;
    int64_t kids_gpu = inside ? kids.gpu_ns : 0;
    int64_t gpu_total = gpu_ns >= 0 ? gpu_ns : kids_gpu;
    int64_t gpu_self = gpu_ns >= 0 && kids_gpu <= gpu_ns ? gpu_ns - kids_gpu : 0;
    int64_t mem_self[2], mem_total[2];
    for (int m = 0; m < 2; m++) {
        mem_self[m] = mem_total[m] = kids.mem_direct[m];
        scopeprof__add(&mem_total[m], kids.mem_kids[m]);
    }
    scopeprof__add(&r->self_ns, self > 0 ? self : 0);
    scopeprof__add(&r->gpu_total_ns, gpu_total);
    scopeprof__add(&r->gpu_self_ns, gpu_self > 0 ? gpu_self : 0);
    scopeprof__add(&r->cpu_mem, mem_total[0]);
    scopeprof__add(&r->self_cpu_mem, mem_self[0]);
    scopeprof__add(&r->gpu_mem, mem_total[1]);
    scopeprof__add(&r->self_gpu_mem, mem_self[1]);
    if (depth == 0) { /* no parent to tell: the thread holds nothing now */
        th->n = 0;
        free(th->pend);
        th->pend = NULL;
        th->cap = 0;
        return 0;
    }
    scopeprof_agg_pending *mine = scopeprof__agg_level(th, depth);
    if (!mine) return -1;
    if (mine->n == 0 || start < mine->min_start) mine->min_start = start;
    if (mine->n == 0 || end > mine->max_end) mine->max_end = end;
    mine->n++;
    scopeprof__add(&mine->sum, dur);
    scopeprof__add(&mine->gpu_ns, gpu_total);
    scopeprof__add(&mine->mem_kids[0], mem_total[0]);
    scopeprof__add(&mine->mem_kids[1], mem_total[1]);
    return 0;
}

#endif /* AGG_REFERENCE_H */
