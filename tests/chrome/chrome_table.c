/* chrome_table.c -- `scopeprof table` for one Chrome trace, without cli.c:
 * the Chrome reader feeds the header's aggregation exactly as aggregate.c's
 * agg_events does, and scopeprof_table_print prints the table.
 *   chrome_table FILE [name|shape] [SORT]
 * Prints the table on stdout and the reader's status/counters on stderr;
 * exits 1 when the reader reports anything but SP_OK. */
#define SCOPEPROF_AGGREGATION
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chrome.h"
#include "input.h"
#include "scopeprof.h"

typedef struct ctx {
    scopeprof_agg agg;
    int shape;
    char key[8192];
} ctx;

static int on_events(void *p, const sp_reader *r, const sp_thread *t, const sp_event *ev, uint32_t n) {
    ctx *c = p;
    for (uint32_t i = 0; i < n; i++) {
        if (ev[i].kind == SP_MEM) {
            scopeprof_agg_mem(&c->agg, t->slot, ev[i].depth, ev[i].device, ev[i].bytes);
            continue;
        }
        const sp_site *s = sp_chrome_site(r, ev[i].site);
        const char *name = s ? s->name : "<unknown>", *shape = sp_chrome_shape(r, ev[i].site);
        uint32_t row;
        if (c->shape) {
            snprintf(c->key, sizeof c->key, "%s\x1f%s", name, shape ? shape : "");
            row = scopeprof_agg_row(&c->agg, c->key, name, shape ? shape : "");
        } else {
            row = scopeprof_agg_row(&c->agg, name, name, NULL);
        }
        if (row == UINT32_MAX) return -1;
        scopeprof_agg_event_gpu(&c->agg, t->slot, row, ev[i].start, ev[i].end, ev[i].depth, ev[i].gpu_ns);
    }
    return 0;
}

static int on_finish(void *p, const sp_reader *r) {
    (void)p;
    const sp_chrome_stats *s = sp_chrome_get_stats(r);
    fprintf(stderr, "events %llu ranges %llu kernels %llu linked %llu memory %llu skipped %llu "
            "unknown_phases %llu unknown_keys %llu unmatched %llu sorted_threads %llu\n",
            (unsigned long long)s->events, (unsigned long long)s->ranges, (unsigned long long)s->kernels,
            (unsigned long long)s->kernels_linked, (unsigned long long)s->memory,
            (unsigned long long)s->skipped, (unsigned long long)s->unknown_phases,
            (unsigned long long)s->unknown_keys, (unsigned long long)s->unmatched,
            (unsigned long long)s->sorted_threads);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: chrome_table FILE [name|shape] [SORT]\n");
        return 2;
    }
    ctx *c = calloc(1, sizeof *c);
    if (!c) return 2;
    scopeprof_agg_init(&c->agg);
    c->shape = argc > 2 && strcmp(argv[2], "shape") == 0;
    if (c->shape) c->agg.extra_header = "Input Shapes";
    scopeprof_sort key = SCOPEPROF_SORT_CPU_TIME_TOTAL;
    if (argc > 3 && scopeprof_sort_parse(argv[3], &key)) return 2;
    sp_callbacks cb = {c, NULL, on_events, on_finish};
    sp_result res;
    int st = sp_read_any(argv[1], &cb, &res);
    char msg[512];
    sp_result_message(&res, argv[1], msg, sizeof msg);
    if (st != SP_OK) fprintf(stderr, "%s\n", msg);
    scopeprof_agg_flush(&c->agg);
    scopeprof_table_print(stdout, &c->agg, key, 0);
    scopeprof_table_notes(stdout, &c->agg); /* as cli.c prints them under the table */
    scopeprof_agg_free(&c->agg);
    free(c);
    return st == SP_OK ? 0 : 1;
}
