/* read.h -- streaming reader of scopeprof trace files (docs/FORMAT.md).
 *
 * The reader pulls the file through a fixed buffer and hands each chunk to
 * callbacks as it goes: memory is the buffer, the site and thread tables and
 * one chunk payload (never more than the file holds), whatever the number of
 * events. Everything it allocates is bounded by the size of the input. */
#ifndef SP_READ_H
#define SP_READ_H

#include <stddef.h>
#include <stdint.h>

/* Limits that make absurd values corruption rather than allocations. */
#define SP_MAX_CHUNK (1u << 30)   /* payload bytes */
/* Depth and threads: whatever the writer can write (a 30-bit depth field,
 * u32 thread indexes) is read; what that costs is bounded by the nesting
 * that is open and by the bytes of the file (a thread takes a chunk). */
#define SP_MAX_DEPTH 0x3FFFFFFFu  /* nesting depth of one event */
#define SP_MAX_THREADS 0xFFFFFFFEu /* distinct thread indexes in one file */
#define SP_MAX_SITES (1u << 24)   /* distinct sites in one file */
#define SP_MAX_VALUE (1ull << 53) /* ns of one event, bytes of one allocation */

typedef struct sp_header {
    uint32_t major, minor, header_len;
    uint64_t pid, start_ns;
    int64_t realtime_minus_mono;
    uint32_t rank;          /* 0xFFFFFFFF: none */
    char prog[256];         /* NUL-terminated, cut at 255 bytes */
    /* The OVERHEAD chunk (format 3.1), from when it is read (its writer
     * puts it before the first event): what recording one scope cost, in
     * picoseconds. 0: none in the file (no compensation). */
    int has_overhead;
    uint32_t overhead_inside_ps, overhead_outside_ps;
    /* The short class (5.1; below 0: none): a scope under `below` (units of
     * the file's events) costs these instead. */
    uint32_t overhead_short_below, overhead_short_inside_ps, overhead_short_outside_ps;
    int overhead_off; /* the chunk says nothing was measured (SCOPEPROF_COMPENSATE=0) */
    /* The file's host (its CLOCK chunk, format 3.2), "" when not known. Set
     * with the times' map to one clock when the command aligned the files
     * first (clocks.h): start_ns and every time handed out are then on it. */
    char host[64];
    int aligned; /* its times are on the common clock (clocks.h) */
    /* Format 4: events hold clock ticks, converted with the TICKS chunk's
     * rate (has_ticks, from when it is read: its writer puts it before the
     * first event). unit_ns: ns per unit of sp_event.t_start/t_end (the
     * ticks' ns_per_tick; 1 for files in ns), what the aggregation sums in. */
    int has_ticks;
    uint64_t tick0, ns0;
    double unit_ns;
} sp_header;

typedef struct sp_site {
    const char *name, *file, *func; /* NUL-terminated */
    uint32_t id, line;
} sp_site;

typedef struct sp_thread {
    uint32_t index; /* as in the file */
    uint32_t slot;  /* 0, 1, 2... in order of first appearance in this file */
    uint64_t tid;
    char *name;     /* "" until a THREAD chunk names it; the last one wins */
} sp_thread;

/* One record of an EVENTS chunk, decoded and paired with its GPU interval. */
typedef struct sp_event {
    uint64_t start, end;      /* ns; for a memory record `end` is unused */
    uint32_t site, depth;     /* depth without the flag bits */
    uint32_t kind;            /* SP_SCOPE or SP_MEM */
    uint32_t device;          /* SP_MEM: 0 CPU, n GPU n-1 */
    int64_t bytes;            /* SP_MEM: signed byte count */
    int64_t gpu_ns;           /* GPU scope: its GPU duration; -1 otherwise */
    uint64_t gpu_start;       /* GPU scope: start of its GPU interval */
    /* start and end as the file holds them, in units of sp_header.unit_ns
     * (ticks in format 4, else ns; before any alignment to another clock):
     * what the table sums, so that it sums what the exit summary summed
     * and converts once (scopeprof_agg_units). Readers whose times are ns
     * set them equal to start and end. */
    uint64_t t_start, t_end;
    /* Its input shapes as PyTorch prints them, "[[64, 32, 16], []]" (format
     * 5, PROFILE_SCOPE_SHAPE), interned: one pointer per distinct shape,
     * valid while the reader lives. NULL: none (and in every other reader:
     * a Chrome trace's are its site's, sp_chrome_shape). */
    const char *shape;
} sp_event;
enum { SP_SCOPE = 0, SP_MEM = 1 };

typedef struct sp_reader sp_reader;

/* Callbacks return 0 to go on, non-zero to stop reading (returned as is). */
typedef struct sp_callbacks {
    void *ctx;
    int (*header)(void *ctx, const sp_reader *r, const sp_header *h);
    /* n events of one thread, in the order the thread closed them. */
    int (*events)(void *ctx, const sp_reader *r, const sp_thread *t, const sp_event *ev,
                  uint32_t n);
    /* After the last chunk (also after an error), while the tables above
     * are still valid: the place to flush per-thread state. */
    int (*finish)(void *ctx, const sp_reader *r);
} sp_callbacks;

/* Outcome of a read. */
enum {
    SP_OK = 0,        /* whole file read */
    SP_TRUNCATED = 1, /* file cut short: everything up to `good_end` was used */
    SP_CORRUPT = 2,   /* bad data at `offset`: everything before it was used */
    SP_IOERR = 3,     /* cannot open or read */
    SP_STOPPED = 4    /* a callback asked to stop (or out of memory) */
};

typedef struct sp_result {
    int status;
    uint64_t offset;   /* where reading stopped */
    uint64_t good_end; /* end of the last whole chunk (or of the header) */
    uint64_t events;   /* records delivered */
    uint64_t units;    /* format 4: their 16-byte units, as the END chunk counts them */
    int saw_end;       /* an END chunk was read */
    uint64_t missing;  /* format 5.2, its count of scopes opened that the file lacks */
    int native;        /* a .sprof file (whose writer ends it with END) */
    char msg[384];     /* why, for SP_TRUNCATED / SP_CORRUPT / SP_IOERR */
    /* Damage the reading went past: problems noted (the first one is in
     * status/offset/msg), damaged regions skipped to the next valid chunk,
     * and the bytes skipped. */
    uint32_t problems, resynced;
    uint64_t skipped;
    /* A site id defined again differently (the first definition is kept):
     * how many times, and the first id and chunk offset. Not an error. */
    uint32_t sites_redefined, redefined_id;
    uint64_t redefined_offset;
    /* A JSON input's B events never ended and E events that end nothing:
     * left out of the ranges (chrome://tracing shows them unfinished). */
    uint64_t unmatched;
    /* GPU records that paired with no scope (docs/FORMAT.md, type 5): their
     * GPU time is left out. Not an error (a file cut between a GPU chunk
     * and its EVENTS chunk has them); said on stderr (sp_warn_incomplete). */
    uint64_t gpu_unpaired;
    /* Records that end before they start (a scope, a paired GPU interval, a
     * step), each taken as 0 long: the writer's clock went back (cores whose
     * TSCs differ); said on stderr (sp_warn_incomplete). How many, and the
     * offset of the first one's chunk. */
    uint64_t backwards, backwards_offset;
    /* What a JSON input lost or had repaired without an error (SP_NOTE_*):
     * a warning line each (sp_warn_incomplete, input.h). */
    uint32_t notes;
} sp_result;

/* sp_result.notes. LATE: read once (a pipe), a thread's events came out of
 * time order after some of it was delivered, which kept their self times and
 * memory as they were. CTRL: raw control characters (a newline) inside JSON
 * strings, taken as they are (Python's json.loads(strict=False)). PIPE_GPU:
 * read once, device events were rows but their time went to no op. */
enum { SP_NOTE_LATE = 1, SP_NOTE_CTRL = 2, SP_NOTE_PIPE_GPU = 4, SP_NOTE_AMBIGUOUS = 8 };

/* What a GPU scope's record says beyond its interval (see sp_reader_gpu_info). */
typedef struct sp_gpu_info {
    uint64_t stream;  /* the stream handle, an opaque id */
    uint32_t device;  /* GPU index (0: the first GPU) */
    uint32_t timed;   /* 1: ev[k] is a GPU scope with a GPU interval; 2 (Chrome
                         JSON): a GPU annotation (gpu_user_annotation), an
                         interval on its stream whose time is not device
                         time: not in the Self GPU total */
} sp_gpu_info;

/* One STEPS record: the range of ProfilerStep#number. */
typedef struct sp_step {
    uint64_t number, start, end;
} sp_step;

/* One MEMORY record (the last one for a device wins). */
typedef struct sp_memory {
    uint32_t device;        /* 0: CPU, n: GPU n-1 */
    int64_t peak, final;    /* net bytes */
    uint64_t unknown_frees; /* device 0 only */
} sp_memory;

/* Devices above this are ignored in DEVICE and MEMORY chunks (the MEM flag
 * has 6 bits of device); GPU records beyond it share the last one. */
#define SP_MAX_DEVICES 64u

/* Readers of other formats (chrome.h) keep their own tables: their state
 * starts with a pointer to these accessors, where the native reader's holds
 * NULL, so the sp_reader_* functions below dispatch on it (read.c), whatever
 * reader the callbacks were handed. */
typedef struct sp_reader_vtbl {
    const sp_site *(*site)(const sp_reader *r, uint32_t id);
    const sp_header *(*header)(const sp_reader *r);
    uint32_t (*nthreads)(const sp_reader *r);
    const sp_thread *(*thread)(const sp_reader *r, uint32_t slot);
    const sp_gpu_info *(*gpu_info)(const sp_reader *r);
    uint32_t (*steps)(const sp_reader *r, const sp_step **steps);
    const char *(*device_name)(const sp_reader *r, uint32_t device);
    uint32_t (*memory)(const sp_reader *r, const sp_memory **mem);
} sp_reader_vtbl;

/* Read a file (path "-" is stdin) or a buffer: the native format only (see
 * sp_read_any in input.h for any format). */
int sp_read_file(const char *path, const sp_callbacks *cb, sp_result *res);
int sp_read_mem(const void *data, size_t n, const sp_callbacks *cb, sp_result *res);
/* From an open descriptor (not closed) whose first n bytes were already read
 * into `head` (to tell the format from a pipe): the file is still streamed. */
int sp_read_fd(int fd, const void *head, size_t n, const sp_callbacks *cb, sp_result *res);

/* Tables of the file being read, valid during callbacks, for any reader. */
const sp_site *sp_reader_site(const sp_reader *r, uint32_t id); /* NULL if undefined */
const sp_header *sp_reader_header(const sp_reader *r);
uint32_t sp_reader_nthreads(const sp_reader *r);
const sp_thread *sp_reader_thread(const sp_reader *r, uint32_t slot);
/* During an `events` callback: an array parallel to its `ev` (entry k for
 * ev[k]) with the stream and device of each timed GPU scope, kept apart from
 * sp_event so that sp_event stays as other readers fill it. */
const sp_gpu_info *sp_reader_gpu_info(const sp_reader *r);
/* Every STEPS record read so far, in file order; returns the count. */
uint32_t sp_reader_steps(const sp_reader *r, const sp_step **steps);
/* The name of GPU `device` from the DEVICE chunks so far, or NULL. */
const char *sp_reader_device_name(const sp_reader *r, uint32_t device);
/* The MEMORY records so far, one per device in order of first sight. */
uint32_t sp_reader_memory(const sp_reader *r, const sp_memory **mem);

/* One line for stderr: "FILE: truncated at byte N (last whole chunk ends at M)"
 * or "FILE: offset N: what". Empty for SP_OK. */
void sp_result_message(const sp_result *res, const char *file, char *buf, size_t n);

#endif
