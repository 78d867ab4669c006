/* chrome.h -- streaming reader of Chrome Trace Event JSON (PyTorch/Kineto
 * traces, Perfetto/chrome://tracing files) into the native reader's callbacks.
 * See docs/CHROME.md.
 *
 * The callbacks see what the native reader (read.h) gives them: per thread,
 * the events in the order they closed, each with its nesting depth, so the
 * header's aggregation computes self/total times as PyTorch does. Memory is the
 * read buffer, the open ranges of each thread and the distinct names; a thread
 * whose events arrive out of start order is buffered and sorted at the end
 * (memory then grows with that thread's events). Which reader an input goes
 * to is input.h's business. */
#ifndef SP_CHROME_H
#define SP_CHROME_H

#include <stddef.h>
#include <stdint.h>

#include "read.h"

/* Limits: beyond them the input is treated as corrupt, not as a reason to
 * allocate. */
#define SP_CJ_MAX_STRING (1u << 20) /* bytes of one decoded JSON string */
#define SP_CJ_MAX_NEST 1024u        /* nesting of arrays/objects in a value */
#define SP_CJ_MAX_SHAPE 4096u       /* bytes of one "Input Dims" text */

/* Read a Chrome trace (path "-": standard input) or a buffer. Statuses and
 * messages as sp_read_file: SP_TRUNCATED for input cut short (everything up to
 * `good_end`, the end of the last whole event, was used), SP_CORRUPT for bad
 * JSON at `offset`. */
int sp_read_chrome_file(const char *path, const sp_callbacks *cb, sp_result *res);
int sp_read_chrome_mem(const void *data, size_t n, const sp_callbacks *cb, sp_result *res);
/* Read from fd (not closed); `pre` holds the npre bytes already taken from
 * it (a pipe's head, input.c). Read twice when it is a regular file at
 * offset 0 and npre is 0. */
int sp_read_chrome_fd(int fd, const void *pre, size_t npre, const sp_callbacks *cb, sp_result *res);

/* The accessors of r if it is a reader of another format (this one), NULL for
 * the native reader: both start with that pointer (read.h, sp_reader_vtbl). */
const sp_reader_vtbl *sp_chrome_vtbl(const sp_reader *r);

/* Accessors for a Chrome reader (valid during callbacks). A site is one
 * distinct (name, input shapes) pair: name grouping merges sites of one name,
 * shape grouping keys on sp_chrome_shape too. */
const sp_site *sp_chrome_site(const sp_reader *r, uint32_t id);
const sp_header *sp_chrome_header(const sp_reader *r);
uint32_t sp_chrome_nthreads(const sp_reader *r);
const sp_thread *sp_chrome_thread(const sp_reader *r, uint32_t slot);
/* args["Input Dims"] of the site, as PyTorch prints input shapes
 * ("[[32, 64], [64]]"); "[]" when the event had none. NULL: no such site. */
const char *sp_chrome_shape(const sp_reader *r, uint32_t id);
/* The rest of read.h's accessors answer as the sp_reader_* ones do: GPU info
 * marks device events (kernel, memcpy, memset, cuda_sync, ...: CHROME.md;
 * device = the event's numeric pid, stream = its numeric tid); steps are the ProfilerStep#N ranges seen so
 * far; no device names, no MEMORY records (NULL, 0). */

/* The steps that are a track of their own, not events of a thread: a .sprof
 * file's STEPS records, or in Chrome JSON the ProfilerStep#N that `scopeprof
 * trace` wrote of them on its "Steps" tracks (category "step", tid
 * SP_STEPS_TID, or below it for the overlapping steps of several processes:
 * chrome_write.c), which this reader keeps as steps and does not deliver.
 * Tables make them the ProfilerStep* row without self time, `trace` and the
 * html timeline a steps track. (sp_reader_steps has every step: --steps.) */
#define SP_STEPS_TID 0x3FFFFFFFu /* the Steps track's tid (chrome_write.c) */
#define SP_STEPS_LANES 16u       /* its tracks: tids SP_STEPS_TID, SP_STEPS_TID - 1, ... */
uint32_t sp_track_steps(const sp_reader *r, const sp_step **steps);

/* During an `events` callback: the flow arrow of ev[k], 0 for none. For a
 * device event, the arrow that ends on it; for a CPU range (a runtime call
 * such as cudaLaunchKernel), the arrow that starts there. The id is the JSON's
 * "correlation", unique within a file; both ends are present or neither.
 * Only from a two-pass read (a file or memory with device events). */
uint64_t sp_chrome_flow(const sp_reader *r, uint32_t k);

/* What was skipped or repaired, for a summary line (valid in finish). */
typedef struct sp_chrome_stats {
    uint64_t events;          /* trace events seen (objects in traceEvents) */
    uint64_t ranges;          /* X and B/E ranges delivered */
    uint64_t kernels;         /* device events (kernel, memcpy, memset, sync...) */
    uint64_t kernels_linked;  /* of them, attributed to a CPU op */
    uint64_t memory;          /* [memory] records */
    uint64_t unknown_phases;  /* events of a phase not read */
    uint64_t unknown_keys;    /* keys skipped in events */
    uint64_t skipped;         /* events read but not tabled (counters, flows,
                                 instants, PyTorch's filtered names...) */
    uint64_t unmatched;       /* E without B, B without E */
    uint64_t sorted_threads;  /* threads that fell back to sort-at-end */
    uint64_t ambiguous;       /* correlations with device events that runtime
                                 calls of two processes carry: no launch gets them */
} sp_chrome_stats;
const sp_chrome_stats *sp_chrome_get_stats(const sp_reader *r);

#endif
