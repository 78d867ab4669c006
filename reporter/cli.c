/* cli.c -- the scopeprof commands: table, trace, stacks. */
#define SCOPEPROF_AGGREGATION
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "read.h"
#include "scopeprof.h"
#include "tree.h"

static const char usage_main[] =
    "usage: scopeprof COMMAND [OPTIONS] FILE...\n"
    "\n"
    "Reports on scopeprof trace files (.sprof). Several files (one per process\n"
    "or rank) merge into one report.\n"
    "\n"
    "commands:\n"
    "  table    the key_averages table (text, CSV or JSON)\n"
    "  trace    Chrome Trace Event JSON, for Perfetto UI and chrome://tracing\n"
    "  stacks   folded stacks, for flamegraph.pl and speedscope\n"
    "\n"
    "  scopeprof COMMAND --help   options of a command\n"
    "  scopeprof --version\n"
    "\n"
    "exit status: 0 success (a truncated file is read up to its last whole chunk\n"
    "and reported on stderr), 1 a file is unreadable, foreign or corrupt (what\n"
    "came before the bad spot is still reported), 2 bad usage, 3 cannot write.\n";

static const char usage_table[] =
    "usage: scopeprof table [OPTIONS] FILE...\n"
    "\n"
    "The key_averages table over all FILEs, laid out as PyTorch's\n"
    "prof.key_averages().table() lays it out.\n"
    "\n"
    "  --sort KEY         sort rows by KEY, descending (default cpu_time_total):\n"
    "                     cpu_time_total self_cpu_time_total cpu_time count\n"
    "                     gpu_time_total self_gpu_time_total gpu_time\n"
    "                     cpu_memory_usage self_cpu_memory_usage gpu_memory_usage\n"
    "                     self_gpu_memory_usage (cuda_* are aliases of gpu_*)\n"
    "  --limit N          show the first N rows (default: all; 0 = all)\n"
    "  --group-by G       name (default): one row per scope name\n"
    "                     site: one row per name and file:line (Source Location)\n"
    "                     stack:N: one row per name and its N innermost enclosing\n"
    "                     scopes (Stack column, outermost first, ';'-separated)\n"
    "  --format F         text (default), csv or json; csv and json carry raw\n"
    "                     numbers: nanoseconds, bytes, counts\n"
    "  --per-process      one table per FILE instead of one over all of them\n";

static const char usage_trace[] =
    "usage: scopeprof trace [-o OUT.json] FILE...\n"
    "\n"
    "Chrome Trace Event Format JSON (object form) of all FILEs on one timeline,\n"
    "one process per FILE: complete events (ph X) with ts/dur in microseconds\n"
    "(three decimals, i.e. nanoseconds kept), thread and process names, args\n"
    "with file, line and func. Opens in Perfetto UI and chrome://tracing.\n"
    "\n"
    "  -o, --output OUT   write to OUT (default or '-': standard output)\n";

static const char usage_stacks[] =
    "usage: scopeprof stacks [--metric self_cpu|total_cpu] FILE...\n"
    "\n"
    "Folded stacks, one line per distinct stack: 'outer;inner;leaf VALUE', for\n"
    "flamegraph.pl and speedscope. VALUE is in nanoseconds (an integer).\n"
    "\n"
    "  --metric self_cpu  (default) time spent in the leaf itself: what a flame\n"
    "                     graph needs (parents are drawn as the sum of children)\n"
    "  --metric total_cpu the leaf's inclusive time (for diffs and scripts; a\n"
    "                     flame graph of it would count children twice)\n";

static int parse_group(const char *g, int *group, uint32_t *n);
static int print_json_table(sp_out *o, const scopeprof_agg *a, scopeprof_sort key, long limit,
                            char **files, int nfiles);

/* ---- Aggregation over files ------------------------------------------------ */
enum { GROUP_NAME, GROUP_SITE, GROUP_STACK, GROUP_FOLDED };

typedef struct agg_ctx {
    scopeprof_agg agg;
    int group;
    uint32_t stack_n;
    uint32_t thread_base; /* agg thread slots used by earlier files */
    uint32_t nthreads;    /* slots of this file */
    const sp_reader *rd;
    uint32_t *site_row; /* per site id of this file: row + 1, 0 unknown yet */
    uint32_t nsite_row;
    sp_tree tree;
    sp_out key, extra; /* scratch strings */
    int oom;
} agg_ctx;

static const char *site_name(const sp_reader *r, uint32_t id) {
    const sp_site *s = sp_reader_site(r, id);
    return s ? s->name : "<unknown>";
}

static const char *str_of(sp_out *o) {
    sp_out_write(o, "", 1);
    return o->err ? NULL : o->buf;
}

/* A name as one frame of a ';'-separated stack: no ';' and no line breaks,
 * which would split it. */
static void put_frame(sp_out *o, const char *s) {
    for (; *s; s++) {
        char c = *s == ';' ? ':' : (*s == '\n' || *s == '\r') ? ' ' : *s;
        sp_out_write(o, &c, 1);
    }
}

static uint32_t make_row(agg_ctx *c, const char *key, const char *name, const char *extra) {
    if (!key || !name) return UINT32_MAX;
    return scopeprof_agg_row(&c->agg, key, name, extra);
}

/* Row of a site for name and site grouping, cached per site id. */
static uint32_t site_row(agg_ctx *c, uint32_t id) {
    const sp_site *s = sp_reader_site(c->rd, id);
    int cache = s && id < (1u << 20);
    if (cache && id < c->nsite_row && c->site_row[id]) return c->site_row[id] - 1;
    const char *name = s ? s->name : "<unknown>";
    uint32_t row;
    if (c->group == GROUP_SITE) {
        c->key.n = c->extra.n = 0;
        if (s) {
            char line[16];
            snprintf(line, sizeof line, ":%u", s->line);
            sp_out_str(&c->extra, s->file);
            sp_out_str(&c->extra, line);
        }
        const char *ex = str_of(&c->extra);
        sp_out_str(&c->key, name);
        sp_out_write(&c->key, "\x1f", 1); /* a byte names do not hold in practice */
        sp_out_str(&c->key, ex ? ex : "");
        row = make_row(c, str_of(&c->key), name, ex);
    } else {
        row = make_row(c, name, name, NULL);
    }
    if (row != UINT32_MAX && cache) {
        if (id >= c->nsite_row) {
            uint32_t n = id + 1 > c->nsite_row * 2 ? id + 1 : c->nsite_row * 2;
            uint32_t *v = realloc(c->site_row, (size_t)n * sizeof *v);
            if (!v) return row;
            memset(v + c->nsite_row, 0, (size_t)(n - c->nsite_row) * sizeof *v);
            c->site_row = v;
            c->nsite_row = n;
        }
        c->site_row[id] = row + 1;
    }
    return row;
}

static void account(agg_ctx *c, uint32_t slot, uint32_t row, const sp_event *e) {
    if (row == UINT32_MAX) {
        c->oom = 1;
        return;
    }
    if (scopeprof_agg_event_gpu(&c->agg, slot, row, e->start, e->end, e->depth, e->gpu_ns) != 0)
        c->oom = 1;
}

/* A finished subtree, for stack grouping and folded stacks: each scope's row
 * key holds its ancestors' names. Fed to the aggregation in close order, as
 * it would have been without buffering. */
static int agg_subtree(void *ctx, uint32_t slot, const sp_event *ev, const uint32_t *parent,
                       uint32_t n) {
    agg_ctx *c = ctx;
    uint32_t *up = NULL, cap = 0;
    for (uint32_t k = 0; k < n; k++) {
        const sp_event *e = &ev[k];
        if (e->kind == SP_MEM) {
            if (scopeprof_agg_mem(&c->agg, c->thread_base + slot, e->depth, e->device, e->bytes))
                c->oom = 1;
            continue;
        }
        /* Ancestors, innermost first: N of them, or all for folded stacks. */
        uint32_t m = 0, lim = c->group == GROUP_FOLDED ? SP_MAX_DEPTH + 1 : c->stack_n;
        for (uint32_t p = parent[k]; p != SP_NO_PARENT && m < lim; p = parent[p]) {
            if (m == cap) {
                uint32_t nc = cap ? cap * 2 : 64;
                uint32_t *v = realloc(up, nc * sizeof *v);
                if (!v) break;
                up = v;
                cap = nc;
            }
            up[m++] = p;
        }
        const char *name = site_name(c->rd, e->site);
        c->key.n = c->extra.n = 0;
        for (uint32_t i = m; i-- > 0;) {
            put_frame(&c->extra, site_name(c->rd, ev[up[i]].site));
            if (i) sp_out_write(&c->extra, ";", 1);
        }
        uint32_t row;
        if (c->group == GROUP_FOLDED) {
            if (m) sp_out_write(&c->extra, ";", 1);
            put_frame(&c->extra, name);
            const char *k2 = str_of(&c->extra);
            row = make_row(c, k2, k2, NULL);
        } else {
            const char *ex = str_of(&c->extra);
            sp_out_str(&c->key, name);
            sp_out_write(&c->key, "\x1f", 1);
            sp_out_str(&c->key, ex ? ex : "");
            row = make_row(c, str_of(&c->key), name, ex);
        }
        account(c, c->thread_base + slot, row, e);
    }
    free(up);
    return 0;
}

static int agg_header(void *ctx, const sp_reader *r, const sp_header *h) {
    agg_ctx *c = ctx;
    (void)h;
    c->rd = r;
    return 0;
}

static int agg_events(void *ctx, const sp_reader *r, const sp_thread *t, const sp_event *ev,
                      uint32_t n) {
    agg_ctx *c = ctx;
    c->rd = r;
    if (t->slot + 1 > c->nthreads) c->nthreads = t->slot + 1;
    if (c->group == GROUP_STACK || c->group == GROUP_FOLDED)
        return sp_tree_add(&c->tree, t->slot, ev, n) ? (c->oom = 1, -1) : 0;
    uint32_t slot = c->thread_base + t->slot;
    for (uint32_t k = 0; k < n; k++) {
        if (ev[k].kind == SP_MEM) {
            if (scopeprof_agg_mem(&c->agg, slot, ev[k].depth, ev[k].device, ev[k].bytes)) c->oom = 1;
        } else {
            account(c, slot, site_row(c, ev[k].site), &ev[k]);
        }
    }
    return 0;
}

static int agg_finish(void *ctx, const sp_reader *r) {
    agg_ctx *c = ctx;
    c->rd = r;
    int rc = sp_tree_flush_all(&c->tree);
    if (sp_reader_nthreads(r) > c->nthreads) c->nthreads = sp_reader_nthreads(r);
    /* Thread slots and site ids belong to one file. */
    c->thread_base += c->nthreads;
    c->nthreads = 0;
    free(c->site_row);
    c->site_row = NULL;
    c->nsite_row = 0;
    sp_tree_free(&c->tree);
    sp_tree_init(&c->tree, agg_subtree, c);
    return rc;
}

static void agg_ctx_init(agg_ctx *c, int group, uint32_t stack_n) {
    memset(c, 0, sizeof *c);
    scopeprof_agg_init(&c->agg);
    c->group = group;
    c->stack_n = stack_n;
    if (group == GROUP_SITE) c->agg.extra_header = "Source Location";
    if (group == GROUP_STACK) c->agg.extra_header = "Stack";
    sp_out_init(&c->key, NULL);
    sp_out_init(&c->extra, NULL);
    sp_tree_init(&c->tree, agg_subtree, c);
}

static void agg_ctx_free(agg_ctx *c) {
    scopeprof_agg_free(&c->agg);
    sp_out_free(&c->key);
    sp_out_free(&c->extra);
    sp_tree_free(&c->tree);
    free(c->site_row);
}

/* Read one file into the aggregation, report problems on err; returns the
 * reader status. */
static int agg_file(agg_ctx *c, const char *path, FILE *err) {
    sp_callbacks cb = {c, agg_header, agg_events, agg_finish};
    sp_result res;
    int st = sp_read_file(path, &cb, &res);
    char msg[512];
    sp_result_message(&res, path, msg, sizeof msg);
    if (st != SP_OK) fprintf(err, "%s\n", msg);
    if (c->oom) fprintf(err, "%s: out of memory: some events were not counted\n", path);
    return st;
}

int sp_report_mem(const void *data, size_t n, const char *group, FILE *out) {
    int g;
    uint32_t sn = 0;
    if (group && strcmp(group, "folded") == 0) g = GROUP_FOLDED;
    else if (parse_group(group, &g, &sn) != 0) return -1;
    agg_ctx c;
    agg_ctx_init(&c, g, sn);
    sp_callbacks cb = {&c, agg_header, agg_events, agg_finish};
    sp_result res;
    int st = sp_read_mem(data, n, &cb, &res);
    if (g == GROUP_FOLDED) {
        for (uint32_t i = 0; i < c.agg.nrows; i++)
            fprintf(out, "%s %lld\n", c.agg.rows[i].key, (long long)c.agg.rows[i].self_ns);
    } else {
        scopeprof_table_print(out, &c.agg, SCOPEPROF_SORT_SELF_CPU_TIME_TOTAL, 0);
        sp_out js;
        sp_out_init(&js, out);
        print_json_table(&js, &c.agg, SCOPEPROF_SORT_COUNT, 0, NULL, 0);
        sp_out_flush(&js);
        sp_out_free(&js);
    }
    agg_ctx_free(&c);
    return st;
}

/* ---- Command line ----------------------------------------------------------- */
typedef struct opts {
    const char *sort, *group, *format, *output, *metric;
    long limit;
    int per_process, help;
    char **files;
    int nfiles;
} opts;

/* Options and files in any order; "--" ends the options. Returns 0 or -1
 * after telling why. */
static int parse(int argc, char **argv, opts *o, const char *const *known, FILE *err) {
    int dashdash = 0;
    for (int i = 0; i < argc; i++) {
        char *a = argv[i];
        if (dashdash || a[0] != '-' || a[1] == 0) {
            o->files[o->nfiles++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            dashdash = 1;
            continue;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            o->help = 1;
            continue;
        }
        const char *name = strcmp(a, "-o") == 0 ? "--output" : a;
        int ok = 0;
        for (const char *const *k = known; *k; k++) ok |= strcmp(*k, name) == 0;
        if (!ok) {
            fprintf(err, "scopeprof: unknown option '%s' (see --help)\n", a);
            return -1;
        }
        if (strcmp(name, "--per-process") == 0) {
            o->per_process = 1;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(err, "scopeprof: option '%s' needs a value\n", a);
            return -1;
        }
        char *v = argv[++i];
        if (strcmp(name, "--sort") == 0) o->sort = v;
        else if (strcmp(name, "--group-by") == 0) o->group = v;
        else if (strcmp(name, "--format") == 0) o->format = v;
        else if (strcmp(name, "--output") == 0) o->output = v;
        else if (strcmp(name, "--metric") == 0) o->metric = v;
        else if (strcmp(name, "--limit") == 0) {
            char *end;
            errno = 0;
            o->limit = strtol(v, &end, 10);
            if (errno || *end || end == v || o->limit > 1000000000L) {
                fprintf(err, "scopeprof: --limit wants an integer, not '%s'\n", v);
                return -1;
            }
        }
    }
    return 0;
}

static void csv_field(FILE *out, const char *s) {
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"') fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static double pct(int64_t num, int64_t den) { return den ? 100.0 * (double)num / (double)den : 0; }

/* CSV header: the columns present in a (as the text table shows them). */
static void csv_header(FILE *out, const scopeprof_agg *a, int file_col) {
    if (file_col) fputs("file,", out);
    fputs("name,count,self_cpu_time_total_ns,cpu_time_total_ns,cpu_time_avg_ns,"
          "self_cpu_percent,cpu_total_percent", out);
    if (a->has_gpu) fputs(",self_gpu_time_total_ns,gpu_time_total_ns,gpu_time_avg_ns,self_gpu_percent", out);
    if (a->has_mem) fputs(",cpu_memory_usage,self_cpu_memory_usage", out);
    if (a->has_gpu_mem) fputs(",gpu_memory_usage,self_gpu_memory_usage", out);
    if (a->extra_header) fputs(strcmp(a->extra_header, "Stack") ? ",source_location" : ",stack", out);
    fputc('\n', out);
}

static int64_t gpu_self_total(const scopeprof_agg *a) {
    int64_t s = 0;
    for (uint32_t i = 0; i < a->nrows; i++) s += a->rows[i].gpu_self_ns;
    return s;
}

static int print_csv(FILE *out, const scopeprof_agg *a, scopeprof_sort key, long limit,
                     const char *file) {
    uint32_t *idx = scopeprof_agg_sorted(a, key);
    if (!idx) return -1;
    int64_t st = scopeprof_agg_self_total(a), gt = gpu_self_total(a);
    uint32_t n = limit > 0 && (uint32_t)limit < a->nrows ? (uint32_t)limit : a->nrows;
    for (uint32_t i = 0; i < n; i++) {
        const scopeprof_row *r = &a->rows[idx[i]];
        int64_t cnt = r->count ? (int64_t)r->count : 1;
        if (file) csv_field(out, file), fputc(',', out);
        csv_field(out, r->name);
        fprintf(out, ",%llu,%lld,%lld,%lld,%.2f,%.2f", (unsigned long long)r->count,
                (long long)r->self_ns, (long long)r->total_ns, (long long)(r->total_ns / cnt),
                pct(r->self_ns, st), pct(r->total_ns, st));
        if (a->has_gpu)
            fprintf(out, ",%lld,%lld,%lld,%.2f", (long long)r->gpu_self_ns, (long long)r->gpu_total_ns,
                    (long long)(r->gpu_total_ns / cnt), pct(r->gpu_self_ns, gt));
        if (a->has_mem) fprintf(out, ",%lld,%lld", (long long)r->cpu_mem, (long long)r->self_cpu_mem);
        if (a->has_gpu_mem)
            fprintf(out, ",%lld,%lld", (long long)r->gpu_mem, (long long)r->self_gpu_mem);
        if (a->extra_header) fputc(',', out), csv_field(out, r->extra ? r->extra : "");
        fputc('\n', out);
    }
    free(idx);
    return 0;
}

static void json_num(sp_out *o, const char *k, int64_t v) {
    sp_out_str(o, ",\"");
    sp_out_str(o, k);
    sp_out_str(o, "\":");
    sp_out_i64(o, v);
}

/* One table as a JSON object: {"files":[...],"self_cpu_time_total_ns":N,"rows":[...]} */
static int print_json_table(sp_out *o, const scopeprof_agg *a, scopeprof_sort key, long limit,
                            char **files, int nfiles) {
    uint32_t *idx = scopeprof_agg_sorted(a, key);
    if (!idx) return -1;
    sp_out_str(o, "{\"files\":[");
    for (int i = 0; i < nfiles; i++) {
        if (i) sp_out_str(o, ",");
        sp_out_json_str(o, files[i]);
    }
    sp_out_str(o, "]");
    json_num(o, "self_cpu_time_total_ns", scopeprof_agg_self_total(a));
    if (a->has_gpu) json_num(o, "self_gpu_time_total_ns", gpu_self_total(a));
    sp_out_str(o, ",\"rows\":[");
    uint32_t n = limit > 0 && (uint32_t)limit < a->nrows ? (uint32_t)limit : a->nrows;
    for (uint32_t i = 0; i < n; i++) {
        const scopeprof_row *r = &a->rows[idx[i]];
        sp_out_str(o, i ? ",\n{\"name\":" : "\n{\"name\":");
        sp_out_json_str(o, r->name);
        if (r->extra) {
            sp_out_str(o, strcmp(a->extra_header ? a->extra_header : "", "Stack") ? ",\"source_location\":"
                                                                                    : ",\"stack\":");
            sp_out_json_str(o, r->extra);
        }
        json_num(o, "count", (int64_t)r->count);
        json_num(o, "self_cpu_time_total_ns", r->self_ns);
        json_num(o, "cpu_time_total_ns", r->total_ns);
        json_num(o, "cpu_time_avg_ns", r->total_ns / (r->count ? (int64_t)r->count : 1));
        if (a->has_gpu) {
            json_num(o, "self_gpu_time_total_ns", r->gpu_self_ns);
            json_num(o, "gpu_time_total_ns", r->gpu_total_ns);
            json_num(o, "gpu_time_avg_ns", r->gpu_total_ns / (r->count ? (int64_t)r->count : 1));
        }
        if (a->has_mem) {
            json_num(o, "cpu_memory_usage", r->cpu_mem);
            json_num(o, "self_cpu_memory_usage", r->self_cpu_mem);
        }
        if (a->has_gpu_mem) {
            json_num(o, "gpu_memory_usage", r->gpu_mem);
            json_num(o, "self_gpu_memory_usage", r->self_gpu_mem);
        }
        sp_out_str(o, "}");
    }
    sp_out_str(o, "]}");
    free(idx);
    return 0;
}

static int parse_group(const char *g, int *group, uint32_t *n) {
    if (!g || strcmp(g, "name") == 0) *group = GROUP_NAME;
    else if (strcmp(g, "site") == 0) *group = GROUP_SITE;
    else if (strncmp(g, "stack:", 6) == 0) {
        char *end;
        long v = strtol(g + 6, &end, 10);
        if (*end || end == g + 6 || v < 1 || v > 1000) return -1;
        *group = GROUP_STACK;
        *n = (uint32_t)v;
    } else
        return -1;
    return 0;
}

static int worst(int a, int st) { /* the exit status after a file read with status st */
    return (st == SP_OK || st == SP_TRUNCATED) ? a : SP_EXIT_INPUT;
}

static int cmd_table(opts *o, FILE *out, FILE *err) {
    scopeprof_sort key = SCOPEPROF_SORT_CPU_TIME_TOTAL;
    if (o->sort && scopeprof_sort_parse(o->sort, &key) != 0) {
        fprintf(err, "scopeprof: unknown sort key '%s'; valid keys: %s\n", o->sort, scopeprof_sort_keys());
        return SP_EXIT_USAGE;
    }
    int group;
    uint32_t n = 0;
    if (parse_group(o->group, &group, &n) != 0) {
        fprintf(err, "scopeprof: unknown --group-by '%s'; valid: name, site, stack:N (N = 1..1000)\n",
                o->group);
        return SP_EXIT_USAGE;
    }
    const char *fmt = o->format ? o->format : "text";
    int text = strcmp(fmt, "text") == 0, csv = strcmp(fmt, "csv") == 0, json = strcmp(fmt, "json") == 0;
    if (!text && !csv && !json) {
        fprintf(err, "scopeprof: unknown --format '%s'; valid: text, csv, json\n", fmt);
        return SP_EXIT_USAGE;
    }
    int rc = SP_EXIT_OK, tables = o->per_process ? o->nfiles : 1;
    sp_out js;
    sp_out_init(&js, out);
    if (json) sp_out_str(&js, "{\"sort\":"), sp_out_json_str(&js, o->sort ? o->sort : "cpu_time_total"),
        sp_out_str(&js, ",\"tables\":[");
    for (int t = 0; t < tables; t++) {
        agg_ctx c;
        agg_ctx_init(&c, group, n);
        char **files = o->per_process ? &o->files[t] : o->files;
        int nf = o->per_process ? 1 : o->nfiles, usable = 0;
        for (int i = 0; i < nf; i++) {
            int st = agg_file(&c, files[i], err);
            rc = worst(rc, st);
            usable += st == SP_OK || st == SP_TRUNCATED || c.agg.events > 0;
        }
        /* Nothing to show when no file could even be opened as a trace. */
        if (usable) {
            if (text) {
                if (o->per_process) fprintf(out, "%s== %s\n", t ? "\n" : "", files[0]);
                scopeprof_table_print(out, &c.agg, key, o->limit > 0 ? (int)o->limit : 0);
            } else if (csv) {
                if (t == 0 || !o->per_process) csv_header(out, &c.agg, o->per_process);
                print_csv(out, &c.agg, key, o->limit, o->per_process ? files[0] : NULL);
            } else {
                if (t) sp_out_str(&js, ",\n");
                print_json_table(&js, &c.agg, key, o->limit, files, nf);
            }
        }
        agg_ctx_free(&c);
    }
    if (json) sp_out_str(&js, "]}\n");
    if (sp_out_flush(&js) != 0 || fflush(out) != 0 || ferror(out)) {
        fprintf(err, "scopeprof: cannot write the output\n");
        rc = SP_EXIT_OUTPUT;
    }
    sp_out_free(&js);
    return rc;
}

static int cmd_stacks(opts *o, FILE *out, FILE *err) {
    const char *m = o->metric ? o->metric : "self_cpu";
    int self = strcmp(m, "self_cpu") == 0;
    if (!self && strcmp(m, "total_cpu") != 0) {
        fprintf(err, "scopeprof: unknown --metric '%s'; valid: self_cpu, total_cpu\n", m);
        return SP_EXIT_USAGE;
    }
    agg_ctx c;
    agg_ctx_init(&c, GROUP_FOLDED, 0);
    int rc = SP_EXIT_OK;
    for (int i = 0; i < o->nfiles; i++) rc = worst(rc, agg_file(&c, o->files[i], err));
    for (uint32_t i = 0; i < c.agg.nrows; i++) {
        const scopeprof_row *r = &c.agg.rows[i];
        int64_t v = self ? r->self_ns : r->total_ns;
        if (v > 0) fprintf(out, "%s %lld\n", r->key, (long long)v);
    }
    agg_ctx_free(&c);
    if (fflush(out) != 0 || ferror(out)) {
        fprintf(err, "scopeprof: cannot write the output\n");
        rc = SP_EXIT_OUTPUT;
    }
    return rc;
}

static int cmd_trace(opts *o, FILE *out, FILE *err) {
    int to_stdout = !o->output || strcmp(o->output, "-") == 0;
    FILE *f = to_stdout ? out : fopen(o->output, "w");
    if (!f) {
        fprintf(err, "scopeprof: cannot create '%s': %s\n", o->output, strerror(errno));
        return SP_EXIT_OUTPUT;
    }
    sp_trace *t = sp_trace_open(f);
    int rc = SP_EXIT_OK;
    if (!t) {
        fprintf(err, "scopeprof: out of memory\n");
        rc = SP_EXIT_OUTPUT;
    }
    for (int i = 0; t && i < o->nfiles; i++) {
        sp_result res;
        int st = sp_trace_add_file(t, o->files[i], &res);
        if (st != SP_OK) {
            char msg[512];
            sp_result_message(&res, o->files[i], msg, sizeof msg);
            fprintf(err, "%s\n", msg);
        }
        rc = worst(rc, st);
    }
    if (t && sp_trace_close(t) != 0) {
        fprintf(err, "scopeprof: cannot write '%s'\n", to_stdout ? "standard output" : o->output);
        rc = SP_EXIT_OUTPUT;
    }
    if (!to_stdout && fclose(f) != 0 && rc != SP_EXIT_OUTPUT) {
        fprintf(err, "scopeprof: cannot write '%s': %s\n", o->output, strerror(errno));
        rc = SP_EXIT_OUTPUT;
    }
    return rc;
}

int sp_main(int argc, char **argv, FILE *out, FILE *err) {
    static const char *const k_table[] = {"--sort", "--limit", "--group-by", "--format",
                                          "--per-process", NULL};
    static const char *const k_trace[] = {"--output", NULL};
    static const char *const k_stacks[] = {"--metric", NULL};
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        fputs(usage_main, argc < 2 ? err : out);
        return argc < 2 ? SP_EXIT_USAGE : SP_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        fprintf(out, "scopeprof %s (trace format %d.%d)\n", SCOPEPROF_VERSION_STRING,
                SCOPEPROF_FORMAT_MAJOR, SCOPEPROF_FORMAT_MINOR);
        return SP_EXIT_OK;
    }
    const char *cmd = argv[1];
    const char *const *known = NULL;
    const char *usage = NULL;
    int (*run)(opts *, FILE *, FILE *) = NULL;
    if (strcmp(cmd, "table") == 0) known = k_table, usage = usage_table, run = cmd_table;
    else if (strcmp(cmd, "trace") == 0) known = k_trace, usage = usage_trace, run = cmd_trace;
    else if (strcmp(cmd, "stacks") == 0) known = k_stacks, usage = usage_stacks, run = cmd_stacks;
    else {
        fprintf(err, "scopeprof: unknown command '%s'\n\n%s", cmd, usage_main);
        return SP_EXIT_USAGE;
    }
    opts o;
    memset(&o, 0, sizeof o);
    o.files = calloc((size_t)argc, sizeof *o.files);
    if (!o.files) return SP_EXIT_OUTPUT;
    int rc;
    if (parse(argc - 2, argv + 2, &o, known, err) != 0) {
        rc = SP_EXIT_USAGE;
    } else if (o.help) {
        fputs(usage, out);
        rc = SP_EXIT_OK;
    } else if (o.nfiles == 0) {
        fprintf(err, "scopeprof %s: no trace file given\n\n%s", cmd, usage);
        rc = SP_EXIT_USAGE;
    } else {
        rc = run(&o, out, err);
    }
    free(o.files);
    return rc;
}
