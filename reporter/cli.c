/* cli.c -- the scopeprof command line: usage texts, options, each command's
 * output (-o OUT, output.h), and the commands table, trace and stacks. What
 * they count comes from aggregate.c, what trace writes from chrome_write.c;
 * `diff` is diff.c, the pictures html.c and flame_cmd.c. */
#define SCOPEPROF_AGGREGATION
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aggregate.h"
#include "buf.h"
#include "cells.h"
#include "chrome_write.h"
#include "clocks.h"
#include "diff.h"
#include "filter.h"
#include "input.h"
#include "output.h"
#include "picture.h"
#include "ranks.h"
#include "read.h"
#include "scopeprof.h"

static const char usage_main[] =
    "usage: scopeprof COMMAND [OPTIONS] FILE...\n"
    "       scopeprof FILE...          (the same as scopeprof table FILE...)\n"
    "\n"
    "Reports on scopeprof trace files (.sprof) and Chrome Trace Event JSON\n"
    "(PyTorch/Kineto traces; told apart by content). Several files (one per\n"
    "process or rank) merge into one report, each rank once: the files of two\n"
    "runs of a job are refused (diff compares runs).\n"
    "\n"
    "commands:\n"
    "  table    the key_averages table (text, CSV, JSON or Markdown)\n"
    "  diff     two sets of runs compared row by row; exit 4 past --threshold\n"
    "  trace    Chrome Trace Event JSON, for Perfetto UI and chrome://tracing\n"
    "  stacks   folded stacks, for flamegraph.pl and speedscope\n"
    "  html     a self-contained HTML report: table, flame graphs, timeline\n"
    "  flame    an SVG flame graph\n"
    "\n"
    "  scopeprof help [COMMAND]   this text, or the options of a command\n"
    "  scopeprof COMMAND --help   the same\n"
    "  scopeprof --version\n"
    "\n"
    "Every command takes -o OUT (--output=OUT): OUT is replaced only when the\n"
    "command succeeds, and never by one of its own inputs.\n"
    "\n"
    "exit status: 0 success (a truncated file is read up to its last whole chunk\n"
    "and reported on stderr), 1 a file is unreadable, foreign or corrupt (what\n"
    "came before the bad spot is still reported), 2 bad usage, 3 cannot write,\n"
    "4 `diff --threshold`: a row got slower beyond the threshold.\n";

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
    "                     self_gpu_memory_usage (device_* and cuda_* are aliases of\n"
    "                     gpu_*); also spelt --sort-by, --sort_by\n"
    "  -o, --output OUT   write to OUT (default or '-': standard output)\n"
    "  --limit N          show the first N rows (0 or -1 = all); default 100 for\n"
    "                     text and markdown (PyTorch's row_limit), all for csv\n"
    "                     and json; also spelt --row-limit, --row_limit\n"
    "  --group-by G       name (default): one row per scope name\n"
    "                     site: one row per name and file:line (Source Location)\n"
    "                     thread: one row per thread and name (Thread column:\n"
    "                     the thread's name, else its tid; threads of one name\n"
    "                     get '(tid N)' added, or their index)\n"
    "                     rank (or process): one row per rank and name (Rank\n"
    "                     column: 'rank R', else 'pid P' for a file without a\n"
    "                     rank: a server's forked processes)\n"
    "                     stack:N: one row per name and its N innermost enclosing\n"
    "                     scopes (Stack column, outermost first, ';'-separated);\n"
    "                     stack: stack:5 (PyTorch's group_by_stack_n=5)\n"
    "                     shape (or input_shape): one row per name and input\n"
    "                     shapes (Input Shapes column, PyTorch's\n"
    "                     group_by_input_shape): a .sprof file's from\n"
    "                     PROFILE_SCOPE_SHAPE, Chrome JSON's \"Input Dims\"; [] for\n"
    "                     a scope without them\n"
    "  --format F         text (default), csv, json or markdown; csv and json carry\n"
    "                     raw numbers: nanoseconds, bytes, counts\n"
    "  --per-process      one table per FILE instead of one over all of them\n"
    "  --per-rank         the table across FILEs (one per rank), as the job table\n"
    "                     an MPI program prints at MPI_Finalize: per row calls,\n"
    "                     self and total CPU time min / mean / max over the FILEs\n"
    "                     with the rank of each min and max, the imbalance (max /\n"
    "                     mean of self), the straggler and who waited in each MPI\n"
    "                     call (a FILE without the row counts as 0); docs/MPI.md\n"
    "  --steps A:B|N      only scopes inside steps A..B (PROFILE_STEP numbers;\n"
    "                     ProfilerStep#N in Chrome JSON); not with standard\n"
    "                     input or a pipe\n"
    "  --no-compensate    raw times: do not take out the cost of recording nested\n"
    "                     scopes, which a .sprof file (format 3.1) measured at\n"
    "                     start-up (docs/DESIGN.md, Overhead compensation)\n";

static const char usage_diff[] =
    "usage: scopeprof diff [OPTIONS] BASE NEW\n"
    "       scopeprof diff [OPTIONS] BASE... -- NEW...\n"
    "\n"
    "One table of both sides, row by row: calls, self CPU and CPU total of each,\n"
    "and the change of the compared time (absolute and %), largest change first.\n"
    "Each FILE of a side is one run (files with a rank: the i-th file of each\n"
    "rank make run i); with several runs a side's figures are the medians of\n"
    "its runs, and a change within the runs' spread (the two sides' min..max\n"
    "overlap) is marked so. Rows of one side only are marked so.\n"
    "\n"
    "  --sort KEY         the time compared (default self_cpu_time_total):\n"
    "                     self_cpu_time_total cpu_time_total cpu_time\n"
    "                     self_gpu_time_total gpu_time_total gpu_time (device_*,\n"
    "                     cuda_*: aliases of gpu_*); also --sort-by, --sort_by\n"
    "  --threshold PCT    exit 4, naming the rows, when a row present on both sides\n"
    "                     got PCT % slower or more, outside the runs' spread, and\n"
    "                     takes at least --min-time on the new side\n"
    "  --min-time T       see --threshold (default 1ms; 500us, 2ms, 0 = any; a\n"
    "                     bare number is in us)\n"
    "  --limit N          show the first N rows (0 or -1 = all; default 100 for\n"
    "                     text and markdown, all for csv and json); also\n"
    "                     --row-limit, --row_limit\n"
    "  --group-by G       as for table: name (default), site, thread, rank,\n"
    "                     shape (input_shape), stack:N\n"
    "  --format F         text (default), csv, json or markdown (for a\n"
    "                     pull-request comment)\n"
    "  --no-compensate    raw times (see scopeprof table --help)\n"
    "  -o, --output OUT   write to OUT (default or '-': standard output)\n"
    "Options may come on either side of --.\n";

static const char usage_trace[] =
    "usage: scopeprof trace -o OUT.json FILE...\n"
    "\n"
    "Chrome Trace Event Format JSON (object form) of all FILEs on one timeline,\n"
    "one process per FILE: complete events (ph X) with ts/dur in microseconds,\n"
    "thread and process names, args with file, line and func (and Input Dims,\n"
    "Kineto's, for a scope recorded with its input shapes). Opens in Perfetto\n"
    "UI and chrome://tracing.\n"
    "ts and dur have three decimals (the exact nanosecond), except the dur of a\n"
    "slice that ends where another ends or starts (a child, the next slice; a\n"
    "top-level slice, a step) when ts + dur, added in doubles as viewers add,\n"
    "would miss its end's double: then dur is that end's double minus ts's,\n"
    "printed %.17g (2000.1489868164062), so the slices do not seem to overlap;\n"
    "rounded to the nanosecond it is still the exact duration.\n"
    "Times are raw: the overhead compensation that table, stacks, html and\n"
    "flame take out is not (a timeline shows when things happened; the\n"
    "compensated figures are sums), so a table of the JSON shows raw times.\n"
    "Past 512 MB of JSON, more than those viewers open, a warning says so.\n"
    "\n"
    "  -o, --output OUT   write to OUT ('-': standard output; without -o the JSON\n"
    "                     goes to standard output unless that is a terminal)\n"
    "  --steps A:B|N      only scopes inside steps A..B (and the steps' track);\n"
    "                     not with standard input or a pipe\n"
    "  --name PAT         only scopes whose name holds PAT, or matches it as a\n"
    "                     glob when PAT has * ? or [ (e.g. 'conv*')\n"
    "  --thread T         only scopes of threads named T (substring or glob), or\n"
    "                     with tid or index T when T is a number\n"
    "  --window FROM:TO   only scopes overlapping FROM..TO, times since the start\n"
    "                     of the earliest FILE on the aligned clock (1.5s:2s,\n"
    "                     200ms:, :30ms; unit ns, us, ms or s, default us; Chrome\n"
    "                     JSON input: in its own ts)\n"
    "  Files of several hosts are put on one clock: rank 0's, by the offsets an\n"
    "  MPI job measured (docs/MPI.md), else by their realtime offsets (said on\n"
    "  stderr)\n"
    "  --min-dur D        only scopes lasting at least D (e.g. 50us)\n"
    "  --progress         progress on stderr (default: when stderr is a terminal\n"
    "                     and the JSON does not go to it); --no-progress: never\n"
    "  OUT ending in .gz is written gzip-compressed\n";

static const char usage_stacks[] =
    "usage: scopeprof stacks [--metric self_cpu|total_cpu] [--per-thread] [-o OUT] FILE...\n"
    "\n"
    "Folded stacks, one line per distinct stack: 'outer;inner;leaf VALUE', for\n"
    "flamegraph.pl and speedscope. VALUE is in nanoseconds (an integer).\n"
    "\n"
    "  --metric self_cpu  (default) time spent in the leaf itself: what a flame\n"
    "                     graph needs (parents are drawn as the sum of children)\n"
    "  --metric total_cpu the leaf's inclusive time (for diffs and scripts; a\n"
    "                     flame graph of it would count children twice)\n"
    "  --per-thread       each stack starts with a frame naming its thread (its\n"
    "                     name, else 'tid N'); threads of one name are merged\n"
    "  --no-compensate    raw times (see scopeprof table --help)\n"
    "  -o, --output OUT   write to OUT (default or '-': standard output)\n";

static const char usage_html[] =
    "usage: scopeprof html [-o OUT.html] [--limit N] FILE...\n"
    "       scopeprof html --diff [-o OUT.html] BASE... -- NEW...\n"
    "\n"
    "One self-contained HTML page (inline CSS, SVG and script; it loads\n"
    "nothing from the network) with the key_averages table of all FILEs as a\n"
    "sortable table, flame graphs of their stacks (self CPU time, as\n"
    "`scopeprof stacks`) per thread or merged, click to zoom, and a timeline\n"
    "per thread with the steps and the memory counters (ctrl+wheel or W/S to\n"
    "zoom, drag, shift+wheel or A/D to pan). Each FILE is read twice, so not\n"
    "standard input or a pipe.\n"
    "\n"
    "  -o, --output OUT   write to OUT (default or '-': standard output); OUT is\n"
    "                     written only once every FILE was read\n"
    "  --limit N          rows of the table (default: all; 0 or -1 = all)\n"
    "  --diff             compare BASE with NEW as `scopeprof diff` does (BASE NEW,\n"
    "                     or several of each around --): the diff table and a\n"
    "                     differential flame graph (NEW's widths, coloured by the\n"
    "                     change: red slower, blue faster)\n";

static const char usage_flame[] =
    "usage: scopeprof flame [--per-thread] [-o OUT.svg] FILE...\n"
    "\n"
    "An SVG flame graph of the stacks of all FILEs: the self CPU time of each\n"
    "stack (`scopeprof stacks`), frames of one ancestry merged, siblings in name\n"
    "order, hover a frame for its name, time and share; click a frame to zoom\n"
    "into it, Search (or Ctrl-F) to colour the frames whose name holds a text.\n"
    "\n"
    "  --per-thread       a frame per thread above the root (its name, else\n"
    "                     'tid N'); threads of one name are merged\n"
    "  -o, --output OUT   write to OUT (default or '-': standard output)\n";

/* ---- Command line ----------------------------------------------------------- */
typedef struct opts {
    const char *sort, *group, *format, *output, *metric, *steps;
    sp_filter filter; /* trace: --name --thread --window --min-dur */
    int progress;     /* trace: 1 --progress, 0 --no-progress, -1 default */
    const char *out_name; /* the output, for messages */
    long limit;           /* -1: not given (each format has its default) */
    int per_process, per_rank, per_thread, help;
    int raw; /* --no-compensate */
    int diff; /* html --diff */
    double threshold; /* diff: percent, < 0 none */
    uint64_t min_time; /* diff: ns */
    int sides; /* diff, html --diff: "--" separates BASE from NEW (split: BASE's count) */
    int split;
    char **files;
    int nfiles;
} opts;

/* torch's spellings of our options (prof.key_averages().table(sort_by=...,
 * row_limit=...)), as aliases. */
static const char *const option_alias[][2] = {
    {"--sort-by", "--sort"},    {"--sort_by", "--sort"},    {"--row-limit", "--limit"},
    {"--row_limit", "--limit"},
};

/* Options and files in any order; "--" ends the options, or with o->sides
 * separates the two sides (whose options may come anywhere). Returns 0 or
 * -1 after telling why. */
static int parse(int argc, char **argv, opts *o, const char *const *known, FILE *err) {
    int dashdash = 0;
    for (int i = 0; i < argc; i++) {
        char *a = argv[i];
        if (dashdash || a[0] != '-' || a[1] == 0) {
            o->files[o->nfiles++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            if (!o->sides) dashdash = 1;
            else if (o->split >= 0) {
                fprintf(err, "scopeprof: '--' given twice: it separates BASE... from NEW...\n");
                return -1;
            } else
                o->split = o->nfiles;
            continue;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            o->help = 1;
            continue;
        }
        /* GNU style: --name=value is --name value. */
        char name_buf[32];
        const char *inline_v = NULL;
        const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        if (eq && (size_t)(eq - a) < sizeof name_buf) {
            memcpy(name_buf, a, (size_t)(eq - a));
            name_buf[eq - a] = 0;
            a = name_buf;
            inline_v = eq + 1;
        }
        const char *name = strcmp(a, "-o") == 0 ? "--output" : a;
        for (size_t k = 0; k < sizeof option_alias / sizeof *option_alias; k++)
            if (strcmp(name, option_alias[k][0]) == 0) name = option_alias[k][1];
        int ok = 0;
        for (const char *const *k = known; *k; k++) ok |= strcmp(*k, name) == 0;
        if (!ok) {
            fprintf(err, "scopeprof: unknown option '%s' (see --help)\n", a);
            return -1;
        }
        int flag = strcmp(name, "--per-process") == 0 || strcmp(name, "--per-rank") == 0 ||
                   strcmp(name, "--per-thread") == 0 || strcmp(name, "--progress") == 0 ||
                   strcmp(name, "--no-progress") == 0 || strcmp(name, "--no-compensate") == 0 ||
                   strcmp(name, "--diff") == 0;
        if (flag && inline_v) {
            fprintf(err, "scopeprof: option '%s' takes no value\n", a);
            return -1;
        }
        if (strcmp(name, "--per-process") == 0) {
            o->per_process = 1;
            continue;
        }
        if (strcmp(name, "--per-rank") == 0) {
            o->per_rank = 1;
            continue;
        }
        if (strcmp(name, "--per-thread") == 0) {
            o->per_thread = 1;
            continue;
        }
        if (strcmp(name, "--no-compensate") == 0) {
            o->raw = 1;
            continue;
        }
        if (strcmp(name, "--diff") == 0) {
            o->diff = 1;
            continue;
        }
        if (strcmp(name, "--progress") == 0 || strcmp(name, "--no-progress") == 0) {
            o->progress = strcmp(name, "--progress") == 0;
            continue;
        }
        if (!inline_v && i + 1 >= argc) {
            fprintf(err, "scopeprof: option '%s' needs a value\n", a);
            return -1;
        }
        const char *v = inline_v ? inline_v : argv[++i];
        if (strcmp(name, "--sort") == 0) o->sort = v;
        else if (strcmp(name, "--group-by") == 0) o->group = v;
        else if (strcmp(name, "--format") == 0) o->format = v;
        else if (strcmp(name, "--output") == 0) o->output = v;
        else if (strcmp(name, "--metric") == 0) o->metric = v;
        else if (strcmp(name, "--steps") == 0) o->steps = v;
        else if (strcmp(name, "--name") == 0) o->filter.name = v;
        else if (strcmp(name, "--thread") == 0) o->filter.thread = v;
        else if (strcmp(name, "--window") == 0) {
            if (sp_filter_window(&o->filter, v, err) != 0) return -1;
        } else if (strcmp(name, "--min-dur") == 0) {
            if (sp_filter_min_dur(&o->filter, v, err) != 0) return -1;
        } else if (strcmp(name, "--min-time") == 0) {
            if (sp_parse_time(v, &o->min_time) != 0) {
                fprintf(err, "scopeprof: --min-time wants a time such as 500us, 2ms or 0, not '%s'\n", v);
                return -1;
            }
        } else if (strcmp(name, "--threshold") == 0) {
            char *end;
            errno = 0;
            o->threshold = strtod(v, &end);
            if (*end == '%') end++;
            if (errno || *end || end == v || !(o->threshold >= 0 && o->threshold <= 1e9)) {
                fprintf(err, "scopeprof: --threshold wants a percentage (30 or 30%%), not '%s'\n", v);
                return -1;
            }
        } else if (strcmp(name, "--limit") == 0) {
            char *end;
            errno = 0;
            o->limit = strtol(v, &end, 10);
            if (errno || *end || end == v || o->limit > 1000000000L || o->limit < -1) {
                fprintf(err, "scopeprof: --limit wants a row count (0 or -1 = all), not '%s'\n", v);
                return -1;
            }
            /* -1 is all, as 0: torch's row_limit=-1 and the header's
             * SCOPEPROF_ROW_LIMIT say it so (o->limit -1 is "not given"). */
            if (o->limit == -1) o->limit = 0;
        }
    }
    return 0;
}

/* --sort KEY: the header's keys and aliases (scopeprof_sort_parse).
 * Returns 0, or -1 after saying which keys there are. */
static int sort_parse(const char *s, scopeprof_sort *key, FILE *err) {
    if (scopeprof_sort_parse(s, key) == 0) return 0;
    fprintf(err, "scopeprof: unknown sort key '%s'; valid keys: %s\n", s, scopeprof_sort_keys());
    return -1;
}

/* The rows a human format shows by default: PyTorch's row_limit=100. The
 * machine formats (csv, json) carry every row unless told. */
enum { DEFAULT_ROWS = 100 };
static long rows_shown(const opts *o, int human) {
    return o->limit >= 0 ? o->limit : human ? DEFAULT_ROWS : 0;
}

/* After a table cut by --limit (0: all rows shown), one line says what was
 * left out and how to see it. */
static void more_rows(FILE *out, uint32_t nrows, long limit) {
    char b[120];
    if (sp_more_rows(b, sizeof b, nrows, limit)) fprintf(out, "%s\n", b);
}

static double pct(int64_t num, int64_t den) { return den ? 100.0 * (double)num / (double)den : 0; }


/* CSV header: the columns present in a (as the text table shows them). */
static void csv_header(FILE *out, const scopeprof_agg *a, int file_col, const sp_ranks *rs) {
    if (file_col) fputs("file,", out);
    fputs("name,count,self_cpu_time_total_ns,cpu_time_total_ns,cpu_time_avg_ns,"
          "self_cpu_percent,cpu_total_percent", out);
    if (a->has_gpu) fputs(",self_gpu_time_total_ns,gpu_time_total_ns,gpu_time_avg_ns,self_gpu_percent", out);
    if (a->has_mem) fputs(",cpu_memory_usage,self_cpu_memory_usage", out);
    if (a->has_gpu_mem) fputs(",gpu_memory_usage,self_gpu_memory_usage", out);
    if (a->extra_header) fprintf(out, ",%s", sp_extra_field(a));
    if (rs) sp_ranks_csv_header(out);
    fputc('\n', out);
}

static int print_csv(FILE *out, const sp_agg_ctx *c, scopeprof_sort key, long limit,
                     const char *file, const sp_ranks *rs) {
    const scopeprof_agg *a = &c->agg;
    uint32_t *idx = scopeprof_agg_sorted(a, key);
    if (!idx) return -1;
    int64_t st = scopeprof_agg_self_total(a), gt = scopeprof_agg_gpu_self_total(a);
    uint32_t n = limit > 0 && (uint32_t)limit < a->nrows ? (uint32_t)limit : a->nrows;
    for (uint32_t i = 0; i < n; i++) {
        const scopeprof_row *r = &a->rows[idx[i]];
        int64_t cnt = r->count ? (int64_t)r->count : 1;
        if (file) sp_csv_field(out, file), fputc(',', out);
        sp_csv_field(out, r->name);
        fprintf(out, ",%llu,%lld,%lld,%lld,%.2f,%.2f", (unsigned long long)r->count,
                (long long)r->self_ns, (long long)r->total_ns, (long long)(r->total_ns / cnt),
                pct(r->self_ns, st), pct(r->total_ns, st));
        if (a->has_gpu)
            fprintf(out, ",%lld,%lld,%lld,%.2f", (long long)r->gpu_self_ns, (long long)r->gpu_total_ns,
                    (long long)(r->gpu_total_ns / cnt), pct(r->gpu_self_ns, gt));
        if (a->has_mem) fprintf(out, ",%lld,%lld", (long long)r->cpu_mem, (long long)r->self_cpu_mem);
        if (a->has_gpu_mem)
            fprintf(out, ",%lld,%lld", (long long)r->gpu_mem, (long long)r->self_gpu_mem);
        if (a->extra_header) fputc(',', out), sp_csv_field(out, r->extra ? r->extra : "");
        if (rs) sp_ranks_csv_row(out, rs, idx[i]);
        fputc('\n', out);
    }
    free(idx);
    return 0;
}

/* The table as Markdown (GitHub's tables: a pull-request comment, a wiki):
 * the text table's columns and figures, names escaped as cells (cells.h). */
static void md_time(FILE *out, int64_t ns) {
    char b[48];
    fprintf(out, " %s |", scopeprof_format_time(b, sizeof b, (double)ns / 1e3));
}
static void md_mem(FILE *out, int64_t bytes) {
    char b[48];
    fprintf(out, " %s |", scopeprof_format_mem(b, sizeof b, bytes));
}

static int print_markdown(FILE *out, const scopeprof_agg *a, scopeprof_sort key, long limit) {
    uint32_t *idx = scopeprof_agg_sorted(a, key);
    if (!idx) return -1;
    int64_t st = scopeprof_agg_self_total(a), gt = scopeprof_agg_gpu_self_total(a);
    fputs("| Name | Self CPU % | Self CPU | CPU total % | CPU total | CPU time avg |", out);
    if (a->has_gpu) fputs(" Self GPU | Self GPU % | GPU total | GPU time avg |", out);
    if (a->has_mem) fputs(" CPU Mem | Self CPU Mem |", out);
    if (a->has_gpu_mem) fputs(" GPU Mem | Self GPU Mem |", out);
    fputs(" # of Calls |", out);
    if (a->extra_header) fputc(' ', out), sp_md_cell(out, a->extra_header), fputs(" |", out);
    fputs("\n|:--|--:|--:|--:|--:|--:|", out);
    if (a->has_gpu) fputs("--:|--:|--:|--:|", out);
    if (a->has_mem) fputs("--:|--:|", out);
    if (a->has_gpu_mem) fputs("--:|--:|", out);
    fputs("--:|", out);
    if (a->extra_header) fputs(":--|", out);
    fputc('\n', out);
    uint32_t n = limit > 0 && (uint32_t)limit < a->nrows ? (uint32_t)limit : a->nrows;
    for (uint32_t i = 0; i < n; i++) {
        const scopeprof_row *r = &a->rows[idx[i]];
        int64_t cnt = r->count ? (int64_t)r->count : 1;
        fputs("| ", out);
        sp_md_cell(out, r->name);
        fprintf(out, " | %.2f%% |", pct(r->self_ns, st));
        md_time(out, r->self_ns);
        fprintf(out, " %.2f%% |", pct(r->total_ns, st));
        md_time(out, r->total_ns);
        md_time(out, r->total_ns / cnt);
        if (a->has_gpu) {
            md_time(out, r->gpu_self_ns);
            fprintf(out, " %.2f%% |", pct(r->gpu_self_ns, gt));
            md_time(out, r->gpu_total_ns);
            md_time(out, r->gpu_total_ns / cnt);
        }
        if (a->has_mem) md_mem(out, r->cpu_mem), md_mem(out, r->self_cpu_mem);
        if (a->has_gpu_mem) md_mem(out, r->gpu_mem), md_mem(out, r->self_gpu_mem);
        fprintf(out, " %llu |", (unsigned long long)r->count);
        if (a->extra_header) fputc(' ', out), sp_md_cell(out, r->extra ? r->extra : ""), fputs(" |", out);
        fputc('\n', out);
    }
    char b[48];
    fprintf(out, "\n");
    more_rows(out, a->nrows, limit);
    fprintf(out, "Self CPU time total: %s\n", scopeprof_format_time(b, sizeof b, (double)st / 1e3));
    if (a->has_gpu) fprintf(out, "Self GPU time total: %s\n", scopeprof_format_time(b, sizeof b, (double)gt / 1e3));
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
                            char **files, int nfiles, const sp_ranks *rs, const sp_agg_ctx *mem) {
    uint32_t *idx = scopeprof_agg_sorted(a, key);
    if (!idx) return -1;
    sp_out_str(o, "{\"files\":[");
    for (int i = 0; i < nfiles; i++) {
        if (i) sp_out_str(o, ",");
        sp_out_json_str(o, files[i]);
    }
    sp_out_str(o, "]");
    if (limit > 0 && (uint32_t)limit < a->nrows) json_num(o, "more_rows", (int64_t)(a->nrows - (uint32_t)limit));
    json_num(o, "self_cpu_time_total_ns", scopeprof_agg_self_total(a));
    if (a->has_gpu) json_num(o, "self_gpu_time_total_ns", scopeprof_agg_gpu_self_total(a));
    if (mem && mem->peak_seen) {
        sp_out_str(o, ",\"peak_memory\":[");
        for (uint32_t d = 0, k = 0; d < SP_MAX_DEVICES; d++) {
            if (!(mem->peak_seen >> d & 1)) continue;
            sp_out_str(o, k++ ? ",{\"device\":" : "{\"device\":");
            sp_out_json_str(o, d ? "GPU" : "CPU");
            if (d) json_num(o, "gpu", (int64_t)d - 1);
            json_num(o, "peak_bytes", mem->peak[d]);
            sp_out_str(o, "}");
        }
        sp_out_str(o, "]");
    }
    if (mem && (mem->peak_seen || mem->unknown_frees))
        json_num(o, "unknown_frees", mem->unknown_frees > INT64_MAX ? INT64_MAX : (int64_t)mem->unknown_frees);
    sp_out_str(o, ",\"rows\":[");
    uint32_t n = limit > 0 && (uint32_t)limit < a->nrows ? (uint32_t)limit : a->nrows;
    for (uint32_t i = 0; i < n; i++) {
        const scopeprof_row *r = &a->rows[idx[i]];
        sp_out_str(o, i ? ",\n{\"name\":" : "\n{\"name\":");
        sp_out_json_str(o, r->name);
        if (r->extra) {
            sp_out_str(o, ",\"");
            sp_out_str(o, sp_extra_field(a));
            sp_out_str(o, "\":");
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
        if (rs) sp_ranks_json_row(o, rs, idx[i]);
        sp_out_str(o, "}");
    }
    sp_out_str(o, "]}");
    free(idx);
    return 0;
}

/* ---- --steps ------------------------------------------------------------------ */
/* "A:B" or "N": step numbers, A <= B. */
static int parse_steps(const char *v, uint64_t *a, uint64_t *b) {
    char *end;
    if (!v || *v < '0' || *v > '9') return -1;
    errno = 0;
    *a = strtoull(v, &end, 10);
    if (errno) return -1;
    if (*end == 0) return (void)(*b = *a), 0;
    if (*end != ':' || end[1] < '0' || end[1] > '9') return -1;
    *b = strtoull(end + 1, &end, 10);
    return errno || *end || *b < *a ? -1 : 0;
}

static int check_steps(const opts *o, FILE *err) {
    uint64_t a, b;
    if (!o->steps) return 0;
    if (parse_steps(o->steps, &a, &b) != 0) {
        fprintf(err, "scopeprof: --steps wants A:B or N (step numbers, A <= B), not '%s'\n", o->steps);
        return -1;
    }
    for (int i = 0; i < o->nfiles; i++)
        if (!sp_input_rereadable(o->files[i])) {
            /* The steps of a file may come after its events (STEPS records
             * are written at flushes and at exit): a first pass finds them. */
            fprintf(err, "scopeprof: %s: not a regular file: --steps reads each file twice, so "
                    "not standard input or a pipe\n", o->files[i]);
            return -1;
        }
    return 0;
}

typedef struct win_ctx {
    uint64_t a, b, lo, hi, first, last;
    uint32_t nsteps;
    int found;
} win_ctx;

static int win_finish(void *ctx, const sp_reader *r) {
    win_ctx *w = ctx;
    const sp_step *s;
    w->nsteps = sp_reader_steps(r, &s);
    for (uint32_t i = 0; i < w->nsteps; i++) {
        if (i == 0 || s[i].number < w->first) w->first = s[i].number;
        if (i == 0 || s[i].number > w->last) w->last = s[i].number;
        if (s[i].number < w->a || s[i].number > w->b) continue;
        if (!w->found || s[i].start < w->lo) w->lo = s[i].start;
        if (!w->found || s[i].end > w->hi) w->hi = s[i].end;
        w->found = 1;
    }
    return 0;
}

/* The time window [lo, hi] of steps o->steps in `path`, from a first pass
 * over the file that only collects its STEPS records. No such steps: an
 * empty window (lo > hi) and a warning. Read errors are left to the real
 * pass, which reports them. */
static void step_window(const char *path, const char *steps, uint64_t *lo, uint64_t *hi, FILE *err) {
    win_ctx w;
    memset(&w, 0, sizeof w);
    parse_steps(steps, &w.a, &w.b);
    sp_callbacks cb = {&w, NULL, NULL, win_finish};
    sp_result res;
    sp_read_any(path, &cb, &res);
    *lo = w.found ? w.lo : 1;
    *hi = w.found ? w.hi : 0;
    if (w.found) return;
    if (w.nsteps)
        fprintf(err, "%s: no steps %s (its steps are %llu..%llu): nothing from this file\n", path,
                steps, (unsigned long long)w.first, (unsigned long long)w.last);
    else
        fprintf(err, "%s: no steps recorded (PROFILE_STEP): nothing from this file\n", path);
}

/* ---- table ---------------------------------------------------------------------- */

/* --group-by, as table and diff take it; -1 after saying what is valid. */
static int group_option(const opts *o, int *group, uint32_t *n, FILE *err) {
    if (sp_group_parse(o->group, group, n) == 0) return 0;
    fprintf(err, "scopeprof: unknown --group-by '%s'; valid: %s\n", o->group, SP_GROUP_VALID);
    return -1;
}

static int cmd_table(opts *o, FILE *out, FILE *err) {
    scopeprof_sort key = SCOPEPROF_SORT_CPU_TIME_TOTAL;
    if (o->sort && sort_parse(o->sort, &key, err) != 0) return SP_EXIT_USAGE;
    int group, format = sp_format_parse(o->format, err);
    uint32_t n = 0;
    if (format < 0 || group_option(o, &group, &n, err) != 0) return SP_EXIT_USAGE;
    int text = format == SP_FORMAT_TEXT, csv = format == SP_FORMAT_CSV, json = format == SP_FORMAT_JSON,
        md = format == SP_FORMAT_MARKDOWN;
    long limit = rows_shown(o, SP_FORMAT_HUMAN(format));
    if (o->per_rank && o->per_process) {
        fprintf(err, "scopeprof: --per-rank and --per-process exclude each other\n");
        return SP_EXIT_USAGE;
    }
    if (check_steps(o, err) != 0) return SP_EXIT_USAGE;
    int rc = SP_EXIT_OK, tables = o->per_process ? o->nfiles : 1;
    sp_out js;
    sp_out_init(&js, out);
    if (json) sp_out_str(&js, "{\"sort\":"), sp_out_json_str(&js, o->sort ? o->sort : "cpu_time_total"),
        sp_out_str(&js, ",\"tables\":[");
    sp_ranks rs;
    memset(&rs, 0, sizeof rs);
    for (int t = 0; t < tables; t++) {
        sp_agg_ctx c;
        sp_agg_ctx_init(&c, group, n);
        c.raw = o->raw;
        char **files = o->per_process ? &o->files[t] : o->files;
        int nf = o->per_process ? 1 : o->nfiles, usable = 0;
        if (o->per_rank && sp_ranks_init(&rs, files, nf) != 0) c.oom = 1;
        for (int i = 0; i < nf && !c.oom; i++) {
            /* --per-rank reads each file into a table of its own, then
             * merges: memory is one file's rows more than without it. */
            sp_agg_ctx one, *dst = &c;
            if (o->per_rank) sp_agg_ctx_init(dst = &one, group, n), one.raw = o->raw, one.thread_by_label = 1;
            if (o->steps) step_window(files[i], o->steps, &dst->win_lo, &dst->win_hi, err);
            int st = sp_agg_file(dst, files[i], err);
            rc = sp_exit_worst(rc, st);
            usable += st == SP_OK || st == SP_TRUNCATED || dst->agg.events > 0;
            if (o->per_rank && sp_ranks_merge(&rs, i, &c, dst) != 0) c.oom = 1; /* frees dst */
        }
        /* A file without the row ran it for 0 ns: min, mean and max all
         * count it (the mean divides by every file already). */
        if (o->per_rank) scopeprof_ranks_done(&rs.x, c.agg.nrows);
        if (o->per_rank && c.oom) {
            fprintf(err, "scopeprof: out of memory\n");
            rc = SP_EXIT_OUTPUT;
            usable = 0;
        }
        const sp_ranks *r = o->per_rank ? &rs : NULL;
        /* Threads of one label told apart (out of memory: labels as they were). */
        if (!r) sp_agg_thread_labels(&c);
        /* Nothing to show when no file could even be opened as a trace. */
        if (usable) {
            if (text) {
                if (o->per_process) fprintf(out, "%s== %s\n", t ? "\n" : "", files[0]);
                if (r) sp_ranks_print(out, &c.agg, r, key, limit);
                else scopeprof_table_print(out, &c.agg, key, (int)limit), more_rows(out, c.agg.nrows, limit);
                scopeprof_table_notes_shown(out, &c.agg, key, (int)limit);
                sp_agg_memory_footer(out, &c);
            } else if (md) {
                if (o->per_process) fprintf(out, "%s### ", t ? "\n" : ""), sp_md_cell(out, files[0]), fputs("\n\n", out);
                print_markdown(out, &c.agg, key, limit);
                sp_agg_memory_footer(out, &c);
            } else if (csv) {
                if (t == 0 || !o->per_process) csv_header(out, &c.agg, o->per_process, r);
                print_csv(out, &c, key, limit, o->per_process ? files[0] : NULL, r);
            } else {
                if (t) sp_out_str(&js, ",\n");
                print_json_table(&js, &c.agg, key, limit, files, nf, r, &c);
            }
        }
        sp_agg_ctx_free(&c);
    }
    sp_ranks_free(&rs);
    if (json) sp_out_str(&js, "]}\n");
    errno = 0;
    if (sp_out_flush(&js) != 0 || fflush(out) != 0 || ferror(out)) {
        sp_output_failed(err, o->out_name, errno);
        rc = SP_EXIT_OUTPUT;
    }
    sp_out_free(&js);
    return rc;
}

/* The table of one file in memory (cli.h): text, then JSON. */
int sp_report_mem(const void *data, size_t n, const char *group, FILE *out) {
    int g;
    uint32_t sn = 0;
    if (group && strcmp(group, "folded") == 0) g = SP_GROUP_FOLDED;
    else if (sp_group_parse(group, &g, &sn) != 0) return -1;
    sp_agg_ctx c;
    sp_agg_ctx_init(&c, g, sn);
    sp_callbacks cb = sp_agg_callbacks(&c);
    sp_result res;
    int st = sp_read_any_mem(data, n, &cb, &res);
    if (g == SP_GROUP_FOLDED) {
        for (uint32_t i = 0; i < c.agg.nrows; i++)
            fprintf(out, "%s %lld\n", c.agg.rows[i].key, (long long)c.agg.rows[i].self_ns);
    } else {
        scopeprof_table_print(out, &c.agg, SCOPEPROF_SORT_SELF_CPU_TIME_TOTAL, 0);
        sp_out js;
        sp_out_init(&js, out);
        print_json_table(&js, &c.agg, SCOPEPROF_SORT_COUNT, 0, NULL, 0, NULL, &c);
        sp_out_flush(&js);
        sp_out_free(&js);
    }
    sp_agg_ctx_free(&c);
    return st;
}

static int cmd_stacks(opts *o, FILE *out, FILE *err) {
    const char *m = o->metric ? o->metric : "self_cpu";
    int self = strcmp(m, "self_cpu") == 0;
    if (!self && strcmp(m, "total_cpu") != 0) {
        fprintf(err, "scopeprof: unknown --metric '%s'; valid: self_cpu, total_cpu\n", m);
        return SP_EXIT_USAGE;
    }
    sp_agg_ctx c;
    sp_agg_ctx_init(&c, SP_GROUP_FOLDED, 0);
    c.per_thread = o->per_thread;
    c.raw = o->raw;
    int rc = SP_EXIT_OK;
    for (int i = 0; i < o->nfiles; i++) rc = sp_exit_worst(rc, sp_agg_file(&c, o->files[i], err));
    for (uint32_t i = 0; i < c.agg.nrows; i++) {
        const scopeprof_row *r = &c.agg.rows[i];
        int64_t v = self ? r->self_ns : r->total_ns;
        if (v > 0) fprintf(out, "%s %lld\n", r->key, (long long)v);
    }
    sp_agg_ctx_free(&c);
    errno = 0;
    if (fflush(out) != 0 || ferror(out)) {
        sp_output_failed(err, o->out_name, errno);
        rc = SP_EXIT_OUTPUT;
    }
    return rc;
}

static int cmd_trace(opts *o, FILE *out, FILE *err) {
    if (check_steps(o, err) != 0) return SP_EXIT_USAGE;
    sp_clocks_align(o->files, o->nfiles, err); /* files of several hosts on one clock */
    /* -o OUT was opened by run_to_output: `out` is OUT or standard output. */
    sp_trace *t = sp_trace_open(out);
    if (t && sp_filter_active(&o->filter)) sp_trace_set_filter(t, sp_filter_keep, &o->filter);
    sp_progress pg;
    sp_progress_init(&pg, o->progress, err, out, 1);
    if (t) sp_progress_watch(&pg, sp_trace_bytes, t);
    int rc = SP_EXIT_OK;
    if (!t) {
        fprintf(err, "scopeprof: out of memory\n");
        rc = SP_EXIT_OUTPUT;
    }
    for (int i = 0; t && i < o->nfiles; i++) {
        sp_result res;
        if (o->steps) {
            uint64_t lo, hi;
            step_window(o->files[i], o->steps, &lo, &hi, err);
            sp_trace_set_window(t, lo, hi);
        }
        sp_callbacks tcb = sp_trace_callbacks(t);
        sp_callbacks cb = sp_progress_wrap(&pg, &tcb, o->files[i], i, o->nfiles);
        int st = sp_read_any(o->files[i], &cb, &res);
        if (st == SP_STOPPED && ferror(out)) { /* the writer stopped the reader */
            fprintf(err, "scopeprof: cannot write the output '%s': %s (stopped while reading %s)\n",
                    o->out_name, errno ? strerror(errno) : "a write failed", o->files[i]);
            rc = SP_EXIT_OUTPUT;
            break;
        }
        if (st != SP_OK) {
            char msg[512];
            sp_result_message(&res, o->files[i], msg, sizeof msg);
            fprintf(err, "%s\n", msg);
        }
        sp_warn_incomplete(o->files[i], &res, err);
        rc = sp_exit_worst(rc, st);
    }
    sp_progress_done(&pg); /* while the writer still counts its bytes (all but the last line) */
    errno = 0;
    if (t && sp_trace_close(t) != 0 && rc != SP_EXIT_OUTPUT) {
        sp_output_failed(err, o->out_name, errno);
        rc = SP_EXIT_OUTPUT;
    }
    return rc;
}

/* diff and html --diff: BASE... -- NEW..., or BASE NEW. Returns 0 with the
 * counts of both sides, or -1 after saying what is wrong. */
static int sides(const opts *o, int n[2], FILE *err) {
    n[0] = o->split >= 0 ? o->split : o->nfiles == 2 ? 1 : -1;
    n[1] = o->nfiles - n[0];
    if (n[0] > 0 && n[1] > 0) return 0;
    if (o->split < 0)
        fprintf(err, "scopeprof: diff compares BASE with NEW: give two files, or BASE... -- NEW... "
                "(here %d file(s) and no --)\n", o->nfiles);
    else
        fprintf(err, "scopeprof: diff needs files on both sides of --: BASE... -- NEW...\n");
    return -1;
}

/* `scopeprof diff`'s and `html --diff`'s options, checked. */
static int diff_options(const opts *o, sp_diff_opts *d, int n[2], FILE *err) {
    memset(d, 0, sizeof *d);
    d->key = SCOPEPROF_SORT_SELF_CPU_TIME_TOTAL;
    if (o->sort && sort_parse(o->sort, &d->key, err) != 0) return -1;
    if (sp_diff_check_key(d->key, err) != 0 || group_option(o, &d->group, &d->stack_n, err) != 0) return -1;
    if ((d->format = sp_format_parse(o->format, err)) < 0 || sides(o, n, err) != 0) return -1;
    d->limit = rows_shown(o, SP_FORMAT_HUMAN(d->format));
    d->threshold = o->threshold;
    d->min_time = o->min_time;
    d->raw = o->raw;
    d->out_name = o->out_name;
    return 0;
}

static int cmd_diff(opts *o, FILE *out, FILE *err) {
    sp_diff_opts d;
    int n[2];
    if (diff_options(o, &d, n, err) != 0) return SP_EXIT_USAGE;
    return sp_cmd_diff(o->files, n, &d, out, err);
}

static int cmd_html(opts *o, FILE *out, FILE *err) {
    if (!o->diff) {
        if (o->split >= 0) {
            fprintf(err, "scopeprof: html: '--' separates BASE from NEW with --diff only\n");
            return SP_EXIT_USAGE;
        }
        return sp_cmd_html(o->files, o->nfiles, o->output, o->out_name, o->limit > 0 ? o->limit : 0, out, err);
    }
    sp_diff_opts d;
    int n[2];
    if (diff_options(o, &d, n, err) != 0) return SP_EXIT_USAGE;
    d.limit = o->limit > 0 ? o->limit : 0; /* the page's table is sortable: every row */
    return sp_cmd_html_diff(o->files, n, &d, o->output, o->out_name, out, err);
}

static int cmd_flame(opts *o, FILE *out, FILE *err) {
    return sp_cmd_flame(o->files, o->nfiles, o->per_thread, o->output, o->out_name, out, err);
}

/* The same file given twice (by any path: same device and inode) would be
 * counted twice: refused, naming both. Files that cannot be opened are left
 * to the reader, which says why. */
static int distinct_inputs(const opts *o, FILE *err) {
    struct stat *st = calloc((size_t)o->nfiles + 1, sizeof *st);
    char *ok = calloc((size_t)o->nfiles + 1, 1);
    int rc = 0;
    for (int i = 0; st && ok && i < o->nfiles && !rc; i++) {
        const char *f = o->files[i];
        ok[i] = (strcmp(f, "-") == 0 ? fstat(0, &st[i]) : stat(f, &st[i])) == 0;
        for (int j = 0; ok[i] && j < i && !rc; j++)
            if (ok[j] && st[j].st_dev == st[i].st_dev && st[j].st_ino == st[i].st_ino) {
                fprintf(err, "scopeprof: '%s' and '%s' are the same file; give each file once "
                        "(it would be counted twice)\n", o->files[j], f);
                rc = -1;
            }
    }
    free(st);
    free(ok);
    return rc;
}

/* Run a command with its output: standard output, or -o OUT through
 * output.h (OUT replaced only on success, never an input; gzip-compressed
 * when its name ends in .gz). The command then writes to `out` as it would
 * to standard output. */
static int run_to_output(opts *o, int (*run)(opts *, FILE *, FILE *), FILE *out, FILE *err) {
    o->out_name = "standard output";
    if (distinct_inputs(o, err) != 0) return SP_EXIT_USAGE;
    /* The files of a report are one job's (diff's sides are runs, and
     * --per-process reads each file alone): each rank once. */
    if (!o->sides && !o->per_process && sp_ranks_each_once(o->files, o->nfiles, err) != 0) return SP_EXIT_USAGE;
    if (!o->output || strcmp(o->output, "-") == 0) {
        o->output = NULL;
        return run(o, out, err);
    }
    sp_dest w;
    int rc = sp_dest_open(&w, o->output, o->files, o->nfiles, err);
    if (rc) return rc;
    o->out_name = o->output;
    o->output = NULL;
    rc = run(o, w.f, err);
    /* A write error the command reported already is not told twice; that
     * the file is as it was (written beside it, never renamed), is. */
    int beside = w.tmp != NULL, existed = w.existed, failed = rc == SP_EXIT_OUTPUT;
    if (sp_dest_close(&w, rc == SP_EXIT_OK, failed ? NULL : err) != 0) rc = SP_EXIT_OUTPUT;
    if (failed && beside)
        fprintf(err, "scopeprof: the output '%s' is %s\n", o->out_name,
                existed ? "left unchanged" : "not created");
    return rc;
}

/* The commands: name, options, usage text, what runs them. */
static const char *const k_table[] = {"--sort", "--limit", "--group-by", "--format", "--per-process", "--per-rank",
                                      "--steps", "--output", "--no-compensate", NULL};
static const char *const k_diff[] = {"--sort", "--limit", "--group-by", "--format", "--threshold", "--min-time",
                                     "--output", "--no-compensate", NULL};
static const char *const k_trace[] = {"--output", "--steps", "--name", "--thread", "--window", "--min-dur",
                                      "--progress", "--no-progress", NULL};
static const char *const k_stacks[] = {"--metric", "--per-thread", "--output", "--no-compensate", NULL};
static const char *const k_html[] = {"--output", "--limit", "--diff", NULL};
static const char *const k_flame[] = {"--per-thread", "--output", NULL};
static const struct command {
    const char *name;
    const char *const *known;
    const char *usage;
    int (*run)(opts *, FILE *, FILE *);
} commands[] = {
    {"table", k_table, usage_table, cmd_table},    {"diff", k_diff, usage_diff, cmd_diff},
    {"trace", k_trace, usage_trace, cmd_trace},    {"stacks", k_stacks, usage_stacks, cmd_stacks},
    {"html", k_html, usage_html, cmd_html},        {"flame", k_flame, usage_flame, cmd_flame},
};

static const struct command *command(const char *name) {
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}

/* `scopeprof FILE...` is `scopeprof table FILE...`: a first word that is no
 * command but an option, "-" (standard input), an existing path, or a name
 * with a '/' or '.' in it (a missing file is then reported as such). */
static int names_input(const char *a) {
    struct stat st;
    return a[0] == '-' || strchr(a, '/') || strchr(a, '.') || stat(a, &st) == 0;
}

int sp_main(int argc, char **argv, FILE *out, FILE *err) {
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        (strcmp(argv[1], "help") == 0 && argc == 2)) {
        fputs(usage_main, argc < 2 ? err : out);
        return argc < 2 ? SP_EXIT_USAGE : SP_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        fprintf(out, "scopeprof %s (trace format %d.%d)\n", SCOPEPROF_VERSION_STRING,
                SCOPEPROF_FORMAT_MAJOR, SCOPEPROF_FORMAT_MINOR);
        return SP_EXIT_OK;
    }
    sp_clocks_forget(); /* a command reads times as they are unless it aligns them */
    if (strcmp(argv[1], "help") == 0) { /* help COMMAND */
        const struct command *c = command(argv[2]);
        if (c && argc == 3) return fputs(c->usage, out), SP_EXIT_OK;
        fprintf(err, "scopeprof: help takes one command, not '%s'\n\n%s", argv[2], usage_main);
        return SP_EXIT_USAGE;
    }
    const struct command *c = command(argv[1]);
    int first = 2;
    if (!c && names_input(argv[1])) c = command("table"), first = 1;
    if (!c) {
        fprintf(err, "scopeprof: unknown command '%s'\n\n%s", argv[1], usage_main);
        return SP_EXIT_USAGE;
    }
    opts o;
    memset(&o, 0, sizeof o);
    o.progress = -1;
    o.limit = -1;
    o.threshold = -1;
    o.min_time = SP_DIFF_MIN_TIME;
    o.split = -1;
    o.sides = c->run == cmd_diff;
    for (int i = first; i < argc && c->run == cmd_html; i++) o.sides |= strcmp(argv[i], "--diff") == 0;
    o.files = calloc((size_t)argc, sizeof *o.files);
    if (!o.files) return SP_EXIT_OUTPUT;
    int rc;
    if (parse(argc - first, argv + first, &o, c->known, err) != 0) {
        rc = SP_EXIT_USAGE;
    } else if (o.help) {
        fputs(c->usage, out);
        rc = SP_EXIT_OK;
    } else if (o.nfiles == 0) {
        fprintf(err, "scopeprof %s: no trace file given\n\n%s", c->name, c->usage);
        rc = SP_EXIT_USAGE;
    } else if (c->run == cmd_trace && !o.output && isatty(fileno(out))) {
        /* Hundreds of MB of JSON on a terminal help nobody. */
        fprintf(err, "scopeprof trace: the JSON would go to the terminal; write it to a file with "
                "-o OUT.json (or OUT.json.gz), or pipe it (-o - to insist)\n");
        rc = SP_EXIT_USAGE;
    } else {
        rc = run_to_output(&o, c->run, out, err);
    }
    sp_clocks_forget();
    free(o.files);
    return rc;
}
