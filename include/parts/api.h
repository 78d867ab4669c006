/* scopeprof.h -- a drop-in instrumentation profiler for C (and HIP/CUDA) code.
 *
 *   #define SCOPEPROF_IMPLEMENTATION   // in exactly ONE .c file of each program
 *   #include "scopeprof.h"             // (or shared library): see below
 *   void step(void) {
 *       PROFILE_FUNCTION();                        // named after __func__
 *       { PROFILE_SCOPE("forward"); forward(); }   // ends where the block ends
 *       PROFILE_BEGIN("backward"); backward(); PROFILE_END();
 *   }
 *
 *   cc -DPROFILE_ENABLE -Iinclude app.c -o app -lpthread && ./app
 *
 * At exit a table in the layout of PyTorch's key_averages().table() is printed
 * to stderr and a trace file (<program>.<pid>.sprof) is written; the `scopeprof`
 * reporter turns trace files into tables, Chrome/Perfetto JSON and folded stacks.
 *
 * Without PROFILE_ENABLE (or with PROFILE_ENABLE=0) every macro expands to
 * nothing that generates code: no symbol of this library appears in the object.
 *
 * ONE IMPLEMENTATION PER MODULE (as stb and sokol headers). Every file that
 * includes this header gets the macros, the inline hot path and declarations
 * only, made of compiler types and builtins: no C library header, no feature
 * macro, so it can stand before or after any other include, in any language
 * mode. One file of each executable and each shared library defines
 * SCOPEPROF_IMPLEMENTATION before including it, and compiles the rest (put it
 * in a file of its own, or include the header first there: the implementation
 * needs POSIX). Forgetting it fails to link, naming a symbol that contains
 * SCOPEPROF_IMPLEMENTATION. The modules of a process share one registry at run
 * time, so a program of many files and libraries writes one profile
 * (docs/DESIGN.md). Defining it in more than one file of a module costs only
 * compile time. The trace file: docs/FORMAT.md. Modes: README "Supported".
 *
 * ---------------------------------------------------------------------------
 * PUBLIC API
 *
 *   PROFILE_SCOPE(name)        time the rest of the enclosing block; `name` is a
 *                              string literal (or any string that outlives the
 *                              program: it is not copied on the hot path).
 *   PROFILE_SCOPE_DYN(str)     same, for a run-time string: it is copied and
 *                              interned (slower: a hash lookup under a lock).
 *   PROFILE_FUNCTION()         PROFILE_SCOPE(__func__).
 *   PROFILE_SCOPE_SHAPE(name, d0, d1, ...)   PROFILE_SCOPE with the sizes it
 *                              ran on, one input (PyTorch's input shapes:
 *                              [[d0, d1, ...]]); integers, read at the open;
 *                              rows split by them with SCOPEPROF_GROUP_BY=shape.
 *   PROFILE_SCOPE_SHAPES(name, PROFILE_DIMS(a, b), PROFILE_DIMS(c), PROFILE_NO_DIMS)
 *                              several inputs: [[a, b], [c], []]. Up to 16
 *                              dimensions an input, 127 numbers in all
 *                              (the inputs that do not fit are left out).
 *                              C99 or C++11 and later.
 *   PROFILE_BEGIN(name)        open a manual range ...
 *   PROFILE_END()              ... and close the innermost one of this thread.
 *   PROFILE_THREAD_NAME(name)  name this thread in the output.
 *   PROFILE_GPU_SCOPE(name, stream)  GPU scope: with PROFILE_HIP / PROFILE_CUDA
 *                              it is timed with events on `stream` (see
 *                              docs/GPU.md); without either it records its CPU
 *                              side only.
 *   PROFILE_FLUSH()            write everything recorded so far to the trace.
 *   PROFILE_FINISH()           end the profile now, as at exit (the trace's end,
 *                              the table): before _exit(), as a server's
 *                              forked child ends (later scopes are not kept).
 *   PROFILE_ALLOC(ptr, bytes), PROFILE_FREE(ptr)   memory against the
 *                              enclosing scope (CPU Mem / Self CPU Mem columns);
 *   PROFILE_GPU_ALLOC(ptr, bytes, device), PROFILE_GPU_FREE(ptr, device).
 *                              #define SCOPEPROF_WRAP_MALLOC (or _GPU_MALLOC)
 *                              to record malloc/free (hipMalloc/cudaMalloc).
 *   PROFILE_STEP()             end of an iteration: ranges ProfilerStep#N.
 *   PROFILE_SCHEDULE(skip_first, wait, warmup, active, repeat)   record only
 *                              the active steps, as torch.profiler.schedule;
 *                              each cycle is written to <name>.cycleNNNN.sprof.
 *   PROFILE_ON_CYCLE(fn, user) call fn(path, cycle, user) when a cycle is written.
 *   PROFILE_SET_RANK(rank)     this process's rank (else from OMPI_COMM_WORLD_RANK,
 *                              PMI_RANK, SLURM_PROCID or RANK).
 *
 * WHAT EACH MACRO COSTS, AND MAY DO ON THE CALLING THREAD
 *
 *   PROFILE_SCOPE, _FUNCTION   two clock reads and a 16-byte store (inline, no
 *                              lock, no call, where the clock is the TSC; else
 *                              each read is a call to clock_gettime: a CPU
 *                              without an invariant TSC, SCOPEPROF_CLOCK=
 *                              monotonic). Rarely, out of line: a site's first
 *                              use (registration lock, an mmap); a thread's first
 *                              scope (registration lock, an mmap); the process's
 *                              first scope (the registry: calloc, the
 *                              environment, ~0.2 ms of calibration, the writer
 *                              thread started; and each module's first, a read
 *                              of /proc/self/maps); every 4094 events a buffer swap
 *                              (chunk lock, maybe an mmap); when the writer is a
 *                              quarter of the budget behind, a chunk written to
 *                              the trace file (registry lock, write(2)).
 *   PROFILE_SCOPE_DYN          as PROFILE_SCOPE, plus a hash lookup under the
 *                              registration lock at every use.
 *   PROFILE_SCOPE_SHAPE(S)     as PROFILE_SCOPE, and the close stores the
 *                              sizes (a record of 32 bytes and 16 per two
 *                              numbers, with their count): inline up to 15
 *                              numbers, else an out-of-line call.
 *   PROFILE_BEGIN / _END       an out-of-line call; BEGIN may realloc its stack.
 *   PROFILE_GPU_SCOPE          two event records on the stream, a query; a
 *                              per-thread lock; the first one loads the runtime.
 *   PROFILE_ALLOC / _FREE      the memory lock; a hash insert (calloc to grow).
 *   PROFILE_THREAD_NAME, _SCHEDULE, _ON_CYCLE, _SET_RANK   the registry lock.
 *   PROFILE_STEP               the registry lock; at the end of a schedule's
 *                              cycle: the cycle's file written and closed, its
 *                              table printed, the PROFILE_ON_CYCLE callback.
 *   PROFILE_FLUSH              the registry lock; everything written (write(2)).
 *
 * ENVIRONMENT (read once, at the first recorded scope; one table in the
 * implementation, "Environment", drives parsing, defaults and this list)
 *
 *   SCOPEPROF_OUTPUT      trace file path; default <program>.<pid>.sprof in the
 *                         working directory of the first scope; an existing
 *                         directory (a path ending in '/' names one; it is
 *                         not made): the default name in it; "none"
 *                         writes no file ("": the default, said). NAME.json or NAME.json.gz becomes
 *                         NAME.sprof (said: the recorder writes no JSON; the
 *                         reporter's `trace` does). With a rank it becomes
 *                         NAME.rank<R>.sprof. A path already in use by another
 *                         live process (an exec'd program inherits it) becomes
 *                         NAME.<pid>.sprof. Never written through a symbolic
 *                         link: a name taken (a link, a FIFO, another user's
 *                         file) is said, and NAME.1.sprof... used instead.
 *   SCOPEPROF_SUMMARY     0 silences the exit table (default 1); all prints it
 *                         on every rank, not only rank 0.
 *   SCOPEPROF_SORT        sort key of the exit table (default cpu_time_total).
 *   SCOPEPROF_GROUP_BY    rows of the exit table: name (default), or shape
 *                         (input_shape): one per name and input shapes, as
 *                         key_averages(group_by_input_shape=True).
 *   SCOPEPROF_ROW_LIMIT   rows of the exit table; 0 or -1 = all (default 20).
 *   SCOPEPROF_BUFFER_MB   memory budget for event buffers, in MiB (default 64);
 *                         past it, full buffers are streamed to the trace file.
 *   SCOPEPROF_SCHEDULE    "skip_first=1,wait=1,warmup=1,active=3,repeat=2"
 *                         (default none: everything is recorded).
 *   SCOPEPROF_COMPENSATE  0: no overhead compensation (default 1).
 *   SCOPEPROF_WRITER      0: no background writer thread ("scopeprof-write",
 *                         default 1): recording threads write full buffers.
 *   SCOPEPROF_FLUSH_MS    the writer writes what was recorded at least this
 *                         often (default 100): what SIGKILL can lose.
 *   SCOPEPROF_SIGNALS     0: no handlers (default 1: on SIGINT, SIGTERM, SIGHUP,
 *                         SIGPIPE, SIGQUIT and crashes the trace is written,
 *                         then the signal acts).
 *   SCOPEPROF_CLOCK       monotonic: CLOCK_MONOTONIC, read out of line (default
 *                         tsc: the CPU's time-stamp counter where it is invariant).
 *   A value that does not parse is reported by name on stderr and ignored, and
 *   so is a SCOPEPROF_ variable that is none of these (a misspelt name). A
 *   privileged process (setuid, setgid, file capabilities) reads none of them
 *   and writes nothing: no trace, no table (one line says so).
 *
 * CONFIGURATION MACROS (define before including)
 *
 *   PROFILE_ENABLE            turn profiling on (unset or 0: compiled out).
 *   SCOPEPROF_IMPLEMENTATION  compile the implementation here (one file per
 *                             executable or shared library; see above).
 *   PROFILE_HIP, PROFILE_CUDA GPU backend for PROFILE_GPU_SCOPE (define it in
 *                             the implementation's file too).
 *   SCOPEPROF_EVENTS_PER_CHUNK  16-byte event slots per buffer chunk (default
 *                             4094: 16 pages; at least 2; the same in every file).
 *   SCOPEPROF_AGGREGATION     declare the aggregation, table and trace-format
 *                             API (the reporter's); with SCOPEPROF_IMPLEMENTATION
 *                             and without PROFILE_ENABLE, compile only those.
 *   SCOPEPROF_MPI             the implementation takes part in MPI (PMPI:
 *                             MPI_Init, MPI_Finalize, MPI calls as scopes; one
 *                             table for the job, clocks aligned: docs/MPI.md);
 *                             implied when <mpi.h> comes before the header in
 *                             its file. SCOPEPROF_NO_MPI: never.
 *   SCOPEPROF_NO_CLMUL        no carry-less multiply in the trace's CRC on
 *                             x86-64 (for a compiler without <immintrin.h>'s
 *                             PCLMUL): the table-driven CRC, slower.
 * ---------------------------------------------------------------------------
 *
 * This file is made by `make header` from the parts under include/parts/, in
 * the order of an event's path; each part begins with a line naming it.
 */

#if defined(PROFILE_ENABLE) && (PROFILE_ENABLE + 0 != 0 || (1 - PROFILE_ENABLE - 1) == 2)
/* PROFILE_ENABLE non-zero, or defined empty (then the second test reads
 * 1 - - 1 == 2). Plain -DPROFILE_ENABLE gives 1. */
#define SCOPEPROF__ON 1
#else
#define SCOPEPROF__ON 0
#endif

/* Whether this inclusion compiles the implementation: once per translation
 * unit, in the file that asks (undefined again by the last part). */
#if defined(SCOPEPROF_IMPLEMENTATION) && (SCOPEPROF__ON || defined(SCOPEPROF_AGGREGATION)) && \
    !defined(SCOPEPROF__IMPL_DONE)
#define SCOPEPROF__IMPL_DONE
#define SCOPEPROF__IMPL 1
/* The implementation is C99 and POSIX.1-2008: in a strict ISO mode
 * (-std=c99/c11/c17 define __STRICT_ANSI__) glibc hides POSIX (clock_gettime,
 * O_CLOEXEC, struct sigaction, ...). Before any system header, the header
 * asks for POSIX.1-2008 itself; after one, that choice is already made
 * (glibc's <features.h> is read once), and state.h's check names the fix. */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L && \
    defined(__STRICT_ANSI__) && !defined(_FEATURES_H) && !defined(_POSIX_C_SOURCE) && \
    !defined(_XOPEN_SOURCE) && !defined(_GNU_SOURCE) && !defined(_DEFAULT_SOURCE) && \
    !defined(_BSD_SOURCE) && !defined(_POSIX_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#endif

/* Two style rules the header's own code does not follow, silenced for the
 * header's lines only (pushed here, popped by the last part, so the including
 * file keeps every warning it asked for): -Wdeclaration-after-statement (the
 * implementation is C99: declarations where values are known) and
 * -Wmissing-prototypes / -Wmissing-declarations (its internal functions are
 * defined once, here, and have no other declaration to agree with); and
 * -Wdeprecated-declarations, for a project that marks C library functions
 * deprecated for its own code (Redis: strcpy, malloc, free), which the
 * implementation calls. Every other warning of the strict sets in README
 * "Supported" is fixed in the code, and the implementation calls none of
 * the functions git's banned.h turns into errors (strcpy, strcat, sprintf). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#ifndef __cplusplus
#pragma GCC diagnostic ignored "-Wdeclaration-after-statement"
#endif
#if !defined(__cplusplus) || defined(__clang__)
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#endif
#pragma GCC diagnostic ignored "-Wmissing-declarations" /* g++'s name for it */
#ifdef __cplusplus /* the header's own C casts (scopeprof__addr); a macro's are the user's lines: SCOPEPROF__AS */
#pragma GCC diagnostic ignored "-Wold-style-cast"
#ifndef __clang__
#pragma GCC diagnostic ignored "-Wuseless-cast"
#endif
#endif

#ifndef SCOPEPROF_H
#define SCOPEPROF_H

#define SCOPEPROF_VERSION_STRING "0.2.0"

#if SCOPEPROF__ON && !defined(__cplusplus) && (!defined(__STDC_VERSION__) || __STDC_VERSION__ < 199901L)
#error "scopeprof.h: PROFILE_ENABLE needs C99 or later (-std=c99, gnu99 or newer); the disabled build also compiles as C89"
#undef SCOPEPROF__ON
#define SCOPEPROF__ON 0 /* one error, not a page: the rest compiles as disabled */
#undef SCOPEPROF__IMPL
#endif

/* A declaration that generates no code, data or symbol: an enum constant
 * with a name of its own (__COUNTER__), its value reading the macro argument
 * (inside sizeof: never evaluated) so that a variable only the macro uses
 * still counts as used. The macros that are declarations when enabled
 * (PROFILE_SCOPE, _SCOPE_DYN, _FUNCTION, _GPU_SCOPE) are this when disabled,
 * so that both builds accept (and warn about) the same code: a statement
 * there would be "mixed declarations and code" in the user's function. */
#define SCOPEPROF__NOOP_NAME2(id) scopeprof__noop_##id
#define SCOPEPROF__NOOP_NAME(id) SCOPEPROF__NOOP_NAME2(id)
#define SCOPEPROF__NOOP_DECL(use) enum { SCOPEPROF__NOOP_NAME(__COUNTER__) = sizeof(use) != 0 }

/* A conversion in the code every file compiles (the macros, the inline
 * hot path): a static_cast in C++, so that a C++ project's
 * -Wold-style-cast finds none of ours (LULESH: one at every scope). */
#ifdef __cplusplus
#define SCOPEPROF__AS(T, v) static_cast<T>(v)
#define SCOPEPROF__ADDR(p) scopeprof__addr(p)
#else
#define SCOPEPROF__AS(T, v) ((T)(v))
#define SCOPEPROF__ADDR(p) ((scopeprof__uptr)(const void *)(p))
#endif
/* The shape macros' argument lists (variadic macros: C99, C++11). An input
 * PROFILE_DIMS(a, b, c) is its count and its numbers, each cast to long long
 * (a size_t or an int alike, with no conversion warning): 3, (long long)(a),
 * (long long)(b), (long long)(c). At most 16 numbers: NARGS counts to 16. */
#if (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L) || \
    (defined(__cplusplus) && __cplusplus >= 201103L)
#define SCOPEPROF__SHAPES 1
#define SCOPEPROF__NARGS(...) \
    SCOPEPROF__NARGS_(__VA_ARGS__, MANY, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define SCOPEPROF__NARGS_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, n, ...) n
/* 17 sizes: a compile error that names the limit (a negative bit-field). */
#define SCOPEPROF__DMANY(...) sizeof(struct { int PROFILE_DIMS_takes_at_most_16_sizes : -1; })
#define SCOPEPROF__D(x) SCOPEPROF__AS(long long, x)
#define SCOPEPROF__D1(a) SCOPEPROF__D(a)
#define SCOPEPROF__D2(a, ...) SCOPEPROF__D(a), SCOPEPROF__D1(__VA_ARGS__)
#define SCOPEPROF__D3(a, ...) SCOPEPROF__D(a), SCOPEPROF__D2(__VA_ARGS__)
#define SCOPEPROF__D4(a, ...) SCOPEPROF__D(a), SCOPEPROF__D3(__VA_ARGS__)
#define SCOPEPROF__D5(a, ...) SCOPEPROF__D(a), SCOPEPROF__D4(__VA_ARGS__)
#define SCOPEPROF__D6(a, ...) SCOPEPROF__D(a), SCOPEPROF__D5(__VA_ARGS__)
#define SCOPEPROF__D7(a, ...) SCOPEPROF__D(a), SCOPEPROF__D6(__VA_ARGS__)
#define SCOPEPROF__D8(a, ...) SCOPEPROF__D(a), SCOPEPROF__D7(__VA_ARGS__)
#define SCOPEPROF__D9(a, ...) SCOPEPROF__D(a), SCOPEPROF__D8(__VA_ARGS__)
#define SCOPEPROF__D10(a, ...) SCOPEPROF__D(a), SCOPEPROF__D9(__VA_ARGS__)
#define SCOPEPROF__D11(a, ...) SCOPEPROF__D(a), SCOPEPROF__D10(__VA_ARGS__)
#define SCOPEPROF__D12(a, ...) SCOPEPROF__D(a), SCOPEPROF__D11(__VA_ARGS__)
#define SCOPEPROF__D13(a, ...) SCOPEPROF__D(a), SCOPEPROF__D12(__VA_ARGS__)
#define SCOPEPROF__D14(a, ...) SCOPEPROF__D(a), SCOPEPROF__D13(__VA_ARGS__)
#define SCOPEPROF__D15(a, ...) SCOPEPROF__D(a), SCOPEPROF__D14(__VA_ARGS__)
#define SCOPEPROF__D16(a, ...) SCOPEPROF__D(a), SCOPEPROF__D15(__VA_ARGS__)
#define SCOPEPROF__DN2(n, ...) SCOPEPROF__D##n(__VA_ARGS__)
#define SCOPEPROF__DN(n, ...) SCOPEPROF__DN2(n, __VA_ARGS__)
#define PROFILE_DIMS(...) SCOPEPROF__NARGS(__VA_ARGS__), SCOPEPROF__DN(SCOPEPROF__NARGS(__VA_ARGS__), __VA_ARGS__)
#define PROFILE_NO_DIMS 0
#define PROFILE_SCOPE_SHAPE(nm, ...) PROFILE_SCOPE_SHAPES(nm, PROFILE_DIMS(__VA_ARGS__))
#endif

#if !SCOPEPROF__ON
/* ---- Disabled: every macro vanishes. ------------------------------------ */
/* Each reads its arguments (in sizeof: never evaluated), so a variable only a
 * macro uses is used in both builds, and each is what the enabled macro is:
 * a declaration, a do-while statement or a void expression. [0]: the element
 * of a string, so that a VLA's sizeof is still a constant. */
#define PROFILE_SCOPE(name) SCOPEPROF__NOOP_DECL((name)[0])
#define PROFILE_SCOPE_DYN(str) SCOPEPROF__NOOP_DECL((str)[0])
#define PROFILE_FUNCTION() SCOPEPROF__NOOP_DECL(0)
#define PROFILE_BEGIN(name) do { (void)sizeof(name); } while (0)
#define PROFILE_END() do { } while (0)
#define PROFILE_THREAD_NAME(name) ((void)sizeof(name))
#define PROFILE_GPU_SCOPE(name, stream) SCOPEPROF__NOOP_DECL(stream)
#define PROFILE_FLUSH() ((void)0)
#define PROFILE_FINISH() ((void)0)
#define PROFILE_ALLOC(ptr, bytes) do { (void)sizeof(ptr); (void)sizeof(bytes); } while (0)
#define PROFILE_FREE(ptr) do { (void)sizeof(ptr); } while (0)
#define PROFILE_GPU_ALLOC(ptr, bytes, device) do { (void)sizeof(ptr); (void)sizeof(bytes); (void)sizeof(device); } while (0)
#define PROFILE_GPU_FREE(ptr, device) do { (void)sizeof(ptr); (void)sizeof(device); } while (0)
#define PROFILE_STEP() ((void)0)
#define PROFILE_SCHEDULE(skip_first, wait, warmup, active, repeat)                  \
    ((void)sizeof(skip_first), (void)sizeof(wait), (void)sizeof(warmup), (void)sizeof(active), \
     (void)sizeof(repeat))
#define PROFILE_ON_CYCLE(fn, user) ((void)sizeof(fn), (void)sizeof(user))
#define PROFILE_SET_RANK(rank) ((void)sizeof(rank))
#ifdef SCOPEPROF__SHAPES
/* The numbers as arguments of a function that is declared, never defined
 * and never called: inside sizeof, they are read and not evaluated. */
int scopeprof__shape_use(int, ...);
#define PROFILE_SCOPE_SHAPES(nm, ...) SCOPEPROF__NOOP_DECL(scopeprof__shape_use((nm)[0], __VA_ARGS__))
#endif
#endif

#if SCOPEPROF__ON || defined(SCOPEPROF_AGGREGATION)
#ifdef __cplusplus
extern "C" {
#endif

/* Compiler-provided types: <stdint.h> would bring in the C library's
 * <features.h> and fix the program's feature set (see above). These are the
 * types uint32_t, uint64_t, uintptr_t and size_t name. */
typedef __UINT32_TYPE__ scopeprof__u32;
typedef __UINT64_TYPE__ scopeprof__u64;
typedef __UINTPTR_TYPE__ scopeprof__uptr;
typedef __SIZE_TYPE__ scopeprof__size;

/* Where a scope was written. One static instance per call site; `id` is 0
 * until the site is registered (once, on its first use). */
typedef struct scopeprof_site {
    const char *name;
    const char *file;
    const char *func;
    scopeprof__u32 line;
    scopeprof__u32 id;
} scopeprof_site;

/* Event records as the per-thread buffers hold them (and, since format 2,
 * EVENTS chunks: docs/FORMAT.md). Most events take 16 bytes:
 *     u64 start, u32 duration (< 0xFFFFFFFF), u32 key
 *     key = site (bits 0-18) | depth (bits 19-30) | GPU flag (bit 31)
 * An event that does not fit (a long duration, site id >= 2^19, depth >=
 * 2^12, a MEM record, input shapes) takes 32 bytes: its duration field is
 * the mark 0xFFFFFFFF and the fields follow in full:
 *     u64 start, u32 mark, u32 depth_and_flags, u64 end, u32 site, u32 units
 * and `units` more 16-byte slots hold its input shapes (format.h, "Input
 * shapes"; 0: none).
 * Times are clock ticks, in the buffers and (since format 4) in the file,
 * whose TICKS chunk gives their rate. Flags in an event's depth field:
 * GPU: the CPU side of a GPU scope; its GPU interval is the next GPU record
 *      of the same thread (if that record's launch_ns equals the event's start).
 * MEM: not a scope but an allocation or free: `end` holds the signed byte
 *      count, bits 24-29 the device (0: CPU, n: GPU n-1), bits 0-23 the
 *      number of scopes open on the thread. */
#define SCOPEPROF_DEPTH_GPU 0x80000000u
#define SCOPEPROF_DEPTH_MEM 0x40000000u
#define SCOPEPROF_DEPTH_MASK 0x3FFFFFFFu
#define SCOPEPROF_REC_LONG_MARK 0xFFFFFFFFu
#define SCOPEPROF_REC_SITE_BITS 19
#define SCOPEPROF_REC_DEPTH_BITS 12
/* The key of a 16-byte record, for a site and depth that fit (the GPU flag
 * is the top bit of both `depth` and the key). */
static inline scopeprof__u32 scopeprof__key_pack(scopeprof__u32 site, scopeprof__u32 depth) {
    return site | depth << SCOPEPROF_REC_SITE_BITS | (depth & SCOPEPROF_DEPTH_GPU);
}
#ifdef __cplusplus
}
#endif
#endif /* SCOPEPROF__ON || SCOPEPROF_AGGREGATION */

#if SCOPEPROF__ON
#ifdef __cplusplus
extern "C" {
#endif

#define SCOPEPROF__CAT2(a, b) a##b
#define SCOPEPROF__CAT(a, b) SCOPEPROF__CAT2(a, b)
/* Each macro use gets one __COUNTER__ value for its variables, so two scopes
 * on one line (or in one macro) do not collide. */
#define SCOPEPROF__V(p, id) SCOPEPROF__CAT(p, id)

/* The per-thread recording state. The hot path touches `cur`, `lim` and
 * `depth` only; everything else is for the slow path and the flusher. */
typedef struct scopeprof__chunk scopeprof__chunk;
/* 16 bytes of a thread's buffer: a short event record, or half of a long
 * one (see "Event records"), with times in ticks. */
typedef struct scopeprof__slot {
    scopeprof__u64 start;
    scopeprof__u32 dur, key;
} scopeprof__slot;
typedef struct scopeprof__range {
    scopeprof__u64 start;
    scopeprof__u32 site, depth;
} scopeprof__range;
typedef struct scopeprof__thread {
    scopeprof__slot *cur, *lim; /* write cursor in the current chunk */
    scopeprof__u32 depth;             /* scopes open now */
    scopeprof__u32 index;             /* 0, 1, 2... in order of first event */
    scopeprof__chunk *chunk;
    struct scopeprof__thread *next;
    scopeprof__u64 tid;
    char name[64];
    int alive;
    scopeprof__range *ranges; /* open PROFILE_BEGIN ranges */
    scopeprof__u32 nranges, rcap;
    int warned_end; /* an unmatched PROFILE_END was reported */
    int explicit_name; /* set by PROFILE_THREAD_NAME: never re-read */
    void *gpu;      /* the GPU backend's per-thread state, if any */
    scopeprof__u32 nqueued; /* its chunks waiting in the write queue */
    scopeprof__u32 inherited; /* scopes open in the parent when fork() made this process: the parent's */
    /* The exit summary's per-thread slot: kept by this state when it is
     * reused for a later thread (scopeprof__thread_new), so the summary
     * holds one slot per state, not one per thread ever started. */
    scopeprof__u32 slot;
    /* The trace file's (file.h, under the lock): its name as last written
     * in a THREAD chunk, the file that went to (out.files), and when the
     * name was last read from /proc (monotonic ns). */
    char name_written[64];
    scopeprof__u32 name_file;
    scopeprof__u64 name_read_ns;
} scopeprof__thread;

typedef struct scopeprof_scope { /* what a PROFILE_SCOPE variable holds */
    scopeprof__u64 start;
    scopeprof__u32 site, depth;
    scopeprof__thread *t; /* saves reading the TLS pointer again at the end */
} scopeprof_scope;

/* The module's (hidden) thread pointer, set on the first scope of a thread,
 * and its clock choice: 1 when ticks are TSC cycles, else ticks are
 * CLOCK_MONOTONIC nanoseconds read out of line. Defined by the implementation
 * (registry.h); the assembler names say what a link error means.
 * initial-exec: one instruction to reach it, also in a shared library
 * (instead of a __tls_get_addr call); with scopeprof__tls_hot (below) it
 * takes 16 bytes of the static TLS space glibc keeps for libraries loaded
 * with dlopen. */
extern __attribute__((visibility("hidden"), tls_model("initial-exec"))) __thread scopeprof__thread *scopeprof__tls
    __asm__("scopeprof__tls__define_SCOPEPROF_IMPLEMENTATION_in_one_file");
extern __attribute__((visibility("hidden"))) int scopeprof__use_tsc
    __asm__("scopeprof__use_tsc__define_SCOPEPROF_IMPLEMENTATION_in_one_file");

/* What a scope's open and close read: the thread pointer where the inline
 * path may read the clock itself, and that clock. On x86 a second thread
 * pointer, the same as scopeprof__tls where ticks are TSC cycles and NULL
 * where they are not (scopeprof__tls_set keeps the two): one test finds
 * both a thread's first scope and a machine whose clock is read out of
 * line (about 4 instructions a scope fewer than testing the clock choice at
 * each read; 8 bytes more of static TLS). Elsewhere the clock is read out of
 * line anyway, and the one pointer serves. */
#if defined(__x86_64__) || defined(__i386__)
extern __attribute__((visibility("hidden"), tls_model("initial-exec"))) __thread scopeprof__thread *scopeprof__tls_hot
    __asm__("scopeprof__tls_hot__define_SCOPEPROF_IMPLEMENTATION_in_one_file");
#else
#define scopeprof__tls_hot scopeprof__tls
#endif

/* The out-of-line half of the API, defined by the implementation; hidden:
 * each module calls its own copy directly (no PLT). */
#define SCOPEPROF__HIDDEN __attribute__((visibility("hidden")))
SCOPEPROF__HIDDEN scopeprof__thread *scopeprof__thread_attach(void);
SCOPEPROF__HIDDEN scopeprof__u64 scopeprof__scope_clock_slow(scopeprof__thread *t, scopeprof__u32 site);
SCOPEPROF__HIDDEN scopeprof__u32 scopeprof__site_register(scopeprof_site *s);
SCOPEPROF__HIDDEN scopeprof__u32 scopeprof__site_dyn(const scopeprof_site *callsite, const char *name);
SCOPEPROF__HIDDEN scopeprof__slot *scopeprof__chunk_next(scopeprof__thread *t);
SCOPEPROF__HIDDEN void scopeprof__emit_long(scopeprof__thread *t, scopeprof__u64 start, scopeprof__u64 end, scopeprof__u32 site,
                          scopeprof__u32 depth);
SCOPEPROF__HIDDEN void scopeprof__range_begin(scopeprof_site *s);
SCOPEPROF__HIDDEN void scopeprof__range_end(scopeprof_site *s);
SCOPEPROF__HIDDEN void scopeprof__thread_name(const char *name);
SCOPEPROF__HIDDEN void scopeprof__scopes_left(scopeprof__thread *t, scopeprof__u32 depth, scopeprof__u32 site);
SCOPEPROF__HIDDEN void scopeprof__scope_moved(scopeprof__u32 site);
SCOPEPROF__HIDDEN void scopeprof__flush(void);
SCOPEPROF__HIDDEN void scopeprof__finish(void);
/* Called when a scheduled cycle's trace is written: its path and number. */
typedef void (*scopeprof_cycle_fn)(const char *path, int cycle, void *user);
SCOPEPROF__HIDDEN void scopeprof__step(void);
SCOPEPROF__HIDDEN void scopeprof__schedule(int skip_first, int wait, int warmup, int active, int repeat);
SCOPEPROF__HIDDEN void scopeprof__on_cycle(scopeprof_cycle_fn fn, void *user);
SCOPEPROF__HIDDEN void scopeprof__set_rank(int rank);
/* Only the address of ptr is used (never what it points to). */
SCOPEPROF__HIDDEN void scopeprof__mem_alloc(scopeprof_site *s, scopeprof__uptr ptr, scopeprof__u64 bytes, int device);
SCOPEPROF__HIDDEN void scopeprof__mem_free(scopeprof_site *s, scopeprof__uptr ptr, int device);
#ifdef __cplusplus
} /* a template: C++ linkage */
/* PROFILE_ALLOC's pointer in C++, whatever it is (volatile, or an integer
 * handle: CUDA's CUdeviceptr), as a number: the C cast accepts them all,
 * on this header's line, where -Wold-style-cast is silenced. */
template <typename T> static inline scopeprof__uptr scopeprof__addr(T p) { return (scopeprof__uptr)p; }
extern "C" {
#endif

/* The clock of the hot path: the TSC where it is invariant, else the
 * implementation's clock_gettime (out of line: <time.h> is not ours to
 * include here). */
SCOPEPROF__HIDDEN scopeprof__u64 scopeprof__ticks_slow(void);
static inline scopeprof__u64 scopeprof__ticks(void) {
#if defined(__x86_64__) || defined(__i386__)
    if (__builtin_expect(scopeprof__use_tsc == 1, 1)) return __builtin_ia32_rdtsc();
#endif
    return scopeprof__ticks_slow();
}
/* The clock where scopeprof__tls_hot is set: no test of the choice. */
static inline scopeprof__u64 scopeprof__ticks_hot(void) {
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#else
    return scopeprof__ticks_slow();
#endif
}

/* A thread's depth: written by its own thread only, read by the exit's
 * thread to count the scopes still open elsewhere (survival.h). A relaxed
 * store is a plain move on x86 and arm64; it keeps that read race-free. */
static inline void scopeprof__depth_set(scopeprof__thread *t, scopeprof__u32 depth) {
    __atomic_store_n(&t->depth, depth, __ATOMIC_RELAXED);
}

/* Where scopeprof__tls_hot is NULL (a thread's first scope in this module,
 * a clock read out of line), the thread pointer and the clock the slow way.
 * The scope stays in registers: nothing out of line takes its address. */
static inline scopeprof_scope scopeprof__scope_open(scopeprof__u32 site) {
    scopeprof_scope sc;
    sc.t = scopeprof__tls_hot;
    sc.site = site;
    if (__builtin_expect(!sc.t, 0)) {
        sc.t = scopeprof__tls ? scopeprof__tls : scopeprof__thread_attach();
        sc.depth = sc.t->depth;
        scopeprof__depth_set(sc.t, sc.depth + 1);
        sc.start = scopeprof__ticks();
        return sc;
    }
    sc.depth = sc.t->depth;
    scopeprof__depth_set(sc.t, sc.depth + 1);
    sc.start = scopeprof__ticks_hot();
    return sc;
}

static inline scopeprof_scope scopeprof__scope_begin(scopeprof_site *s) {
    scopeprof__u32 id = __atomic_load_n(&s->id, __ATOMIC_ACQUIRE);
    if (__builtin_expect(id == 0, 0)) id = scopeprof__site_register(s);
    return scopeprof__scope_open(id);
}

/* Append one event to the thread's buffer: 16 bytes when its duration is
 * under 2^27 ticks (tens of milliseconds: still short once converted to
 * nanoseconds by any clock faster than 32 MHz) and its site and depth fit
 * their bits; else the 32-byte form, out of line. The cursor is published
 * with a release store (a plain store on x86) so the exit flusher can read
 * other threads' buffers; there is no lock and no read-modify-write. */
static inline void scopeprof__emit(scopeprof__thread *t, scopeprof__u64 start, scopeprof__u64 end,
                                   scopeprof__u32 site, scopeprof__u32 depth) {
    scopeprof__u64 d = end - start;
    if (__builtin_expect(((d >> 27) | (site >> SCOPEPROF_REC_SITE_BITS) |
                          (depth & ~SCOPEPROF_DEPTH_GPU) >> SCOPEPROF_REC_DEPTH_BITS) == 0, 1)) {
        scopeprof__slot *e = t->cur;
        if (__builtin_expect(e == t->lim, 0)) e = scopeprof__chunk_next(t);
        e->start = start;
        e->dur = SCOPEPROF__AS(scopeprof__u32, d);
        e->key = scopeprof__key_pack(site, depth);
        __atomic_store_n(&t->cur, e + 1, __ATOMIC_RELEASE);
    } else {
        scopeprof__emit_long(t, start, end, site, depth);
    }
}

/* The clock at a scope's close into *end, read before anything else that
 * is not the scope's. Returns 0 when the scope closes on another thread
 * than it opened on (an untied OpenMP task that moved: its buffer and depth
 * are the first thread's, which only that thread may write; left out,
 * counted and said at exit, out of line). Where scopeprof__tls_hot is NULL
 * (the clock read out of line) the two cases are told apart past the one
 * test. That test comes before the clock read: a few instructions inside
 * the scope's time, which the compensation measures with the rest. */
static inline int scopeprof__scope_clock(scopeprof__thread *t, scopeprof__u32 site, scopeprof__u64 *end) {
    if (__builtin_expect(t == scopeprof__tls_hot, 1)) {
        *end = scopeprof__ticks_hot();
        return 1;
    }
    *end = scopeprof__scope_clock_slow(t, site); /* out of line: the close stays small enough to inline */
    return *end != 0;
}

static inline void scopeprof__scope_end(scopeprof_scope *sc) {
    scopeprof__thread *t = sc->t;
    scopeprof__u64 end;
    if (!scopeprof__scope_clock(t, sc->site, &end)) return;
    /* Scopes opened inside this one that never closed (a longjmp out of
     * them) leave the depth above this one's plus one: counted, out of line. */
    if (__builtin_expect(t->depth != sc->depth + 1, 0)) scopeprof__scopes_left(t, sc->depth, sc->site);
    scopeprof__depth_set(t, sc->depth);
    /* A CPU scope: no GPU flag in its depth (a count of open scopes, far
     * below 2^31), which spares the emit the flag's arithmetic. */
    if (sc->depth & SCOPEPROF_DEPTH_GPU) __builtin_unreachable();
    scopeprof__emit(t, sc->start, end, sc->site, sc->depth);
}

#define SCOPEPROF__SITE(var, nm)                                                    \
    static scopeprof_site var = {(nm), __FILE__, __func__, SCOPEPROF__AS(scopeprof__u32, __LINE__), 0}

#define PROFILE_SCOPE(nm) SCOPEPROF__SCOPE(nm, __COUNTER__)
#define SCOPEPROF__SCOPE(nm, id)                                                    \
    SCOPEPROF__SITE(SCOPEPROF__V(scopeprof__site_, id), nm);                        \
    scopeprof_scope SCOPEPROF__V(scopeprof__scope_, id)                             \
        __attribute__((cleanup(scopeprof__scope_end), unused)) =                    \
            scopeprof__scope_begin(&SCOPEPROF__V(scopeprof__site_, id))

#define PROFILE_SCOPE_DYN(str) SCOPEPROF__SCOPE_DYN(str, __COUNTER__)
#define SCOPEPROF__SCOPE_DYN(str, id)                                               \
    SCOPEPROF__SITE(SCOPEPROF__V(scopeprof__site_, id), "");                        \
    scopeprof_scope SCOPEPROF__V(scopeprof__scope_, id)                             \
        __attribute__((cleanup(scopeprof__scope_end), unused)) =                    \
            scopeprof__scope_open(                                                  \
                scopeprof__site_dyn(&SCOPEPROF__V(scopeprof__site_, id), (str)))

#define PROFILE_FUNCTION() PROFILE_SCOPE(__func__)

/* A shape's numbers as the macros make them (long long: __extension__ keeps
 * a C++98 implementation's file quiet), and a shape word in slots' memory
 * (may_alias: stored as words, read back as slots). */
__extension__ typedef long long scopeprof__ll;
typedef scopeprof__u64 __attribute__((may_alias)) scopeprof__word;
SCOPEPROF__HIDDEN void scopeprof__emit_shaped(scopeprof__thread *t, scopeprof__u64 start, scopeprof__u64 end,
                                              scopeprof__u32 site, scopeprof__u32 depth, const scopeprof__ll *w,
                                              scopeprof__u32 m);
/* Whether the m numbers at w are whole inputs (each its count, then that
 * many sizes), as PROFILE_DIMS and PROFILE_NO_DIMS make them; a list
 * written by hand may not be. With the macros' constant counts, the
 * compiler folds this to nothing. */
static inline int scopeprof__shape_ok(const scopeprof__ll *w, scopeprof__u32 m) {
    for (scopeprof__u32 i = 0; i < m; i += 1 + SCOPEPROF__AS(scopeprof__u32, w[i]))
        if (w[i] < 0 || SCOPEPROF__AS(scopeprof__u64, w[i]) > m - i - 1) return 0;
    return 1;
}

#ifdef SCOPEPROF__SHAPES
/* A scope with its input shapes: the numbers (PROFILE_DIMS) in an array of
 * the enclosing block, declared before the scope so that it outlives it;
 * the close stores them after the scope's record. */
typedef struct scopeprof_shape_scope {
    scopeprof_scope sc;
    const scopeprof__ll *w;
    scopeprof__u32 m;
} scopeprof_shape_scope;
static inline scopeprof_shape_scope scopeprof__shape_begin(scopeprof_site *s, const scopeprof__ll *w,
                                                           scopeprof__u32 m) {
    scopeprof_shape_scope ss;
    ss.w = w;
    ss.m = m;
    ss.sc = scopeprof__scope_begin(s);
    return ss;
}
/* The record (format.h, "Input shapes"): inline for up to 15 numbers that
 * are whole inputs where the chunk has room (m is a constant here: the copy
 * is unrolled), else out of line, which also cuts what does not fit or
 * parse. A slot's memory is two little-endian words on a little-endian CPU:
 * the numbers are stored as words. */
static inline void scopeprof__shape_end(scopeprof_shape_scope *ss) {
    scopeprof__thread *t = ss->sc.t;
    scopeprof__u64 end;
    if (!scopeprof__scope_clock(t, ss->sc.site, &end)) return; /* moved */
    if (__builtin_expect(t->depth != ss->sc.depth + 1, 0)) scopeprof__scopes_left(t, ss->sc.depth, ss->sc.site);
    scopeprof__depth_set(t, ss->sc.depth);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const scopeprof__u32 m = ss->m, units = (m + 2) / 2;
    scopeprof__slot *e = t->cur;
    if (m <= 15 && scopeprof__shape_ok(ss->w, m) && SCOPEPROF__AS(scopeprof__size, t->lim - e) >= 2 + units) {
        e[0].start = ss->sc.start;
        e[0].dur = SCOPEPROF_REC_LONG_MARK;
        e[0].key = ss->sc.depth;
        e[1].start = end;
        e[1].dur = ss->sc.site;
        e[1].key = units;
        scopeprof__word *d = SCOPEPROF__AS(scopeprof__word *, SCOPEPROF__AS(void *, e + 2));
        d[0] = m;
        for (scopeprof__u32 j = 0; j < m; j++) d[j + 1] = SCOPEPROF__AS(scopeprof__u64, ss->w[j]);
        if (!(m & 1)) d[m + 1] = 0; /* the last unit's second half */
        __atomic_store_n(&t->cur, e + 2 + units, __ATOMIC_RELEASE);
        return;
    }
#endif
    scopeprof__emit_shaped(t, ss->sc.start, end, ss->sc.site, ss->sc.depth, ss->w, ss->m);
}
#define PROFILE_SCOPE_SHAPES(nm, ...) SCOPEPROF__SCOPE_SHAPES(nm, __COUNTER__, __VA_ARGS__)
#define SCOPEPROF__SCOPE_SHAPES(nm, id, ...)                                        \
    SCOPEPROF__SITE(SCOPEPROF__V(scopeprof__site_, id), nm);                        \
    const scopeprof__ll SCOPEPROF__V(scopeprof__dims_, id)[] = {__VA_ARGS__};       \
    scopeprof_shape_scope SCOPEPROF__V(scopeprof__scope_, id)                       \
        __attribute__((cleanup(scopeprof__shape_end), unused)) =                    \
            scopeprof__shape_begin(&SCOPEPROF__V(scopeprof__site_, id),             \
                                   SCOPEPROF__V(scopeprof__dims_, id),              \
                                   SCOPEPROF__AS(scopeprof__u32, sizeof SCOPEPROF__V(scopeprof__dims_, id) / \
                                                                 sizeof(scopeprof__ll)))
#endif

#define PROFILE_BEGIN(nm)                                                           \
    do {                                                                            \
        SCOPEPROF__SITE(scopeprof__site_b, nm);                                     \
        scopeprof__range_begin(&scopeprof__site_b);                                 \
    } while (0)

#define PROFILE_END()                                                               \
    do {                                                                            \
        SCOPEPROF__SITE(scopeprof__site_e, "PROFILE_END");                          \
        scopeprof__range_end(&scopeprof__site_e);                                   \
    } while (0)

#define PROFILE_THREAD_NAME(nm) scopeprof__thread_name(nm)
#define PROFILE_FLUSH() scopeprof__flush()
#define PROFILE_FINISH() scopeprof__finish()

#define PROFILE_STEP() scopeprof__step()
#define PROFILE_SCHEDULE(skip_first, wait, warmup, active, repeat)                  \
    scopeprof__schedule((skip_first), (wait), (warmup), (active), (repeat))
#define PROFILE_ON_CYCLE(fn, user) scopeprof__on_cycle((fn), (user))
#define PROFILE_SET_RANK(rank) scopeprof__set_rank(rank)

#define SCOPEPROF__MEM(nm, call)                                                    \
    do {                                                                            \
        SCOPEPROF__SITE(scopeprof__site_m, nm);                                     \
        call;                                                                       \
    } while (0)
#define PROFILE_ALLOC(ptr, bytes)                                                   \
    SCOPEPROF__MEM("alloc", scopeprof__mem_alloc(&scopeprof__site_m, SCOPEPROF__ADDR(ptr), \
                                                 SCOPEPROF__AS(scopeprof__u64, bytes), 0))
#define PROFILE_FREE(ptr)                                                           \
    SCOPEPROF__MEM("free", scopeprof__mem_free(&scopeprof__site_m, SCOPEPROF__ADDR(ptr), 0))
#define PROFILE_GPU_ALLOC(ptr, bytes, device)                                       \
    SCOPEPROF__MEM("gpu_alloc", scopeprof__mem_alloc(&scopeprof__site_m, SCOPEPROF__ADDR(ptr), \
                                                     SCOPEPROF__AS(scopeprof__u64, bytes), (device) + 1))
#define PROFILE_GPU_FREE(ptr, device)                                               \
    SCOPEPROF__MEM("gpu_free",                                                      \
                   scopeprof__mem_free(&scopeprof__site_m, SCOPEPROF__ADDR(ptr), (device) + 1))

#if !defined(PROFILE_HIP) && !defined(PROFILE_CUDA)
/* No GPU backend: the CPU side of the scope only. */
#define PROFILE_GPU_SCOPE(nm, stream)                                               \
    PROFILE_SCOPE(nm);                                                              \
    SCOPEPROF__NOOP_DECL(stream)
#endif

#ifdef __cplusplus
}
#endif
#endif /* SCOPEPROF__ON */

#endif /* SCOPEPROF_H */
