/* The trace-file format and the aggregation API: what the reporter and the
 * implementation use (SCOPEPROF_AGGREGATION, or the implementation's file).
 * docs/FORMAT.md is the contract for the file. */
#if (defined(SCOPEPROF_AGGREGATION) || defined(SCOPEPROF__IMPL)) && !defined(SCOPEPROF__FORMAT_H)
#define SCOPEPROF__FORMAT_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Trace file format version (docs/FORMAT.md). Bump MINOR for additions that
 * old readers can skip (new chunk types), MAJOR for anything else. */
#define SCOPEPROF_FORMAT_MAJOR 5
#define SCOPEPROF_FORMAT_MINOR 2
/* 3.0: header CRC, chunk CRCs over the chunk header; 3.1: OVERHEAD chunk;
 * 3.2: CLOCK chunk; 4.0: events hold clock ticks, converted by the reader
 * with the TICKS chunk's rate, and an EVENTS chunk counts 16-byte units (the
 * writer writes its buffers as they are: issue 22); 5.0: a long record's
 * last field counts the units of input shapes that follow it (issue 26);
 * 5.1: the OVERHEAD chunk's fourth field, reserved before, is where short
 * ends (twice an empty scope's duration, ticks), and two fields follow: the
 * cost of a short scope (overhead compensation in two classes); 5.2: the
 * END chunk's second field, reserved before, counts the scopes opened that
 * the file holds no record of (left without closing, open at the end). */

/* One finished scope, decoded: what the aggregation takes. Buffers and trace
 * files hold it packed in 16 bytes (see "Event records" below). `depth` is
 * the number of scopes open on the thread when this one opened: it is what
 * lets self time be computed in one streaming pass (see scopeprof_agg_event). */
typedef struct scopeprof_event {
    uint64_t start;
    uint64_t end;
    uint32_t site;
    uint32_t depth;
} scopeprof_event;

/* ---- Aggregation: events -> key_averages rows ----------------------------
 * One implementation serves the exit summary and the reporter. Feed it events
 * in the order each thread closed them (the order of the trace file); memory
 * grows with the number of rows and the nesting depth, not the event count. */

/* What a row's CPU times add up to between two scopeprof_agg_flush calls,
 * in the units of the times fed (a trace's clock ticks, or ns). Converting
 * sums rather than each event costs nothing per event and gives the same
 * digits whoever sums the same events (the exit summary per call site, the
 * reporter per row); overhead compensation is linear in the counts, so it
 * is applied there too (scopeprof__agg_add_sums). The *_short counts count
 * the short scopes among them (compensation's short class: a duration under
 * scopeprof_agg's comp_short_below). */
typedef struct scopeprof_sums {
    uint64_t count;
    int64_t total; /* durations */
    int64_t self;  /* durations less their direct children inside them (clamped at 0
                    * per event when no compensation is applied) */
    uint64_t nested;   /* scopes nested in the calls, at any depth (children inside only) */
    uint64_t children; /* direct children inside the calls */
    uint64_t count_short, nested_short, children_short;
} scopeprof_sums;

typedef struct scopeprof_row {
    char *key;        /* what rows are grouped by (name, name+site, ...) */
    char *name;       /* shown in the Name column */
    char *extra;      /* optional text column (site, stack), or NULL */
    uint64_t count;
    int64_t self_ns;  /* inclusive minus directly nested, summed over calls */
    int64_t total_ns; /* inclusive, summed over calls (recursion counts twice) */
    int64_t gpu_self_ns, gpu_total_ns;
    int64_t cpu_mem, self_cpu_mem, gpu_mem, self_gpu_mem; /* bytes, net */
    int gpu_role; /* SCOPEPROF_ROW_*: does its self GPU time count in the total? */
    int comp_clamped; /* a part it sums (a file's, a rank's) was clamped in its own table */
    uint64_t count_short; /* calls in the short class (compensated only): when
                           * most are, the row is mostly the profiler's cost */
    /* Compensated total and self, signed (scopeprof__add_ps): ns and what is
     * under 1 ns. total_ns and self_ns show them clamped (scopeprof__comp_shown). */
    int64_t comp_ns[2];
    int32_t comp_carry_ps[2];
    scopeprof_sums unit; /* fed since the last scopeprof_agg_flush */
} scopeprof_row;

/* PyTorch's Self GPU time total sums device events only: a CPU op of a
 * Kineto trace shows the GPU time of the kernels it launched as its own, and
 * counting it too would count those kernels twice. Rows start as ANY
 * (counted: the exit summary's GPU scopes are the device events); a reader
 * marks LAUNCHER rows (host ops) and DEVICE rows (which win: counted). */
enum { SCOPEPROF_ROW_ANY, SCOPEPROF_ROW_LAUNCHER, SCOPEPROF_ROW_DEVICE };

typedef struct scopeprof_agg_pending { /* what an open scope has seen */
    int64_t sum, gpu_ns;  /* its closed children: CPU durations (units fed), GPU totals (ns) */
    int64_t mem_kids[2];     /* its closed children: net memory, CPU and GPU */
    int64_t mem_direct[2];   /* allocations made directly in it */
    uint64_t min_start, max_end; /* the span of its closed children */
    uint64_t nested; /* its closed children and all nested in them (compensation) */
    uint64_t nested_short, n_short; /* the short ones of those, and of the children */
    uint32_t n; /* closed children */
    uint32_t depth; /* of those children (the open scope's depth + 1) */
} scopeprof_agg_pending;

typedef struct scopeprof_agg_thread {
    /* A stack of the levels with something pending, depth increasing: as
     * long as the nesting that is open (not as deep as the deepest depth
     * ever seen), and freed when the thread's top-level scope closes. */
    scopeprof_agg_pending *pend;
    uint32_t cap, n;
    uint64_t last_end; /* close order means ends never go back */
} scopeprof_agg_thread;

typedef struct scopeprof_agg {
    scopeprof_row *rows;
    uint32_t nrows, cap;
    uint32_t *hash; /* open addressing, row index + 1, 0 = empty */
    uint32_t hcap;
    scopeprof_agg_thread *threads;
    uint32_t nthreads;
    uint64_t events;
    int has_gpu, has_mem, has_gpu_mem;
    uint64_t unordered;        /* events that closed before an earlier one of their thread */
    uint32_t unordered_thread; /* the thread of the first */
    const char *extra_header; /* header of the extra column, if any */
    /* Overhead compensation (docs/DESIGN.md): what recording one scope adds,
     * in picoseconds, taken out of the events fed from now on: `inside` is
     * the part within the scope's own measured interval, `outside` the part
     * its parent measures around it; for a scope with work in it, and
     * (comp_short_*) for a short one, whose duration in the units fed is
     * under comp_short_below (0: no short class). All 0: none (raw times).
     * The caller sets them per trace (each process has its own calibration:
     * scopeprof_agg_calibration, scopeprof_agg_short_class). */
    uint32_t comp_inside_ps, comp_outside_ps;
    uint32_t comp_short_inside_ps, comp_short_outside_ps;
    uint64_t comp_short_below;
    /* Nanoseconds per unit of the times fed from now on (scopeprof_agg_units):
     * 0 or 1 when they are ns. */
    double unit_ns;
    /* What the footer says (scopeprof_table_notes): SCOPEPROF_COMP_*, and
     * the range of inside + outside over the calibrations applied or seen,
     * of a scope with work and of a short one (0: none seen). */
    int comp_state;
    uint32_t comp_lo_ps, comp_hi_ps, comp_short_lo_ps, comp_short_hi_ps;
} scopeprof_agg;

enum {
    SCOPEPROF_COMP_NONE,    /* no calibration known (old trace, Chrome JSON): no footer line */
    SCOPEPROF_COMP_ON,      /* applied */
    SCOPEPROF_COMP_OFF_ENV, /* the recording had SCOPEPROF_COMPENSATE=0: nothing measured */
    SCOPEPROF_COMP_OFF_RAW  /* measured, not applied (scopeprof table --no-compensate) */
};

typedef enum scopeprof_sort {
    SCOPEPROF_SORT_CPU_TIME_TOTAL,
    SCOPEPROF_SORT_SELF_CPU_TIME_TOTAL,
    SCOPEPROF_SORT_CPU_TIME,
    SCOPEPROF_SORT_COUNT,
    SCOPEPROF_SORT_GPU_TIME_TOTAL,
    SCOPEPROF_SORT_SELF_GPU_TIME_TOTAL,
    SCOPEPROF_SORT_GPU_TIME,
    SCOPEPROF_SORT_CPU_MEMORY_USAGE,
    SCOPEPROF_SORT_SELF_CPU_MEMORY_USAGE,
    SCOPEPROF_SORT_GPU_MEMORY_USAGE,
    SCOPEPROF_SORT_SELF_GPU_MEMORY_USAGE
} scopeprof_sort;

void scopeprof_agg_init(scopeprof_agg *a);
void scopeprof_agg_free(scopeprof_agg *a);
/* The row for `key`, created on first use with the given name and extra text
 * (both copied). Returns the row index, or UINT32_MAX if out of memory. */
uint32_t scopeprof_agg_row(scopeprof_agg *a, const char *key, const char *name,
                           const char *extra);
/* Account one finished scope of thread slot `thread` (any small integer the
 * caller uses to tell threads apart) to row `row`. Returns 0, or -1 if out of
 * memory (the event is then counted without self-time correction). */
int scopeprof_agg_event(scopeprof_agg *a, uint32_t thread, uint32_t row,
                        uint64_t start, uint64_t end, uint32_t depth);
/* The same for a GPU scope whose GPU interval lasted gpu_ns (< 0: unknown, as
 * a CPU scope). A scope's GPU total is its own GPU time, or for a CPU scope
 * the GPU totals of the scopes nested in it; self GPU time is a GPU scope's
 * own time minus that of GPU scopes nested in it. */
int scopeprof_agg_event_gpu(scopeprof_agg *a, uint32_t thread, uint32_t row, uint64_t start,
                            uint64_t end, uint32_t depth, int64_t gpu_ns);
/* An allocation (bytes > 0) or free (bytes < 0) on `device` (0: CPU, n: GPU
 * n-1) made while `depth` scopes were open on the thread: it counts to the
 * innermost of them (self) and to all of them (total), like PyTorch's
 * cpu_memory_usage / self_cpu_memory_usage. */
int scopeprof_agg_mem(scopeprof_agg *a, uint32_t thread, uint32_t depth, uint32_t device,
                      int64_t bytes);
/* The times fed from now on are in units of unit_ns nanoseconds (a trace's
 * clock ticks: its TICKS chunk's ns_per_tick; 1: ns, the default). What was
 * fed before is flushed first, at the old unit. */
void scopeprof_agg_units(scopeprof_agg *a, double unit_ns);
/* Add what was fed since the last call to the rows' ns columns: converted
 * from the unit and compensated, once per row. Rows are read after it; the
 * reporter calls it once per file, the exit summary once per table, so that
 * both convert the same sums (the same digits). */
void scopeprof_agg_flush(scopeprof_agg *a);
/* Sum of self CPU time over all rows: the denominator of both CPU %. */
int64_t scopeprof_agg_self_total(const scopeprof_agg *a);
/* Sum of self GPU time over the rows that are not LAUNCHER rows: the
 * denominator of Self GPU % and the `Self GPU time total`. */
int64_t scopeprof_agg_gpu_self_total(const scopeprof_agg *a);

/* Sort keys are PyTorch's attribute names; cuda_* and device_* are aliases
 * of gpu_*.
 * Returns 0 and sets *out, or -1 for an unknown key. */
int scopeprof_sort_parse(const char *s, scopeprof_sort *out);
/* Space-separated list of the valid keys, for error messages. */
const char *scopeprof_sort_keys(void);
/* Row indexes ordered by `key`, descending, ties in first-seen order.
 * Returns a malloc'd array of a->nrows entries (NULL if out of memory). */
uint32_t *scopeprof_agg_sorted(const scopeprof_agg *a, scopeprof_sort key);
/* Print the table as PyTorch's key_averages().table() lays it out
 * (its _build_table; docs/REPORTER.md). row_limit <= 0 prints every row. */
void scopeprof_table_print(FILE *out, const scopeprof_agg *a, scopeprof_sort key,
                           int row_limit);
/* The line under a table of `rows` rows that `limit` cut (limit <= 0: none
 * cut), naming the knob that did: "... 6 more rows (KNOB3 of 9; ALL shows
 * all)", KNOB "--limit " or "SCOPEPROF_ROW_LIMIT=", ALL what shows every
 * row. Into b, which it returns; NULL when nothing was cut. */
const char *scopeprof_more_rows(char *b, size_t n, uint32_t rows, long limit, const char *knob, const char *all);
/* The lines under the table that say how to read it: what CPU time is, and
 * the overhead compensation (when a calibration is known). The exit summary
 * and `scopeprof table` print them after scopeprof_table_print, which keeps
 * PyTorch's layout exactly. */
void scopeprof_table_notes(FILE *out, const scopeprof_agg *a);
/* The same under a table printed with `key` and `row_limit`: the rows it
 * names are the table's, and the others are counted ("2 row(s) not shown
 * above"). */
void scopeprof_table_notes_shown(FILE *out, const scopeprof_agg *a, scopeprof_sort key, int row_limit);
/* Record a calibration in the aggregation's footer state and, if `apply`,
 * take it out of the events fed from now on (comp_inside_ps/outside_ps; a
 * change flushes what was fed before); if not, nothing is taken out, the
 * short class's figures included. */
void scopeprof_agg_calibration(scopeprof_agg *a, uint32_t inside_ps, uint32_t outside_ps,
                               int apply);
/* The same for the short class: scopes whose duration (units fed) is under
 * `below` cost inside_ps and outside_ps instead (below 0: no short class).
 * Applied, as the last scopeprof_agg_calibration said. */
void scopeprof_agg_short_class(scopeprof_agg *a, uint32_t inside_ps, uint32_t outside_ps,
                               uint64_t below);
/* PyTorch's formatting: microseconds -> "1.081s", "26.179ms", "422.000us";
 * bytes -> "1.50 Gb", "-382.05 Kb", "144 b". Return buf. */
char *scopeprof_format_time(char *buf, size_t n, double us);
char *scopeprof_format_mem(char *buf, size_t n, int64_t bytes);

/* ---- Trace file constants (docs/FORMAT.md is the contract) --------------- */
#define SCOPEPROF_FILE_MAGIC "SCOPEPRF"   /* 8 bytes, no terminator */
#define SCOPEPROF_CHUNK_MAGIC 0x4B4E4843u /* "CHNK" little-endian */
#define SCOPEPROF_FILE_HEADER_SIZE 48u    /* fixed part, before program name */
#define SCOPEPROF_CHUNK_HEADER_SIZE 16u
enum {
    SCOPEPROF_CHUNK_SITES = 1,  /* site definitions */
    SCOPEPROF_CHUNK_THREAD = 2, /* thread index, tid, name */
    SCOPEPROF_CHUNK_EVENTS = 3, /* events of one thread */
    SCOPEPROF_CHUNK_END = 4,    /* clean end of the recording */
    SCOPEPROF_CHUNK_GPU = 5,    /* GPU intervals of one thread's GPU scopes */
    SCOPEPROF_CHUNK_DEVICE = 6, /* a GPU device's name */
    SCOPEPROF_CHUNK_STEPS = 7,  /* step ranges (PROFILE_STEP) */
    SCOPEPROF_CHUNK_MEMORY = 8, /* peak and final memory per device */
    SCOPEPROF_CHUNK_OVERHEAD = 9, /* what recording a scope costs (since 3.1) */
    SCOPEPROF_CHUNK_CLOCK = 10,   /* host, rank, clock offsets to rank 0 (since 3.2) */
    SCOPEPROF_CHUNK_TICKS = 11    /* the events' clock: ticks to ns (since 4.0) */
};
/* The TICKS chunk's payload: u64 tick0, u64 ns0, u64 ns_per_tick (the bits
 * of an IEEE-754 double). Every event time in the file (and only those: GPU
 * records, steps and the header are in ns) converts as scopeprof_ticks_ns
 * does; it comes before the first EVENTS chunk. */
#define SCOPEPROF_TICKS_SIZE 24u
/* A tick count in CLOCK_MONOTONIC nanoseconds: the one conversion, used by
 * the writer (GPU records' launch times, steps) and every reader, so that
 * both sides get the same nanosecond for the same tick. */
static inline uint64_t scopeprof_ticks_ns(uint64_t tick, uint64_t tick0, uint64_t ns0,
                                          double ns_per_tick) {
    double x = (double)(int64_t)(tick - tick0) * ns_per_tick;
    if (!(x > -9.2e18 && x < 9.2e18)) x = x > 0 ? 9.2e18 : -9.2e18; /* a crafted file's: no UB */
    return ns0 + (uint64_t)(int64_t)x;
}
/* The CLOCK chunk's payload (docs/FORMAT.md): a fixed part (rank, ranks,
 * points, host length), then points of 32 bytes (local ns, offset to rank
 * 0's clock, best round trip, when), then the host name. */
#define SCOPEPROF_CLOCK_FIXED 16u
#define SCOPEPROF_CLOCK_POINT 32u
/* A MEM record's depth field (see "Event records" in api.h). */
#define SCOPEPROF_MEM_DEVICE(depth) (((depth) >> 24) & 63u)
#define SCOPEPROF_MEM_DEPTH(depth) ((depth) & 0xFFFFFFu)

/* The site and depth of a 16-byte record's key (scopeprof__key_pack). */
static inline void scopeprof__key_unpack(uint32_t key, scopeprof_event *e) {
    e->site = key & ((1u << SCOPEPROF_REC_SITE_BITS) - 1);
    e->depth = (key & SCOPEPROF_DEPTH_GPU) |
               ((key >> SCOPEPROF_REC_SITE_BITS) & ((1u << SCOPEPROF_REC_DEPTH_BITS) - 1));
}
/* Encode e at p (16 or 32 bytes, returned). */
size_t scopeprof_rec_encode(unsigned char *p, const scopeprof_event *e);
/* Decode the record at p into e; returns its size, 0 when `avail` bytes do
 * not hold all of it. Formats 2 to 4: a long record is 32 bytes. */
size_t scopeprof_rec_decode(const unsigned char *p, size_t avail, scopeprof_event *e);

/* ---- Input shapes (format 5, PROFILE_SCOPE_SHAPE) -------------------------
 * A long record's last field counts the 16-byte units that follow it and
 * hold the scope's input shapes (0: none). Those units are little-endian
 * 64-bit words: the first, m, is how many words follow that mean something
 * (the rest of the units is zeros); those m words are the inputs in order,
 * each its number of dimensions and then the dimensions (signed):
 *     PROFILE_SCOPE_SHAPE("gemm", 64, 32, 16)   m = 4: 3, 64, 32, 16
 *     [[64, 32, 16]] as PyTorch prints input shapes
 * The words are what the recording thread stores (no encoding); readers
 * check them (scopeprof_shape_check) before they trust a count. */
#define SCOPEPROF_SHAPE_MAX_WORDS 127u /* m at most: 64 units a record, with the count */
/* Decode a format 5 record: as scopeprof_rec_decode, and *shape, *units the
 * shape's units (NULL, 0: none), which the returned size includes. This
 * and scopeprof_shape_words: with SCOPEPROF_AGGREGATION (the reporter's). */
size_t scopeprof_rec_decode_shaped(const unsigned char *p, size_t avail, scopeprof_event *e,
                                   const unsigned char **shape, uint32_t *units);
/* The words of a shape's units (as the file holds them) into w (at least
 * SCOPEPROF_SHAPE_MAX_WORDS); returns m, or -1 when they do not parse: m past
 * the units or past the limit, or inputs that do not end at word m. */
int scopeprof_shape_words(const unsigned char *shape, uint32_t units, uint64_t *w);
/* The number of inputs the m words hold, or -1 when they do not parse. */
int scopeprof_shape_check(const uint64_t *w, uint32_t m);
/* The m words (checked) as PyTorch prints input shapes: "[[64, 32, 16], []]"
 * into buf of n bytes (cut to fit, NUL-terminated); returns the length the
 * whole text needs, as snprintf. */
size_t scopeprof_shape_format(char *buf, size_t n, const uint64_t *w, uint32_t m);

/* The GPU interval of one GPU scope, as in GPU chunks (48 bytes). */
typedef struct scopeprof_gpu_record {
    uint64_t start_ns, end_ns; /* on the CPU's CLOCK_MONOTONIC timeline */
    uint64_t launch_ns;        /* start of the scope's CPU side */
    uint64_t stream;           /* the stream handle, as an id */
    uint32_t site, device;
    uint32_t status; /* 0: timed; 1: no timing (a runtime error) */
    uint32_t reserved;
} scopeprof_gpu_record;
/* CRC-32 (IEEE, as zlib's crc32): start with crc = 0, feed pieces in order. */
uint32_t scopeprof_crc32(uint32_t crc, const void *data, size_t n);
/* Format 3 checksums (docs/FORMAT.md). A chunk's CRC field holds the CRC of
 * its payload continued over bytes 0-11 of its header (magic, type, length):
 * pass the payload's CRC and the header. The file header ends with the CRC
 * of all its bytes before it. */
uint32_t scopeprof_chunk_crc(uint32_t payload_crc, const unsigned char *chunk_header);
#define SCOPEPROF_FILE_CRC_SINCE 3 /* the first major version with these */

#ifdef __cplusplus
}
#endif
#endif /* format and aggregation API */
