/* ==== part: include/parts/api.h ==== */
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
/* ==== part: include/parts/gpu_api.h ==== */
/* ======================================================================== */
/* GPU scopes (PROFILE_HIP or PROFILE_CUDA): events on streams              */
/* ======================================================================== */
/* A GPU scope records an event on its stream when it opens and when it
 * closes, taking events from a pool per (thread, device), and records its CPU
 * side as a normal scope flagged SCOPEPROF_DEPTH_GPU. The GPU interval is
 * resolved later: polled (non-blocking, per stream) as scopes close, waited
 * for when the thread's events are written (budget reached, PROFILE_FLUSH),
 * and at the latest in an atexit handler registered at the first GPU scope,
 * which runs before the runtime's own teardown (nvcc's static CUDA runtime
 * answers every call from an ELF destructor with cudaErrorCudartUnloading).
 *
 * The device of a scope is its stream's (*StreamGetDevice where the runtime
 * has it, else the current device); events are created on that device, as
 * the runtime rejects an event recorded on another device's stream.
 *
 * A stream being captured into a graph (*StreamIsCapturing) gets no event:
 * the scope records its CPU side, and its GPU record says "captured". Calls
 * that a global-mode capture forbids (query, synchronize) are made in the
 * relaxed capture mode of the calling thread, so they never break a capture
 * the program has running on another stream or thread.
 *
 * GPU times land on the CPU timeline through an anchor per device: an event
 * recorded on a private non-blocking idle stream and waited for (never under
 * a lock), whose completion is placed at the tick read right after the wait
 * (retried when the wait was much longer than an idle device needs). That is
 * the latest it can have happened, so a GPU interval never lands before the
 * CPU scope that launched it (the midpoint is closer on average, but a thread
 * preempted between its clock read and the record put work before its launch
 * on the timeline, and flow arrows pointed backwards). A GPU time is the
 * anchor's tick, converted to ns as the CPU scopes' ticks are (so an error in
 * the conversion moves both alike), plus the elapsed time from the anchor
 * event. Scopes nested on one stream are all timed from the outermost one's
 * start event (and its anchor), so float rounding keeps a nested interval
 * inside its parent. Anchors are renewed every second (in a scope's open, on
 * the private stream only) to bound drift and the float precision.
 *
 * The runtime is found without changing how the program links: under nvcc
 * (whose runtime may be static) by direct calls; otherwise with dlsym, first
 * among what the program already loaded, then by dlopen of the runtime
 * library. No runtime, no device, or any error: one line on stderr, and GPU
 * scopes record their CPU side only. */
#if SCOPEPROF__ON && (defined(PROFILE_HIP) || defined(PROFILE_CUDA)) && !defined(SCOPEPROF__GPU_DONE)
#define SCOPEPROF__GPU_DONE
#if defined(PROFILE_HIP)
#if !defined(__HIP_PLATFORM_AMD__) && !defined(__HIP_PLATFORM_NVIDIA__)
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>
#define SCOPEPROF__G(x) hip##x
#define SCOPEPROF__G_NAME "HIP"
#define SCOPEPROF__G_LIBS                                                           \
    {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", NULL}
typedef hipError_t scopeprof__gerr;
typedef hipEvent_t scopeprof__gevent;
typedef hipStream_t scopeprof__gstream;
typedef hipDeviceProp_t scopeprof__gprop;
typedef hipStreamCaptureStatus scopeprof__gcapstatus;
typedef hipStreamCaptureMode scopeprof__gcapmode;
#define SCOPEPROF__G_OK hipSuccess
#define SCOPEPROF__G_NOT_READY hipErrorNotReady
#define SCOPEPROF__G_NON_BLOCKING hipStreamNonBlocking
#define SCOPEPROF__G_CAP_NONE hipStreamCaptureStatusNone
#define SCOPEPROF__G_CAP_RELAXED hipStreamCaptureModeRelaxed
#define SCOPEPROF__G_CAP_ERR(e)                                                     \
    ((e) == hipErrorStreamCaptureImplicit || (e) == hipErrorStreamCaptureUnsupported || \
     (e) == hipErrorStreamCaptureInvalidated)
#else
#include <cuda_runtime_api.h>
#define SCOPEPROF__G(x) cuda##x
#define SCOPEPROF__G_NAME "CUDA"
#define SCOPEPROF__G_LIBS {"libcudart.so", "libcudart.so.13", "libcudart.so.12", NULL}
typedef cudaError_t scopeprof__gerr;
typedef cudaEvent_t scopeprof__gevent;
typedef cudaStream_t scopeprof__gstream;
typedef struct cudaDeviceProp scopeprof__gprop;
typedef enum cudaStreamCaptureStatus scopeprof__gcapstatus;
typedef enum cudaStreamCaptureMode scopeprof__gcapmode;
#define SCOPEPROF__G_OK cudaSuccess
#define SCOPEPROF__G_NOT_READY cudaErrorNotReady
#define SCOPEPROF__G_NON_BLOCKING cudaStreamNonBlocking
#define SCOPEPROF__G_CAP_NONE cudaStreamCaptureStatusNone
#define SCOPEPROF__G_CAP_RELAXED cudaStreamCaptureModeRelaxed
#define SCOPEPROF__G_CAP_ERR(e)                                                     \
    ((e) == cudaErrorStreamCaptureImplicit || (e) == cudaErrorStreamCaptureUnsupported || \
     (e) == cudaErrorStreamCaptureInvalidated)
#if defined(__CUDACC__)
/* nvcc links its runtime itself, statically by default: a static runtime
 * exports nothing that dlsym could find, and a second copy loaded with dlopen
 * would not know the program's streams. So call it directly. */
#define SCOPEPROF__G_DIRECT 1
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct scopeprof__ganchor scopeprof__ganchor; /* gpu.h */
typedef struct scopeprof_gpu_scope { /* what a PROFILE_GPU_SCOPE variable holds */
    scopeprof_scope cpu;
    scopeprof__gstream stream;
    scopeprof__gevent start, base;
    scopeprof__ganchor *anchor;
    int device, ok, captured;
    scopeprof__u32 slot; /* in the thread's open list */
} scopeprof_gpu_scope;

/* The GPU halves of a scope's open and close (gpu.h): 1 if it is timed or
 * captured; 1 if queued. */
SCOPEPROF__HIDDEN int scopeprof__gpu_open(scopeprof_gpu_scope *gs);
SCOPEPROF__HIDDEN int scopeprof__gpu_close(scopeprof_gpu_scope *gs);

static inline scopeprof_gpu_scope scopeprof__gpu_begin(scopeprof_site *s, scopeprof__gstream stream) {
    scopeprof_gpu_scope gs;
    gs.cpu = scopeprof__scope_begin(s);
    gs.stream = stream;
    gs.anchor = 0;
    gs.device = 0;
    gs.captured = 0;
    gs.slot = 0;
    gs.ok = scopeprof__gpu_open(&gs);
    return gs;
}

static inline void scopeprof__gpu_end(scopeprof_gpu_scope *gs) {
    if (__builtin_expect(gs->cpu.t != scopeprof__tls, 0)) { /* moved: scopeprof__scope_end (its GPU events stay unread) */
        scopeprof__scope_moved(gs->cpu.site);
        return;
    }
    scopeprof__u32 flag = gs->ok && scopeprof__gpu_close(gs) ? SCOPEPROF_DEPTH_GPU : 0;
    scopeprof__u64 end = scopeprof__ticks();
    scopeprof__thread *t = gs->cpu.t;
    scopeprof__depth_set(t, gs->cpu.depth);
    scopeprof__emit(t, gs->cpu.start, end, gs->cpu.site, gs->cpu.depth | flag);
}

#define PROFILE_GPU_SCOPE(nm, stream) SCOPEPROF__GPU_SCOPE(nm, stream, __COUNTER__)
#define SCOPEPROF__GPU_SCOPE(nm, stream, id)                                        \
    SCOPEPROF__SITE(SCOPEPROF__V(scopeprof__site_, id), nm);                        \
    scopeprof_gpu_scope SCOPEPROF__V(scopeprof__gscope_, id)                        \
        __attribute__((cleanup(scopeprof__gpu_end), unused)) =                      \
            scopeprof__gpu_begin(&SCOPEPROF__V(scopeprof__site_, id), (stream))

#ifdef __cplusplus
}
#endif
#endif /* GPU scopes */
/* ==== part: include/parts/format.h ==== */
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
/* ==== part: include/parts/codec.h ==== */
/* The implementation starts here (SCOPEPROF_IMPLEMENTATION): every function
 * is hidden and weak, so each executable or shared library uses one copy, and
 * defining SCOPEPROF_IMPLEMENTATION in two files of one module is harmless.
 *
 * codec.h: CRC-32 and the event record codec, shared by the writer and the
 * reporter (docs/FORMAT.md). */
#ifdef SCOPEPROF__IMPL
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
/* The CRC's carry-less multiply (SCOPEPROF_NO_CLMUL leaves it out). */
#if defined(__x86_64__) && !defined(SCOPEPROF_NO_CLMUL)
#define SCOPEPROF__CLMUL 1
#include <cpuid.h>
#include <immintrin.h>
#endif

/* Public functions of the implementation and internal ones: both hidden and
 * weak (see above). */
#define SCOPEPROF__API __attribute__((weak, visibility("hidden")))
#define SCOPEPROF__INTERNAL __attribute__((weak, visibility("hidden")))
/* Code that runs once per process or per file (set-up, creating the file,
 * the exit table), marked cold: gcc compiles it for size and out of the way
 * of the paths that run per event, which keeps the implementation under its
 * 64 KiB (tests/dropin/size.sh); clang moves it out of the way, and
 * compiles it for size when told so (minsize). */
#ifdef __clang__
#define SCOPEPROF__ONCE __attribute__((cold, minsize))
#else
#define SCOPEPROF__ONCE __attribute__((cold))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- CRC-32 (IEEE 802.3, reflected, as zlib), for chunk payloads -----------
 * The CRC runs over every byte written, so its speed is the streaming
 * writer's speed. Two ways, same result:
 * - eight bytes per step with eight 256-entry tables ("slicing"), for short
 *   pieces and any CPU;
 * - on x86-64 CPUs with PCLMULQDQ and AVX (carry-less multiply in the
 *   three-operand VEX form: x86-64 CPUs since 2011, but for some Atoms), 64
 *   bytes per step by folding (below): about 0.3 instructions a byte
 *   against 4. (The two-operand SSE form needs a copy of each accumulator
 *   and a separate load per fold: 29 instructions per 64 bytes against 19.)
 *   Where the CPU also multiplies 256-bit registers (VPCLMULQDQ with AVX2:
 *   Intel since 2019, AMD since 2020), 128 bytes per step: two 16-byte
 *   folds per instruction.
 * The tables and the folding constants are built once and published with a
 * compare-and-swap, so racing first callers never share a half-built one. */
typedef struct scopeprof__crc_data {
    uint32_t t[8][256];
    /* x^(N-1) mod P for the folding distances N (see scopeprof__crc_fold),
     * in pairs (D + 64, D) for the distances D of 512, 128, 1024 and 256
     * bits: the pair at SCOPEPROF__K<D> is one 16-byte lane (scopeprof__crc_k). */
    uint64_t fold[8];
    /* 0: tables only; 1: the CPU has PCLMULQDQ and AVX and the OS saves AVX
     * state; 2: also VPCLMULQDQ and AVX2. */
    int clmul;
} scopeprof__crc_data;
__attribute__((weak, visibility("hidden"))) scopeprof__crc_data *scopeprof__crc_state;

/* Where each folding distance's pair of constants begins in
 * scopeprof__crc_data.fold (the distances, in this order, are in
 * scopeprof__crc_tables). */
enum { SCOPEPROF__K512 = 0, SCOPEPROF__K128 = 2, SCOPEPROF__K1024 = 4, SCOPEPROF__K256 = 6 };

/* x^(n-1) mod P as the folding multiplies by it: reflected, in the top 32
 * bits of a 64-bit lane (why n-1: a carry-less product of two reflected
 * 64-bit lanes comes out one bit short of reflected 128 bits, which is one
 * more factor x). */
static inline uint64_t scopeprof__crc_xpow(unsigned n) {
    uint32_t r = 0x80000000u; /* x^0, reflected */
    for (unsigned i = 0; i + 1 < n; i++) r = (r >> 1) ^ (0xEDB88320u & (0u - (r & 1u)));
    return (uint64_t)r << 32;
}

SCOPEPROF__INTERNAL scopeprof__crc_data *scopeprof__crc_tables(void) {
    scopeprof__crc_data *d = __atomic_load_n(&scopeprof__crc_state, __ATOMIC_ACQUIRE);
    if (d) return d;
    d = (scopeprof__crc_data *)malloc(sizeof *d);
    if (!d) return NULL;
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t r = i;
        for (int k = 0; k < 8; k++) r = (r >> 1) ^ (0xEDB88320u & (0u - (r & 1u)));
        d->t[0][i] = r;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int k = 1; k < 8; k++) d->t[k][i] = (d->t[k - 1][i] >> 8) ^ d->t[0][d->t[k - 1][i] & 0xFF];
    static const unsigned dist[4] = {512, 128, 1024, 256}; /* SCOPEPROF__K512, _K128, _K1024, _K256 */
    for (int k = 0; k < 4; k++) {
        d->fold[2 * k] = scopeprof__crc_xpow(dist[k] + 64);
        d->fold[2 * k + 1] = scopeprof__crc_xpow(dist[k]);
    }
    d->clmul = 0;
#ifdef SCOPEPROF__CLMUL
    unsigned ax, bx, cx, dx;
    if (__get_cpuid(1, &ax, &bx, &cx, &dx) && (cx & bit_PCLMUL) && (cx & bit_AVX) && (cx & bit_OSXSAVE)) {
        unsigned lo, hi; /* XCR0: the OS saves the SSE and AVX registers (bits 1, 2) */
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        d->clmul = (((uint64_t)hi << 32 | lo) & 6) == 6;
        /* Leaf 7: AVX2 (EBX bit 5), VPCLMULQDQ (ECX bit 10). */
        if (d->clmul && __get_cpuid_count(7, 0, &ax, &bx, &cx, &dx) && (bx & (1u << 5)) && (cx & (1u << 10)))
            d->clmul = 2;
    }
#endif
    scopeprof__crc_data *expected = NULL;
    if (!__atomic_compare_exchange_n(&scopeprof__crc_state, &expected, d, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        free(d); /* another thread won */
        d = expected;
    }
    return d;
}

/* The CRC register c (inverted, as inside scopeprof_crc32) after n bytes at
 * p, by the tables. */
static inline uint32_t scopeprof__crc_slices(const scopeprof__crc_data *d, uint32_t c,
                                             const unsigned char *p, size_t n) {
    for (; n >= 8; n -= 8, p += 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                           (uint32_t)p[3] << 24);
        uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
                      (uint32_t)p[7] << 24;
        c = d->t[7][lo & 0xFF] ^ d->t[6][(lo >> 8) & 0xFF] ^ d->t[5][(lo >> 16) & 0xFF] ^
            d->t[4][lo >> 24] ^ d->t[3][hi & 0xFF] ^ d->t[2][(hi >> 8) & 0xFF] ^
            d->t[1][(hi >> 16) & 0xFF] ^ d->t[0][hi >> 24];
    }
    while (n--) c = (c >> 8) ^ d->t[0][(c ^ *p++) & 0xFF];
    return c;
}

#ifdef SCOPEPROF__CLMUL
/* Folding. The CRC register is the remainder mod P of the bytes read so far
 * (the register's start value xored into their first four), times x^32.
 * Take 16 bytes as a polynomial A of degree < 128 (reflected: byte 0's bit 0
 * is the highest power) and let N bits of data follow it: A x^N leaves the
 * same remainder as (A's first 8 bytes) * (x^(N+64) mod P) + (its last 8) *
 * (x^N mod P), two carry-less products of under 128 bits that line up with
 * the 16 bytes N bits later, and are xored into them. Four such 16-byte
 * accumulators step 64 bytes at a time (N = 512), then fold into one
 * (N = 128); the last one's remainder comes from the tables. */
__attribute__((target("pclmul,avx"))) static inline __m128i scopeprof__crc_fold(__m128i a, __m128i k) {
    return _mm_xor_si128(_mm_clmulepi64_si128(a, k, 0x00), _mm_clmulepi64_si128(a, k, 0x11));
}

/* The constants of one folding distance (SCOPEPROF__K512 ...) as one lane:
 * the low half multiplies a lane's low 8 bytes, the high half its high 8
 * (x86-64 is little-endian: fold[i] is the low half). */
__attribute__((target("pclmul,avx"))) static inline __m128i scopeprof__crc_k(const scopeprof__crc_data *d, int i) {
    return _mm_loadu_si128((const __m128i *)(const void *)&d->fold[i]);
}

/* The end of a fold: the accumulator x with the n bytes at p after it,
 * 16 at a time (N = 128); the last accumulator's remainder and the bytes
 * left (under 16) by the tables. */
__attribute__((target("pclmul,avx"))) static inline uint32_t
scopeprof__crc_end(const scopeprof__crc_data *d, __m128i x, const unsigned char *p, size_t n) {
    const __m128i k128 = scopeprof__crc_k(d, SCOPEPROF__K128);
    for (; n >= 16; p += 16, n -= 16) x = _mm_xor_si128(scopeprof__crc_fold(x, k128), _mm_loadu_si128((const __m128i *)(const void *)p));
    unsigned char last[16];
    _mm_storeu_si128((__m128i *)(void *)last, x);
    return scopeprof__crc_slices(d, scopeprof__crc_slices(d, 0, last, 16), p, n);
}

/* As scopeprof__crc_slices, for n >= 64. */
SCOPEPROF__INTERNAL __attribute__((target("pclmul,avx"))) uint32_t
scopeprof__crc_clmul(const scopeprof__crc_data *d, uint32_t c, const unsigned char *p, size_t n) {
    const __m128i k512 = scopeprof__crc_k(d, SCOPEPROF__K512), k128 = scopeprof__crc_k(d, SCOPEPROF__K128);
    const __m128i *q = (const __m128i *)(const void *)p;
    __m128i x0 = _mm_xor_si128(_mm_loadu_si128(q), _mm_cvtsi32_si128((int)c));
    __m128i x1 = _mm_loadu_si128(q + 1), x2 = _mm_loadu_si128(q + 2), x3 = _mm_loadu_si128(q + 3);
    for (q += 4, n -= 64; n >= 64; q += 4, n -= 64) {
        x0 = _mm_xor_si128(scopeprof__crc_fold(x0, k512), _mm_loadu_si128(q));
        x1 = _mm_xor_si128(scopeprof__crc_fold(x1, k512), _mm_loadu_si128(q + 1));
        x2 = _mm_xor_si128(scopeprof__crc_fold(x2, k512), _mm_loadu_si128(q + 2));
        x3 = _mm_xor_si128(scopeprof__crc_fold(x3, k512), _mm_loadu_si128(q + 3));
    }
    x1 = _mm_xor_si128(scopeprof__crc_fold(x0, k128), x1);
    x2 = _mm_xor_si128(scopeprof__crc_fold(x1, k128), x2);
    x3 = _mm_xor_si128(scopeprof__crc_fold(x2, k128), x3);
    return scopeprof__crc_end(d, x3, (const unsigned char *)q, n);
}

/* The same on 32-byte registers, for n >= 128: four accumulators of two
 * 16-byte lanes each step 128 bytes (N = 1024), fold into one (N = 256),
 * whose two lanes fold into one (N = 128); scopeprof__crc_end takes the
 * rest. */
__attribute__((target("pclmul,avx2,vpclmulqdq"))) static inline __m256i scopeprof__crc_fold2(__m256i a, __m256i k) {
    return _mm256_xor_si256(_mm256_clmulepi64_epi128(a, k, 0x00), _mm256_clmulepi64_epi128(a, k, 0x11));
}
SCOPEPROF__INTERNAL __attribute__((target("pclmul,avx2,vpclmulqdq"))) uint32_t
scopeprof__crc_vclmul(const scopeprof__crc_data *d, uint32_t c, const unsigned char *p, size_t n) {
    const __m256i k1024 = _mm256_broadcastsi128_si256(scopeprof__crc_k(d, SCOPEPROF__K1024));
    const __m256i k256 = _mm256_broadcastsi128_si256(scopeprof__crc_k(d, SCOPEPROF__K256));
    const __m256i *q = (const __m256i *)(const void *)p;
    __m256i y0 = _mm256_xor_si256(_mm256_loadu_si256(q), _mm256_set_epi32(0, 0, 0, 0, 0, 0, 0, (int)c));
    __m256i y1 = _mm256_loadu_si256(q + 1), y2 = _mm256_loadu_si256(q + 2), y3 = _mm256_loadu_si256(q + 3);
    for (q += 4, n -= 128; n >= 128; q += 4, n -= 128) {
        y0 = _mm256_xor_si256(scopeprof__crc_fold2(y0, k1024), _mm256_loadu_si256(q));
        y1 = _mm256_xor_si256(scopeprof__crc_fold2(y1, k1024), _mm256_loadu_si256(q + 1));
        y2 = _mm256_xor_si256(scopeprof__crc_fold2(y2, k1024), _mm256_loadu_si256(q + 2));
        y3 = _mm256_xor_si256(scopeprof__crc_fold2(y3, k1024), _mm256_loadu_si256(q + 3));
    }
    y1 = _mm256_xor_si256(scopeprof__crc_fold2(y0, k256), y1);
    y2 = _mm256_xor_si256(scopeprof__crc_fold2(y1, k256), y2);
    y3 = _mm256_xor_si256(scopeprof__crc_fold2(y2, k256), y3);
    for (; n >= 32; q++, n -= 32) y3 = _mm256_xor_si256(scopeprof__crc_fold2(y3, k256), _mm256_loadu_si256(q));
    __m128i x = _mm_xor_si128(scopeprof__crc_fold(_mm256_castsi256_si128(y3), scopeprof__crc_k(d, SCOPEPROF__K128)),
                              _mm256_extracti128_si256(y3, 1));
    return scopeprof__crc_end(d, x, (const unsigned char *)q, n);
}
#endif

SCOPEPROF__API uint32_t scopeprof_crc32(uint32_t crc, const void *data, size_t n) {
    const unsigned char *p = (const unsigned char *)data;
    uint32_t c = ~crc;
    const scopeprof__crc_data *d = scopeprof__crc_tables();
    if (!d) { /* out of memory: bit by bit */
        while (n--) {
            c ^= *p++;
            for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
        }
        return ~c;
    }
#ifdef SCOPEPROF__CLMUL
    if (n >= 128 && d->clmul == 2) return ~scopeprof__crc_vclmul(d, c, p, n);
    if (n >= 64 && d->clmul) return ~scopeprof__crc_clmul(d, c, p, n);
#endif
    return ~scopeprof__crc_slices(d, c, p, n);
}

SCOPEPROF__API uint32_t scopeprof_chunk_crc(uint32_t payload_crc, const unsigned char *chunk_header) {
    /* Payload first, then the header: a streaming writer knows the length
     * only once the payload is done. */
    return scopeprof_crc32(payload_crc, chunk_header, 12);
}

/* ---- Event records (see "Event records" above) ---------------------------- */
/* Little-endian loads and stores: the file format's byte order. On a
 * little-endian CPU one move each (compilers do not always merge the byte
 * moves, and the writer makes four of these per event). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
static inline uint32_t scopeprof__get32(const unsigned char *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint64_t scopeprof__get64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static inline void scopeprof__put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void scopeprof__put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
#else
static inline uint32_t scopeprof__get32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t scopeprof__get64(const unsigned char *p) {
    return (uint64_t)scopeprof__get32(p) | (uint64_t)scopeprof__get32(p + 4) << 32;
}
static inline void scopeprof__put32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}
static inline void scopeprof__put64(unsigned char *p, uint64_t v) {
    scopeprof__put32(p, (uint32_t)v);
    scopeprof__put32(p + 4, (uint32_t)(v >> 32));
}
#endif

/* Whether e fits a 16-byte record. */
static inline int scopeprof__rec_short(const scopeprof_event *e) {
    return !(e->depth & SCOPEPROF_DEPTH_MEM) && e->end >= e->start &&
           e->end - e->start < SCOPEPROF_REC_LONG_MARK && e->site >> SCOPEPROF_REC_SITE_BITS == 0 &&
           (e->depth & SCOPEPROF_DEPTH_MASK) >> SCOPEPROF_REC_DEPTH_BITS == 0;
}

/* (The writer writes its buffers as they are: this is for readers and
 * tests that build records.) */
SCOPEPROF__API size_t scopeprof_rec_encode(unsigned char *p, const scopeprof_event *e) {
    if (scopeprof__rec_short(e)) {
        scopeprof__put64(p, e->start);
        scopeprof__put32(p + 8, (uint32_t)(e->end - e->start));
        scopeprof__put32(p + 12, scopeprof__key_pack(e->site, e->depth));
        return 16;
    }
    scopeprof__put64(p, e->start);
    scopeprof__put32(p + 8, SCOPEPROF_REC_LONG_MARK);
    scopeprof__put32(p + 12, e->depth);
    scopeprof__put64(p + 16, e->end);
    scopeprof__put32(p + 24, e->site);
    scopeprof__put32(p + 28, 0);
    return 32;
}

SCOPEPROF__API size_t scopeprof_rec_decode(const unsigned char *p, size_t avail, scopeprof_event *e) {
    if (avail < 16) return 0;
    uint32_t dur = scopeprof__get32(p + 8), key = scopeprof__get32(p + 12);
    e->start = scopeprof__get64(p);
    if (dur != SCOPEPROF_REC_LONG_MARK) {
        e->end = e->start + dur;
        scopeprof__key_unpack(key, e);
        return 16;
    }
    if (avail < 32) return 0;
    e->depth = key;
    e->end = scopeprof__get64(p + 16);
    e->site = scopeprof__get32(p + 24);
    return 32;
}

/* ---- Input shapes (see "Input shapes" in format.h) ------------------------
 * Reading a file's is the reporter's (SCOPEPROF_AGGREGATION); the writer
 * checks and prints the words it summed. */
#ifdef SCOPEPROF_AGGREGATION
SCOPEPROF__API size_t scopeprof_rec_decode_shaped(const unsigned char *p, size_t avail, scopeprof_event *e,
                                                  const unsigned char **shape, uint32_t *units) {
    *shape = NULL;
    *units = 0;
    size_t used = scopeprof_rec_decode(p, avail, e);
    if (used != 32) return used;
    uint32_t k = scopeprof__get32(p + 28);
    if (k == 0) return 32;
    if (k > (avail - 32) / 16) return 0;
    *shape = p + 32;
    *units = k;
    return 32 + (size_t)k * 16;
}

#endif

SCOPEPROF__API int scopeprof_shape_check(const uint64_t *w, uint32_t m) {
    if (m > SCOPEPROF_SHAPE_MAX_WORDS) return -1;
    int inputs = 0;
    for (uint32_t i = 0; i < m; inputs++) {
        uint64_t dims = w[i++];
        if (dims > m - i) return -1;
        i += (uint32_t)dims;
    }
    return inputs;
}

#ifdef SCOPEPROF_AGGREGATION
SCOPEPROF__API int scopeprof_shape_words(const unsigned char *shape, uint32_t units, uint64_t *w) {
    if (units == 0 || units > (SCOPEPROF_SHAPE_MAX_WORDS + 1) / 2) return -1;
    uint64_t m = scopeprof__get64(shape);
    if (m > 2 * (uint64_t)units - 1) return -1;
    for (uint32_t i = 0; i < (uint32_t)m; i++) w[i] = scopeprof__get64(shape + 8 + 8 * (size_t)i);
    return scopeprof_shape_check(w, (uint32_t)m) < 0 ? -1 : (int)m;
}
#endif

/* Append s to buf (n bytes) at *len, as far as it fits; *len counts all. */
SCOPEPROF__INTERNAL void scopeprof__put_str(char *buf, size_t n, size_t *len, const char *s) {
    size_t l = strlen(s);
    if (*len < n) memcpy(buf + *len, s, *len + l < n ? l : n - *len);
    *len += l;
}

SCOPEPROF__API size_t scopeprof_shape_format(char *buf, size_t n, const uint64_t *w, uint32_t m) {
    size_t len = 0;
    char piece[32];
    scopeprof__put_str(buf, n, &len, "[");
    for (uint32_t i = 0; i < m;) {
        uint32_t dims = (uint32_t)w[i++];
        scopeprof__put_str(buf, n, &len, i > 1 ? ", [" : "[");
        for (uint32_t d = 0; d < dims && i < m; d++, i++) {
            snprintf(piece, sizeof piece, "%s%" PRId64, d ? ", " : "", (int64_t)w[i]);
            scopeprof__put_str(buf, n, &len, piece);
        }
        scopeprof__put_str(buf, n, &len, "]");
    }
    scopeprof__put_str(buf, n, &len, "]");
    if (n) buf[len < n ? len : n - 1] = 0;
    return len;
}

#ifdef __cplusplus
}
#endif
#endif /* codec.h */
/* ==== part: include/parts/table.h ==== */
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
/* ==== part: include/parts/state.h ==== */
/* state.h: the recording implementation (PROFILE_ENABLE) starts here. The
 * process's one registry, made of one sub-struct per part, each saying which
 * lock guards it; the locks and their one order. */
#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON
#include <dlfcn.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#if !defined(CLOCK_MONOTONIC) || !defined(O_CLOEXEC) || !defined(SA_RESETHAND)
#error "scopeprof.h: POSIX.1-2008 is hidden in the file that defines SCOPEPROF_IMPLEMENTATION (strict -std=c99/c11/c17 and a system header included before scopeprof.h, or the file's own feature macro asking for less, as Lua's _XOPEN_SOURCE 600): put the implementation in a file of its own, include scopeprof.h before the system headers and feature macros there (with MPI: <mpi.h>, then scopeprof.h, then the rest), or compile it with -D_POSIX_C_SOURCE=200809L"
#undef SCOPEPROF__IMPL /* one error, not a page: the rest is left out */
#endif
/* With MPI (mpi.h): the implementation's file saw <mpi.h> (MPI_VERSION, or
 * Open MPI's OMPI_MAJOR_VERSION) or defines SCOPEPROF_MPI. */
#if !defined(SCOPEPROF_NO_MPI) && (defined(SCOPEPROF_MPI) || defined(MPI_VERSION) || defined(OMPI_MAJOR_VERSION))
#define SCOPEPROF__MPI 1
#endif
/* syscall(2), for threads' kernel ids: glibc's <unistd.h> declares it only
 * under __USE_MISC (no feature macro, _DEFAULT_SOURCE, _GNU_SOURCE), and a
 * file that set _XOPEN_SOURCE or _POSIX_C_SOURCE itself (pigz does) has it
 * all the same in the C library. Before, such a file's threads were named
 * by pthread_self's address, which perf, top -H and gdb do not show. (g++
 * always defines _GNU_SOURCE.) */
#if defined(__GLIBC__) && !defined(__USE_MISC) && !defined(__cplusplus)
extern long syscall(long, ...);
#endif
#endif
#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON

#ifdef __cplusplus
extern "C" {
#endif

/* 4094 slots: with the chunk's 24-byte head, 8 bytes short of 16 pages, so
 * the chunk fills its mapping (4096 slots took a 17th page for 24 bytes:
 * 6% of chunk memory, and a page fault a chunk). */
#ifndef SCOPEPROF_EVENTS_PER_CHUNK
#define SCOPEPROF_EVENTS_PER_CHUNK 4094
#endif


struct scopeprof__chunk {
    scopeprof__chunk *next; /* in the full queue or the spare list */
    scopeprof__thread *thread;
    uint32_t count; /* events, once the chunk is queued */
    uint32_t first; /* events before this one were already written */
    scopeprof__slot ev[SCOPEPROF_EVENTS_PER_CHUNK]; /* records; count and first in slots */
};
typedef char scopeprof__chunk_holds_a_long_record[SCOPEPROF_EVENTS_PER_CHUNK >= 2 ? 1 : -1];

typedef struct scopeprof__siterec {
    char *name, *file, *func;
    uint32_t line;
    const scopeprof_site *origin; /* for interning dynamic names */
} scopeprof__siterec;

typedef struct scopeprof__live { /* a live allocation */
    uintptr_t ptr;
    int64_t bytes;
    uint32_t dev;
} scopeprof__live;

/* Sites live in blocks of SCOPEPROF__SITE_BLOCK records, mapped as needed,
 * up to SCOPEPROF__SITE_BLOCKS blocks (16.7M sites; past that a new site is
 * recorded as site 0, "<unknown>", as when out of memory). */
#define SCOPEPROF__SITE_BLOCK 4096u
#define SCOPEPROF__SITE_BLOCKS 4096u

/* The writer sends up to this many queued chunks to the file in one writev
 * (writer.h, scopeprof__write_some). Each write(2) has a fixed cost beside
 * its copy: 64 KiB at a time cost the kernel 3.35 ns per 16-byte record on
 * this VM, 256 KiB 2.43, 1 MiB 2.2 (session 14), and the checks before each
 * write (getpid, fstat) are made once per call. It is also how many chunks
 * the writer sums under the registry lock at a stretch. */
#define SCOPEPROF__BATCH 4u

/* What a thread's scopes closed at one depth hold for their parent, until
 * it closes (summary.h): their durations (ticks) and number, the scopes
 * nested in them, the earliest start and latest end among them, and (rare)
 * their GPU time (ns) and memory. All zero when empty, and emptied by the
 * parent that takes them: not_start holds ~(the earliest start), so that
 * the empty level's 0 is later than any start. */
typedef struct scopeprof__level {
    int64_t sum;
    uint64_t not_start, max_end;
    uint64_t nested;                 /* scopes closed inside them, at any depth */
    uint64_t nested_short, n_short; /* short ones (compensation's class): nested, and of the scopes */
    uint32_t n, rare;
    int64_t gpu_ns;
    int64_t mem_direct[2], mem_kids[2];
    int64_t unused_[4]; /* 128 bytes in all: the writer finds a level with a shift */
} scopeprof__level;
typedef struct scopeprof__levels { /* one thread slot's, by depth */
    scopeprof__level *lv;
    uint32_t cap, top; /* top: the deepest level that may hold something (those past it are empty) */
} scopeprof__levels;

typedef struct scopeprof__steprec { /* a finished step, in ticks */
    uint64_t n, start, end;
} scopeprof__steprec;

/* The one registry of a process. Every module (executable, shared library)
 * that includes this header reaches the same instance (see scopeprof__state).
 * `magic`/`layout` guard against modules built from different versions. */
#define SCOPEPROF__STATE_MAGIC 0x53505253u /* "SRPS" */
/* Modules agree on the registry only if they were built from the same shared
 * structs: ABI is bumped on any change to them (the GPU backend's per-thread
 * state included), and the sizes catch a forgotten bump. */
#define SCOPEPROF__ABI 28u /* 28: out.left_base, stranded_base, life.stranded (END's missing scopes, format 5.2), a thread's inherited scopes (fork); 27: life.deep, life.deep_at; 26: cfg.clock_mono, out.created; 25: wr.cpu_ns; 24: a level and a site's sums 128 bytes (their sizes now in the layout too), life.moved and moved_site; 23: out.create_err; 22: out.write_err; 21: the writer polls while chunks come: wr.asleep, wr.polled, wr.looked, buf.chunks_queued; 20: compensation in two classes: clock.comp_short_*, levels' nested_short and n_short; 19: a level's not_start and max_end, all zeros when empty; 18: out.batch_*, a drain's chunks in one writev; 17: one spare list (buf.spare, nspare) for the free and ready lists; 16: life.ending; 15: a thread's name as written (name_written, name_file, name_read_ns), out.files; 14: the summary's sums in ticks, rows' unit sums (format 4); 13: the exit summary as site sums; the job (ranks and clocks, mpi.h); and (12, issue 25) found through a mapping, not the environment; cfg.secure, out.dir, life.warned_clone and scopes_left; 11: the registry in sub-structs, one per part; 10: the registration lock, sites in fixed blocks; 9: overhead calibration (8: the background writer's chunk lock and lists, mapped records, reused thread states; 6: signal, fd, oom, thread fields; 5: the exit summary's per-thread level stacks; 4: GPU pools per device) */
#define SCOPEPROF__LAYOUT                                                                  \
    (SCOPEPROF__ABI * 1000003u + (uint32_t)sizeof(scopeprof__state) * 131u +                \
     (uint32_t)sizeof(scopeprof__thread) * 7u + SCOPEPROF_EVENTS_PER_CHUNK +                \
     (uint32_t)sizeof(scopeprof__level) * 11u + (uint32_t)sizeof(scopeprof__sitesum) * 13u)
/* ---- Locks -----------------------------------------------------------------
 * Four mutexes guard the registry. THE LOCK ORDER, everywhere (fork's prepare
 * handler takes all four in it): lock, then reg.lock, then buf.lock, then
 * mem.lock. Each sub-struct below names the lock that guards it.
 * - lock      (scopeprof__lock): the slow paths: the trace file, the summary,
 *             steps and schedules, what the writer drains. Held across
 *             malloc and write(2). Signals are held while it is held.
 * - reg.lock  (scopeprof__reg_lock): registration of sites and threads. Its
 *             holders never call malloc, take another lock or write: a signal
 *             handler's scope may need it in a thread it interrupted inside
 *             malloc, while the writer holds `lock` and waits in malloc.
 * - buf.lock  the chunk lists: a recording thread takes only this one, for a
 *             few pointer moves, to trade a full chunk for an empty one.
 * - mem.lock  the live-allocation map and memory totals (PROFILE_ALLOC).
 * The modules' own locks (scopeprof__module_lock, the GPU backend's) are
 * never held while any of these is taken. */
typedef struct scopeprof__state {
    uint32_t magic, layout;
    pthread_mutex_t lock; /* see "Locks" */
    pthread_key_t key;    /* per-thread state shared by all modules */
    int pid;
    /* Configuration (env.h): set when the registry is made, read without a
     * lock after. */
    struct {
        int summary, summary_all; /* SCOPEPROF_SUMMARY: 0, 1, all */
        int row_limit;
        scopeprof_sort sort;
        int group_shape; /* SCOPEPROF_GROUP_BY=shape: rows per name and input shapes */
        int signals;    /* SCOPEPROF_SIGNALS: flush on SIGINT/SIGTERM/crashes */
        int compensate; /* SCOPEPROF_COMPENSATE */
        int clock_mono; /* SCOPEPROF_CLOCK=monotonic: no TSC */
        int flush_ms;   /* SCOPEPROF_FLUSH_MS: the writer writes at least this often */
        size_t budget;  /* SCOPEPROF_BUFFER_MB, in bytes */
        char prog[256]; /* program name, read once at start */
        int secure;     /* a privileged process (AT_SECURE): nothing read, nothing written */
    } cfg;
    /* The clock (clock.h): set when the registry is made; ns_per_tick once,
     * under `lock`, at the first write. comp_*: what recording one scope
     * costs, in ticks (0 with SCOPEPROF_COMPENSATE=0): inside its own
     * interval and outside it in its parent's, for a scope with work in it
     * and (comp_short_*) for a short one: one under comp_short_below. */
    struct {
        int use_tsc;
        uint64_t tick0, ns0;  /* calibration start (ticks, CLOCK_MONOTONIC ns) */
        double ns_per_tick;   /* 0 until calibrated */
        int64_t realtime_minus_mono;
        double comp_inside_ticks, comp_outside_ticks, comp_short_inside_ticks, comp_short_outside_ticks;
        uint64_t comp_short_below;
    } clock;
    /* Registration (registry.h), under reg.lock. Sites, id = index + 1, in
     * blocks that never move (scopeprof__site_at): readers take no lock; a
     * site is complete before nsites (atomic, release) counts it. Threads are
     * pushed at the head under reg.lock (an atomic store, after the state is
     * complete), walked and unlinked under `lock` (an unlink also takes
     * reg.lock). The arena: mapped memory for what a recording can need in a
     * signal handler (scopeprof__arena_alloc): the unused rest of its block. */
    struct {
        pthread_mutex_t lock;
        scopeprof__siterec *site_blk[SCOPEPROF__SITE_BLOCKS];
        uint32_t nsites;
        uint32_t *dyn_hash, dyn_cap; /* name+callsite -> site id, for _DYN */
        scopeprof__thread *threads;
        uint32_t nthreads;
        scopeprof__thread *thread_free; /* states of reaped threads, for reuse */
        uint32_t nslots;                /* thread states ever made: the summary's slots */
        char *arena;
        size_t arena_left;
    } reg;
    /* Chunks (buffers.h), under buf.lock: the full queue, the spare list
     * (written chunks and those the writer touched ahead), and t->chunk /
     * t->cur switches. Out of memory,
     * threads without a buffer write into off_slots (never read), threads
     * without a state use off_thread. */
    struct {
        pthread_mutex_t lock;
        scopeprof__chunk *full_head, *full_tail;
        scopeprof__chunk *spare; /* empty chunks with their pages present: written ones, touched ones */
        uint32_t nspare;
        size_t bytes;          /* chunk memory held */
        size_t queued;         /* bytes in the full queue */
        size_t peak_bytes;     /* most chunk memory held at once */
        uint64_t self_writes;  /* chunks recording threads wrote because the writer was behind */
        size_t chunks_queued;  /* ever: whether any came since the writer's last look */
        scopeprof__slot off_slots[2 + (SCOPEPROF_SHAPE_MAX_WORDS + 1) / 2]; /* the longest record */
        scopeprof__thread off_thread;
    } buf;
    /* The background writer (writer.h): state and wake under buf.lock. */
    struct {
        int state;  /* SCOPEPROF__WRITER_*: none yet, running, never in this process */
        int up;     /* the thread runs its own code (scopeprof__writer_start) */
        int paused; /* a cycle callback runs with `lock` released */
        int asleep; /* a thread wakes it when work is due (it sleeps till its timed flush, waits for the clock rate, or mmap failed) */
        size_t looked; /* buf.chunks_queued at its last look */
        int polled; /* it polls: a look writes the queue once a batch is there (cleared once it wrote) */
        pthread_cond_t wake; /* the writer sleeps on it, under buf.lock */
        scopeprof__chunk *touching; /* the chunk it is touching (set under `lock`) */
        uint64_t cpu_ns; /* its thread's CPU time at its last look (the exit's own-cost line) */
        void *(*main)(void *); /* of the module that made the state (pinned) */
    } wr;
    /* The trace file (file.h), under `lock`. fd: -1 not open yet, -2 failed
     * or disabled. fd_dev/fd_ino tell our file from one of the program's that
     * got the same descriptor number (scopeprof__fd_ours); fd_path is its
     * absolute path, to reopen it. claim_fd holds the claim on an explicit
     * path (scopeprof__claim_output), claim_ino its socket's inode. dir: the
     * working directory at the first scope, where default names live. What
     * was written of each kind, for the next chunk: *_written. */
    struct {
        int fd;
        int no_output; /* SCOPEPROF_OUTPUT=none */
        int path_is_default;
        char dir[4096];
        int claim_fd;
        uint64_t claim_ino;
        uint64_t fd_dev, fd_ino;
        char fd_path[4096];
        char path[4096];
        int rank; /* -1: unknown */
        uint64_t events_written;
        uint64_t left_base, stranded_base; /* life.scopes_left, .stranded when this file began: END counts since */
        uint32_t sites_written, gpu_names_written, steps_written;
        uint32_t files; /* files opened: a thread's name_file names the one its name went to */
        int write_err;  /* why this file's writing stopped (errno; -1: a short write; -2: its path
                         * names another file now, scopeprof__fd_check); 0: it did not */
        int create_err; /* the last failure to create a trace that was said (errno; -1: names taken) */
        int created;    /* the current file was created (scopeprof__trace_written) */
        /* EVENTS chunks held to go out in one writev (writer.h,
         * scopeprof__write_some): while batch_on, each one's header and
         * prefix, and its pieces (those, then the records in the queued
         * chunk's own memory). Any other write sends them first. */
        uint32_t batch_on, batch_n;
        unsigned char batch_head[SCOPEPROF__BATCH][SCOPEPROF_CHUNK_HEADER_SIZE + 8];
        struct iovec batch_v[2 * SCOPEPROF__BATCH];
    } out;
    /* The exit summary (summary.h), fed as chunks are written, under
     * `lock`: sums per site and per thread slot's depth, folded into the
     * table's rows (agg) when it is printed. */
    struct {
        scopeprof_agg agg;
        scopeprof__sitesum *site; /* by site id */
        uint32_t site_cap;
        uint32_t *order, norder, order_cap; /* site ids in first-seen order */
        struct scopeprof__shapesum *shaped; /* per site and input shapes (summary.h) */
        uint32_t nshaped, shaped_cap;
        uint32_t *shaped_hash, shaped_hcap;
        scopeprof__levels *thr;             /* by thread slot */
        uint32_t thr_cap;
        uint64_t events;
        int has_gpu, has_mem, has_gpu_mem;
        uint32_t step_first; /* sched.steps from here on are the file's (its ProfilerStep* row) */
    } sum;
    /* Memory (steps.h), under mem.lock: live allocations (pointer -> bytes)
     * and per-device totals; used: bit mask of devices. */
    struct {
        pthread_mutex_t lock;
        scopeprof__live *live;
        uint32_t nlive, live_cap;
        int64_t cur[64], peak[64];
        uint64_t unknown_frees;
        uint32_t unknown_free_site, used;
    } mem;
    /* Steps and the schedule (steps.h), under `lock`. */
    struct {
        uint64_t step;        /* steps completed */
        uint64_t step_start;  /* tick the current step began */
        scopeprof__steprec *steps;
        uint32_t nsteps, steps_cap;
        int on;               /* a schedule is set */
        int skip_first, wait, warmup, active, repeat;
        int window;           /* recording window open (schedule only) */
        uint64_t win_start;   /* tick */
        int cycle;            /* cycles written */
        char base_path[4096]; /* the path cycle files are named after */
        scopeprof_cycle_fn cycle_fn;
        void *cycle_user;
    } sched;
    /* GPU (gpu.h): the backend of the module that ran the first GPU scope
     * fills these, under `lock`. take hands over up to n GPU records of a
     * thread, in close order, waiting for the GPU where needed (only ever at
     * a write); ready says whether its next n GPU scopes are finished (never
     * waits). named: bit mask of devices in names. */
    struct {
        uint32_t (*take)(struct scopeprof__state *g, scopeprof__thread *t,
                         scopeprof_gpu_record *out, uint32_t n);
        int (*ready)(struct scopeprof__state *g, scopeprof__thread *t, uint32_t n);
        char names[16][64];
        uint32_t named;
    } gpu;
    /* Life (survival.h, registry.h): atomics. sig_pending: a terminating
     * signal whose handler found `lock` held: whoever releases it next writes
     * the trace and lets it act (scopeprof__unlock). oom: out of memory
     * (scopeprof__oom), recording has stopped for good; the program goes on. */
    struct {
        int modules, finalized;
        int ending;    /* the last write (scopeprof__write_all_and_close) is under way */
        int in_signal; /* writing from a signal handler: no malloc, no stdio */
        int sig_pending;
        int oom;
        int warned_reentry; /* scopeprof__reentered said it */
        int warned_clone;   /* scopeprof__cloned said it (in the clone's copy) */
        uint64_t scopes_left;   /* scopes never closed (a longjmp out of them): said at exit */
        uint64_t stranded;      /* PROFILE_ENDs while a scope opened inside the range was open: its
                                 * level stays counted (scopes_left, open scopes) but is no scope lost */
        uint64_t deep;          /* scopes deeper than the summary's levels (scopeprof__sum_deep), every cycle's: said at exit */
        uint32_t deep_at;       /* the shallowest depth of those */
        uint32_t left_site;     /* the first scope that found some, and its thread */
        uint64_t left_tid;
        uint64_t moved;         /* scopes that closed on another thread (scope_end): said at exit */
        int parent_pid;         /* a forked child's parent (its exit table's title says it) */
        uint32_t moved_site;    /* the first of them */
    } life;
    /* The job (mpi.h), under `lock`: what MPI said (rank, size: 0 when not
     * an MPI job) and the clock offsets to rank 0 measured at MPI_Init
     * (pt[0]) and MPI_Finalize (pt[1]), which every CLOCK chunk carries;
     * table_printed: the job table stood for rank 0's own at exit. */
    struct {
        int rank, size;
        uint32_t npts;
        struct {
            uint64_t local_ns; /* this process's CLOCK_MONOTONIC then */
            int64_t offset_ns; /* rank 0's clock minus this one's */
            uint64_t rtt_ns;   /* the best round trip: the offset is within half of it */
        } pt[2];
        int table_printed;
    } job;
} scopeprof__state;

/* Module-local cache of the shared state pointer. */
__attribute__((weak, visibility("hidden"))) scopeprof__state *scopeprof__g;
__attribute__((weak, visibility("hidden"))) int scopeprof__module_attached;
__attribute__((weak, visibility("hidden"))) pthread_mutex_t scopeprof__module_lock = PTHREAD_MUTEX_INITIALIZER;


static inline void scopeprof__warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void scopeprof__warn(const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (n > (int)sizeof buf - 2) n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    /* write(2), not stdio: safe from any context, never interleaves oddly. */
    ssize_t w = write(2, buf, (size_t)n);
    (void)w;
}

/* Releasing the registry's lock is where a signal that arrived while it was
 * held gets its trace written (see scopeprof__on_signal): under the lock,
 * before any other thread can take it. Every slow path unlocks through here. */
SCOPEPROF__INTERNAL void scopeprof__signal_finish(scopeprof__state *g);
/* Set while this thread takes, holds or releases the registry's lock, for a
 * signal handler on it that records: it must not take the lock (see
 * scopeprof__lock_mine). Module-local, as scopeprof__tls. */
__attribute__((weak, visibility("hidden"), tls_model("initial-exec"))) __thread int scopeprof__in_lock;
/* Signals (1-64) this thread had deliverable when it took the lock: they are
 * blocked while it holds it, so no handler of the program (a PROFILE_SCOPE
 * in it would need the lock for a new buffer) nor ours (it would write a
 * half-updated registry) runs inside a locked section; a process-directed
 * signal goes to another thread meanwhile, a thread-directed one waits for
 * the unlock. Faults stay deliverable: blocked, they would kill. */
__attribute__((weak, visibility("hidden"), tls_model("initial-exec"))) __thread uint64_t scopeprof__lock_unblock;
/* Block every signal but the faults; `all` gets the set blocked, `old` the
 * mask before. */
static inline void scopeprof__sig_hold(sigset_t *all, sigset_t *old) {
    sigfillset(all);
    sigdelset(all, SIGSEGV), sigdelset(all, SIGBUS), sigdelset(all, SIGFPE);
    sigdelset(all, SIGILL), sigdelset(all, SIGTRAP), sigdelset(all, SIGSYS);
    sigdelset(all, SIGABRT);
    pthread_sigmask(SIG_BLOCK, all, old);
}
/* Set in the background writer, which blocks every signal for good: its
 * holds need no system call (it took two per lock, two per chunk). */
__attribute__((weak, visibility("hidden"), tls_model("initial-exec"))) __thread int scopeprof__sigs_all_held;
/* The same; returns the signals that were deliverable (as a bit mask). */
static inline uint64_t scopeprof__sigs_hold(void) {
    if (scopeprof__sigs_all_held) return 0;
    sigset_t all, old;
    scopeprof__sig_hold(&all, &old);
    uint64_t was = 0;
    for (int sig = 1; sig <= 64; sig++)
        if (sigismember(&all, sig) == 1 && sigismember(&old, sig) == 0) was |= 1ull << (sig - 1);
    return was;
}
static inline void scopeprof__sigs_release(uint64_t was) {
    if (!was) return; /* none to give back */
    sigset_t set;
    sigemptyset(&set);
    for (int sig = 1; sig <= 64; sig++)
        if (was >> (sig - 1) & 1) sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}
/* Take mutex m with this thread's signals held, marking *in meanwhile and
 * keeping in *unblock the signals to give back and in *cancel the thread's
 * cancelability (the registry's lock and the registration lock each have
 * their own). Cancellation is off while the lock is held: write(2), open,
 * close, read and stderr's stdio are cancellation points, and a thread
 * cancelled in one of them (pthread_cancel) would end with the lock held,
 * hanging every thread that needs it, the exit included; cancelled in
 * code of ours, with signals held, it would also keep them held. A request
 * made meanwhile acts at the program's next cancellation point. */
static inline void scopeprof__hold(pthread_mutex_t *m, int *in, uint64_t *unblock, int *cancel) {
    int was_cancel;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &was_cancel);
    uint64_t was = scopeprof__sigs_hold();
    *in = 1;
    pthread_mutex_lock(m);
    *unblock = was;
    *cancel = was_cancel;
}
static inline void scopeprof__release(pthread_mutex_t *m, int *in, const uint64_t *unblock,
                                      const int *cancel) {
    uint64_t was = *unblock;
    int was_cancel = *cancel;
    pthread_mutex_unlock(m);
    *in = 0;
    scopeprof__sigs_release(was);
    pthread_setcancelstate(was_cancel, NULL);
}
/* The cancelability this thread had when it took the registry's lock. */
__attribute__((weak, visibility("hidden"), tls_model("initial-exec"))) __thread int scopeprof__lock_cancel;
static inline void scopeprof__lock(scopeprof__state *g) {
    scopeprof__hold(&g->lock, &scopeprof__in_lock, &scopeprof__lock_unblock, &scopeprof__lock_cancel);
}
static inline void scopeprof__unlock(scopeprof__state *g) {
    if (__builtin_expect(__atomic_load_n(&g->life.sig_pending, __ATOMIC_ACQUIRE) != 0, 0))
        scopeprof__signal_finish(g);
    scopeprof__release(&g->lock, &scopeprof__in_lock, &scopeprof__lock_unblock, &scopeprof__lock_cancel);
}

/* Pieces of a message to stderr with write(2) alone (signal handlers). */
static inline void scopeprof__sig_say(const char *a, const char *b, const char *c) {
    ssize_t w = write(2, a, strlen(a));
    if (b) w = write(2, b, strlen(b));
    if (c) w = write(2, c, strlen(c));
    (void)w;
}

/* Whether the calling thread holds the registry's lock (or is taking or
 * releasing it): then it is a signal handler that interrupted this thread
 * inside a locked section (a thread never takes the lock twice otherwise).
 * Our own flag, else glibc's record of the owner's thread id in the mutex;
 * elsewhere we cannot tell: `unknown` is returned. */
static inline int scopeprof__lock_mine(scopeprof__state *g, int unknown) {
    if (scopeprof__in_lock) return 1; /* this module's code took it (the usual case) */
#ifdef __GLIBC__
    (void)unknown; /* another module's code may have: the owner says */
#ifdef SYS_gettid
    return __atomic_load_n(&g->lock.__data.__owner, __ATOMIC_RELAXED) == (int)syscall(SYS_gettid);
#else
    (void)g;
    return 0;
#endif
#else
    (void)g;
    return unknown;
#endif
}

/* PROFILE_SCOPE (or any recording) in a program's signal handler that
 * interrupted this thread while it held the lock: the lock cannot be taken
 * (the thread would wait for itself), so what needs it is dropped, and said
 * once. */
static inline void scopeprof__reentered(scopeprof__state *g) {
    if (!__atomic_exchange_n(&g->life.warned_reentry, 1, __ATOMIC_RELAXED))
        scopeprof__sig_say("scopeprof: recording in a signal handler that interrupted the "
                           "profiler on the same thread; those events are dropped\n", NULL, NULL);
}

/* The registration lock (g->reg.lock), with signals held as for `lock`: a
 * handler that records never finds its own thread holding it. Its critical
 * sections are a few stores and, at most, an mmap: no malloc, no other
 * lock, no write. scopeprof__in_reg is set meanwhile, for a fault's handler
 * on the same thread (faults stay deliverable). */
__attribute__((weak, visibility("hidden"), tls_model("initial-exec"))) __thread int scopeprof__in_reg;
__attribute__((weak, visibility("hidden"), tls_model("initial-exec"))) __thread uint64_t scopeprof__reg_unblock;
__attribute__((weak, visibility("hidden"), tls_model("initial-exec"))) __thread int scopeprof__reg_cancel;
static inline void scopeprof__reg_lock(scopeprof__state *g) {
    scopeprof__hold(&g->reg.lock, &scopeprof__in_reg, &scopeprof__reg_unblock, &scopeprof__reg_cancel);
}
static inline void scopeprof__reg_unlock(scopeprof__state *g) {
    scopeprof__release(&g->reg.lock, &scopeprof__in_reg, &scopeprof__reg_unblock, &scopeprof__reg_cancel);
}
/* Registration's entry (a new site, a thread's first scope): the lock, or 0
 * when a fault's handler interrupted this thread inside registration (what
 * needed it is dropped, and said once). */
static inline int scopeprof__reg_enter(scopeprof__state *g) {
    if (scopeprof__in_reg) {
        scopeprof__reentered(g);
        return 0;
    }
    scopeprof__reg_lock(g);
    return 1;
}

/* The memory totals, copied in one critical section (threads update them
 * under mem.lock while the writer runs). */
typedef struct scopeprof__memsnap {
    uint32_t used; /* bit mask of devices */
    int64_t peak[32], cur[32];
    uint64_t unknown_frees;
} scopeprof__memsnap;

/* ---- Calls between parts -------------------------------------------------
 * Every function one part calls in another that comes later, declared once
 * here, so that the parts can follow an event's path. */
SCOPEPROF__INTERNAL void scopeprof__read_prog(char prog[256]);
SCOPEPROF__INTERNAL void scopeprof__default_path(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__claim_output(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__rank_path(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__rank_rename(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__json_path(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__cycle_path(scopeprof__state *g, int c);
SCOPEPROF__INTERNAL int scopeprof__qlock(scopeprof__state *g);
static inline void scopeprof__qunlock(scopeprof__state *g, int locked);
SCOPEPROF__INTERNAL void scopeprof__thread_exit(void *p);
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__writer_start(scopeprof__state *g);
SCOPEPROF__INTERNAL void *scopeprof__writer_main(void *arg);
SCOPEPROF__INTERNAL void scopeprof__writer_init_locks(scopeprof__state *g);
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__finalize(scopeprof__state *g);
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__install_signals(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__sched_start(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__pin_module(void);
SCOPEPROF__INTERNAL void scopeprof__calibrate(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__atfork_prepare(void);
SCOPEPROF__INTERNAL void scopeprof__atfork_parent(void);
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__atfork_child(void);
SCOPEPROF__INTERNAL scopeprof__chunk *scopeprof__chunk_alloc(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__write_queued(scopeprof__state *g, int may_wait);
SCOPEPROF__INTERNAL uint32_t scopeprof__write_some(scopeprof__state *g, int may_wait, uint32_t most);
SCOPEPROF__INTERNAL void scopeprof__write_partials(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__write_held(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__write_sites(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__write_thread(scopeprof__state *g, scopeprof__thread *t, uint64_t every);
SCOPEPROF__INTERNAL void scopeprof__mem_snapshot(scopeprof__state *g, scopeprof__memsnap *s, int reset);
SCOPEPROF__INTERNAL void scopeprof__write_memory(scopeprof__state *g, const scopeprof__memsnap *s);
SCOPEPROF__INTERNAL void scopeprof__print_memory(scopeprof__state *g, const scopeprof__memsnap *s, FILE *out);
SCOPEPROF__INTERNAL void scopeprof__write_steps(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__write_chunk(scopeprof__state *g, uint32_t type,
                                                const void *payload, uint32_t len);
SCOPEPROF__INTERNAL int scopeprof__close_output(scopeprof__state *g);
SCOPEPROF__INTERNAL void scopeprof__file_end(scopeprof__state *g, const scopeprof__memsnap *mem);
SCOPEPROF__INTERNAL void scopeprof__file_reset(scopeprof__state *g);
SCOPEPROF__INTERNAL uint64_t scopeprof__open_scopes(scopeprof__state *g, const scopeprof__thread *skip,
                                                    uint32_t *threads, const scopeprof__thread **first);
SCOPEPROF__INTERNAL void scopeprof__write_clock(scopeprof__state *g);
SCOPEPROF__INTERNAL const char *scopeprof__rank_title(const scopeprof__state *g, char *buf, size_t n);
SCOPEPROF__INTERNAL void scopeprof__summary_print(scopeprof__state *g, const scopeprof__memsnap *mem,
                                                  int recorded, const char *title, int at_exit);

#ifdef __cplusplus
}
#endif
#endif /* state.h */
/* ==== part: include/parts/clock.h ==== */
/* clock.h: the clock (TSC or CLOCK_MONOTONIC), ticks to nanoseconds, and the
 * overhead calibration (what recording one scope costs). */
#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON
#ifdef __cplusplus
extern "C" {
#endif

/* CLOCK_MONOTONIC in nanoseconds: the ticks when the TSC is not usable. */
static inline uint64_t scopeprof__mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

SCOPEPROF__API uint64_t scopeprof__ticks_slow(void) { return scopeprof__mono_ns(); }

/* Every change of this thread's pointer (scopeprof__tls) goes through here:
 * the hot path's (api.h, scopeprof__tls_hot) follows it where ticks are TSC
 * cycles and stays NULL where they are not, so that a scope's open and
 * close take their slow path there (api.h, scopeprof__scope_open). */
static inline scopeprof__thread *scopeprof__tls_set(scopeprof__thread *t) {
    scopeprof__tls = t;
#if defined(__x86_64__) || defined(__i386__)
    scopeprof__tls_hot = scopeprof__use_tsc == 1 ? t : NULL;
#endif
    return t;
}

/* One CLOCK_MONOTONIC time and the TSC at the same instant: the TSC read on
 * both sides of the clock, best of four tries. A thread preempted between
 * two single reads would pair them milliseconds apart and skew every
 * converted time (GPU work then appeared before its launch). Without a TSC
 * the ticks are the clock. */
SCOPEPROF__INTERNAL void scopeprof__clock_pair_of(int use_tsc, uint64_t *ns, uint64_t *tick) {
    *ns = scopeprof__mono_ns();
    *tick = *ns;
#if defined(__x86_64__) || defined(__i386__)
    if (!use_tsc) return;
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 4; i++) {
        uint64_t a = __builtin_ia32_rdtsc();
        uint64_t t = scopeprof__mono_ns();
        uint64_t b = __builtin_ia32_rdtsc();
        if (b - a < best) {
            best = b - a;
            *ns = t;
            *tick = a + (b - a) / 2;
        }
    }
#else
    (void)use_tsc; /* no TSC here: -Wextra's unused parameter */
#endif
}
static inline void scopeprof__clock_pair(const scopeprof__state *g, uint64_t *ns, uint64_t *tick) {
    scopeprof__clock_pair_of(g->clock.use_tsc, ns, tick);
}


/* The TSC is usable when the CPU says it is invariant (CPUID 0x80000007,
 * EDX bit 8): constant rate, running in every power state. */
static inline int scopeprof__tsc_invariant(void) {
#if defined(__x86_64__) || defined(__i386__)
    unsigned r[4]; /* eax..edx; an array, as nvcc warns of a register set and never read */
    __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(0x80000000u), "c"(0));
    if (r[0] < 0x80000007u) return 0;
    __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(0x80000007u), "c"(0));
    return (r[3] >> 8) & 1;
#else
    return 0;
#endif
}

/* ---- The clock rate ----------------------------------------------------
 * ns per TSC tick, measured over at least SCOPEPROF__RATE_NS
 * (scopeprof__calibrate) from the earliest clock pair known: the one read
 * when the program started (a constructor, below), else the registry's
 * (tick0, ns0). */
#define SCOPEPROF__RATE_NS 20000000u
/* A start pair older than this is not used: over a long time before
 * profiling began, a suspend or a virtual machine's migration may have
 * moved one clock against the other. */
#define SCOPEPROF__START_PAIR_MAX_NS 60000000000u
__attribute__((weak, visibility("hidden"))) uint64_t scopeprof__start_pair[2]; /* ns, tick; ns 0: none */
#if defined(__x86_64__) || defined(__i386__)
/* The pair when the program starts (two clock reads, no allocation), so that
 * a program whose profiling begins 20 ms or more after its start has the
 * rate at its first write without waiting. Only with an invariant TSC: no
 * `rdtsc` in a program that profiling would not read it in (a sandbox may
 * forbid it). Published with a release store, as a constructor of another
 * file may already have started the writer, which reads it. Any pair of the
 * two clocks will do: a module's own, or the first module's. */
__attribute__((constructor)) static void scopeprof__start_clock(void) {
    uint64_t ns, tick;
    if (!scopeprof__tsc_invariant() || __atomic_load_n(&scopeprof__start_pair[0], __ATOMIC_ACQUIRE)) return;
    scopeprof__clock_pair_of(1, &ns, &tick);
    __atomic_store_n(&scopeprof__start_pair[1], tick, __ATOMIC_RELAXED);
    __atomic_store_n(&scopeprof__start_pair[0], ns, __ATOMIC_RELEASE);
}
#endif

/* The pair the rate is measured from: scopeprof__start_pair if it is the
 * earlier and recent enough (and the ticks are the TSC), else the registry's. */
SCOPEPROF__INTERNAL void scopeprof__rate_from(const scopeprof__state *g, uint64_t *ns, uint64_t *tick) {
    uint64_t early = __atomic_load_n(&scopeprof__start_pair[0], __ATOMIC_ACQUIRE);
    *ns = g->clock.ns0, *tick = g->clock.tick0;
    if (g->clock.use_tsc && early && early < *ns && *ns - early <= SCOPEPROF__START_PAIR_MAX_NS)
        *ns = early, *tick = __atomic_load_n(&scopeprof__start_pair[1], __ATOMIC_RELAXED);
}

/* ns until the clock rate can be measured without a wait: 0 when the ticks
 * are ns, or SCOPEPROF__RATE_NS have passed since scopeprof__rate_from's
 * pair. Reads nothing under a lock (the background writer asks it without
 * the registry lock): the registry's pair never changes, the start pair is
 * published once. */
SCOPEPROF__INTERNAL uint64_t scopeprof__rate_wait(const scopeprof__state *g) {
    uint64_t ns, tick, since;
    if (!g->clock.use_tsc) return 0;
    scopeprof__rate_from(g, &ns, &tick);
    since = scopeprof__mono_ns() - ns;
    return since < SCOPEPROF__RATE_NS ? SCOPEPROF__RATE_NS - since : 0;
}

/* ---- Overhead calibration (docs/DESIGN.md, "Overhead compensation") --------
 * What recording one scope costs, measured once per process at start-up with
 * PROFILE_SCOPE's own inline code (scopeprof__scope_begin and _end) on a
 * throwaway thread state whose events are never queued nor written. Per
 * process rather than per thread: threads run the same code on the same
 * cores, and a thread's first scope must stay cheap.
 *
 * In two classes, as a scope's cost depends on what is around it: the clock
 * reads overlap the work around them on an out-of-order CPU, and back to
 * back around nothing they queue behind one another. On this project's AMD
 * EPYC VM a scope around nothing costs its caller 20 ns, one around some 10
 * ns of independent arithmetic 11-14 ns, one in a long dependent chain 1-7
 * ns (docs/DESIGN.md, "Overhead compensation"). So a scope with work in it is timed
 * around SCOPEPROF__CAL_WORK multiply-adds in four independent chains (code
 * with instruction-level parallelism, as most code has), and an empty one
 * around nothing; a scope whose duration is under twice the empty one's is
 * short, and compensated at the empty one's cost. */
enum {
    SCOPEPROF__CAL_BATCHES = 256,
    SCOPEPROF__CAL_PER = 8,  /* calls per batch */
    SCOPEPROF__CAL_WORK = 32 /* multiply-adds per call, in four chains: some 10 ns */
};

/* The work of a calibration call: four chains of multiply-adds from a value
 * carried from call to call, as data flows through a program's functions.
 * The empty asm keeps the compiler from folding the chains. */
static inline uint64_t scopeprof__cal_work(uint64_t x) {
    uint64_t a = x, b = x + 1, c = x + 2, d = x + 3;
    for (int i = 0; i < SCOPEPROF__CAL_WORK / 4; i++) {
        a = a * 6364136223846793005u + 1442695040888963407u;
        b = b * 6364136223846793005u + 1442695040888963407u;
        c = c * 6364136223846793005u + 1442695040888963407u;
        d = d * 6364136223846793005u + 1442695040888963407u;
        __asm__("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d));
    }
    return a ^ b ^ c ^ d;
}

/* Calls of a function without and with a scope in it, with work and
 * without: what the scope adds is the difference. Not inlined: scopes sit
 * in the functions a program calls, and in one unrolled block the compiler
 * could share the thread pointer and the cursor between scopes, which it
 * cannot across calls. */
SCOPEPROF__INTERNAL __attribute__((noinline)) void scopeprof__cal_plain(scopeprof_site *s, uint64_t *x) {
    *x = scopeprof__cal_work(*x);
    __asm__ volatile("" : : "r"(s) : "memory");
}
SCOPEPROF__INTERNAL __attribute__((noinline)) void scopeprof__cal_scoped(scopeprof_site *s, uint64_t *x) {
    scopeprof_scope sc __attribute__((cleanup(scopeprof__scope_end), unused)) = scopeprof__scope_begin(s);
    *x = scopeprof__cal_work(*x);
    __asm__ volatile("" : : "r"(s) : "memory");
}
SCOPEPROF__INTERNAL __attribute__((noinline)) void scopeprof__cal_plain_empty(scopeprof_site *s) {
    __asm__ volatile("" : : "r"(s) : "memory");
}
SCOPEPROF__INTERNAL __attribute__((noinline)) void scopeprof__cal_empty(scopeprof_site *s) {
    scopeprof_scope sc __attribute__((cleanup(scopeprof__scope_end), unused)) = scopeprof__scope_begin(s);
    __asm__ volatile("" : : "r"(s) : "memory");
}

/* The tick clock for timing a batch: on x86, `lfence` on both sides, so
 * that the read waits for the work before it to finish and the work after
 * it waits for the read (without, a read taken while the batch before it
 * still ran counted part of that batch in the next, and the difference of
 * two batches came out as an artifact of the CPU's reorder window). */
static inline uint64_t scopeprof__ticks_fenced(void) {
#if defined(__x86_64__) || defined(__i386__)
    if (scopeprof__use_tsc == 1) {
        __builtin_ia32_lfence();
        uint64_t t = __builtin_ia32_rdtsc();
        __builtin_ia32_lfence();
        return t;
    }
#endif
    return scopeprof__ticks();
}

static int scopeprof__cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Ticks of a batch, as kept (32 bits: the arrays of batches stay small on
 * the stack of whichever thread records first); a batch longer than 2^32
 * ticks (a preemption) is kept as the longest, which the quartile ignores. */
static inline uint32_t scopeprof__cal_ticks(uint64_t t) { return t > UINT32_MAX ? UINT32_MAX : (uint32_t)t; }

/* The recorded durations of the scopes in the throwaway buffer (a long
 * record's is huge: the batch then does not count). */
static inline uint32_t scopeprof__cal_durs(scopeprof__thread *t, const scopeprof__slot *buf) {
    uint64_t d = 0;
    for (const scopeprof__slot *e = buf; e < t->cur; e++) d += e->dur;
    return scopeprof__cal_ticks(d);
}

/* One class from its batches (ticks per batch of K calls, lower quartiles):
 * I + O is what a call with a scope takes more than one without; I what
 * the scope recorded beyond the call without one (0 if less: the clock
 * reads overlapped its work). */
static inline void scopeprof__cal_class(double plain, double scoped, double recorded, double *in, double *out) {
    const double per = SCOPEPROF__CAL_PER, each = (scoped - plain) / per, i = (recorded - plain) / per;
    *in = i > 0 ? i : 0;
    *out = each > *in ? each - *in : 0;
}

/* Batches of SCOPEPROF__CAL_PER calls each way, with work and without; the
 * lower quartile over batches, so that a batch that an interrupt or a
 * preemption stretched does not count (a minimum would pick the one lucky
 * batch instead of the usual cost). Costs about 256 * 8 * 4 calls: some
 * 0.2 ms with a TSC. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__overhead_measure(scopeprof__state *g) {
    enum { B = SCOPEPROF__CAL_BATCHES, K = SCOPEPROF__CAL_PER };
    /* Registered already (id 1 of no trace): scope_begin never calls back into
     * the state, whose creation is under way. */
    scopeprof_site site = {"", "", "", 0, 1};
    scopeprof__slot buf[4 * K]; /* room for K long records: never the slow path */
    scopeprof__thread cal;
    memset(&cal, 0, sizeof cal);
    uint32_t t[6][B]; /* plain, scoped, recorded: with work, then empty */
    uint64_t x = 1;
    /* A signal handler's scopes would land in the throwaway buffer, and
     * could fill it: none runs meanwhile. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    scopeprof__thread *saved = scopeprof__tls;
    scopeprof__tls_set(&cal);
    cal.lim = buf + 4 * K;
    for (int b = -8; b < B; b++) { /* the first 8 warm the caches: not kept */
        uint64_t c[6]; /* the clock between the batches */
        cal.cur = buf;
        c[0] = scopeprof__ticks_fenced();
        for (int k = 0; k < K; k++) scopeprof__cal_plain(&site, &x);
        c[1] = scopeprof__ticks_fenced();
        for (int k = 0; k < K; k++) scopeprof__cal_scoped(&site, &x);
        c[2] = scopeprof__ticks_fenced();
        uint32_t with_work = scopeprof__cal_durs(&cal, buf);
        cal.cur = buf;
        c[3] = scopeprof__ticks_fenced();
        for (int k = 0; k < K; k++) scopeprof__cal_plain_empty(&site);
        c[4] = scopeprof__ticks_fenced();
        for (int k = 0; k < K; k++) scopeprof__cal_empty(&site);
        c[5] = scopeprof__ticks_fenced();
        if (b < 0) continue;
        t[0][b] = scopeprof__cal_ticks(c[1] - c[0]), t[1][b] = scopeprof__cal_ticks(c[2] - c[1]);
        t[2][b] = with_work;
        t[3][b] = scopeprof__cal_ticks(c[4] - c[3]), t[4][b] = scopeprof__cal_ticks(c[5] - c[4]);
        t[5][b] = scopeprof__cal_durs(&cal, buf);
    }
    scopeprof__tls_set(saved);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    double q[6];
    for (int k = 0; k < 6; k++) {
        qsort(t[k], B, sizeof t[k][0], scopeprof__cmp_u32);
        q[k] = (double)t[k][B / 4];
    }
    scopeprof__cal_class(q[0], q[1], q[2], &g->clock.comp_inside_ticks, &g->clock.comp_outside_ticks);
    scopeprof__cal_class(q[3], q[4], q[5], &g->clock.comp_short_inside_ticks, &g->clock.comp_short_outside_ticks);
    /* Short: under twice an empty scope's duration (at least 1 tick, and far
     * under a short record's longest). */
    double below = 2 * q[5] / (double)K;
    g->clock.comp_short_below = below < 1 ? 1 : below > 1e6 ? 1000000u : (uint64_t)below;
}

/* The calibration in picoseconds: inside and outside, with work and short
 * (the tick rate is known from the first write on: scopeprof__calibrate). */
SCOPEPROF__INTERNAL void scopeprof__overhead_ps(scopeprof__state *g, uint32_t ps[4]) {
    scopeprof__calibrate(g);
    const double ticks[4] = {g->clock.comp_inside_ticks, g->clock.comp_outside_ticks,
                             g->clock.comp_short_inside_ticks, g->clock.comp_short_outside_ticks};
    for (int k = 0; k < 4; k++) {
        double v = ticks[k] * g->clock.ns_per_tick * 1e3;
        ps[k] = v < 0 ? 0 : v > 4e9 ? 4000000000u : (uint32_t)(v + 0.5);
    }
}

/* Before aggregating: the exit summary's table takes the calibration out
 * (once per table: a schedule's cycle starts a new one). */
SCOPEPROF__INTERNAL void scopeprof__overhead_apply(scopeprof__state *g) {
    if (g->sum.agg.comp_state != SCOPEPROF_COMP_NONE) return;
    if (!g->cfg.compensate) {
        g->sum.agg.comp_state = SCOPEPROF_COMP_OFF_ENV;
        return;
    }
    uint32_t ps[4];
    scopeprof__overhead_ps(g, ps);
    scopeprof_agg_calibration(&g->sum.agg, ps[0], ps[1], 1);
    scopeprof_agg_short_class(&g->sum.agg, ps[2], ps[3], g->clock.comp_short_below);
}
SCOPEPROF__INTERNAL void scopeprof__calibrate(scopeprof__state *g) {
    if (g->clock.ns_per_tick > 0) return;
    if (!g->clock.use_tsc) {
        g->clock.ns_per_tick = 1.0;
        return;
    }
    /* Ratio of TSC to CLOCK_MONOTONIC since the program's start (or the
     * registry's), taken at the first write. Over at least 20 ms, the rate
     * is within ~1e-6 even with a few microseconds of read jitter, and times
     * converted long after it are still close. At the last write
     * (g->life.ending) it covers every event there will be, so a converted
     * time is off by the jitter at most, however short the run: no wait. A
     * process that writes sooner sleeps the rest (spinning it, a short one
     * spent 20 ms of CPU); the background writer does not come here before
     * (scopeprof__writer_main). */
    for (uint64_t left; !g->life.ending && (left = scopeprof__rate_wait(g)) > 0;) {
        struct timespec rest = {0, (long)left};
        nanosleep(&rest, NULL); /* async-signal-safe: the crash path may be here */
    }
    uint64_t ns, tk, ns_from, tk_from;
    scopeprof__clock_pair(g, &ns, &tk);
    scopeprof__rate_from(g, &ns_from, &tk_from);
    g->clock.ns_per_tick = (double)(ns - ns_from) / (double)(tk - tk_from);
}

/* A tick in ns, as every reader of the file converts it (format.h). */
static inline uint64_t scopeprof__to_ns(const scopeprof__state *g, uint64_t tick) {
    return scopeprof_ticks_ns(tick, g->clock.tick0, g->clock.ns0, g->clock.ns_per_tick);
}

#ifdef __cplusplus
}
#endif
#endif /* clock.h */
/* ==== part: include/parts/env.h ==== */
/* env.h: the environment variables: one table, its parser, the unknown-name
 * check. */
#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON
#ifdef __cplusplus
extern "C" {
#endif

/* POSIX has a program declare environ itself; glibc also does under
 * _GNU_SOURCE. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wredundant-decls"
extern char **environ;
#pragma GCC diagnostic pop
/* Parse helpers for the environment: bad values are named and ignored.
 * scopeprof__env_bool: a 0/1 variable's value as a word: 0 for 0, off and
 * false, 1 for 1, on and true, -1 for anything else. */
SCOPEPROF__INTERNAL int scopeprof__env_bool(const char *v) {
    static const char *const w[] = {"0", "off", "false", "1", "on", "true"};
    for (int i = 0; i < 6; i++)
        if (strcmp(v, w[i]) == 0) return i / 3;
    return -1;
}

static inline int scopeprof__env_int(const char *var, long lo, long hi, int *out) {
    const char *v = getenv(var);
    if (!v) return 0;
    int b = lo == 0 && hi == 1 ? scopeprof__env_bool(v) : -1;
    if (b >= 0) return (void)(*out = b), 1;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    /* A sign or a digit first: strtol also takes " +5". */
    if (!(*v == '-' || (*v >= '0' && *v <= '9')) || *end != 0 || errno || x < lo || x > hi) {
        scopeprof__warn("scopeprof: ignoring %s='%s': expected an integer from %ld to %ld", var,
                        v, lo, hi);
        return 0;
    }
    *out = (int)x;
    return 1;
}

/* "skip_first=1,wait=1,warmup=1,active=3,repeat=2": keys in any order, each
 * once, omitted ones 0 (active: 1). A bad value, an empty one (the whole
 * value, or between commas) or a key given twice is named and the schedule
 * ignored. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__parse_schedule(scopeprof__state *g, const char *v) {
    static const char *const keys[] = {"skip_first", "wait", "warmup", "active", "repeat"};
    int val[5] = {0, 0, 0, 1, 0}, seen = 0;
    const char *p = v;
    do {
        int k = -1;
        for (int i = 0; i < 5; i++) {
            size_t l = strlen(keys[i]);
            if (strncmp(p, keys[i], l) == 0 && p[l] == '=') {
                k = i;
                p += l + 1;
                break;
            }
        }
        char *end = NULL; /* set only for a known key and a digit (strtol takes " +5") */
        long x = k >= 0 && *p >= '0' && *p <= '9' ? strtol(p, &end, 10) : -1;
        if (!end || (seen >> k & 1) || x > 1000000 || (*end && (*end != ',' || !end[1])) || (k == 3 && x == 0)) {
            scopeprof__warn("scopeprof: ignoring SCOPEPROF_SCHEDULE='%s': expected "
                            "skip_first=N,wait=N,warmup=N,active=N(>0),repeat=N", v);
            return;
        }
        val[k] = (int)x;
        seen |= 1 << k;
        p = *end ? end + 1 : end;
    } while (*p);
    g->sched.on = 1;
    g->sched.skip_first = val[0], g->sched.wait = val[1], g->sched.warmup = val[2], g->sched.active = val[3], g->sched.repeat = val[4];
}

/* ---- Environment ----------------------------------------------------------
 * Every SCOPEPROF_ variable, in one table: X(NAME, DEFAULT, LO, HI, DOC).
 * An integer variable is parsed in [LO, HI] and DEFAULT is its value when it
 * is unset or bad; a text variable (LO > HI) is handed to scopeprof__read_env
 * as a string, and DEFAULT (-1) stands for the default that DOC names. The
 * header's first screen, README and scopeprof(3) list the same names and
 * defaults (tests/core/env_doc.sh checks them against this table). */
#define SCOPEPROF__ENV(X)                                                                  \
    X(OUTPUT, -1, 1, 0, "trace file path, or a directory for the default name (<program>.<pid>.sprof); none: no file")    \
    X(SUMMARY, -1, 1, 0, "0 silences the exit table, all prints it on every rank (default 1)") \
    X(SORT, -1, 1, 0, "sort key of the exit table (default cpu_time_total)")                 \
    X(GROUP_BY, -1, 1, 0, "rows of the exit table: name (default) or shape (input_shape)")    \
    X(ROW_LIMIT, 20, -1, 1000000, "rows of the exit table; 0 or -1: all")                     \
    X(BUFFER_MB, 64, 1, 1 << 20, "memory budget for event buffers, MiB")                      \
    X(SCHEDULE, -1, 1, 0, "skip_first=N,wait=N,warmup=N,active=N,repeat=N (default none)")    \
    X(COMPENSATE, 1, 0, 1, "0: no overhead compensation")                                     \
    X(WRITER, 1, 0, 1, "0: no background writer thread")                                      \
    X(FLUSH_MS, 100, 1, 3600000, "the writer writes at least this often, ms")                  \
    X(SIGNALS, 1, 0, 1, "0: no signal handlers")                                          \
    X(CLOCK, -1, 1, 0, "tsc (default: the TSC where the CPU says it is invariant) or monotonic")

#define SCOPEPROF__ENV_ENUM(name, def, lo, hi, doc) SCOPEPROF__ENV_##name,
enum { SCOPEPROF__ENV(SCOPEPROF__ENV_ENUM) SCOPEPROF__ENV_COUNT };
#undef SCOPEPROF__ENV_ENUM

/* The environment as read: integers, and the text variables' strings
 * (NULL: unset). */
typedef struct scopeprof__env {
    int num[SCOPEPROF__ENV_COUNT];
    const char *text[SCOPEPROF__ENV_COUNT];
} scopeprof__env;

/* The variable older versions left for their modules (the registry's
 * address, registry.h "Finding the registry" says why no more): a program
 * they traced passes it on, so it is no typo. Never read. */
#define SCOPEPROF__OLD_STATE_ENV "SCOPEPROF_INTERNAL_STATE"

/* Read every variable of the table into *env, and name once on stderr each
 * SCOPEPROF_ variable that is not in it: most likely a typo (SCOPEPROF_OUT
 * for SCOPEPROF_OUTPUT), with which the run would quietly go on with the
 * default. In a privileged process (`secure`) nothing is read: the defaults. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__env_read_all(scopeprof__env *env, int secure) {
    static const char *const names[] = {
#define SCOPEPROF__ENV_NAME(name, def, lo, hi, doc) "SCOPEPROF_" #name,
        SCOPEPROF__ENV(SCOPEPROF__ENV_NAME)
#undef SCOPEPROF__ENV_NAME
    };
    static const long lo[] = {
#define SCOPEPROF__ENV_LO(name, def, lo, hi, doc) lo,
        SCOPEPROF__ENV(SCOPEPROF__ENV_LO)
#undef SCOPEPROF__ENV_LO
    };
    static const long hi[] = {
#define SCOPEPROF__ENV_HI(name, def, lo, hi, doc) hi,
        SCOPEPROF__ENV(SCOPEPROF__ENV_HI)
#undef SCOPEPROF__ENV_HI
    };
    static const int def[] = {
#define SCOPEPROF__ENV_DEF(name, def, lo, hi, doc) def,
        SCOPEPROF__ENV(SCOPEPROF__ENV_DEF)
#undef SCOPEPROF__ENV_DEF
    };
    for (int i = 0; i < SCOPEPROF__ENV_COUNT; i++) {
        env->num[i] = def[i];
        env->text[i] = NULL;
        if (secure) continue;
        if (lo[i] > hi[i]) env->text[i] = getenv(names[i]);
        else scopeprof__env_int(names[i], lo[i], hi[i], &env->num[i]);
    }
    for (char **e = environ; e && *e && !secure; e++) {
        if (strncmp(*e, "SCOPEPROF_", 10) != 0) continue;
        size_t len = strcspn(*e, "="), i = 0;
        while (i < SCOPEPROF__ENV_COUNT && !(strlen(names[i]) == len && memcmp(names[i], *e, len) == 0)) i++;
        if (i < SCOPEPROF__ENV_COUNT || (len == strlen(SCOPEPROF__OLD_STATE_ENV) &&
                                         memcmp(*e, SCOPEPROF__OLD_STATE_ENV, len) == 0))
            continue;
        char list[256] = "";
        for (int k = 0; k < SCOPEPROF__ENV_COUNT; k++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", names[k],
                     k + 2 < SCOPEPROF__ENV_COUNT ? ", " : k + 2 == SCOPEPROF__ENV_COUNT ? " and " : "");
        scopeprof__warn("scopeprof: ignoring unknown variable %.*s: the header reads %s",
                        (int)(len < 74 ? len : 74), *e, list);
    }
}

enum { SCOPEPROF__WRITER_NONE, SCOPEPROF__WRITER_RUNNING, SCOPEPROF__WRITER_NEVER };
/* The configuration from the environment (at the registry's creation).
 *
 * A privileged process (setuid, setgid, or file capabilities: the kernel
 * sets AT_SECURE) runs with rights its user does not have, in an
 * environment that user wrote: SCOPEPROF_OUTPUT would let the user create or
 * overwrite files with the program's rights. So, as secure_getenv does, no
 * variable is read there; and nothing is written either: no trace file (one
 * made with the real user's rights would still hand that user the
 * privileged program's internals and timings), no exit table (the same
 * times, on the user's terminal), and no signal handler is installed. One
 * line says so. To profile
 * such a program, run it as the user it runs as (root runs a setuid-root
 * program without AT_SECURE). */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__read_env(scopeprof__state *g) {
    scopeprof__env env;
    const char *v;
    g->out.rank = -1;
    g->cfg.secure = getauxval(AT_SECURE) != 0;
    if (!g->cfg.secure) { /* rank from the usual launchers' variables */
        static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "RANK"};
        for (int i = 0; i < 4 && g->out.rank < 0; i++)
            if (getenv(vars[i])) scopeprof__env_int(vars[i], 0, 1 << 30, &g->out.rank);
    }
    scopeprof__env_read_all(&env, g->cfg.secure);
    g->cfg.summary = 1;
    if ((v = env.text[SCOPEPROF__ENV_SUMMARY]) != NULL) {
        if (strcmp(v, "all") == 0) g->cfg.summary = g->cfg.summary_all = 1;
        else if ((g->cfg.summary = scopeprof__env_bool(v)) < 0) {
            g->cfg.summary = 1;
            scopeprof__warn("scopeprof: ignoring SCOPEPROF_SUMMARY='%s': expected 0, 1 or all", v);
        }
    }
    g->cfg.sort = SCOPEPROF_SORT_CPU_TIME_TOTAL;
    if ((v = env.text[SCOPEPROF__ENV_SORT]) != NULL && scopeprof_sort_parse(v, &g->cfg.sort) != 0)
        scopeprof__warn("scopeprof: ignoring SCOPEPROF_SORT='%s': valid keys are %s", v,
                        scopeprof_sort_keys());
    if ((v = env.text[SCOPEPROF__ENV_GROUP_BY]) != NULL) {
        if (strcmp(v, "shape") == 0 || strcmp(v, "input_shape") == 0) g->cfg.group_shape = 1;
        else if (strcmp(v, "name") != 0)
            scopeprof__warn("scopeprof: ignoring SCOPEPROF_GROUP_BY='%s': expected name or shape (per thread "
                            "or rank: scopeprof table --group-by on the trace)", v);
    }
    g->cfg.row_limit = env.num[SCOPEPROF__ENV_ROW_LIMIT];
    g->cfg.budget = (size_t)env.num[SCOPEPROF__ENV_BUFFER_MB] << 20;
    g->cfg.signals = env.num[SCOPEPROF__ENV_SIGNALS];
    g->cfg.compensate = env.num[SCOPEPROF__ENV_COMPENSATE];
    g->wr.state = env.num[SCOPEPROF__ENV_WRITER] ? SCOPEPROF__WRITER_NONE : SCOPEPROF__WRITER_NEVER;
    g->cfg.flush_ms = env.num[SCOPEPROF__ENV_FLUSH_MS];
    if ((v = env.text[SCOPEPROF__ENV_CLOCK]) != NULL) {
        if (strcmp(v, "monotonic") == 0) g->cfg.clock_mono = 1;
        else if (strcmp(v, "tsc") != 0)
            scopeprof__warn("scopeprof: ignoring SCOPEPROF_CLOCK='%s': expected tsc or monotonic", v);
    }
    scopeprof__read_prog(g->cfg.prog);
    v = env.text[SCOPEPROF__ENV_OUTPUT];
    const char *dir = NULL; /* SCOPEPROF_OUTPUT names a directory: the default names go there */
    struct stat st;
    if (g->cfg.secure) {
        g->out.fd = -2;
        g->out.no_output = 1;
        g->cfg.summary = 0;
        g->cfg.signals = 0;
        scopeprof__warn("scopeprof: privileged process (setuid, setgid or file capabilities): "
                        "no SCOPEPROF_ variable is read and nothing is written (no trace, no "
                        "table); profile it as the user it runs as");
    } else if (v && v[0] == 0) { /* most likely an unset shell variable: the default file */
        scopeprof__warn("scopeprof: SCOPEPROF_OUTPUT is empty: writing the default file (SCOPEPROF_OUTPUT=none writes none)");
        v = NULL;
    } else if (v && strcmp(v, "none") == 0) {
        g->out.fd = -2;
        g->out.no_output = 1;
    } else if (v && (v[strlen(v) - 1] == '/' || (stat(v, &st) == 0 && S_ISDIR(st.st_mode)))) {
        dir = v; /* one file per process (and rank) in it, as in the working directory */
        v = NULL;
    } else if (v) {
        if (strlen(v) >= sizeof g->out.path) {
            scopeprof__warn("scopeprof: ignoring SCOPEPROF_OUTPUT: path longer than %zu bytes",
                            sizeof g->out.path - 1);
            v = NULL;
        } else {
            snprintf(g->out.path, sizeof g->out.path, "%s", v);
            scopeprof__json_path(g); /* a JSON name: the trace goes to NAME.sprof, said */
            if (g->out.rank >= 0) scopeprof__rank_path(g); /* ranks never share a path */
            scopeprof__claim_output(g);
        }
    }
    if (!v && !g->cfg.secure) {
        /* Where the default name lives: the working directory now (or
         * SCOPEPROF_OUTPUT's directory, from there), at the first scope, not
         * at the first write, after a daemon's chdir("/") (or a forked
         * child's: it keeps this one). */
        if (!getcwd(g->out.dir, sizeof g->out.dir)) g->out.dir[0] = 0; /* then relative */
        if (dir) {
            char d[sizeof g->out.dir];
            int n = dir[0] == '/' || !g->out.dir[0] ? snprintf(d, sizeof d, "%s", dir)
                                                    : snprintf(d, sizeof d, "%s/%s", g->out.dir, dir);
            if (n > 0 && (size_t)n < sizeof d) memcpy(g->out.dir, d, (size_t)n + 1);
            else scopeprof__warn("scopeprof: ignoring SCOPEPROF_OUTPUT: path longer than %zu bytes", sizeof d - 1);
        }
        scopeprof__default_path(g);
        g->out.path_is_default = 1;
    }
    if ((v = env.text[SCOPEPROF__ENV_SCHEDULE]) != NULL) scopeprof__parse_schedule(g, v);
}

#ifdef __cplusplus
}
#endif
#endif /* env.h */
/* ==== part: include/parts/registry.h ==== */
/* registry.h: finding or creating the process's one registry (shared by
 * every module), and what registers into it: sites, threads, the arena. */
#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON
#ifdef __cplusplus
extern "C" {
#endif

/* The module's thread pointer and clock choice (declared in api.h, where
 * the hot path reads them). */
__attribute__((weak, visibility("hidden"), tls_model("initial-exec"))) __thread scopeprof__thread *scopeprof__tls;
#if defined(__x86_64__) || defined(__i386__)
__attribute__((weak, visibility("hidden"), tls_model("initial-exec"))) __thread scopeprof__thread *scopeprof__tls_hot;
#endif
__attribute__((weak, visibility("hidden"))) int scopeprof__use_tsc = -1;


/* The module that creates the registry owns code the process keeps calling
 * (the thread-exit destructor, the fork and signal handlers): if it is a
 * library loaded with dlopen, it must never be unloaded. dladdr names its
 * file, and dlopen(RTLD_NOLOAD | RTLD_NODELETE) pins it; for the main program
 * this is a harmless no-op. dladdr is declared here under a private name
 * (bound to the real symbol) because <dlfcn.h> only declares it under
 * _GNU_SOURCE. */
typedef struct scopeprof__dlinfo {
    const char *fname;
    void *fbase;
    const char *sname;
    void *saddr;
} scopeprof__dlinfo;
extern int scopeprof__dladdr(const void *addr, scopeprof__dlinfo *info) __asm__("dladdr");

SCOPEPROF__INTERNAL void scopeprof__pin_module(void) {
    scopeprof__dlinfo info;
    /* Any address inside this module names it: a (hidden) variable's, as ISO
     * C has no conversion of a function pointer to `const void *`. */
    if (scopeprof__dladdr(&scopeprof__module_attached, &info) && info.fname && info.fname[0])
        dlopen(info.fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
}

/* The registry when even it cannot be allocated: recording is off, but the
 * program's calls find a state to talk to. One per module; only the first
 * module's is ever used (it is published like an allocated one). */
__attribute__((weak, visibility("hidden"))) scopeprof__state scopeprof__state_fallback;

/* Out of memory: stop recording for good, say so once, and let the program
 * go on (it may cope with malloc failures; aborting it was worse). What was
 * recorded before is still written and summarised at exit. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__oom(scopeprof__state *g) {
    if (__atomic_exchange_n(&g->life.oom, 1, __ATOMIC_ACQ_REL)) return;
    scopeprof__warn("scopeprof: out of memory: recording stopped (what was recorded before is "
                    "kept); the program goes on");
}

/* Whether this process was made by clone() without fork() (and without
 * CLONE_VM): a copy of the parent's memory, registry included, but no fork
 * handler ran, so the registry still names the parent (g->pid) and holds
 * the parent's trace descriptor. Nothing of such a process is written (it
 * would land in the parent's trace): its scopes are dropped, said once
 * (issue 25: before, they were dropped without a word). Only fork() gives
 * a child a profile of its own. */
SCOPEPROF__INTERNAL int scopeprof__cloned(scopeprof__state *g) {
    int pid = (int)getpid();
    if (g->pid == pid) return 0;
    if (!__atomic_exchange_n(&g->life.warned_clone, 1, __ATOMIC_RELAXED))
        scopeprof__warn("scopeprof: process %d was made by clone() without fork() (from %d): its "
                        "scopes are not recorded (only fork() gives a child a profile of its own)",
                        pid, g->pid);
    return 1;
}

/* Memory for the recording paths that a PROFILE_SCOPE in the program's own
 * signal handler can reach (a site's first use, a thread's first scope, a new
 * buffer) comes from mmap, a system call, never from malloc: malloc is not
 * async-signal-safe, and a handler that interrupted it on the same thread
 * would call it again inside it (a deadlock on malloc's lock, or a corrupt
 * heap). Zeroed pages, like calloc's. Strict ISO modes hide MAP_ANONYMOUS:
 * there /dev/zero is mapped (open and close are async-signal-safe). */
static inline void *scopeprof__map(size_t n) {
    void *p;
#if defined(MAP_ANONYMOUS)
    p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
#else
    int fd = open("/dev/zero", O_RDWR | O_CLOEXEC);
    if (fd < 0) return NULL;
    p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    close(fd);
#endif
    return p == MAP_FAILED ? NULL : p;
}

/* Bump allocation from mapped blocks, registration lock held. What is
 * allocated here is never given back: site strings live as long as the
 * process, thread states are recycled by the registry
 * (scopeprof__thread_new). A block's unused tail is address space only
 * (never touched). */
#define SCOPEPROF__ARENA_BLOCK ((size_t)1 << 20)
/* LeakSanitizer scans the heap and globals, not our mappings: thread states
 * there hold the only pointers to some malloc'd blocks (a thread's range
 * stack, its GPU state), which it would report as leaks. Each block is
 * given to it as a root region; without a sanitizer the weak symbol is 0. */
__attribute__((weak)) void __lsan_register_root_region(const void *p, size_t size);
static inline void *scopeprof__arena_map(size_t n) {
    void *p = scopeprof__map(n);
    if (p && __lsan_register_root_region) __lsan_register_root_region(p, n);
    return p;
}
SCOPEPROF__INTERNAL void *scopeprof__arena_alloc(scopeprof__state *g, size_t n, size_t align) {
    size_t pad = (size_t)(-(uintptr_t)g->reg.arena & (align - 1));
    if (g->reg.arena && pad + n <= g->reg.arena_left) {
        char *p = g->reg.arena + pad;
        g->reg.arena = p + n;
        g->reg.arena_left -= pad + n;
        return p;
    }
    if (n >= SCOPEPROF__ARENA_BLOCK / 2) return scopeprof__arena_map(n); /* a block of its own */
    char *p = (char *)scopeprof__arena_map(SCOPEPROF__ARENA_BLOCK); /* page-aligned */
    if (!p) return NULL;
    g->reg.arena = p + n;
    g->reg.arena_left = SCOPEPROF__ARENA_BLOCK - n;
    return p;
}

/* A copy of s in the arena (see scopeprof__map). Registration lock held,
 * as for every arena allocation. */
static inline char *scopeprof__arena_strdup(scopeprof__state *g, const char *s) {
    size_t n = strlen(s) + 1;
    char *d = (char *)scopeprof__arena_alloc(g, n, 1);
    if (d) memcpy(d, s, n);
    return d;
}


/* ---- Finding the registry --------------------------------------------------
 * One registry per process image, shared by every module. Modules that share
 * symbols (the files of one program, libraries linked at build time) could
 * agree through the linker, but a library loaded with dlopen (RTLD_LOCAL, the
 * default) into a program that exports nothing sees no symbol of the others.
 * So the first module to record leaves the registry's address in a page of
 * its own that every module can find: one page mapped privately from an
 * anonymous file (memfd_create) named "scopeprof-registry", which
 * /proc/self/maps lists as "/memfd:scopeprof-registry (deleted)"; later
 * modules read that list and the page (magic, layout, address), then check
 * the registry's own magic and layout.
 *
 * Why a mapping (issue 25). Before, the address was in an environment
 * variable, SCOPEPROF_INTERNAL_STATE: setenv at the first scope races with
 * every other thread's getenv (setenv is not thread-safe: a program whose
 * thread read its environment crashed in 17 of 100 runs), and the variable,
 * passed to every program the process ran, carried the 16 AT_RANDOM bytes
 * that seed the stack canary and the pointer guard (it was tagged with them
 * so that an exec'd image would not trust it). The other ways: a symbol
 * looked up with dlsym(RTLD_DEFAULT) misses RTLD_LOCAL modules; a name other
 * processes see (an abstract socket, a /dev/shm file keyed by the pid) can
 * be taken first by another user, and tells everyone which processes are
 * profiled; a descriptor at a known number is closed by daemons that close
 * 3..1023; prctl has no slot for an address. A mapping belongs to the one
 * address space it describes: an exec'd image starts without it, so it can
 * never trust its predecessor's address; a forked child has its own copy,
 * pointing at its own copy of the registry; no other process can see or
 * plant it; its descriptor is closed once mapped; and nothing of it leaves
 * the process. It costs one read of /proc/self/maps at each module's first
 * recording (without /proc, or without memfd_create, each module keeps a
 * registry, and a trace file, of its own). */
#define SCOPEPROF__REGMAP_NAME "scopeprof-registry"
typedef struct scopeprof__regmap {
    uint32_t magic, layout; /* the registry's, as a check before it is read */
    scopeprof__state *g;
} scopeprof__regmap;
/* Declared under a private name (bound to the real symbol, glibc 2.27 and
 * musl 1.1.20 on): <sys/mman.h> declares it only under _GNU_SOURCE. */
extern int scopeprof__memfd_create(const char *name, unsigned int flags) __asm__("memfd_create");
#define SCOPEPROF__MFD_CLOEXEC 1u

/* This address space's registry page, found in /proc/self/maps (open and read
 * only, no allocation), or NULL. One of another scopeprof version (its layout
 * differs) is returned when there is no other. */
static inline const scopeprof__regmap *scopeprof__regmap_find(void) {
    static const char tail[] = "/memfd:" SCOPEPROF__REGMAP_NAME " (deleted)";
    const size_t tl = sizeof tail - 1;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    const scopeprof__regmap *found = NULL;
    char buf[8192]; /* a line is an address range, a few numbers and a path (< 4096) */
    size_t have = 0;
    for (;;) {
        ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        have += (size_t)n;
        char *line = buf, *nl;
        while ((nl = (char *)memchr(line, '\n', (size_t)(buf + have - line))) != NULL) {
            if ((size_t)(nl - line) > tl && memcmp(nl - tl, tail, tl) == 0) {
                *nl = 0;
                const scopeprof__regmap *a = (const scopeprof__regmap *)(uintptr_t)strtoull(line, NULL, 16);
                /* The magic is stored last (release): the rest is complete. */
                if (a && __atomic_load_n(&a->magic, __ATOMIC_ACQUIRE) == SCOPEPROF__STATE_MAGIC &&
                    (!found || a->layout == SCOPEPROF__LAYOUT))
                    found = a;
            }
            line = nl + 1;
        }
        have = (size_t)(buf + have - line);
        memmove(buf, line, have);
        if (have == sizeof buf - 1) have = 0; /* no line is that long: drop it */
    }
    close(fd);
    return found;
}

/* Map and fill the registry page for registry g (its creator, module lock
 * held). Read-only once written. Without it (no memfd_create, a seccomp
 * filter) g stays this module's. */
static inline void scopeprof__regmap_make(scopeprof__state *g) {
    int fd = scopeprof__memfd_create(SCOPEPROF__REGMAP_NAME, SCOPEPROF__MFD_CLOEXEC);
    if (fd < 0) return;
    void *p = MAP_FAILED;
    if (ftruncate(fd, 4096) == 0) p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return;
    scopeprof__regmap *a = (scopeprof__regmap *)p;
    a->g = g;
    a->layout = SCOPEPROF__LAYOUT;
    __atomic_store_n(&a->magic, SCOPEPROF__STATE_MAGIC, __ATOMIC_RELEASE); /* after g, complete */
    mprotect(p, 4096, PROT_READ);
}

/* Find or create the process's one registry (see "Finding the registry").
 * Two modules whose very first recordings run at the same moment on two
 * threads can each make one (each module has its own start-up lock): each
 * then writes a trace of its own. */
SCOPEPROF__INTERNAL scopeprof__state *scopeprof__state_get(void) {
    scopeprof__state *g = __atomic_load_n(&scopeprof__g, __ATOMIC_ACQUIRE);
    if (__builtin_expect(g != NULL, 1)) return g;
    /* Signals held, as under the registry's lock: a program's handler that
     * records would otherwise wait here for the start-up it interrupted. */
    sigset_t held, old;
    scopeprof__sig_hold(&held, &old);
    pthread_mutex_lock(&scopeprof__module_lock);
    if ((g = scopeprof__g) != NULL) {
        pthread_mutex_unlock(&scopeprof__module_lock);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return g;
    }
    int saved_errno = errno; /* the program's, which start-up must not change */
    int cancel; /* no cancellation point acts while a lock of ours is held */
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
    const scopeprof__regmap *a = scopeprof__regmap_find();
    if (a && a->layout == SCOPEPROF__LAYOUT && a->g->magic == SCOPEPROF__STATE_MAGIC &&
        a->g->layout == SCOPEPROF__LAYOUT)
        g = a->g;
    else if (a)
        scopeprof__warn("scopeprof: a module built from another scopeprof version is "
                        "loaded; it keeps a profile of its own");
    if (!g) {
        g = (scopeprof__state *)calloc(1, sizeof *g);
        int oom = !g;
        if (oom) g = &scopeprof__state_fallback; /* zeroed, like calloc's */
        g->magic = SCOPEPROF__STATE_MAGIC;
        g->layout = SCOPEPROF__LAYOUT;
        g->pid = (int)getpid();
        pthread_mutex_init(&g->lock, NULL);
        pthread_mutex_init(&g->reg.lock, NULL);
        pthread_mutex_init(&g->mem.lock, NULL);
        scopeprof__writer_init_locks(g);
        g->wr.main = scopeprof__writer_main;
        if (pthread_key_create(&g->key, scopeprof__thread_exit) != 0) oom = 1;
        g->buf.off_thread.cur = g->buf.off_slots;
        g->buf.off_thread.lim = g->buf.off_slots + sizeof g->buf.off_slots / sizeof *g->buf.off_slots;
        if (oom) scopeprof__oom(g);
        g->out.fd = -1;
        g->out.claim_fd = -1;
        scopeprof_agg_init(&g->sum.agg);
        scopeprof__read_env(g);
        g->clock.use_tsc = !g->cfg.clock_mono && scopeprof__tsc_invariant();
        {
            struct timespec rt;
            clock_gettime(CLOCK_REALTIME, &rt);
            uint64_t mono = scopeprof__mono_ns();
            g->clock.realtime_minus_mono =
                (int64_t)((uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec) - (int64_t)mono;
        }
        scopeprof__clock_pair(g, &g->clock.ns0, &g->clock.tick0);
        scopeprof__use_tsc = g->clock.use_tsc; /* the calibration's scopes read the clock */
        if (g->cfg.compensate && !oom) scopeprof__overhead_measure(g);
        if (g->sched.on) {
            g->sched.cycle = 1;
            scopeprof__sched_start(g);
        }
        scopeprof__regmap_make(g);
        pthread_atfork(scopeprof__atfork_prepare, scopeprof__atfork_parent, scopeprof__atfork_child);
        scopeprof__install_signals(g);
        scopeprof__pin_module();
    }
    scopeprof__use_tsc = g->clock.use_tsc;
    if (!scopeprof__module_attached) {
        scopeprof__module_attached = 1;
        __atomic_add_fetch(&g->life.modules, 1, __ATOMIC_ACQ_REL);
    }
    __atomic_store_n(&scopeprof__g, g, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&scopeprof__module_lock);
    pthread_setcancelstate(cancel, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = saved_errno;
    return g;
}

/* When the last module that recorded goes away (process exit, or dlclose of
 * the last library), write everything and print the summary. One destructor
 * per module: it is weak, so the linker keeps one definition, but every
 * translation unit lists it, hence the module flag. */
__attribute__((weak, visibility("hidden"), destructor)) void scopeprof__module_fini(void) {
    if (!scopeprof__module_attached) return;
    scopeprof__module_attached = 0;
    scopeprof__state *g = scopeprof__g;
    if (g && !scopeprof__cloned(g) && __atomic_sub_fetch(&g->life.modules, 1, __ATOMIC_ACQ_REL) == 0)
        scopeprof__finalize(g);
}

/* Site `id` (1..nsites as read with acquire; see g->reg.site_blk). */
static inline const scopeprof__siterec *scopeprof__site_at(const scopeprof__state *g, uint32_t id) {
    return &g->reg.site_blk[(id - 1) / SCOPEPROF__SITE_BLOCK][(id - 1) % SCOPEPROF__SITE_BLOCK];
}
/* Site `id`, or NULL for 0 and ids not (yet) registered. No lock. */
static inline const scopeprof__siterec *scopeprof__site_find(const scopeprof__state *g, uint32_t id) {
    return id && id <= __atomic_load_n(&g->reg.nsites, __ATOMIC_ACQUIRE) ? scopeprof__site_at(g, id) : NULL;
}

/* Registration lock held. The record is complete before nsites counts it. */
SCOPEPROF__API uint32_t scopeprof__site_add(scopeprof__state *g, const char *name,
                                            const scopeprof_site *s) {
    uint32_t n = g->reg.nsites, b = n / SCOPEPROF__SITE_BLOCK;
    if (b >= SCOPEPROF__SITE_BLOCKS) return 0;
    if (!g->reg.site_blk[b]) {
        void *v = scopeprof__map(SCOPEPROF__SITE_BLOCK * sizeof(scopeprof__siterec));
        if (!v) return 0;
        g->reg.site_blk[b] = (scopeprof__siterec *)v;
    }
    scopeprof__siterec *r = &g->reg.site_blk[b][n % SCOPEPROF__SITE_BLOCK];
    /* Strings are copied so that a site stays valid after dlclose. */
    r->name = scopeprof__arena_strdup(g, name ? name : "");
    r->file = scopeprof__arena_strdup(g, s->file ? s->file : "");
    r->func = scopeprof__arena_strdup(g, s->func ? s->func : "");
    r->line = s->line;
    r->origin = s;
    if (!r->name || !r->file || !r->func) return 0; /* what was copied stays in the arena */
    __atomic_store_n(&g->reg.nsites, n + 1, __ATOMIC_RELEASE);
    return n + 1;
}

/* Site ids start at 1; 0 is returned only when out of memory, and then the
 * scope is recorded against site 0, which readers show as "<unknown>". */
SCOPEPROF__API uint32_t scopeprof__site_register(scopeprof_site *s) {
    scopeprof__state *g = scopeprof__state_get();
    if (!scopeprof__reg_enter(g)) return 0; /* site 0 this time; registered on a later use */
    uint32_t id = s->id;
    if (id == 0) {
        id = scopeprof__site_add(g, s->name, s);
        __atomic_store_n(&s->id, id, __ATOMIC_RELEASE);
    }
    scopeprof__reg_unlock(g);
    return id;
}

SCOPEPROF__API uint32_t scopeprof__site_dyn(const scopeprof_site *callsite, const char *name) {
    scopeprof__state *g = scopeprof__state_get();
    if (!name) name = "(null)";
    uint64_t h = scopeprof__hash(name) ^ ((uint64_t)(uintptr_t)callsite * 0x9E3779B97F4A7C15ull);
    uint32_t id = 0;
    if (!scopeprof__reg_enter(g)) return 0;
    if (g->reg.nsites * 2 >= g->reg.dyn_cap) {
        uint32_t cap = g->reg.dyn_cap ? g->reg.dyn_cap * 2 : 1024;
        while (cap <= g->reg.nsites * 2) cap *= 2;
        uint32_t *t = (uint32_t *)scopeprof__map(cap * sizeof *t); /* zeroed */
        if (t) {
            for (uint32_t i = 0; i < g->reg.dyn_cap; i++) {
                uint32_t sid = g->reg.dyn_hash[i];
                if (!sid) continue;
                const scopeprof__siterec *r = scopeprof__site_at(g, sid);
                uint64_t hh = scopeprof__hash(r->name) ^
                              ((uint64_t)(uintptr_t)r->origin * 0x9E3779B97F4A7C15ull);
                uint32_t j = (uint32_t)hh & (cap - 1);
                while (t[j]) j = (j + 1) & (cap - 1);
                t[j] = sid;
            }
            if (g->reg.dyn_hash) munmap(g->reg.dyn_hash, g->reg.dyn_cap * sizeof *t);
            g->reg.dyn_hash = t;
            g->reg.dyn_cap = cap;
        }
    }
    if (g->reg.dyn_cap) {
        uint32_t j = (uint32_t)h & (g->reg.dyn_cap - 1);
        for (; g->reg.dyn_hash[j]; j = (j + 1) & (g->reg.dyn_cap - 1)) {
            const scopeprof__siterec *r = scopeprof__site_at(g, g->reg.dyn_hash[j]);
            if (r->origin == callsite && strcmp(r->name, name) == 0) {
                id = g->reg.dyn_hash[j];
                break;
            }
        }
        if (!id) {
            id = scopeprof__site_add(g, name, callsite);
            if (id) g->reg.dyn_hash[j] = id;
        }
    }
    scopeprof__reg_unlock(g);
    return id;
}

static inline uint64_t scopeprof__gettid(void) {
#ifdef SYS_gettid
    return (uint64_t)syscall(SYS_gettid); /* (declared: state.h) */
#else
    return (uint64_t)(uintptr_t)pthread_self();
#endif
}

/* The calling thread's name (pthread_setname_np sets the same). prctl needs
 * no feature macro, unlike pthread_getname_np. */
static inline void scopeprof__self_name(char name[64]) {
    char buf[17] = "";
    if (prctl(PR_GET_NAME, buf, 0, 0, 0) == 0) snprintf(name, 64, "%s", buf);
}

/* A thread's state, zeroed: a reaped thread's if there is one, else a new
 * one from the arena (no malloc: this may run in a signal handler). A reused
 * state keeps its summary slot, so the summary's per-thread memory is bounded
 * by the most thread states that ever existed at once (threads alive, plus
 * threads gone whose events are not written yet), not by the threads ever
 * started. Registration lock held. */
SCOPEPROF__INTERNAL scopeprof__thread *scopeprof__thread_new(scopeprof__state *g) {
    scopeprof__thread *t = g->reg.thread_free;
    uint32_t slot;
    if (t) {
        g->reg.thread_free = t->next;
        slot = t->slot;
    } else {
        /* Cache-line aligned: the hot fields (cur, lim, depth) lead the
         * struct, so no two threads' hot paths ever write the same line. */
        t = (scopeprof__thread *)scopeprof__arena_alloc(g, sizeof *t, 64);
        if (!t) return NULL;
        slot = g->reg.nslots++;
    }
    memset(t, 0, sizeof *t);
    t->slot = slot;
    return t;
}

/* A state no thread uses any more goes back for reuse. Registration lock
 * held. */
static inline void scopeprof__thread_release(scopeprof__state *g, scopeprof__thread *t) {
    t->next = g->reg.thread_free;
    g->reg.thread_free = t;
}

/* The thread list's head, for a walk under the registry lock: a thread's
 * first scope pushes its state there under `reg` alone. */
static inline scopeprof__thread *scopeprof__threads_head(scopeprof__state *g) {
    return __atomic_load_n(&g->reg.threads, __ATOMIC_ACQUIRE);
}

/* First scope of a thread in this module: adopt the thread's state if another
 * module created it, else create and register it. */
SCOPEPROF__API scopeprof__thread *scopeprof__thread_attach(void) {
    scopeprof__state *g = scopeprof__state_get();
    if (__atomic_load_n(&g->life.oom, __ATOMIC_ACQUIRE)) return scopeprof__tls_set(&g->buf.off_thread);
    scopeprof__thread *t = (scopeprof__thread *)pthread_getspecific(g->key);
    if (t) return scopeprof__tls_set(t);
    if (scopeprof__lock_mine(g, 0)) { /* a handler: no allocation, no lock; not kept */
        scopeprof__reentered(g);
        return &g->buf.off_thread;
    }
    scopeprof__writer_start(g);
    /* No chunk yet (cur == lim): the first event takes one in chunk_next,
     * which keeps to the budget as for any other chunk (20000 short threads
     * each taking a fresh one grew memory past it). */
    char name[64] = "";
    scopeprof__self_name(name);
    if (!scopeprof__reg_enter(g)) return &g->buf.off_thread;
    t = scopeprof__thread_new(g);
    if (!t) {
        scopeprof__reg_unlock(g);
        scopeprof__oom(g);
        return scopeprof__tls_set(&g->buf.off_thread);
    }
    t->tid = scopeprof__gettid();
    t->alive = 1;
    memcpy(t->name, name, sizeof name);
    t->index = g->reg.nthreads++;
    t->next = g->reg.threads;
    __atomic_store_n(&g->reg.threads, t, __ATOMIC_RELEASE); /* walked without `reg` */
    scopeprof__reg_unlock(g);
    pthread_setspecific(g->key, t);
    return scopeprof__tls_set(t);
}

/* scopeprof__scope_clock's other case (api.h): the clock where it is read
 * out of line, or 0 for a scope that moved to another thread (said at
 * exit). A clock that reads 0 is read as 1. */
SCOPEPROF__API uint64_t scopeprof__scope_clock_slow(scopeprof__thread *t, uint32_t site) {
    uint64_t end = scopeprof__ticks();
    if (t == scopeprof__tls) return end ? end : 1;
    scopeprof__scope_moved(site);
    return 0;
}

#ifdef __cplusplus
}
#endif
#endif /* registry.h */
/* ==== part: include/parts/buffers.h ==== */
/* buffers.h: per-thread chunks, the memory budget, the hot path's slow
 * path (a full chunk traded for an empty one) and PROFILE_BEGIN/END ranges. */
#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON
#ifdef __cplusplus
extern "C" {
#endif

/* What a chunk costs in memory: its mapping, in whole pages (each chunk is
 * mapped on its own). The budget, the queue and the spare chunks are all
 * counted in it: counted in the chunk's size, chunks of 2 slots (56 bytes,
 * a page each: SCOPEPROF_EVENTS_PER_CHUNK=2) took 73 times the budget. */
#define SCOPEPROF__CHUNK_BYTES ((sizeof(scopeprof__chunk) + 4095u) & ~(size_t)4095u)

/* A new chunk, from mmap (scopeprof__map): never malloc, as a chunk is taken
 * in a recording thread's slow path, which a PROFILE_SCOPE in a signal
 * handler reaches, and by the writer, which a fork may interrupt. Chunks are
 * recycled through the spare list, never unmapped while the process records. */
static inline scopeprof__chunk *scopeprof__chunk_map(void) {
    return (scopeprof__chunk *)scopeprof__map(sizeof(scopeprof__chunk));
}

/* An empty chunk to the spare list: one just written (recycled), or one
 * the writer allocated and touched ahead. Last in, first out: the next
 * thread that needs a chunk takes the one most recently written, whose
 * pages are likeliest still in the cache. Chunk lock held. */
static inline void scopeprof__spare_push(scopeprof__state *g, scopeprof__chunk *c) {
    c->next = g->buf.spare;
    g->buf.spare = c;
    g->buf.nspare++;
}

/* An empty chunk for a recording thread: a spare one (its pages are
 * present), else a new one, whose page faults this thread then takes (only
 * when the writer is behind or absent). NULL when mmap fails. Whether the
 * budget allows it is chunk_next's to decide. Chunk lock held. */
SCOPEPROF__INTERNAL scopeprof__chunk *scopeprof__chunk_alloc(scopeprof__state *g) {
    scopeprof__chunk *c = g->buf.spare;
    if (c) {
        g->buf.spare = c->next;
        g->buf.nspare--;
    } else { /* mapped, not malloc'd: this may run in a signal handler */
        c = scopeprof__chunk_map();
        if (!c) return NULL;
        g->buf.bytes += SCOPEPROF__CHUNK_BYTES;
        if (g->buf.bytes > g->buf.peak_bytes) g->buf.peak_bytes = g->buf.bytes;
    }
    c->next = NULL;
    c->count = 0;
    c->first = 0;
    c->thread = NULL;
    return c;
}

/* Queue the thread's current chunk (its first `n` events) for writing.
 * Chunk lock held. */
SCOPEPROF__INTERNAL void scopeprof__queue(scopeprof__state *g, scopeprof__thread *t,
                                          scopeprof__chunk *c, uint32_t n) {
    c->thread = t;
    c->count = n;
    c->next = NULL;
    t->nqueued++;
    if (g->buf.full_tail) g->buf.full_tail->next = c;
    else g->buf.full_head = c;
    g->buf.full_tail = c;
    g->buf.queued += SCOPEPROF__CHUNK_BYTES;
    g->buf.chunks_queued++;
}

/* Whether the writer has a drain due: an eighth of the budget or 1 MiB is
 * queued, whichever is less. A written chunk is recycled with its pages
 * warm, so the less is queued, the fewer chunks a run ever touches for the
 * first time (about 16 page faults each): at an eighth of the default
 * budget (8 MiB) a run of 3.5M scopes kept 13-15 MiB of chunks, at 1 MiB
 * 8-10 MiB, and used about 5% less CPU (bench/regimes.c, session 12). The
 * drain comes before any refill: a writer that kept touching new chunks for
 * a thread that used them as fast never drained, and chunk memory grew to
 * the budget in every run (session 11). Chunk lock held. */
#define SCOPEPROF__DRAIN_AT ((size_t)1 << 20)
static inline int scopeprof__drain_due(const scopeprof__state *g) {
    size_t at = g->cfg.budget / 8;
    return g->buf.queued >= (at < SCOPEPROF__DRAIN_AT ? at : SCOPEPROF__DRAIN_AT);
}

/* The spare chunks the writer keeps (scopeprof__writer_refill allocates and
 * touches new ones up to this count): twice what a drain waits for, and two
 * more, so that a thread finds one while a drain is under way, and before
 * the first drain has recycled any (a process's first 1 MiB). At 20 ns a
 * scope one thread fills them in about 2.5 ms; the writer touches one in ~16
 * page faults. Written chunks count among them: with a separate ready list
 * of 64, topped up after every drain beside the recycled chunks, a run of
 * 3.5M scopes touched 8-10 MiB of chunks (session 12). Counted in whole
 * pages (SCOPEPROF__CHUNK_BYTES): with a small SCOPEPROF_EVENTS_PER_CHUNK
 * a count of chunk sizes kept 37,000 spare pages. */
#define SCOPEPROF__SPARE ((uint32_t)(2 * SCOPEPROF__DRAIN_AT / SCOPEPROF__CHUNK_BYTES) + 2u)

/* Whether a refill is due: fewer than `below` spare chunks and room in the
 * budget for one more. Chunk lock held. */
static inline int scopeprof__refill_due(const scopeprof__state *g, uint32_t below) {
    return g->buf.nspare < below && g->buf.bytes + SCOPEPROF__CHUNK_BYTES <= g->cfg.budget;
}

/* Whether the writer has work before its next timed flush: a drain is due,
 * or a refill is (half the spare chunks are gone). Chunk lock held. */
static inline int scopeprof__writer_has_work(const scopeprof__state *g) {
    return scopeprof__drain_due(g) || scopeprof__refill_due(g, SCOPEPROF__SPARE / 2);
}

/* How the writer learns of work. While chunks keep coming it looks on its
 * own, SCOPEPROF__WRITER_POLL_NS after its last look's work, and writes
 * what is queued once that fills a batch (scopeprof__writer_look_due; a
 * thread at full speed queues about 0.8 MiB a millisecond here, within the
 * spare chunks); when none came since its last look it sleeps until its
 * timed flush (wr.asleep), and the thread that queues a chunk with work due
 * wakes it. A thread also wakes a writer that looks too seldom for it: a
 * quarter of the spare chunks left, or a quarter of the budget queued (a
 * small SCOPEPROF_BUFFER_MB). Why not a wake at every
 * chunk switch with work due: the writer, woken on the switching thread's
 * CPU, took that CPU at once, after a scope closed and inside the scope
 * open around it, so on a machine whose CPUs were all busy its drains
 * landed in that one scope's self time (bench/compensation.c's parent, one
 * busy process beside: 23-28 chunk switches per million events woke the
 * writer, and 1.9-6.8 ms went in the switches; polled, 1-3 and 1.3-3.4 ms;
 * docs/PERFORMANCE.md, session 16). Polled, the writer's CPU comes out of
 * the program wherever it happens to run, as any other process's would.
 * A look with nothing due costs a few microseconds: under 1% of a CPU.
 * Chunk lock held. */
#define SCOPEPROF__WRITER_POLL_NS 1000000u
#define SCOPEPROF__SPARE_LOW ((SCOPEPROF__SPARE + 3u) / 4u) /* a quarter, at least one */
static inline int scopeprof__writer_wake_due(const scopeprof__state *g) {
    if (g->wr.state != SCOPEPROF__WRITER_RUNNING) return 0;
    if (g->wr.asleep) return scopeprof__writer_has_work(g);
    return scopeprof__refill_due(g, SCOPEPROF__SPARE_LOW) || g->buf.queued >= g->cfg.budget / 4;
}

/* When the writer, with nothing due at `now`, looks next (CLOCK_MONOTONIC
 * ns): if a chunk was queued since its last look, in a poll's time, and
 * that look writes what is queued if it fills a batch (wr.polled:
 * scopeprof__writer_look_due); else at its timed flush `flush_at`, asleep
 * (woken by a thread only) till then. Never after `flush_at`. Chunk lock
 * held. */
static inline uint64_t scopeprof__writer_next_look(scopeprof__state *g, uint64_t now, uint64_t flush_at) {
    int idle = g->buf.chunks_queued == g->wr.looked;
    g->wr.looked = g->buf.chunks_queued;
    g->wr.asleep = idle;
    g->wr.polled = !idle;
    return idle || now + SCOPEPROF__WRITER_POLL_NS > flush_at ? flush_at : now + SCOPEPROF__WRITER_POLL_NS;
}

/* Whether a poll's look writes: it polled, and a batch (SCOPEPROF__BATCH
 * chunks, one writev) is queued. Fewer wait for the next look (or the timed
 * flush), so that a thread that queues a chunk a millisecond does not cost a
 * write of its own per chunk. Chunk lock held. */
static inline int scopeprof__writer_look_due(const scopeprof__state *g) {
    return g->wr.polled && g->buf.queued >= SCOPEPROF__BATCH * SCOPEPROF__CHUNK_BYTES;
}

/* Whether a drain that wrote a batch writes another: with `all` (the timed
 * flush) while any chunk is queued; else while a whole batch is, or a drain
 * is still due (a small budget's eighth is less than a batch). A thread that
 * fills chunks about as fast as they are written leaves the rest to the
 * next look, rather than have the drain follow it one chunk a write
 * (write_cost flat: 229 writes of 4 chunks and 44 of 1, where they were
 * 214 of 1, 228 of 2 and 63 of 4; session 17). Chunk lock held. */
static inline int scopeprof__drain_goes_on(const scopeprof__state *g, int all) {
    if (all) return g->buf.queued != 0;
    return g->buf.queued >= SCOPEPROF__BATCH * SCOPEPROF__CHUNK_BYTES || scopeprof__drain_due(g);
}

/* Whether the thread that needs a chunk must write first: no spare chunk,
 * and a new one would pass the budget, or, with a running
 * writer that is behind, the budget plus a quarter (the writer's slack).
 * Chunk lock held. */
static inline int scopeprof__must_write_here(const scopeprof__state *g) {
    if (g->buf.spare || !g->buf.full_head) return 0;
    size_t room = g->wr.state == SCOPEPROF__WRITER_RUNNING ? g->cfg.budget + g->cfg.budget / 4 : g->cfg.budget;
    return g->buf.bytes + SCOPEPROF__CHUNK_BYTES > room;
}

/* Slow path of emit: the thread's chunk is full (or has one slot left and a
 * long record comes). The full chunk is queued for the background writer and
 * an empty one taken, under the chunk lock only: no write, no wait for one.
 * Signals are held meanwhile, as under the registry lock (a handler that
 * records must never find its own thread holding the chunk lock). Only
 * without a writer (SCOPEPROF_WRITER=0, a forked child) does this thread
 * write the whole queue past the budget; behind a running writer that is a
 * quarter of the budget late, it writes one chunk per chunk it takes: a
 * stall of one chunk's write, memory bounded, nothing dropped, and counted
 * (said at exit). */
SCOPEPROF__API scopeprof__slot *scopeprof__chunk_next(scopeprof__thread *t) {
    scopeprof__state *g = scopeprof__state_get();
    uint64_t sigs = scopeprof__sigs_hold();
    pthread_mutex_lock(&g->buf.lock);
    /* A thread whose key destructor already ran (scopeprof__thread_exit took
     * its chunk) can still record: a later destructor may call into another
     * module, whose copy of the thread pointer is still set. It gets a chunk
     * again, and the destructor is armed to run once more and queue it. */
    int revived = t->chunk == NULL;
    if (__atomic_load_n(&g->life.oom, __ATOMIC_ACQUIRE) && revived) {
        /* Recording stopped: round and round the slots nobody reads. */
        t->lim = g->buf.off_slots + sizeof g->buf.off_slots / sizeof *g->buf.off_slots;
        __atomic_store_n(&t->cur, &g->buf.off_slots[0], __ATOMIC_RELEASE);
        pthread_mutex_unlock(&g->buf.lock);
        scopeprof__sigs_release(sigs);
        return g->buf.off_slots;
    }
    if (g->life.finalized && !revived) {
        /* After the exit summary: keep the program running, drop events. */
        pthread_mutex_unlock(&g->buf.lock);
        scopeprof__sigs_release(sigs);
        return t->chunk->ev;
    }
    if (!revived) scopeprof__queue(g, t, t->chunk, (uint32_t)(t->cur - t->chunk->ev));
    /* Until the switch below the thread has no current chunk: a flusher that
     * runs while this thread writes must not take the queued (perhaps
     * already written and recycled) chunk for a partial one. */
    t->chunk = NULL;
    scopeprof__chunk *c = NULL;
    for (int attempt = 0; attempt < 2 && !c; attempt++) {
        /* The second attempt: malloc failed; write what is queued, then
         * reuse its memory. */
        if (attempt == 1 || scopeprof__must_write_here(g)) {
            int behind = attempt == 0 && g->wr.state == SCOPEPROF__WRITER_RUNNING;
            pthread_mutex_unlock(&g->buf.lock); /* the lock order (state.h): `lock` first */
            scopeprof__lock(g);
            /* Inside an open scope, GPU work is never waited for: chunks
             * whose GPU scopes still run stay queued. */
            int may_wait = attempt == 1 || t->depth == 0, wrote = 0;
            if (g->life.finalized) {
            } else if (behind) {
                wrote = (int)scopeprof__write_some(g, may_wait, 1);
            } else {
                scopeprof__write_queued(g, may_wait);
            }
            scopeprof__unlock(g);
            pthread_mutex_lock(&g->buf.lock);
            g->buf.self_writes += (uint64_t)wrote;
        }
        c = scopeprof__chunk_alloc(g);
    }
    if (!c) {
        /* its chunk is queued: written at exit */
        t->lim = g->buf.off_slots + sizeof g->buf.off_slots / sizeof *g->buf.off_slots;
        __atomic_store_n(&t->cur, &g->buf.off_slots[0], __ATOMIC_RELEASE);
        pthread_mutex_unlock(&g->buf.lock);
        scopeprof__sigs_release(sigs);
        scopeprof__oom(g);
        return g->buf.off_slots;
    }
    /* Switch chunk and cursor under the chunk lock: a flusher (which takes
     * it to read them) then sees either the old chunk with a cursor in it,
     * or the new one with a cursor at its start, never a cursor that belongs
     * to another chunk. */
    t->chunk = c;
    t->lim = c->ev + SCOPEPROF_EVENTS_PER_CHUNK;
    __atomic_store_n(&t->cur, &c->ev[0], __ATOMIC_RELEASE);
    int wake = scopeprof__writer_wake_due(g);
    pthread_mutex_unlock(&g->buf.lock);
    /* Before the signals come back: the condition's signal takes its own
     * internal lock, and a handler that recorded a chunk's worth and woke
     * the writer in turn would wait for it on this very thread. */
    if (wake) pthread_cond_signal(&g->wr.wake);
    scopeprof__sigs_release(sigs);
    if (revived) pthread_setspecific(g->key, t);
    return c->ev;
}

/* The 32-byte form of an event (see emit): two slots, never split between
 * chunks, published together. */
SCOPEPROF__API void scopeprof__emit_long(scopeprof__thread *t, uint64_t start, uint64_t end,
                                         uint32_t site, uint32_t depth) {
    scopeprof__slot *e = t->cur;
    if (t->lim - e < 2) e = scopeprof__chunk_next(t);
    e[0].start = start;
    e[0].dur = SCOPEPROF_REC_LONG_MARK;
    e[0].key = depth;
    e[1].start = end;
    e[1].dur = site;
    e[1].key = 0;
    __atomic_store_n(&t->cur, e + 2, __ATOMIC_RELEASE);
}

/* A scope with input shapes (PROFILE_SCOPE_SHAPE): its 32-byte record, whose
 * last field counts the units that follow, then the count m and the m words
 * as the macro built them, zeros to the end of the last unit (format.h,
 * "Input shapes"). Never split between chunks: inputs that would make the
 * record longer than a chunk (or than SCOPEPROF_SHAPE_MAX_WORDS) are left
 * out, whole. A word is a slot's `start`, or its `dur` and `key` as the low
 * and high halves: the file's little-endian word either way, once the
 * writer has turned each field around on a big-endian machine. */
SCOPEPROF__API void scopeprof__emit_shaped(scopeprof__thread *t, uint64_t start, uint64_t end, uint32_t site,
                                           uint32_t depth, const scopeprof__ll *w, uint32_t m) {
    enum { MOST = (SCOPEPROF_SHAPE_MAX_WORDS + 1) / 2 }; /* units */
    const uint32_t cap = SCOPEPROF_EVENTS_PER_CHUNK - 2 < MOST ? SCOPEPROF_EVENTS_PER_CHUNK - 2 : MOST;
    const uint32_t room = cap ? 2 * cap - 1 : 0; /* words after the count */
    /* The whole inputs that fit, up to the first count that does not parse
     * (a list made by hand: a reader must never find words that do not). */
    uint32_t keep = 0;
    while (keep < m && w[keep] >= 0 && (uint64_t)w[keep] < m - keep && (uint64_t)w[keep] < room - keep)
        keep += 1 + (uint32_t)w[keep];
    m = keep;
    uint32_t units = m ? (m + 2) / 2 : 0;
    scopeprof__slot *e = t->cur;
    if ((uint32_t)(t->lim - e) < 2 + units) e = scopeprof__chunk_next(t);
    e[0].start = start;
    e[0].dur = SCOPEPROF_REC_LONG_MARK;
    e[0].key = depth;
    e[1].start = end;
    e[1].dur = site;
    e[1].key = units;
    if (units) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        /* A slot's memory is two little-endian words here: copied as words. */
        scopeprof__word *d = (scopeprof__word *)(void *)(e + 2);
        d[0] = m;
        for (uint32_t j = 0; j < m; j++) d[j + 1] = (uint64_t)w[j];
        if (!(m & 1)) d[m + 1] = 0; /* the last unit's second half */
#else
        scopeprof__slot *u = e + 2;
        for (uint32_t j = 0; j < 2 * units; j++) {
            uint64_t v = j == 0 ? m : j <= m ? (uint64_t)w[j - 1] : 0;
            if (j & 1) {
                u[j / 2].dur = (uint32_t)v;
                u[j / 2].key = (uint32_t)(v >> 32);
            } else {
                u[j / 2].start = v;
            }
        }
#endif
    }
    __atomic_store_n(&t->cur, e + 2 + units, __ATOMIC_RELEASE);
}

SCOPEPROF__API void scopeprof__range_begin(scopeprof_site *s) {
    uint32_t id = __atomic_load_n(&s->id, __ATOMIC_ACQUIRE);
    if (id == 0) id = scopeprof__site_register(s);
    scopeprof__thread *t = scopeprof__tls;
    if (!t) t = scopeprof__thread_attach();
    if (t->nranges == t->rcap) {
        uint32_t cap = t->rcap ? t->rcap * 2 : 16;
        scopeprof__range *r = (scopeprof__range *)realloc(t->ranges, cap * sizeof *r);
        if (!r) {
            scopeprof__warn("scopeprof: out of memory for PROFILE_BEGIN at %s:%u; range not "
                            "recorded", s->file, s->line);
            return;
        }
        t->ranges = r;
        t->rcap = cap;
    }
    scopeprof__range *r = &t->ranges[t->nranges++];
    r->site = id;
    r->depth = t->depth;
    scopeprof__depth_set(t, r->depth + 1);
    r->start = scopeprof__ticks();
}

/* Close the thread's innermost open range at time `end`. */
static inline void scopeprof__range_pop(scopeprof__thread *t, uint64_t end) {
    scopeprof__range r = t->ranges[--t->nranges];
    /* Scopes opened after the BEGIN and still open keep their own depth;
     * only a properly nested END restores the depth. */
    if (t->depth == r.depth + 1) scopeprof__depth_set(t, r.depth);
    scopeprof__emit(t, r.start, end, r.site, r.depth);
}

SCOPEPROF__API void scopeprof__range_end(scopeprof_site *s) {
    /* The thread first: an END may be its module's first call (a library's,
     * for a range the executable began), and the module learns its clock
     * choice there; read before, the end was in ns against ticks. */
    scopeprof__thread *t = scopeprof__tls;
    if (!t) t = scopeprof__thread_attach();
    uint64_t end = scopeprof__ticks();
    if (t->nranges == 0) {
        if (!t->warned_end) {
            t->warned_end = 1;
            scopeprof__warn("scopeprof: PROFILE_END at %s:%u (%s) has no matching PROFILE_BEGIN "
                            "on this thread; ignored", s->file, s->line, s->func);
        }
        return;
    }
    /* A scope opened inside the range is still open: the range's level stays
     * counted (scopeprof__range_pop), later found as a scope left, but no
     * scope is lost (the END chunk's count leaves it out). */
    if (t->depth > t->ranges[t->nranges - 1].depth + 1)
        __atomic_fetch_add(&scopeprof__g->life.stranded, 1, __ATOMIC_RELAXED);
    scopeprof__range_pop(t, end);
}

SCOPEPROF__API void scopeprof__thread_name(const char *name) {
    scopeprof__thread *t = scopeprof__tls;
    if (!t) t = scopeprof__thread_attach();
    scopeprof__state *g = scopeprof__state_get();
    scopeprof__lock(g);
    snprintf(t->name, sizeof t->name, "%s", name ? name : "");
    t->explicit_name = 1;
    scopeprof__unlock(g);
}

#ifdef __cplusplus
}
#endif
#endif /* buffers.h */
/* ==== part: include/parts/steps.h ==== */
/* steps.h: PROFILE_STEP, schedules (torch.profiler.schedule) and memory
 * (PROFILE_ALLOC/FREE). */
#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON
#ifdef __cplusplus
extern "C" {
#endif

/* ---- Steps and schedules ---------------------------------------------------
 * Phases as torch.profiler.schedule: the first skip_first steps are skipped;
 * then cycles of `wait` steps (not recorded), `warmup` steps (recorded and
 * thrown away) and `active` steps (kept), `repeat` times (0: no end). Events
 * are always recorded (the hot path does not change); the writer keeps those
 * that start inside the open window. When a cycle's last active step ends,
 * its window is written to <name>.cycleNNNN.sprof and summarised. */
enum { SCOPEPROF__NONE, SCOPEPROF__WARMUP, SCOPEPROF__ACTIVE, SCOPEPROF__SAVE };
SCOPEPROF__INTERNAL int scopeprof__phase(const scopeprof__state *g, uint64_t step) {
    if (step < (uint64_t)g->sched.skip_first) return SCOPEPROF__NONE;
    uint64_t j = step - (uint64_t)g->sched.skip_first;
    uint64_t len = (uint64_t)(g->sched.wait + g->sched.warmup + g->sched.active);
    if (g->sched.repeat > 0 && j / len >= (uint64_t)g->sched.repeat) return SCOPEPROF__NONE;
    uint64_t m = j % len;
    if (m < (uint64_t)g->sched.wait) return SCOPEPROF__NONE;
    if (m < (uint64_t)(g->sched.wait + g->sched.warmup)) return SCOPEPROF__WARMUP;
    return m + 1 == len ? SCOPEPROF__SAVE : SCOPEPROF__ACTIVE;
}


/* Whether step i belongs in the trace and the table: every step, or under
 * a schedule only those in the recording window. */
SCOPEPROF__INTERNAL int scopeprof__step_kept(const scopeprof__state *g, uint32_t i) {
    return !g->sched.on || (g->sched.window && g->sched.steps[i].start >= g->sched.win_start);
}

/* Write the finished cycle, print its summary, start afresh. Lock held. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__end_cycle(scopeprof__state *g) {
    scopeprof__write_queued(g, 1);
    scopeprof__write_partials(g);
    int had = g->out.events_written > 0;
    /* Peaks and unknown frees are per cycle: this one's are taken, and the
     * next starts from the memory live now, in one step. */
    scopeprof__memsnap mem;
    scopeprof__mem_snapshot(g, &mem, 1);
    scopeprof__file_end(g, &mem);
    char title[sizeof g->out.path + 64];
    snprintf(title, sizeof title, "scopeprof: cycle %d (%s)", g->sched.cycle,
             g->out.no_output ? "no file" : g->out.path);
    scopeprof__summary_print(g, &mem, had, title, 0);
    if (g->sched.cycle_fn && had) {
        /* The callback may do anything, profiling included: not under our lock. */
        scopeprof_cycle_fn fn = g->sched.cycle_fn;
        void *user = g->sched.cycle_user;
        char path[sizeof g->out.path];
        int c = g->sched.cycle;
        memcpy(path, g->out.path, sizeof path);
        g->wr.paused = 1; /* the file is closed: no write until it is set up again */
        scopeprof__unlock(g);
        fn(g->out.no_output ? NULL : path, c, user);
        scopeprof__lock(g);
        g->wr.paused = 0;
    }
    scopeprof__file_reset(g);
    g->sched.window = 0;
    scopeprof__cycle_path(g, ++g->sched.cycle);
}

SCOPEPROF__API void scopeprof__step(void) {
    uint64_t now = scopeprof__ticks();
    scopeprof__state *g = scopeprof__state_get();
    scopeprof__lock(g);
    if (g->life.finalized) {
        scopeprof__unlock(g);
        return;
    }
    if (g->sched.nsteps == g->sched.steps_cap) {
        uint32_t cap = g->sched.steps_cap ? g->sched.steps_cap * 2 : 64;
        scopeprof__steprec *v = (scopeprof__steprec *)realloc(g->sched.steps, cap * sizeof *v);
        if (v) g->sched.steps = v, g->sched.steps_cap = cap;
    }
    if (g->sched.nsteps < g->sched.steps_cap) {
        g->sched.steps[g->sched.nsteps].n = g->sched.step;
        g->sched.steps[g->sched.nsteps].start = g->sched.step_start ? g->sched.step_start : g->clock.tick0;
        g->sched.steps[g->sched.nsteps].end = now;
        g->sched.nsteps++;
    }
    if (g->sched.on) {
        int ended = scopeprof__phase(g, g->sched.step), next = scopeprof__phase(g, g->sched.step + 1);
        /* The next step starts after the cycle's file, table and callback. */
        if (ended == SCOPEPROF__SAVE) scopeprof__end_cycle(g), now = scopeprof__ticks();
        if ((next == SCOPEPROF__ACTIVE || next == SCOPEPROF__SAVE) && !g->sched.window) {
            g->sched.window = 1;
            g->sched.win_start = now;
        }
    }
    g->sched.step++;
    g->sched.step_start = now;
    scopeprof__unlock(g);
}

/* Whether the current step records, under the schedule just set. */
SCOPEPROF__INTERNAL void scopeprof__sched_window(scopeprof__state *g) {
    int ph = scopeprof__phase(g, g->sched.step);
    g->sched.window = ph == SCOPEPROF__ACTIVE || ph == SCOPEPROF__SAVE;
}

/* The schedule's files named after out.path (at its start, or when a rank
 * or a fork renamed it): the base, and the current cycle's name from it. */
SCOPEPROF__INTERNAL void scopeprof__sched_base(scopeprof__state *g) {
    snprintf(g->sched.base_path, sizeof g->sched.base_path, "%s", g->out.path);
    scopeprof__cycle_path(g, g->sched.cycle);
}

SCOPEPROF__INTERNAL void scopeprof__sched_start(scopeprof__state *g) {
    scopeprof__sched_base(g);
    scopeprof__sched_window(g);
    g->sched.win_start = g->clock.tick0;
}

SCOPEPROF__ONCE SCOPEPROF__API void scopeprof__schedule(int skip_first, int wait, int warmup, int active, int repeat) {
    scopeprof__state *g = scopeprof__state_get();
    if (skip_first < 0 || wait < 0 || warmup < 0 || active <= 0 || repeat < 0) {
        scopeprof__warn("scopeprof: PROFILE_SCHEDULE(%d, %d, %d, %d, %d) ignored: counts must be "
                        ">= 0 and active > 0", skip_first, wait, warmup, active, repeat);
        return;
    }
    scopeprof__lock(g);
    if (g->sched.on)
        scopeprof__warn("scopeprof: PROFILE_SCHEDULE replaces the schedule set before it (SCOPEPROF_SCHEDULE "
                        "or an earlier call)");
    g->sched.on = 1;
    g->sched.skip_first = skip_first, g->sched.wait = wait, g->sched.warmup = warmup, g->sched.active = active;
    g->sched.repeat = repeat;
    if (!g->sched.cycle) g->sched.cycle = 1;
    if (!g->sched.base_path[0]) scopeprof__sched_start(g);
    else scopeprof__sched_window(g); /* a schedule replaced: its own phase for this step */
    scopeprof__unlock(g);
}

SCOPEPROF__API void scopeprof__on_cycle(scopeprof_cycle_fn fn, void *user) {
    scopeprof__state *g = scopeprof__state_get();
    scopeprof__lock(g);
    g->sched.cycle_fn = fn;
    g->sched.cycle_user = user;
    scopeprof__unlock(g);
}

SCOPEPROF__ONCE SCOPEPROF__API void scopeprof__set_rank(int rank) {
    scopeprof__state *g = scopeprof__state_get();
    scopeprof__lock(g);
    if (g->out.fd != -1 && g->out.fd != -2) {
        scopeprof__warn("scopeprof: PROFILE_SET_RANK(%d) after the trace file was opened; the "
                        "file keeps its name", rank);
    } else {
        int was = g->out.rank;
        g->out.rank = rank < 0 ? -1 : rank;
        if (was >= 0 && was != g->out.rank && !g->out.path_is_default && !g->out.no_output)
            scopeprof__warn("scopeprof: PROFILE_SET_RANK: the file was named for rank %d and keeps its "
                            "name '%s'", was, g->out.path); /* an explicit path took a launcher's rank */
        else if (was != g->out.rank)
            scopeprof__rank_rename(g);
    }
    scopeprof__unlock(g);
}

/* ---- Memory: PROFILE_ALLOC / PROFILE_FREE -------------------------------------
 * A map of live allocations gives each free its size. Linear probing with
 * backward-shift deletion keeps it tombstone-free. Lock: g->mem.lock. */
static inline uint32_t scopeprof__live_slot(uintptr_t p, uint32_t dev, uint32_t cap) {
    uint64_t h = ((uint64_t)p ^ ((uint64_t)dev << 56)) * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> 32) & (cap - 1);
}

SCOPEPROF__INTERNAL int scopeprof__live_put(scopeprof__state *g, uintptr_t p, uint32_t dev,
                                            int64_t bytes) {
    if ((g->mem.nlive + 1) * 2 > g->mem.live_cap) {
        uint32_t cap = g->mem.live_cap ? g->mem.live_cap * 2 : 1024;
        scopeprof__live *v = (scopeprof__live *)calloc(cap, sizeof *v);
        if (!v) return -1;
        for (uint32_t i = 0; i < g->mem.live_cap; i++) {
            if (!g->mem.live[i].ptr) continue;
            uint32_t j = scopeprof__live_slot(g->mem.live[i].ptr, g->mem.live[i].dev, cap);
            while (v[j].ptr) j = (j + 1) & (cap - 1);
            v[j] = g->mem.live[i];
        }
        free(g->mem.live);
        g->mem.live = v;
        g->mem.live_cap = cap;
    }
    uint32_t j = scopeprof__live_slot(p, dev, g->mem.live_cap);
    while (g->mem.live[j].ptr && !(g->mem.live[j].ptr == p && g->mem.live[j].dev == dev)) j = (j + 1) & (g->mem.live_cap - 1);
    if (!g->mem.live[j].ptr) g->mem.nlive++;
    g->mem.live[j].ptr = p;
    g->mem.live[j].dev = dev;
    g->mem.live[j].bytes = bytes;
    return 0;
}

/* Remove p; returns its size, or -1 if it was not recorded (or
 * SCOPEPROF__INHERITED: allocated by the parent before a fork). */
#define SCOPEPROF__INHERITED INT64_MIN
SCOPEPROF__INTERNAL int64_t scopeprof__live_take(scopeprof__state *g, uintptr_t p, uint32_t dev) {
    if (!g->mem.live_cap) return -1;
    uint32_t mask = g->mem.live_cap - 1, j = scopeprof__live_slot(p, dev, g->mem.live_cap);
    while (g->mem.live[j].ptr && !(g->mem.live[j].ptr == p && g->mem.live[j].dev == dev)) j = (j + 1) & mask;
    if (!g->mem.live[j].ptr) return -1;
    int64_t bytes = g->mem.live[j].bytes;
    /* Backward shift: move later entries of the run into the hole when their
     * home slot does not lie between the hole and them. */
    for (uint32_t k = (j + 1) & mask; g->mem.live[k].ptr; k = (k + 1) & mask) {
        uint32_t home = scopeprof__live_slot(g->mem.live[k].ptr, g->mem.live[k].dev, g->mem.live_cap);
        if (((k - home) & mask) >= ((k - j) & mask)) {
            g->mem.live[j] = g->mem.live[k];
            j = k;
        }
    }
    g->mem.live[j].ptr = 0;
    g->mem.nlive--;
    return bytes;
}

SCOPEPROF__INTERNAL void scopeprof__mem_event(scopeprof__state *g, scopeprof_site *s, int64_t delta,
                                              uint32_t dev) {
    uint32_t id = __atomic_load_n(&s->id, __ATOMIC_ACQUIRE);
    if (id == 0) id = scopeprof__site_register(s);
    scopeprof__thread *t = scopeprof__tls;
    if (!t) t = scopeprof__thread_attach();
    pthread_mutex_lock(&g->mem.lock);
    g->mem.used |= 1u << (dev & 31);
    g->mem.cur[dev] += delta;
    if (g->mem.cur[dev] > g->mem.peak[dev]) g->mem.peak[dev] = g->mem.cur[dev];
    pthread_mutex_unlock(&g->mem.lock);
    scopeprof__emit(t, scopeprof__ticks(), (uint64_t)delta, id,
                    SCOPEPROF_DEPTH_MEM | dev << 24 | (t->depth & 0xFFFFFFu));
}

SCOPEPROF__API void scopeprof__mem_alloc(scopeprof_site *s, uintptr_t ptr, uint64_t bytes,
                                         int device) {
    if (!ptr || device < 0 || device > 31) return; /* 0: CPU, 1..31: GPU 0..30 */
    scopeprof__state *g = scopeprof__state_get();
    int64_t b = bytes > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)bytes;
    pthread_mutex_lock(&g->mem.lock);
    int64_t old = scopeprof__live_take(g, ptr, (uint32_t)device);
    int ok = scopeprof__live_put(g, ptr, (uint32_t)device, b) == 0;
    pthread_mutex_unlock(&g->mem.lock);
    /* An address recorded twice without a free in between: the allocator
     * reused it behind our back (a free we did not see); replace it. */
    if (old >= 0) scopeprof__mem_event(g, s, -old, (uint32_t)device);
    if (ok) scopeprof__mem_event(g, s, b, (uint32_t)device);
}

SCOPEPROF__API void scopeprof__mem_free(scopeprof_site *s, uintptr_t ptr, int device) {
    if (!ptr || device < 0 || device > 31) return;
    scopeprof__state *g = scopeprof__state_get();
    pthread_mutex_lock(&g->mem.lock);
    int64_t b = scopeprof__live_take(g, ptr, (uint32_t)device);
    /* GPUs share one address space: a block freed while another device is
     * current is still found, on the device it was allocated on. */
    for (uint32_t d = 1; b == -1 && device > 0 && d < 32; d++)
        if (d != (uint32_t)device && (b = scopeprof__live_take(g, ptr, d)) != -1) device = (int)d;
    if (b == SCOPEPROF__INHERITED) { /* the parent's, before a fork: not in this profile */
        pthread_mutex_unlock(&g->mem.lock);
        return;
    }
    if (b < 0 && g->mem.unknown_frees++ == 0) {
        uint32_t id = __atomic_load_n(&s->id, __ATOMIC_ACQUIRE);
        pthread_mutex_unlock(&g->mem.lock);
        if (id == 0) id = scopeprof__site_register(s);
        __atomic_store_n(&g->mem.unknown_free_site, id, __ATOMIC_RELEASE);
        return;
    }
    pthread_mutex_unlock(&g->mem.lock);
    if (b >= 0) scopeprof__mem_event(g, s, -b, (uint32_t)device);
}

#ifdef __cplusplus
}
#endif
#endif /* steps.h */
/* ==== part: include/parts/summary.h ==== */
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
/* ==== part: include/parts/file.h ==== */
/* file.h: the trace file's life: its name, opening, chunk framing, the
 * chunks of sites, threads, devices, GPU intervals, memory and steps, and its
 * end. */
#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON
#ifdef __cplusplus
extern "C" {
#endif

/* ---- Naming ----------------------------------------------------------------
 * Every name a trace file gets comes from here: the default
 * (scopeprof__default_path), a second process's on a path taken
 * (scopeprof__pid_path), a schedule's cycle (scopeprof__cycle_path), an
 * exec'd image's and the next one when a name is taken (scopeprof__create,
 * "Creating the file"); each is a word put before the ".sprof" of another
 * name (scopeprof__path_insert). */

/* The program's name (/proc/self/comm), for the default name and the file's
 * header. */
SCOPEPROF__INTERNAL void scopeprof__read_prog(char prog[256]) {
    prog[0] = 0;
    FILE *f = fopen("/proc/self/comm", "r");
    if (f) {
        if (fgets(prog, 256, f)) prog[strcspn(prog, "\n")] = 0;
        fclose(f);
    }
    if (!prog[0]) snprintf(prog, 256, "scopeprof");
}

/* <program>.<pid>.sprof, or <program>.rank<R>.<pid>.sprof when the rank is
 * known, in g->out.dir: the working directory at the first scope, kept by a
 * forked child (relative, to the working directory of the moment, if that
 * could not be read or is too long). */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__default_path(scopeprof__state *g) {
    char prog[256], name[320];
    scopeprof__read_prog(prog);
    for (char *p = prog; *p; p++)
        if (*p == '/' || *p == ' ') *p = '_';
    if (g->out.rank >= 0) snprintf(name, sizeof name, "%s.rank%d.%d.sprof", prog, g->out.rank, (int)getpid());
    else snprintf(name, sizeof name, "%s.%d.sprof", prog, (int)getpid());
    size_t dl = strlen(g->out.dir), nl = strlen(name);
    if (dl && g->out.dir[dl - 1] == '/') dl--; /* "/" */
    if (g->out.dir[0] && dl + 1 + nl < sizeof g->out.path) {
        memcpy(g->out.path, g->out.dir, dl);
        g->out.path[dl] = '/';
        memcpy(g->out.path + dl + 1, name, nl + 1);
    } else {
        memcpy(g->out.path, name, nl + 1);
    }
}

/* base with ".<word>" put before its ".sprof" ("run.sprof" -> "run.7.sprof"),
 * or after it when it has none (then ".sprof" is added if `ext`). */
static inline void scopeprof__path_insert(char *dst, size_t n, const char *base, const char *word,
                                          int ext) {
    size_t l = strlen(base);
    int has = l > 6 && strcmp(base + l - 6, ".sprof") == 0;
    snprintf(dst, n, "%.*s.%s%s", (int)(has ? l - 6 : l), base, word, has || ext ? ".sprof" : "");
}

/* "run.sprof" -> "run.<pid>.sprof": the name of a second process's trace
 * when the path it was given belongs to another. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__pid_path(scopeprof__state *g) {
    char buf[sizeof g->out.path], word[16];
    snprintf(word, sizeof word, "%d", g->pid);
    scopeprof__path_insert(buf, sizeof buf, g->out.path, word, 0);
    memcpy(g->out.path, buf, sizeof buf);
}

/* "run.sprof" -> "run.rank3.sprof": an explicit SCOPEPROF_OUTPUT once the
 * rank is known (launcher variables, or MPI_Init: mpi.h), as the default
 * name has it, so ranks never share a path, whatever node or network
 * namespace they run in (the claim below is per network namespace). Rank 0
 * says the rule once on stderr. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__rank_path(scopeprof__state *g) {
    char buf[sizeof g->out.path], word[24];
    snprintf(word, sizeof word, "rank%d", g->out.rank);
    scopeprof__path_insert(buf, sizeof buf, g->out.path, word, 0);
    if (g->out.rank == 0) {
        char rule[sizeof g->out.path];
        scopeprof__path_insert(rule, sizeof rule, g->out.path, "rank<R>", 0);
        scopeprof__warn("scopeprof: SCOPEPROF_OUTPUT='%s' is shared by the ranks: each writes "
                        "'%s' (rank 0: '%s')", g->out.path, rule, buf);
    }
    memcpy(g->out.path, buf, sizeof buf);
}

/* "run.json" or "run.json.gz" -> "run.sprof": the recorder writes its own
 * format, never JSON, and a binary file under a JSON name (or an
 * uncompressed one under .gz) would be read as a broken JSON file by every
 * viewer. The trace keeps its data under the right name, and one line says
 * where it went and how to make the JSON (the reporter's `trace`). */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__json_path(scopeprof__state *g) {
    size_t l = strlen(g->out.path), cut = 0;
    if (l > 5 && strcmp(g->out.path + l - 5, ".json") == 0) cut = 5;
    else if (l > 8 && strcmp(g->out.path + l - 8, ".json.gz") == 0) cut = 8;
    if (!cut) return;
    char buf[sizeof g->out.path], ranks[sizeof g->out.path + 8];
    snprintf(buf, sizeof buf, "%.*s.sprof", (int)(l - cut), g->out.path);
    /* A job's ranks each write NAME.rankR.sprof (scopeprof__rank_path):
     * rank 0 says it once, naming all of them. */
    snprintf(ranks, sizeof ranks, "%.*s.rank*.sprof", (int)(l - cut), g->out.path);
    const char *files = g->out.rank >= 0 ? ranks : buf;
    if (g->out.rank <= 0)
        scopeprof__warn("scopeprof: SCOPEPROF_OUTPUT='%s': the recorder writes its own trace format, not "
                        "JSON; writing '%s' instead (for Chrome or Perfetto JSON: scopeprof trace -o %s %s)",
                        g->out.path, files, g->out.path, files);
    memcpy(g->out.path, buf, sizeof buf);
}

/* The path of cycle c: "run.sprof" -> "run.cycle0003.sprof". */
SCOPEPROF__INTERNAL void scopeprof__cycle_path(scopeprof__state *g, int c) {
    char word[24];
    snprintf(word, sizeof word, "cycle%04d", c);
    scopeprof__path_insert(g->out.path, sizeof g->out.path, g->sched.base_path, word, 1);
}

/* An explicit SCOPEPROF_OUTPUT reaches every program this one execs, and
 * every process a launcher starts with it: each would truncate the others'
 * trace. So the first process claims the path, by binding an abstract socket
 * named after it (Linux: no file is made, the name goes when the process
 * does, and SOCK_CLOEXEC keeps an exec'd program from inheriting it); a
 * process that finds the path claimed writes "<path>.<pid>.sprof". */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__claim_output(scopeprof__state *g) {
    char abs[2 * sizeof g->out.path];
    size_t l = 0;
    if (g->out.path[0] != '/' && getcwd(abs, sizeof g->out.path)) l = strlen(abs), abs[l++] = '/';
    snprintf(abs + l, sizeof abs - l, "%s", g->out.path);
    /* The file is opened later, maybe after a chdir: it must be the path
     * claimed, so a relative path is made absolute now. */
    if (strlen(abs) < sizeof g->out.path) memcpy(g->out.path, abs, strlen(abs) + 1);
    /* A union, not a cast of &sockaddr_un: no type-punned pointer. */
    union { struct sockaddr_un un; struct sockaddr any; } addr;
    struct sockaddr_un *a = &addr.un;
    memset(&addr, 0, sizeof addr);
    a->sun_family = AF_UNIX; /* sun_path[0] = 0: the abstract namespace */
    int len = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "scopeprof/%016llx",
                       (unsigned long long)scopeprof__hash(abs));
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return; /* cannot tell: write the path as given */
    if (bind(fd, &addr.any, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len)) == 0) {
        struct stat st;
        g->out.claim_fd = fd;
        g->out.claim_ino = fstat(fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
        return;
    }
    int taken = errno == EADDRINUSE;
    close(fd);
    if (!taken) return;
    scopeprof__pid_path(g);
    scopeprof__warn("scopeprof: '%s' is claimed by another live process: this one (pid %d) "
                    "writes '%s'", abs, g->pid, g->out.path);
}

/* The rank became known (PROFILE_SET_RANK, MPI_Init) before the file was
 * opened: the names take it, as at start-up: the default name, or an
 * explicit path's with the rank in it (claimed again); a schedule's cycles
 * are named after that. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__rank_rename(scopeprof__state *g) {
    if (g->out.no_output) return;
    if (g->sched.on) memcpy(g->out.path, g->sched.base_path, sizeof g->out.path); /* the rank goes in the base, not a cycle's name */
    if (g->out.path_is_default) {
        scopeprof__default_path(g);
    } else if (g->out.rank >= 0) {
        if (g->out.claim_fd >= 0) close(g->out.claim_fd);
        g->out.claim_fd = -1;
        scopeprof__rank_path(g);
        scopeprof__claim_output(g);
    }
    if (g->sched.on) scopeprof__sched_base(g);
}



/* ---- Writing the trace file (lock held) ------------------------------------ */


/* Whether descriptor fd still names the trace file we opened (fstat is
 * async-signal-safe). A program may close descriptors it did not open
 * (daemons close 3..1023) and get our number for a file of its own, or
 * dup2 a file onto it: then the number is the program's, never ours to
 * write to or close. */
SCOPEPROF__INTERNAL int scopeprof__fd_ours(const scopeprof__state *g, int fd) {
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_dev == g->out.fd_dev &&
           (uint64_t)st.st_ino == g->out.fd_ino;
}

/* Before each write: our file still behind g->out.fd, or reopened by its path
 * (appending; the file must be the same one). Else the trace stops, and
 * says so. */
SCOPEPROF__INTERNAL int scopeprof__fd_check(scopeprof__state *g) {
    if (scopeprof__fd_ours(g, g->out.fd)) return 0;
    int fd = open(g->out.fd_path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (scopeprof__fd_ours(g, fd)) { /* a regular file: O_NONBLOCK changes nothing */
        g->out.fd = fd; /* the old number is left to the program */
        return 0;
    }
    if (fd >= 0) close(fd);
    g->out.fd = -2;
    g->out.write_err = -2;
    scopeprof__sig_say("scopeprof: the trace file '", g->out.fd_path,
                       "' was closed and its path no longer names it; the rest of the trace is "
                       "lost\n");
    return -1;
}

/* A write past the file size limit (`ulimit -f`, RLIMIT_FSIZE) fails with
 * EFBIG and sends the writing thread SIGXFSZ, whose default action kills the
 * process (exit 153 in a shell). Every write of ours runs with it blocked:
 * the registry's lock holds signals (scopeprof__lock), the writer thread
 * blocks them all, and a handler's write blocks it (scopeprof__signal_write).
 * So it is still pending here, and taken back: it was the trace's, not the
 * program's (a SIGXFSZ of the program's own, pending and blocked meanwhile,
 * is one with it: standard signals do not queue). */
static inline void scopeprof__xfsz_take_back(void) {
    sigset_t set, now;
    sigemptyset(&set);
    sigaddset(&set, SIGXFSZ);
    if (pthread_sigmask(SIG_BLOCK, NULL, &now) != 0 || sigismember(&now, SIGXFSZ) != 1) return;
    struct timespec zero = {0, 0};
    sigtimedwait(&set, NULL, &zero); /* EAGAIN when the program ignores it */
}

/* Write all of the nv pieces at v, in order, with one system call where it
 * can (writev; a signal handler's write goes piece by piece: write is the
 * one on the async-signal-safe list). The checks that the file is still
 * ours are made once per call: a system call each, which per piece made
 * the writer's work per chunk mostly system calls. On failure report once
 * with the path and the reason and stop writing (the summary is still
 * printed). v is consumed. */
SCOPEPROF__INTERNAL int scopeprof__write_vec(scopeprof__state *g, struct iovec *v, int nv) {
    if (g->out.batch_n && v != g->out.batch_v) scopeprof__write_held(g); /* the file keeps the order of writes */
    size_t n = 0;
    for (int i = 0; i < nv; i++) n += v[i].iov_len;
    if (n && g->out.fd >= 0 && scopeprof__cloned(g)) g->out.fd = -2; /* the parent's file */
    if (n && g->out.fd >= 0 && scopeprof__fd_check(g) != 0) return -1;
    while (n && g->out.fd >= 0) {
        while (v->iov_len == 0) v++, nv--;
        ssize_t w = g->life.in_signal ? write(g->out.fd, v->iov_base, v->iov_len) : writev(g->out.fd, v, nv);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            int err = w < 0 ? errno : 0;
            g->out.write_err = err ? err : -1;
            if (err == EFBIG) scopeprof__xfsz_take_back();
            if (g->life.in_signal)
                scopeprof__sig_say("scopeprof: cannot write trace file '", g->out.path,
                                   err == EFBIG ? "': File too large\n" : "'\n");
            else
                scopeprof__warn("scopeprof: cannot write trace file '%s': %s; the summary is still "
                                "printed", g->out.path, err ? strerror(err) : "short write");
            scopeprof__close_output(g);
            return -1;
        }
        n -= (size_t)w;
        for (; nv && (size_t)w >= v->iov_len; v++, nv--) w -= (ssize_t)v->iov_len;
        if (nv) v->iov_base = (char *)v->iov_base + w, v->iov_len -= (size_t)w;
    }
    return g->out.fd >= 0 ? 0 : -1;
}

/* Write the EVENTS chunks held for one writev (out.batch_*). */
SCOPEPROF__INTERNAL void scopeprof__write_held(scopeprof__state *g) {
    uint32_t n = g->out.batch_n;
    g->out.batch_n = 0;
    if (n) scopeprof__write_vec(g, g->out.batch_v, (int)(2 * n));
}

SCOPEPROF__INTERNAL int scopeprof__write_all(scopeprof__state *g, const void *buf, size_t n) {
    struct iovec v = {(void *)(uintptr_t)buf, n};
    return scopeprof__write_vec(g, &v, 1);
}

/* Every chunk begins so (docs/FORMAT.md): magic, type, payload length, and
 * the CRC of the payload continued over those 12 bytes, so it is written
 * once the payload's CRC is known (a chunk too long to hold is visited twice:
 * once for its CRC, once to write it). Returns 0, or -1 if the write failed
 * (the file is then closed). */
static inline void scopeprof__chunk_head(unsigned char h[SCOPEPROF_CHUNK_HEADER_SIZE], uint32_t type, uint32_t len,
                                         uint32_t payload_crc) {
    scopeprof__put32(h, SCOPEPROF_CHUNK_MAGIC);
    scopeprof__put32(h + 4, type);
    scopeprof__put32(h + 8, len);
    scopeprof__put32(h + 12, scopeprof_chunk_crc(payload_crc, h));
}
SCOPEPROF__INTERNAL int scopeprof__chunk_start(scopeprof__state *g, uint32_t type, uint32_t len,
                                               uint32_t payload_crc) {
    unsigned char h[SCOPEPROF_CHUNK_HEADER_SIZE];
    scopeprof__chunk_head(h, type, len, payload_crc);
    return scopeprof__write_all(g, h, sizeof h);
}

/* A chunk whose payload is in memory: header and payload in one write. */
SCOPEPROF__INTERNAL void scopeprof__write_chunk(scopeprof__state *g, uint32_t type,
                                                const void *payload, uint32_t len) {
    unsigned char h[SCOPEPROF_CHUNK_HEADER_SIZE];
    scopeprof__chunk_head(h, type, len, scopeprof_crc32(0, payload, len));
    struct iovec v[2] = {{h, sizeof h}, {(void *)(uintptr_t)payload, len}};
    scopeprof__write_vec(g, v, 2);
}

/* Whether `path` holds a trace whose header names process `pid`: an earlier
 * image of this process, before an exec (same pid, same path: the claim on
 * an explicit path goes with the exec, and a program that re-execs itself
 * gets the same default name). Only a regular file, never through a link,
 * never waiting (a FIFO); open, fstat and read(2): also from a handler. */
SCOPEPROF__INTERNAL int scopeprof__earlier_image(const char *path, int pid) {
    unsigned char h[24];
    struct stat st;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, h, sizeof h) : -1;
    close(fd);
    return n == (ssize_t)sizeof h && memcmp(h, SCOPEPROF_FILE_MAGIC, 8) == 0 &&
           scopeprof__get64(h + 16) == (uint64_t)pid;
}

/* ---- Creating the file -------------------------------------------------------
 * A trace's name is predictable (<program>.<pid>.sprof, or the explicit
 * path), so whoever else can write its directory can put something there
 * first: a symbolic link to a file of the user who runs the program (root's,
 * say), which an O_CREAT|O_TRUNC open follows and overwrites; a FIFO, whose
 * open for writing waits for a reader for ever; a file of their own, which
 * would receive the trace. So a trace file is created exclusively (O_EXCL,
 * which also refuses a link at the name, dangling or not) and never opened
 * through a link at its last component (O_NOFOLLOW). A name that is taken
 * is said on stderr, and the next one tried ("run.sprof": "run.1.sprof",
 * "run.2.sprof"...), except:
 * - an earlier image of this process wrote it (scopeprof__earlier_image):
 *   this image writes NAME.exec<k>.sprof instead, silently;
 * - an explicit SCOPEPROF_OUTPUT (and the names made from it: a cycle's, a
 *   forked child's) replaces a regular file of the effective user that has
 *   no other link (an earlier run's trace, the usual case), checked once
 *   open (no race with a swap), and writes into a character device
 *   (/dev/null, /dev/full: only root makes those).
 * The default name, which holds the pid, is never replaced: a file there is
 * another process's (another pid namespace's) or planted. */
#define SCOPEPROF__TAKEN (-2)

/* What is at the taken name `path`, for the message. */
static inline const char *scopeprof__taken_why(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return "it exists";
    if (S_ISLNK(st.st_mode)) return "a symbolic link, not followed";
    if (!S_ISREG(st.st_mode)) return "not a regular file";
    return st.st_uid != geteuid() ? "another user's file" : "a file of this user's";
}

/* Open the existing `path` to replace it (see above): the descriptor, -1
 * on an error to report (errno: a directory, no permission), or
 * SCOPEPROF__TAKEN with *why. */
SCOPEPROF__INTERNAL int scopeprof__replace(const char *path, const char **why) {
    int fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ELOOP && errno != ENXIO) return -1; /* ENXIO: a FIFO without a reader */
        *why = errno == ELOOP ? "a symbolic link, not followed" : "not a regular file";
        return SCOPEPROF__TAKEN;
    }
    struct stat st;
    *why = "it exists";
    if (fstat(fd, &st) == 0) {
        int mine = S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_nlink == 1;
        if (S_ISCHR(st.st_mode) || (mine && ftruncate(fd, 0) == 0)) {
            fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
            return fd;
        }
        *why = !S_ISREG(st.st_mode)           ? "not a regular file"
               : st.st_uid != geteuid()       ? "another user's file"
               : st.st_nlink != 1             ? "a file with other links"
                                              : "it cannot be emptied";
    }
    close(fd);
    return SCOPEPROF__TAKEN;
}

/* Whether a failure to create the trace (errno, or -1: every name taken)
 * is to be said: once, not again for each of a schedule's cycles. */
static inline int scopeprof__create_said(scopeprof__state *g, int err) {
    if (g->out.create_err == err) return 0;
    g->out.create_err = err;
    return 1;
}

/* Create the file at g->out.path, or the first free name after it (see
 * "Creating the file"); g->out.path is then its name. The descriptor, or -1
 * (errno set; 0 when every name tried was taken). */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL int scopeprof__create(scopeprof__state *g) {
    char base[sizeof g->out.path], first[sizeof g->out.path];
    memcpy(base, g->out.path, sizeof base);
    const char *why = NULL, *first_why = NULL;
    int fd = -1, replace = !g->out.path_is_default, execs = 0, others = 0;
    while (execs + others < 100) {
        fd = open(g->out.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0 || errno != EEXIST) break; /* made, or an error to report */
        char word[16];
        if (scopeprof__earlier_image(g->out.path, g->pid)) {
            snprintf(word, sizeof word, "exec%d", ++execs);
        } else {
            if (replace && (fd = scopeprof__replace(g->out.path, &why)) != SCOPEPROF__TAKEN) break;
            if (!replace) why = scopeprof__taken_why(g->out.path);
            if (!first_why) memcpy(first, g->out.path, sizeof first), first_why = why;
            snprintf(word, sizeof word, "%d", ++others);
        }
        fd = -1;
        errno = 0;
        scopeprof__path_insert(g->out.path, sizeof g->out.path, base, word, 1);
    }
    if (fd < 0 && errno == 0) memcpy(g->out.path, base, sizeof base); /* the name the failure is said by */
    if (first_why && fd >= 0) {
        if (g->life.in_signal) {
            scopeprof__sig_say("scopeprof: the trace name '", first, "' is taken; ");
            scopeprof__sig_say("writing '", g->out.path, "' instead\n");
        } else {
            scopeprof__warn("scopeprof: the trace name '%s' is taken (%s); writing '%s' instead",
                            first, first_why, g->out.path);
        }
    }
    return fd;
}

/* Close the trace descriptor if it is still ours (scopeprof__fd_ours). */
SCOPEPROF__INTERNAL int scopeprof__close_output(scopeprof__state *g) {
    int rc = 0;
    if (scopeprof__fd_ours(g, g->out.fd)) rc = close(g->out.fd);
    g->out.fd = -2;
    return rc;
}

/* OVERHEAD chunk (format 3.1), first after the header so that a reader has
 * it before any event: u32 inside_ps, u32 outside_ps, u32 scopes measured,
 * u32 short_below (ticks; 5.1, reserved before), u32 short_inside_ps, u32
 * short_outside_ps (5.1). With SCOPEPROF_COMPENSATE=0 (since 4.0): all 0,
 * nothing measured, so that the reporter's notes say compensation was off,
 * as the exit summary's do. */
SCOPEPROF__INTERNAL void scopeprof__write_overhead(scopeprof__state *g) {
    unsigned char b[24];
    uint32_t ps[4] = {0, 0, 0, 0};
    if (g->cfg.compensate) scopeprof__overhead_ps(g, ps);
    scopeprof__put32(b, ps[0]);
    scopeprof__put32(b + 4, ps[1]);
    scopeprof__put32(b + 8, g->cfg.compensate ? 2 * SCOPEPROF__CAL_BATCHES * SCOPEPROF__CAL_PER : 0); /* both classes */
    scopeprof__put32(b + 12, g->cfg.compensate ? (uint32_t)g->clock.comp_short_below : 0);
    scopeprof__put32(b + 16, ps[2]);
    scopeprof__put32(b + 20, ps[3]);
    scopeprof__write_chunk(g, SCOPEPROF_CHUNK_OVERHEAD, b, sizeof b);
}

/* TICKS chunk (format 4), before any event: the rate that turns the events'
 * ticks into ns (format.h, scopeprof_ticks_ns). */
SCOPEPROF__INTERNAL void scopeprof__write_ticks(scopeprof__state *g) {
    unsigned char b[SCOPEPROF_TICKS_SIZE];
    uint64_t bits;
    scopeprof__calibrate(g);
    memcpy(&bits, &g->clock.ns_per_tick, 8);
    scopeprof__put64(b, g->clock.tick0);
    scopeprof__put64(b + 8, g->clock.ns0);
    scopeprof__put64(b + 16, bits);
    scopeprof__write_chunk(g, SCOPEPROF_CHUNK_TICKS, b, sizeof b);
}

SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__open_output(scopeprof__state *g) {
    if (g->out.fd != -1) return;
    g->out.files++; /* a new file: it has no thread names yet */
    g->out.fd = scopeprof__create(g);
    g->out.created = g->out.fd >= 0;
    struct stat st;
    if (g->out.fd >= 0 && fstat(g->out.fd, &st) == 0) {
        g->out.fd_dev = (uint64_t)st.st_dev;
        g->out.fd_ino = (uint64_t)st.st_ino;
        /* Absolute, to reopen it after a chdir (the displayed path stays as given). */
        size_t cl = 0;
        if (g->out.path[0] != '/' && getcwd(g->out.fd_path, sizeof g->out.fd_path - 1)) {
            cl = strlen(g->out.fd_path);
            g->out.fd_path[cl++] = '/';
        }
        snprintf(g->out.fd_path + cl, sizeof g->out.fd_path - cl, "%s", g->out.path);
    }
    if (g->out.fd < 0) {
        if (g->life.in_signal) {
            g->out.fd = -2;
            return;
        }
        int e = errno; /* 0: every name tried was taken */
        /* A server's workers change user after they start (nginx's to
         * nobody), and a forked child creates its file at its end: in the
         * directory it started in, now not theirs to write. */
        char uid[160] = "";
        if (e == EACCES)
            snprintf(uid, sizeof uid, "; this process runs as uid %u: one that changes user after it starts (a "
                     "server's workers) needs a directory that user can write", (unsigned)geteuid());
        if (scopeprof__create_said(g, e ? e : -1))
            scopeprof__warn("scopeprof: cannot create trace file '%s': %s (SCOPEPROF_OUTPUT sets the path)%s%s",
                            g->out.path, e ? strerror(e) : "it and the 99 names after it are taken", uid,
                            !g->cfg.summary ? "" : g->sched.on ? "; the summaries are still printed"
                                                                : "; the summary is still printed at exit");
        g->out.fd = -2;
        return;
    }
    const char *prog = g->cfg.prog;
    uint32_t plen = (uint32_t)strnlen(prog, sizeof g->cfg.prog);
    unsigned char h[SCOPEPROF_FILE_HEADER_SIZE + 256 + 4];
    memset(h, 0, sizeof h);
    memcpy(h, SCOPEPROF_FILE_MAGIC, 8);
    scopeprof__put32(h + 8, SCOPEPROF_FORMAT_MAJOR | (SCOPEPROF_FORMAT_MINOR << 16));
    scopeprof__put32(h + 12, SCOPEPROF_FILE_HEADER_SIZE + plen + 4);
    scopeprof__put64(h + 16, (uint64_t)g->pid);
    scopeprof__put64(h + 24, scopeprof__to_ns(g, g->clock.tick0));
    scopeprof__put64(h + 32, (uint64_t)g->clock.realtime_minus_mono);
    scopeprof__put32(h + 40, g->out.rank >= 0 ? (uint32_t)g->out.rank : 0xFFFFFFFFu);
    scopeprof__put32(h + 44, plen);
    memcpy(h + SCOPEPROF_FILE_HEADER_SIZE, prog, plen);
    /* The header's own CRC (format 3): a flipped bit in the rank or the start
     * time would otherwise read as a valid value. */
    scopeprof__put32(h + SCOPEPROF_FILE_HEADER_SIZE + plen,
                     scopeprof_crc32(0, h, SCOPEPROF_FILE_HEADER_SIZE + plen));
    if (scopeprof__write_all(g, h, SCOPEPROF_FILE_HEADER_SIZE + plen + 4) == 0) {
        scopeprof__write_ticks(g);
        scopeprof__write_overhead(g);
        scopeprof__write_clock(g); /* the host and the job's clock offsets (mpi.h) */
    }
}

/* SITES chunk with every site not written yet. No allocation (it also runs
 * in a signal handler): the payload is visited twice, once for its length
 * and CRC, once to write it, in pieces. */
SCOPEPROF__INTERNAL void scopeprof__sites_pass(scopeprof__state *g, uint32_t upto, int write,
                                              uint32_t *len, uint32_t *crc) {
    unsigned char b[20];
    scopeprof__put32(b, upto - g->out.sites_written);
    *len = 4;
    *crc = scopeprof_crc32(0, b, 4);
    if (write) scopeprof__write_all(g, b, 4);
    for (uint32_t i = g->out.sites_written; i < upto; i++) {
        const scopeprof__siterec *s = scopeprof__site_at(g, i + 1);
        const char *str[3] = {s->name, s->file, s->func};
        uint32_t l[3] = {(uint32_t)strlen(s->name), (uint32_t)strlen(s->file),
                         (uint32_t)strlen(s->func)};
        scopeprof__put32(b, i + 1);
        scopeprof__put32(b + 4, s->line);
        for (int k = 0; k < 3; k++) scopeprof__put32(b + 8 + 4 * k, l[k]);
        *len += 20 + l[0] + l[1] + l[2];
        *crc = scopeprof_crc32(*crc, b, 20);
        if (write) scopeprof__write_all(g, b, 20);
        for (int k = 0; k < 3; k++) {
            *crc = scopeprof_crc32(*crc, str[k], l[k]);
            if (write) scopeprof__write_all(g, str[k], l[k]);
        }
    }
}

SCOPEPROF__INTERNAL void scopeprof__write_sites(scopeprof__state *g) {
    uint32_t upto = __atomic_load_n(&g->reg.nsites, __ATOMIC_ACQUIRE), len, crc;
    if (g->out.sites_written == upto || g->out.fd < 0) return;
    scopeprof__sites_pass(g, upto, 0, &len, &crc);
    if (scopeprof__chunk_start(g, SCOPEPROF_CHUNK_SITES, len, crc) == 0)
        scopeprof__sites_pass(g, upto, 1, &len, &crc);
    g->out.sites_written = upto;
}

/* The current name of a live thread (pthread_setname_np may have changed it
 * after its first scope), from /proc with open/read: no allocation. Read
 * again only `every` ns after the last read (three system calls: not one
 * per chunk); a thread's exit reads its final name itself. */
SCOPEPROF__INTERNAL void scopeprof__refresh_name(scopeprof__thread *t, uint64_t every) {
    char path[64], buf[64];
    if (t->explicit_name || !t->alive) return;
    uint64_t now = scopeprof__mono_ns();
    if (t->name_read_ns && now - t->name_read_ns < every) return;
    t->name_read_ns = now;
    snprintf(path, sizeof path, "/proc/self/task/%llu/comm", (unsigned long long)t->tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return;
    buf[n] = 0;
    buf[strcspn(buf, "\n")] = 0;
    memcpy(t->name, buf, (size_t)n + 1);
}

/* A THREAD chunk for t where this file lacks its current name: before its
 * first EVENTS chunk in the file, and when the name has changed since
 * (docs/FORMAT.md). `every`: how old the name read from /proc may be (0:
 * read it now, for the file's end). */
SCOPEPROF__INTERNAL void scopeprof__write_thread(scopeprof__state *g, scopeprof__thread *t, uint64_t every) {
    unsigned char b[16 + 64];
    scopeprof__refresh_name(t, every);
    if (t->name_file == g->out.files && strncmp(t->name_written, t->name, sizeof t->name) == 0) return;
    t->name_file = g->out.files;
    memcpy(t->name_written, t->name, sizeof t->name);
    uint32_t n = (uint32_t)strnlen(t->name, sizeof t->name);
    scopeprof__put32(b, t->index);
    scopeprof__put32(b + 4, n);
    scopeprof__put64(b + 8, t->tid);
    memcpy(b + 16, t->name, n);
    scopeprof__write_chunk(g, SCOPEPROF_CHUNK_THREAD, b, 16 + n);
}

SCOPEPROF__INTERNAL void scopeprof__write_devices(scopeprof__state *g) {
    uint32_t todo = g->gpu.named & ~g->out.gpu_names_written;
    for (uint32_t d = 0; d < 16 && g->out.fd >= 0; d++) {
        if (!(todo >> d & 1)) continue;
        unsigned char b[8 + 64];
        uint32_t n = (uint32_t)strnlen(g->gpu.names[d], 64);
        scopeprof__put32(b, d);
        scopeprof__put32(b + 4, n);
        memcpy(b + 8, g->gpu.names[d], n);
        scopeprof__write_chunk(g, SCOPEPROF_CHUNK_DEVICE, b, 8 + n);
        g->out.gpu_names_written |= 1u << d;
    }
}

/* GPU chunk: the records paired with the GPU scopes of the EVENTS chunk that
 * follows, in the same order. */
SCOPEPROF__INTERNAL void scopeprof__write_gpu(scopeprof__state *g, const scopeprof__thread *t,
                                              const scopeprof_gpu_record *r, uint32_t n) {
    unsigned char b[48];
    uint32_t len = 8 + n * 48, crc = 0;
    scopeprof__write_devices(g);
    for (int pass = 0; pass < 2; pass++) { /* 0: CRC, 1: write (no allocation) */
        scopeprof__put32(b, t->index);
        scopeprof__put32(b + 4, n);
        if (pass) {
            if (scopeprof__chunk_start(g, SCOPEPROF_CHUNK_GPU, len, crc) ||
                scopeprof__write_all(g, b, 8))
                return;
        } else {
            crc = scopeprof_crc32(0, b, 8);
        }
        for (uint32_t i = 0; i < n; i++) {
            scopeprof__put64(b, r[i].start_ns);
            scopeprof__put64(b + 8, r[i].end_ns);
            scopeprof__put64(b + 16, r[i].launch_ns);
            scopeprof__put64(b + 24, r[i].stream);
            scopeprof__put32(b + 32, r[i].site);
            scopeprof__put32(b + 36, r[i].device);
            scopeprof__put32(b + 40, r[i].status);
            scopeprof__put32(b + 44, 0);
            if (pass && scopeprof__write_all(g, b, 48)) return;
            if (!pass) crc = scopeprof_crc32(crc, b, 48);
        }
    }
}

/* In a signal handler the lock is only tried (the interrupted thread may hold
 * it): then the copy is best effort. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__mem_snapshot(scopeprof__state *g, scopeprof__memsnap *s, int reset) {
    int locked = g->life.in_signal ? pthread_mutex_trylock(&g->mem.lock) == 0 : pthread_mutex_lock(&g->mem.lock) == 0;
    s->used = g->mem.used;
    memcpy(s->peak, g->mem.peak, sizeof s->peak);
    memcpy(s->cur, g->mem.cur, sizeof s->cur);
    s->unknown_frees = g->mem.unknown_frees;
    if (reset) {
        memcpy(g->mem.peak, g->mem.cur, sizeof s->peak);
        g->mem.unknown_frees = 0;
    }
    if (locked) pthread_mutex_unlock(&g->mem.lock);
}

SCOPEPROF__INTERNAL void scopeprof__write_memory(scopeprof__state *g, const scopeprof__memsnap *s) {
    unsigned char b[4 + 32 * 32];
    uint32_t n = 0;
    for (uint32_t d = 0; d < 32; d++) {
        if (!(s->used >> d & 1)) continue;
        unsigned char *p = b + 4 + n++ * 32;
        scopeprof__put32(p, d);
        scopeprof__put32(p + 4, 0);
        scopeprof__put64(p + 8, (uint64_t)s->peak[d]);
        scopeprof__put64(p + 16, (uint64_t)s->cur[d]);
        scopeprof__put64(p + 24, d == 0 ? s->unknown_frees : 0);
    }
    if (!n && !s->unknown_frees) return;
    scopeprof__put32(b, n);
    scopeprof__write_chunk(g, SCOPEPROF_CHUNK_MEMORY, b, 4 + n * 32);
}

/* After the table: peak memory per device, and frees we could not match. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__print_memory(scopeprof__state *g, const scopeprof__memsnap *s, FILE *out) {
    char b[64];
    for (uint32_t d = 0; d < 32; d++) {
        if (!(s->used >> d & 1)) continue;
        if (d == 0) fprintf(out, "Peak CPU memory: %s\n", scopeprof_format_mem(b, sizeof b, s->peak[d]));
        else fprintf(out, "Peak GPU %u memory: %s\n", d - 1, scopeprof_format_mem(b, sizeof b, s->peak[d]));
    }
    if (s->unknown_frees) {
        uint32_t id = g->mem.unknown_free_site;
        const scopeprof__siterec *r = scopeprof__site_find(g, id);
        fprintf(out, "scopeprof: %" PRIu64 " free(s) of pointers not recorded by PROFILE_ALLOC "
                "(first at %s:%u)\n", s->unknown_frees, r ? r->file : "?", r ? r->line : 0);
    }
}

/* STEPS chunk: u32 count, u32 reserved, then per step u64 number, u64
 * start_ns, u64 end_ns. Only steps not written yet (those scopeprof__step_kept
 * keeps). Three passes, no allocation: count, CRC, write. */
SCOPEPROF__INTERNAL void scopeprof__write_steps(scopeprof__state *g) {
    uint32_t n = 0, crc = 0;
    unsigned char b[24];
    if (g->out.fd < 0) return;
    for (uint32_t i = g->out.steps_written; i < g->sched.nsteps; i++) n += (uint32_t)scopeprof__step_kept(g, i);
    if (n) {
        scopeprof__calibrate(g);
        for (int pass = 0; pass < 2; pass++) {
            scopeprof__put32(b, n);
            scopeprof__put32(b + 4, 0);
            if (pass == 0) {
                crc = scopeprof_crc32(0, b, 8);
            } else {
                if (scopeprof__chunk_start(g, SCOPEPROF_CHUNK_STEPS, 8 + n * 24, crc) ||
                    scopeprof__write_all(g, b, 8))
                    return;
            }
            for (uint32_t i = g->out.steps_written; i < g->sched.nsteps; i++) {
                if (!scopeprof__step_kept(g, i)) continue;
                scopeprof__put64(b, g->sched.steps[i].n);
                scopeprof__put64(b + 8, scopeprof__to_ns(g, g->sched.steps[i].start));
                scopeprof__put64(b + 16, scopeprof__to_ns(g, g->sched.steps[i].end));
                if (pass == 0) crc = scopeprof_crc32(crc, b, 24);
                else if (scopeprof__write_all(g, b, 24)) return;
            }
        }
    }
    g->out.steps_written = g->sched.nsteps;
}

/* Write everything, close the file. Lock held. Safe in a signal handler
 * when g->life.in_signal is set (no allocation, no stdio). */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__write_all_and_close(scopeprof__state *g) {
    g->life.ending = 1; /* the clock rate, if still unknown, is measured over the whole run now */
    scopeprof__write_queued(g, 1);
    scopeprof__write_partials(g);
    int l = scopeprof__qlock(g); /* chunk_next reads it under the chunk lock */
    g->life.finalized = 1;
    scopeprof__qunlock(g, l);
    if (!g->life.in_signal) pthread_cond_signal(&g->wr.wake); /* the writer stops */
    /* Scopes that close after this point (other threads, later destructors)
     * are dropped: the chunk_next slow path recycles the buffer. */
    if (g->out.fd == -1 && g->out.events_written) scopeprof__open_output(g);
    scopeprof__memsnap mem;
    scopeprof__mem_snapshot(g, &mem, 0);
    scopeprof__file_end(g, &mem);
}

/* The end of a trace file: what it still lacks (new sites, every thread's
 * current name, memory, steps), the END chunk, the close. Lock held; no
 * allocation, no stdio in a signal handler. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__file_end(scopeprof__state *g, const scopeprof__memsnap *mem) {
    if (g->out.fd < 0) return;
    scopeprof__write_sites(g);
    for (scopeprof__thread *t = scopeprof__threads_head(g); t; t = t->next) scopeprof__write_thread(g, t, 0);
    scopeprof__write_memory(g, mem);
    scopeprof__write_steps(g);
    /* Format 5.2: the scopes this file lacks, that the program opened
     * since it began: left without closing (survival.h), and at the run's
     * end those still open on any thread. A reader says so. */
    uint32_t threads = 0;
    const scopeprof__thread *first = NULL;
    uint64_t missing = __atomic_load_n(&g->life.scopes_left, __ATOMIC_RELAXED) - g->out.left_base;
    if (g->life.finalized) missing += scopeprof__open_scopes(g, NULL, &threads, &first);
    uint64_t stranded = __atomic_load_n(&g->life.stranded, __ATOMIC_RELAXED) - g->out.stranded_base;
    missing = missing > stranded ? missing - stranded : 0; /* a range's level, counted in both: no scope */
    unsigned char b[16];
    scopeprof__put64(b, g->out.events_written);
    scopeprof__put64(b + 8, missing);
    scopeprof__write_chunk(g, SCOPEPROF_CHUNK_END, b, sizeof b);
    if (g->out.fd >= 0 && scopeprof__close_output(g) != 0) {
        g->out.write_err = errno;
        if (!g->life.in_signal)
            scopeprof__warn("scopeprof: cannot write trace file '%s': %s", g->out.path, strerror(errno));
    }
    g->out.fd = -2;
}

/* Whether the current trace file holds what was recorded: created, events
 * in it, no write failed (the lines that say where a trace went after a
 * signal or MPI_Abort, which must not name a file that was never made). */
static inline int scopeprof__trace_written(const scopeprof__state *g) {
    return g->out.created && g->out.events_written && !g->out.write_err;
}

/* A new trace file follows (a schedule's next cycle, a forked child's own):
 * its summary and what was written of each kind start afresh, and a
 * descriptor still open (a parent's, in a child) is closed, never written. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__file_reset(scopeprof__state *g) {
    scopeprof__sum_reset(g);
    scopeprof_agg_free(&g->sum.agg);
    scopeprof_agg_init(&g->sum.agg);
    g->out.sites_written = 0;
    g->out.gpu_names_written = 0;
    g->out.events_written = 0;
    g->out.fd_path[0] = 0; /* a forked child that cannot create its own must not name its parent's */
    g->out.left_base = __atomic_load_n(&g->life.scopes_left, __ATOMIC_RELAXED);
    g->out.stranded_base = __atomic_load_n(&g->life.stranded, __ATOMIC_RELAXED);
    g->out.write_err = 0;
    g->out.created = 0;
    g->out.steps_written = g->sched.nsteps; /* a forked child's file has its own steps, as its table */
    if (g->out.fd >= 0) scopeprof__close_output(g);
    g->out.fd = g->out.no_output ? -2 : -1;
}

/* A table made in memory and written to stderr with one write(2):
 * processes that share a stream (a server's workers, an MPI job's ranks
 * with SCOPEPROF_SUMMARY=all) interleaved their tables line by line, and a
 * program may have made stderr buffered. begin: where to print (stderr
 * itself when memory is short); end: out, then freed. */
typedef struct scopeprof__text {
    char *p;
    size_t n;
    FILE *m;
} scopeprof__text;
static inline FILE *scopeprof__text_begin(scopeprof__text *t) {
    t->p = NULL, t->n = 0;
    t->m = open_memstream(&t->p, &t->n);
    return t->m ? t->m : stderr;
}
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__text_end(scopeprof__text *t) {
    fflush(stderr); /* what came before it */
    if (t->m) fclose(t->m);
    for (size_t at = 0; t->p && at < t->n;) {
        ssize_t w = write(2, t->p + at, t->n - at);
        if (w <= 0) break;
        at += (size_t)w;
    }
    free(t->p);
}

/* The summary's last line at exit: where the trace went and its size, and
 * why it is incomplete if a write failed (a full disk: the file then ends
 * in a cut chunk and has no end record). A trace named after the program
 * and its pid, in the working directory, is easy to miss (issue 24: a new
 * 512 MB file every run, nothing said). Part of the summary, printed only
 * with it; a cycle's title names its file. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__print_trace_file(const scopeprof__state *g, FILE *out) {
    struct stat st;
    if (g->out.write_err == -2) { /* its size now would be another file's */
        fprintf(out, "Trace file: %s (lost: the path names another file now)\n", g->out.path);
        return;
    }
    if (g->out.no_output || !g->out.fd_path[0] || stat(g->out.fd_path, &st) != 0) return;
    char size[64];
    scopeprof_format_mem(size, sizeof size, (int64_t)st.st_size);
    size[strlen(size) - 1] = 'B'; /* bytes: "Mb" is PyTorch's in the table, but a file's reads as megabits */
    int e = g->out.write_err;
    fprintf(out, "Trace file: %s (%s%s%s)\n", g->out.path, size, e ? ", incomplete: " : "",
            e ? (e > 0 ? strerror(e) : "a short write") : "");
}

/* The summary's line at exit on what the profiler itself cost: on the
 * recording threads, each call's calibrated cost (its class's inside +
 * outside: what compensation takes out of the rows above, docs/DESIGN.md;
 * the steps' row is no calls of scopes, and nothing is taken out of it);
 * and the background writer's CPU (scopeprof__writer_main notes it at each
 * look), which runs beside the program: on a machine whose cores are all
 * busy it comes out of the program's time. Either part only when known
 * (compensation on; a writer that ran). Then, when they apply, the two
 * lines that say how far to trust the times against that: the process's
 * CPU beside self times that pass it, and scopes too dense for their
 * calibrated cost to be all they cost. Lock held. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__print_own_cost(scopeprof__state *g, FILE *out) {
    const scopeprof_agg *a = &g->sum.agg;
    const scopeprof_row *most = NULL; /* the row of most calls */
    double rec_ps = 0;
    uint64_t calls = 0;
    for (uint32_t i = 0; i < a->nrows; i++) {
        const scopeprof_row *r = &a->rows[i];
        if (strcmp(r->name, SCOPEPROF__STEPS_ROW) == 0) continue;
        calls += r->count;
        if (!most || r->count > most->count) most = r;
        rec_ps += (double)(r->count - r->count_short) * (a->comp_inside_ps + a->comp_outside_ps) +
                  (double)r->count_short * (a->comp_short_inside_ps + a->comp_short_outside_ps);
    }
    pthread_mutex_lock(&g->buf.lock);
    uint64_t wr_ns = g->wr.cpu_ns;
    pthread_mutex_unlock(&g->buf.lock);
    if (!calls) return;
    if (rec_ps > 0 || wr_ns) {
        char rec[32], wr[32];
        fprintf(out, "Profiler's own cost: %llu call%s", (unsigned long long)calls, calls == 1 ? "" : "s");
        if (rec_ps > 0)
            fprintf(out, ", about %s of the recording threads' time (taken out above)",
                    scopeprof_format_time(rec, sizeof rec, rec_ps / 1e6));
        if (wr_ns)
            fprintf(out, ", %s of CPU in the background writer",
                    scopeprof_format_time(wr, sizeof wr, (double)wr_ns / 1e3));
        fputc('\n', out);
    }
    /* Self CPU time is wall time in scopes: a process whose threads waited
     * or were preempted inside them shows more of it than it used CPU (an
     * OpenMP loop on a busy node: 8.7 s of it, 4.7 s of CPU, the rest in
     * the innermost scope). Said with the process's CPU beside it. */
    struct rusage ru;
    double cpu_ns = getrusage(RUSAGE_SELF, &ru) != 0 ? 0 :
        ((double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec) * 1e9 +
        ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e3;
    const double self_ns = (double)scopeprof_agg_self_total(a);
    if (cpu_ns > 0 && self_ns > 1.2 * cpu_ns) {
        char cpu[32];
        fprintf(out, "The self times add up to more than the process used: %s of CPU (user + sys, all threads, the "
                     "writer's included); the rest is the threads' waits and preemption inside scopes\n",
                scopeprof_format_time(cpu, sizeof cpu, cpu_ns / 1e3));
    }
    /* Scopes so dense that their calibrated cost is over 5% of the time in
     * scopes (as measured: the self times with that cost put back), and at
     * least a millisecond (not a few calls around little work): their clock
     * reads then also slow the code around them, which no calibration sees
     * (XSBench, a 60 ns function scoped 15M times: 0.44 s taken out, the
     * run 2.4 s longer, its parent's self time tripled). */
    double in_ns = self_ns + rec_ps / 1e3;
    if (rec_ps / 1e3 > 0.05 * in_ns && rec_ps >= 1e9) {
        char every[32], name[SCOPEPROF__NAME_W + 1];
        fprintf(out, "Dense scopes: their calibrated cost is over 5%% of the time in scopes (one every %s); so dense, "
                     "their clock reads also slow the code around them, past what is taken out (their parents' times "
                     "grow most): for times to trust, leave out the most called, %s (%llu calls)\n",
                scopeprof_format_time(every, sizeof every, in_ns / 1e3 / (double)calls),
                scopeprof__name_cell(name, most->name, SCOPEPROF__NAME_W), (unsigned long long)most->count);
    }
}

/* After a table of `rows` rows cut by SCOPEPROF_ROW_LIMIT, the line that
 * says so, as the reporter's --limit does (the exit table's, the MPI
 * job's): into b, which it returns; NULL when nothing was cut. */
static inline const char *scopeprof__more_rows(const scopeprof__state *g, uint32_t rows, char *b, size_t n) {
    return scopeprof_more_rows(b, n, rows, g->cfg.row_limit, "SCOPEPROF_ROW_LIMIT=", "0");
}

/* The table at exit (and at each schedule's cycle, after `title`): PyTorch's
 * layout, the notes under it, peak memory, and at exit the trace file. On
 * rank 0, or every rank with SCOPEPROF_SUMMARY=all, when something was
 * recorded. Lock held. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__summary_print(scopeprof__state *g, const scopeprof__memsnap *mem,
                                                  int recorded, const char *title, int at_exit) {
    if (!g->cfg.summary || !recorded || (g->out.rank > 0 && !g->cfg.summary_all)) return;
    scopeprof__sum_fold(g, g->cfg.group_shape);
    fflush(stdout);
    scopeprof__text text;
    FILE *out = scopeprof__text_begin(&text);
    if (title) fprintf(out, "%s\n", title);
    scopeprof_table_print(out, &g->sum.agg, g->cfg.sort, g->cfg.row_limit);
    char more[96];
    if (scopeprof__more_rows(g, g->sum.agg.nrows, more, sizeof more)) fprintf(out, "%s\n", more);
    scopeprof_table_notes_shown(out, &g->sum.agg, g->cfg.sort, g->cfg.row_limit);
    scopeprof__print_memory(g, mem, out);
    if (at_exit) scopeprof__print_trace_file(g, out);
    if (at_exit) scopeprof__print_own_cost(g, out); /* after the lines `scopeprof table` prints too */
    scopeprof__text_end(&text);
}

#ifdef __cplusplus
}
#endif
#endif /* file.h */
/* ==== part: include/parts/writer.h ==== */
/* writer.h: turning queued chunks into the file (conversion, aggregation,
 * encoding), draining the queue, and the background writer thread. */
#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON
#ifdef __cplusplus
extern "C" {
#endif

/* The slots of the record at s: 1, 2, or 2 and its input shapes' units. */
static inline uint32_t scopeprof__slot_units(const scopeprof__slot *s) {
    return s->dur != SCOPEPROF_REC_LONG_MARK ? 1 : 2 + s[1].key;
}

/* Decode the record at slot s (ticks) into e; returns its slots. */
static inline uint32_t scopeprof__slot_get(const scopeprof__slot *s, scopeprof_event *e) {
    e->start = s->start;
    if (s->dur != SCOPEPROF_REC_LONG_MARK) {
        e->end = s->start + s->dur;
        scopeprof__key_unpack(s->key, e);
        return 1;
    }
    e->depth = s->key;
    e->end = s[1].start;
    e->site = s[1].dur;
    return 2 + s[1].key;
}

/* GPU scopes among the records of n slots. */
static inline uint32_t scopeprof__count_gpu(const scopeprof__slot *s, uint32_t n) {
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i += scopeprof__slot_units(s + i))
        k += s[i].key >> 31; /* the GPU flag is bit 31 in both forms */
    return k;
}

/* A record off the common path (decoded from the `slots` at s: long, or in
 * a span that is filtered) into the exit summary: an allocation or free
 * (MEM), else a scope of GPU time gpu_ns (-1: a CPU scope), with its input
 * shapes if it has them. Returns the scopes summed (0 or 1). */
SCOPEPROF__INTERNAL uint32_t scopeprof__sum_record(scopeprof__state *g, scopeprof__levels *L, uint32_t slot,
                                             const scopeprof_event *e, const scopeprof__slot *s, uint32_t slots,
                                             int64_t gpu_ns, int comp, uint64_t below) {
    if (e->depth & SCOPEPROF_DEPTH_MEM) { /* end holds the byte count */
        scopeprof__sum_mem(g, slot, SCOPEPROF_MEM_DEPTH(e->depth), SCOPEPROF_MEM_DEVICE(e->depth), (int64_t)e->end);
        return 0;
    }
    scopeprof__sum_event(g, L, e->site, e->start, e->end < e->start ? e->start : e->end,
                         e->depth & SCOPEPROF_DEPTH_MASK, gpu_ns, comp, below, s + 2, slots > 2 ? slots - 2 : 0);
    return 1;
}

/* Whether the record at e goes on a run (scopeprof__sum_span): key and
 * duration as one word less the run's key and lo (`want`) are the duration
 * less lo when the key is the run's and the duration in the class, else at
 * least span; one test for all. A record that starts after the one before
 * ended (less lo, past the first), and lasts lo or more, neither starts
 * before it nor ends before it ends: what sum_run needs. Adds it to *dur
 * and *stop. */
static inline int scopeprof__run_step(const scopeprof__slot *e, uint64_t want, uint64_t span, uint64_t *dur,
                                      uint64_t *stop) {
    uint64_t d = ((uint64_t)e->key << 32 | e->dur) - want;
    if (d >= span || e->start < *stop) return 0;
    *dur += d, *stop = e->start + d;
    return 1;
}

/* How many records from e on go on the run. The first two one at a time
 * (a tree's leaves make runs of one or two), then four at a time while four
 * are left: one test of the end for four records (in a loop over one leaf
 * scope, nearly every record is on a run: 1.5 instructions a scope). */
static inline uint32_t scopeprof__run_len(const scopeprof__slot *e, const scopeprof__slot *end, uint64_t want,
                                          uint64_t span, uint64_t *dur, uint64_t *stop) {
    const scopeprof__slot *run = e;
    if (!scopeprof__run_step(e, want, span, dur, stop)) return 0;
    if (++e == end || !scopeprof__run_step(e, want, span, dur, stop)) return (uint32_t)(e - run);
    for (e++; end - e >= 4; e += 4) {
        if (!scopeprof__run_step(e, want, span, dur, stop)) return (uint32_t)(e - run);
        if (!scopeprof__run_step(e + 1, want, span, dur, stop)) return (uint32_t)(e + 1 - run);
        if (!scopeprof__run_step(e + 2, want, span, dur, stop)) return (uint32_t)(e + 2 - run);
        if (!scopeprof__run_step(e + 3, want, span, dur, stop)) return (uint32_t)(e + 3 - run);
    }
    while (e < end && scopeprof__run_step(e, want, span, dur, stop)) e++;
    return (uint32_t)(e - run);
}

/* Sum the records of n slots (ticks) into the exit summary, thread levels L.
 * The common case, a short record, is summed without a call; a run of short
 * records of one key and one compensation class (a loop over one leaf
 * scope) costs a few instructions each past the first. `comp`, `below`: as
 * scopeprof__sum_at's. */
static inline uint32_t scopeprof__sum_span(scopeprof__state *g, scopeprof__levels *L, uint32_t slot,
                                           const scopeprof__slot *ev, uint32_t n, int comp, uint64_t below) {
    uint32_t not_scopes = 0; /* slots that are not one scope each: long records' second halves, MEM */
    /* In locals: the compiler cannot know that the stores below leave g alone. */
    scopeprof__sitesum *sites = g->sum.site;
    uint32_t site_cap = g->sum.site_cap;
    const int by_shape = g->cfg.group_shape;
    for (const scopeprof__slot *e = ev, *end = ev + n; e < end;) {
        if (__builtin_expect(e->dur != SCOPEPROF_REC_LONG_MARK, 1)) {
            const uint32_t raw = e->key;
            uint32_t key = raw & ~SCOPEPROF_DEPTH_GPU; /* a GPU scope's GPU time: the slow path's */
            uint32_t site = key & ((1u << SCOPEPROF_REC_SITE_BITS) - 1), depth = key >> SCOPEPROF_REC_SITE_BITS;
            uint64_t start = e->start, stop = e->start + e->dur;
            e++;
            if (__builtin_expect(site >= site_cap || !sites[site].seen || depth + 2 > L->cap, 0)) {
                if (scopeprof__sum_room(g, slot, site, depth) != 0) {
                    not_scopes++;
                    continue;
                }
                sites = g->sum.site;
                site_cap = g->sum.site_cap;
            }
            scopeprof__sum_at(g, L, &sites[site], start, stop, depth, -1, comp, below);
            /* The records right after it with the same key and class, each
             * started after the one before ended: leaves, summed together
             * (a record that started earlier, which only mismatched scopes
             * make, ends the run and is summed on its own). A class is a
             * range of durations [lo, lo + span): the short ones [0, below),
             * the others [below, LONG_MARK) (below is far under LONG_MARK: the
             * calibration's bound is at most 10^6 ticks). */
            if (e == end || e->key != raw) continue; /* the usual case in a tree: no run */
            const scopeprof__slot *run = e;
            const uint64_t is_short = stop - start < below;
            const uint64_t lo = is_short ? 0 : below, span = is_short ? below : SCOPEPROF_REC_LONG_MARK - below;
            const uint64_t want = ((uint64_t)raw << 32) + lo;
            uint64_t dur = 0; /* less lo per record, as d (and stop, past the first) */
            e += scopeprof__run_len(e, end, want, span, &dur, &stop); /* e < end here */
            if (e != run) {
                uint32_t k = (uint32_t)(e - run);
                scopeprof__sum_run(L, &sites[site], depth, k, dur + lo * k, stop + lo, k & (0 - is_short));
            }
            continue;
        }
        uint32_t slots;
        if (e[1].key && !by_shape && !(e->key & (SCOPEPROF_DEPTH_GPU | SCOPEPROF_DEPTH_MEM))) {
            /* A CPU scope with input shapes, summed by its site as any
             * scope (the shapes matter to SCOPEPROF_GROUP_BY=shape only),
             * without decoding the record: out of this loop, which stays as
             * short as before (inlined here, it made every plain scope 2
             * instructions dearer). */
            slots = 2 + e[1].key;
            scopeprof__sum_event(g, L, e[1].dur, e->start, e[1].start < e->start ? e->start : e[1].start, e->key,
                                 -1, comp, below, NULL, 0);
            not_scopes += slots - 1;
        } else {
            scopeprof_event x; /* any other long record: decoded */
            slots = scopeprof__slot_get(e, &x);
            not_scopes += slots - scopeprof__sum_record(g, L, slot, &x, e, slots, -1, comp, below);
        }
        e += slots;
        sites = g->sum.site; /* the room may have moved them */
        site_cap = g->sum.site_cap;
    }
    return n - not_scopes; /* the scopes summed */
}

/* The slow path of a span: a schedule's window (records outside it are
 * dropped) or GPU scopes (each paired with the thread's next GPU record,
 * compacted into gr; a GPU flag without one is cleared). Rewrites the span
 * in place, ticks as they were: a record only ever leaves. Returns the
 * slots kept; *paired the GPU records kept, *summed the scopes summed. */
SCOPEPROF__INTERNAL uint32_t scopeprof__span_filter(scopeprof__state *g, scopeprof__levels *L, uint32_t slot,
                                                    scopeprof__slot *ev, uint32_t n, int comp, uint64_t below,
                                                    scopeprof_gpu_record *gr, uint32_t ngr,
                                                    uint32_t *paired, uint32_t *summed) {
    const int sched = g->sched.on, window = g->sched.window;
    const uint64_t win_start = g->sched.win_start;
    uint32_t out = 0, gi = 0;
    for (uint32_t i = 0; i < n;) {
        scopeprof_event e;
        uint32_t at = i, slots = scopeprof__slot_get(ev + i, &e);
        i += slots;
        int gpu_flag = (e.depth & (SCOPEPROF_DEPTH_GPU | SCOPEPROF_DEPTH_MEM)) == SCOPEPROF_DEPTH_GPU;
        uint32_t ours = gpu_flag && gi < ngr && gr[gi].launch_ns == scopeprof__to_ns(g, e.start);
        if (sched && (!window || e.start < win_start)) {
            /* Outside the schedule's recording window (wait, warm-up, or an
             * earlier cycle): dropped, with its GPU record if it has one. */
            gi += ours;
            continue;
        }
        memmove(ev + out, ev + at, slots * sizeof *ev);
        out += slots;
        int64_t gpu = -1;
        if (ours) {
            if (gr[gi].status == 0) gpu = (int64_t)(gr[gi].end_ns - gr[gi].start_ns);
            gr[(*paired)++] = gr[gi++]; /* compacted: only kept events' records */
        } else if (gpu_flag) { /* no GPU record: a CPU scope */
            ev[out - slots].key &= ~SCOPEPROF_DEPTH_GPU;
        }
        if (L) *summed += scopeprof__sum_record(g, L, slot, &e, ev + out - slots, slots, gpu, comp, below);
    }
    return out;
}

/* The file is little-endian (docs/FORMAT.md) and a chunk's slots are
 * written as they are: on a big-endian machine each slot's fields (u64, u32,
 * u32 in both record forms) are turned around first, in place (the slots
 * are summed already and never read again). */
static inline void scopeprof__slots_le(scopeprof__slot *s, uint32_t n) {
#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    for (uint32_t i = 0; i < n; i++) {
        s[i].start = __builtin_bswap64(s[i].start);
        s[i].dur = __builtin_bswap32(s[i].dur);
        s[i].key = __builtin_bswap32(s[i].key);
    }
#else
    (void)s, (void)n;
#endif
}

/* Sum and write the records in n slots of thread t. The file holds records
 * as the buffers do (format 4: ticks, which the reader converts with the
 * TICKS chunk's rate), so they are written from the chunk's own memory, and
 * the only pass over them per event is the exit summary's. */
SCOPEPROF__INTERNAL void scopeprof__write_span(scopeprof__state *g, scopeprof__thread *t,
                                               scopeprof__slot *ev, uint32_t n) {
    scopeprof__calibrate(g);
    if (!g->life.in_signal) scopeprof__overhead_apply(g);
    /* The GPU records of this span's GPU scopes, in the same order (counting
     * them is a pass over the span: only with a GPU backend). */
    uint32_t k = g->gpu.take && !g->life.in_signal ? scopeprof__count_gpu(ev, n) : 0;
    scopeprof_gpu_record *gr = NULL;
    uint32_t ngr = 0, paired = 0, summed = 0;
    if (k && (gr = (scopeprof_gpu_record *)malloc(k * sizeof *gr))) ngr = g->gpu.take(g, t, gr, k);
    /* The sums feed only the table: none when it is off (SCOPEPROF_SUMMARY=0). */
    const int aggregate = !g->life.in_signal && g->cfg.summary;
    const int comp = scopeprof__comp_on(&g->sum.agg);
    const uint64_t below = g->sum.agg.comp_short_below; /* ticks: the sums' units */
    const uint32_t slot = t->slot; /* the summary's slot (the file keeps t->index) */
    scopeprof__levels *L = aggregate && scopeprof__sum_room(g, slot, UINT32_MAX, 0) == 0 ? &g->sum.thr[slot] : NULL;
    uint32_t kept = n;
    if (g->sched.on || k) kept = scopeprof__span_filter(g, L, slot, ev, n, comp, below, gr, ngr, &paired, &summed);
    else if (L) summed = scopeprof__sum_span(g, L, slot, ev, n, comp, below);
    g->out.events_written += kept; /* 16-byte units, as the END chunk counts them */
    g->sum.events += summed;
    if (g->out.fd == -1 && kept) scopeprof__open_output(g);
    if (g->out.fd < 0 || kept == 0) {
        free(gr);
        return;
    }
    scopeprof__write_sites(g);
    scopeprof__write_thread(g, t, (uint64_t)g->cfg.flush_ms * 1000000u);
    if (paired) scopeprof__write_gpu(g, t, gr, paired);
    free(gr);
    /* Payload = thread index, units, records: the chunk's header and the
     * 8-byte prefix, then the records from the chunk's own memory, in one
     * write, or held for the batch's (scopeprof__write_some). */
    scopeprof__slots_le(ev, kept);
    size_t bytes = (size_t)kept * sizeof *ev;
    uint32_t held = g->out.batch_n++; /* 0 unless batch_on: out.batch_* are empty between writes */
    unsigned char *head = g->out.batch_head[held], *pre = head + SCOPEPROF_CHUNK_HEADER_SIZE;
    scopeprof__put32(pre, t->index);
    scopeprof__put32(pre + 4, kept);
    uint32_t crc = scopeprof_crc32(scopeprof_crc32(0, pre, 8), ev, bytes);
    scopeprof__chunk_head(head, SCOPEPROF_CHUNK_EVENTS, (uint32_t)(8 + bytes), crc);
    struct iovec *v = &g->out.batch_v[2 * held];
    v[0].iov_base = head, v[0].iov_len = sizeof g->out.batch_head[held];
    v[1].iov_base = ev, v[1].iov_len = bytes;
    if (!g->out.batch_on || held + 1 == SCOPEPROF__BATCH) scopeprof__write_held(g);
}

/* Recycle the state of threads that are gone and fully written: their
 * final name goes to the file first if it lacks it, so the file needs
 * nothing more of them (a program that starts 300,000 short threads
 * kept 390 bytes for each, then the summary's 24-byte slot for each). The
 * state and its summary slot go to the next new thread (scopeprof__thread_new).
 * Gone means gone from the kernel (tgkill with signal 0 fails): a key
 * destructor that records after ours (another module's) can revive a thread
 * only while it is still exiting. Lock held; not from a signal handler (free). */
static inline int scopeprof__thread_gone(const scopeprof__state *g, const scopeprof__thread *t) {
#if defined(SYS_tgkill) && (defined(__USE_MISC) || !defined(__GLIBC__))
    return syscall(SYS_tgkill, g->pid, (pid_t)t->tid, 0) != 0 && errno == ESRCH;
#else
    (void)g, (void)t; /* cannot tell (strict ISO C): keep it */
    return 0;
#endif
}

/* Registry lock held. A thread may push its state at the head meanwhile
 * (under `reg` only): the unlink, under `reg`, looks again for what points
 * to the state when that was the head. */
SCOPEPROF__INTERNAL void scopeprof__reap_threads(scopeprof__state *g) {
    int saved_errno = errno; /* the program's: a slow path must not change it */
    for (scopeprof__thread **pp = &g->reg.threads, *t; (t = __atomic_load_n(pp, __ATOMIC_ACQUIRE)) != NULL;) {
        int busy = t->alive;
        if (!busy) { /* a revived thread may take a chunk meanwhile (chunk_next) */
            pthread_mutex_lock(&g->buf.lock);
            busy = t->chunk || t->nqueued;
            pthread_mutex_unlock(&g->buf.lock);
        }
        if (busy || t->gpu || t->ranges || !scopeprof__thread_gone(g, t)) {
            pp = &t->next;
            continue;
        }
        /* Its final name (set at its exit) is in the file before the state
         * goes: a rename after its last events written did not reach it. */
        if (g->out.fd >= 0 && t->name_file == g->out.files) scopeprof__write_thread(g, t, 0);
        scopeprof__sum_thread_gone(g, t->slot); /* not under `reg`: no malloc there */
        scopeprof__reg_lock(g);
        while (*pp != t) pp = &(*pp)->next; /* states pushed before it since */
        *pp = t->next;
        scopeprof__thread_release(g, t); /* with its slot, for the next thread */
        scopeprof__reg_unlock(g);
    }
    errno = saved_errno;
}

/* The chunk lock, also from a signal handler (g->life.in_signal) or the unlock
 * after one. Its holder is then another thread (signals are held while a
 * thread holds it, and the writer blocks them all), out of it within a few
 * pointer moves or a malloc: it is tried for up to a second, and after that
 * the work goes on without it (best effort, as the handler's whole write).
 * Returns whether it was taken, for scopeprof__qunlock. */
SCOPEPROF__INTERNAL int scopeprof__qlock(scopeprof__state *g) {
    if (!g->life.in_signal) return pthread_mutex_lock(&g->buf.lock) == 0;
    for (int i = 0; i < 1100; i++) {
        if (pthread_mutex_trylock(&g->buf.lock) == 0) return 1;
        struct timespec ms = {0, 1000000};
        if (i >= 100) nanosleep(&ms, NULL);
    }
    return 0;
}
static inline void scopeprof__qunlock(scopeprof__state *g, int locked) {
    if (locked) pthread_mutex_unlock(&g->buf.lock);
}

/* A written chunk back to the spare list (scopeprof__spare_push). */
SCOPEPROF__INTERNAL void scopeprof__recycle(scopeprof__state *g, scopeprof__chunk *c) {
    int l = scopeprof__qlock(g);
    scopeprof__spare_push(g, c);
    scopeprof__qunlock(g, l);
}

/* The oldest queued chunk, taken off the queue; NULL when there is none,
 * or (without may_wait) when its GPU scopes are still running: it is then
 * left at the head. Registry lock held: only its holder takes chunks off the
 * queue, so the head seen under the chunk lock is still the head after the
 * GPU check. */
SCOPEPROF__INTERNAL scopeprof__chunk *scopeprof__queue_take(scopeprof__state *g, int may_wait) {
    int l = scopeprof__qlock(g);
    scopeprof__chunk *c = g->buf.full_head;
    scopeprof__qunlock(g, l);
    if (!c) return NULL;
    if (!may_wait && g->gpu.ready) {
        uint32_t k = scopeprof__count_gpu(c->ev + c->first, c->count - c->first);
        if (k && !g->gpu.ready(g, c->thread, k)) return NULL;
    }
    l = scopeprof__qlock(g);
    g->buf.full_head = c->next;
    if (!g->buf.full_head) g->buf.full_tail = NULL;
    g->buf.queued -= SCOPEPROF__CHUNK_BYTES;
    scopeprof__qunlock(g, l);
    return c;
}

/* Write and recycle up to `most` (at most SCOPEPROF__BATCH) of the oldest
 * queued chunks (scopeprof__queue_take), their EVENTS chunks in one writev
 * (out.batch_*; not from a signal handler, whose write goes piece by
 * piece). Returns how many; 0 if there was none to write. Registry lock
 * held. A chunk is recycled once its records are in the file. */
SCOPEPROF__INTERNAL uint32_t scopeprof__write_some(scopeprof__state *g, int may_wait, uint32_t most) {
    scopeprof__chunk *done = NULL, *c;
    uint32_t n = 0;
    g->out.batch_on = !g->life.in_signal;
    for (; n < most && n < SCOPEPROF__BATCH && (c = scopeprof__queue_take(g, may_wait)) != NULL; n++) {
        scopeprof__write_span(g, c->thread, c->ev + c->first, c->count - c->first);
        c->next = done, done = c;
    }
    g->out.batch_on = 0;
    scopeprof__write_held(g);
    int l = scopeprof__qlock(g);
    for (; (c = done) != NULL; scopeprof__spare_push(g, c)) {
        done = c->next;
        c->thread->nqueued--; /* after its write: the thread is not reaped before */
    }
    scopeprof__qunlock(g, l);
    return n;
}

/* Write and recycle the chunks queued now, oldest first (per-thread order).
 * Without may_wait, stop at the first chunk whose GPU scopes are still
 * running. Only those queued at the start: threads keep queuing without the
 * registry lock, and one that fills chunks faster than they are written
 * kept a PROFILE_FLUSH writing for ever. Only the lock's holder takes
 * chunks off the queue, so those are the first ones until written. */
SCOPEPROF__INTERNAL void scopeprof__write_queued(scopeprof__state *g, int may_wait) {
    int l = scopeprof__qlock(g);
    size_t n = g->buf.queued / SCOPEPROF__CHUNK_BYTES;
    scopeprof__qunlock(g, l);
    for (uint32_t k; n > 0 && (k = scopeprof__write_some(g, may_wait, (uint32_t)n)) != 0;) n -= k;
    if (!g->life.in_signal) scopeprof__reap_threads(g);
}

/* Write what every thread has published in its current chunk. The owners
 * may be running (PROFILE_FLUSH, the writer's timed flush, exit() from one
 * thread while others work): the events before the cursor's release store
 * are complete and never touched again, so they are written and marked with
 * chunk->first; anything later waits for the next write. A thread may have
 * queued chunks since the queue was last drained (owners queue under the
 * chunk lock only): those are taken out of the queue and written first, so
 * each thread's events stay in order. Registry lock held. */
SCOPEPROF__INTERNAL void scopeprof__write_partials(scopeprof__state *g) {
    for (scopeprof__thread *t = scopeprof__threads_head(g); t; t = t->next) {
        scopeprof__chunk *mine = NULL, **tail = &mine;
        int l = scopeprof__qlock(g);
        scopeprof__chunk *c = t->chunk;
        uint32_t n = c ? (uint32_t)(__atomic_load_n(&t->cur, __ATOMIC_ACQUIRE) - c->ev) : 0;
        uint32_t taken = 0;
        if (t->nqueued) {
            scopeprof__chunk **pp = &g->buf.full_head, *prev = NULL;
            while (*pp) {
                scopeprof__chunk *q = *pp;
                if (q->thread != t) {
                    prev = q;
                    pp = &q->next;
                    continue;
                }
                *pp = q->next;
                g->buf.queued -= SCOPEPROF__CHUNK_BYTES;
                q->next = NULL;
                *tail = q;
                tail = &q->next;
                taken++;
            }
            g->buf.full_tail = prev;
        }
        scopeprof__qunlock(g, l);
        while (mine) {
            scopeprof__chunk *q = mine;
            mine = q->next;
            scopeprof__write_span(g, t, q->ev + q->first, q->count - q->first);
            scopeprof__recycle(g, q);
        }
        if (taken) {
            l = scopeprof__qlock(g);
            t->nqueued -= taken;
            scopeprof__qunlock(g, l);
        }
        if (c && n > c->first) scopeprof__write_span(g, t, c->ev + c->first, n - c->first);
        if (c) c->first = n;
    }
}

SCOPEPROF__API void scopeprof__flush(void) {
    scopeprof__state *g = scopeprof__state_get();
    scopeprof__lock(g);
    if (!g->life.finalized) {
        scopeprof__write_queued(g, 1);
        scopeprof__write_partials(g);
    }
    scopeprof__unlock(g);
}

/* ---- The background writer ---------------------------------------------
 * One thread per process drains full chunks: it sums and writes them under
 * the registry lock, SCOPEPROF__BATCH chunks at a time (so nothing that
 * needs that lock waits for more than a few chunks' write: about 0.1 ms on
 * this VM), and recycles them to the spare
 * list. It also allocates chunks ahead and touches their pages when too few
 * are spare, so recording threads neither write nor take first-touch page
 * faults. Every SCOPEPROF_FLUSH_MS (100) it also writes what live
 * threads have published, so a process killed without a chance to write
 * (SIGKILL, the OOM killer) loses at most that much of its recent past.
 * When it falls behind, chunk memory grows past the budget by up to a
 * quarter; past that the thread that needs a chunk writes one itself
 * (nothing is dropped; counted and said at exit). It blocks every signal, so
 * handlers run on the program's threads, and a terminating signal that
 * finds it holding the lock is written at its unlock (scopeprof__unlock); a
 * forked child has none (its recording threads write, as without a writer);
 * at exit the final write drains the queue and the writer stops when it next
 * looks. While chunks keep coming it looks for work on its own (polled:
 * scopeprof__writer_wake_due says why, and when a thread wakes it). With
 * SCOPEPROF_OUTPUT=none it runs all the same: it feeds the exit summary and
 * recycles the memory. Its locks: state.h, "Locks". */
SCOPEPROF__INTERNAL void scopeprof__writer_init_locks(scopeprof__state *g) {
    pthread_mutex_init(&g->buf.lock, NULL);
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&g->wr.wake, &a);
    pthread_condattr_destroy(&a);
}

/* Make a new chunk's pages present: one madvise(MADV_POPULATE_WRITE) where
 * the kernel has it (Linux 5.14), else a write to each page. A chunk's 17
 * page faults (4096 slots then) one at a time cost 450-600 us on this VM,
 * populated 150-220 (tests run beside it) or 60 (alone; session 11). */
static inline void scopeprof__chunk_touch(scopeprof__chunk *c) {
#ifdef MADV_POPULATE_WRITE
    if (madvise(c, sizeof *c, MADV_POPULATE_WRITE) == 0) return;
#endif
    volatile unsigned char *p = (volatile unsigned char *)c;
    for (size_t o = 0; o < sizeof *c; o += 4096) p[o] = 0;
    p[sizeof *c - 1] = 0;
}

/* Allocate and touch chunks until there are SCOPEPROF__SPARE spare ones, the
 * budget has no room or a drain is due (it comes first: scopeprof__drain_due)
 * and can be made (the clock rate is known: scopeprof__writer_main). The
 * pages are written now, on this thread, rather than by the first event that
 * lands on each. Returns 0 if a chunk was due and could not be mapped (out
 * of memory, or of mappings), else 1. */
SCOPEPROF__INTERNAL int scopeprof__writer_refill(scopeprof__state *g) {
    for (;;) {
        /* malloc under the registry lock, which fork's prepare handler
         * takes: a fork never finds this thread inside the allocator (ASan's,
         * in gcc 12, stayed locked in the child: its leak check hung). The
         * chunk is reachable from the registry while its pages are touched
         * (g->wr.touching), without the lock: a child forked meanwhile frees
         * it, and holding the lock for the 16 page faults disturbed the GPU
         * tests' clock alignment under ASan. */
        scopeprof__lock(g);
        pthread_mutex_lock(&g->buf.lock);
        int go = scopeprof__refill_due(g, SCOPEPROF__SPARE) && !g->life.finalized &&
                 (!scopeprof__drain_due(g) || scopeprof__rate_wait(g));
        pthread_mutex_unlock(&g->buf.lock);
        scopeprof__chunk *c = go ? scopeprof__chunk_map() : NULL;
        g->wr.touching = c;
        scopeprof__unlock(g);
        if (!c) return !go;
        scopeprof__chunk_touch(c);
        scopeprof__lock(g);
        g->wr.touching = NULL;
        pthread_mutex_lock(&g->buf.lock);
        scopeprof__spare_push(g, c);
        g->buf.bytes += SCOPEPROF__CHUNK_BYTES;
        if (g->buf.bytes > g->buf.peak_bytes) g->buf.peak_bytes = g->buf.bytes;
        pthread_mutex_unlock(&g->buf.lock);
        scopeprof__unlock(g);
    }
}

/* Write the queue SCOPEPROF__BATCH chunks at a time, taking the registry
 * lock for each batch, as long as scopeprof__drain_goes_on says; with
 * `partials` (the timed flush), all of it, then what live threads have
 * published, and the steps that ended since the last STEPS chunk. Waits
 * for no GPU: chunks with running GPU scopes wait for a later round, and
 * with a GPU backend the partial chunks are left to the exit's write.
 * Returns the chunks written. */
SCOPEPROF__INTERNAL int scopeprof__writer_drain(scopeprof__state *g, int partials) {
    int wrote = 0;
    for (int more = 1; more;) {
        scopeprof__lock(g);
        if (g->life.finalized || g->wr.paused) {
            scopeprof__unlock(g);
            return wrote;
        }
        uint32_t n = scopeprof__write_some(g, 0, SCOPEPROF__BATCH);
        wrote += (int)n;
        more = 0;
        if (n) {
            int l = scopeprof__qlock(g);
            more = scopeprof__drain_goes_on(g, partials);
            scopeprof__qunlock(g, l);
        }
        if (!more && partials && !g->gpu.take) scopeprof__write_partials(g);
        if (!more && partials) scopeprof__write_steps(g); /* a SIGKILL keeps the steps that ended */
        if (!more) scopeprof__reap_threads(g);
        scopeprof__unlock(g);
    }
    return wrote;
}

/* Whether the writer is the process's last thread: the program's main thread
 * called pthread_exit and every other thread has ended, which would have
 * ended the process (exit(0)) had the writer not been there (and, as it
 * blocks every signal, it would not even end on SIGTERM). From
 * /proc/self/stat: the main thread's state (field 3; 'Z' once it has
 * exited, while it still counts) and the thread count (field 20). 0 when it
 * cannot be read. */
SCOPEPROF__INTERNAL int scopeprof__writer_alone(void) {
    char b[1024];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, b, sizeof b - 1);
    close(fd);
    if (n <= 0) return 0;
    b[n] = 0;
    const char *p = strrchr(b, ')'); /* the name may hold spaces and parentheses */
    if (!p || p[1] != ' ') return 0;
    char state = p[2];
    for (int field = 2; p && field < 20; field++) p = strchr(p + 1, ' ');
    long threads = p ? atol(p + 1) : 0;
    return threads == 1 || (threads == 2 && state == 'Z');
}

/* Wait on the writer's wake-up until CLOCK_MONOTONIC time `at` (ns; the
 * condition's clock: scopeprof__writer_init_locks), or a signal of it;
 * asleep (a thread wakes it when work is due: scopeprof__writer_wake_due)
 * if `asleep`, and awake again after. buf.lock held. */
static inline void scopeprof__writer_wait(scopeprof__state *g, uint64_t at, int asleep) {
    struct timespec ts = {(time_t)(at / 1000000000u), (long)(at % 1000000000u)};
    g->wr.asleep = asleep;
    pthread_cond_timedwait(&g->wr.wake, &g->buf.lock, &ts);
    g->wr.asleep = 0;
}

SCOPEPROF__INTERNAL void *scopeprof__writer_main(void *arg) {
    scopeprof__state *g = (scopeprof__state *)arg;
    scopeprof__sigs_all_held = 1; /* scopeprof__writer_start made it so */
    __atomic_store_n(&g->wr.up, 1, __ATOMIC_RELEASE);
    prctl(PR_SET_NAME, "scopeprof-write", 0, 0, 0);
    uint64_t period = (uint64_t)g->cfg.flush_ms * 1000000u, last = scopeprof__mono_ns();
    scopeprof__writer_refill(g);
    pthread_mutex_lock(&g->buf.lock);
    while (!g->life.finalized && g->wr.state == SCOPEPROF__WRITER_RUNNING) {
        uint64_t now = scopeprof__mono_ns();
        struct timespec cpu; /* its CPU so far, for the exit's line (scopeprof__print_own_cost): a
                              * system call a look or a batch written, 0.1-0.3 us */
        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
            g->wr.cpu_ns = (uint64_t)cpu.tv_sec * 1000000000u + (uint64_t)cpu.tv_nsec;
        int timed = now - last >= period, look = scopeprof__writer_look_due(g);
        if (!timed && !look && !scopeprof__writer_has_work(g)) { /* polled, or asleep till the timed flush */
            uint64_t at = scopeprof__writer_next_look(g, now, last + period);
            scopeprof__writer_wait(g, at, g->wr.asleep);
            continue;
        }
        /* The first write needs the clock rate, which takes 20 ms from the
         * program's start to measure (scopeprof__calibrate): till then the
         * writer touches new chunks for the threads, rather than sleep in
         * the write while they touch their own. */
        uint64_t early = scopeprof__rate_wait(g);
        int drain = !early && (timed || look || scopeprof__drain_due(g)), wrote = 0;
        timed = timed && !early;
        pthread_mutex_unlock(&g->buf.lock);
        int mapped = drain ? 1 : scopeprof__writer_refill(g); /* a drain comes first: it recycles chunks */
        if (drain) wrote = scopeprof__writer_drain(g, timed);
        mapped &= scopeprof__writer_refill(g);
        if (timed) last = now;
        if (timed && scopeprof__writer_alone()) exit(0); /* as the last thread's end would */
        pthread_mutex_lock(&g->buf.lock);
        if (wrote) g->wr.polled = 0; /* a look's batch waits for a write: the rate, a GPU, a callback */
        if (early) {
            scopeprof__writer_wait(g, now + early, 1); /* or a thread's wake-up: refill */
        } else if (!mapped && !drain) {
            /* Woken to refill, and mmap failed: no loop round the locks of
             * its own until memory comes back; the threads map their own or
             * stop (scopeprof__oom). A thread that queues work wakes it, as
             * a drain recycles chunks (a refill due wakes it too, at most
             * once a chunk switch). */
            scopeprof__writer_wait(g, last + period, 1);
        } else if (drain && !wrote && !timed) {
            /* Due but nothing could be written (a schedule's cycle callback
             * runs, or the oldest chunk's GPU work does): a millisecond's
             * wait, not a loop round the registry lock. */
            scopeprof__writer_wait(g, scopeprof__mono_ns() + 1000000u, 0);
        }
    }
    pthread_mutex_unlock(&g->buf.lock);
    return NULL;
}

/* Start the process's writer once (first thread to record), with every
 * signal blocked in it. If it cannot start, recording threads write, as with
 * SCOPEPROF_WRITER=0. Its code is that of the module that made the registry
 * (g->wr.main), which is pinned: a dlclose'd library's copy would vanish
 * under it. */
SCOPEPROF__INTERNAL void scopeprof__writer_start(scopeprof__state *g) {
    if (__atomic_load_n(&g->wr.state, __ATOMIC_ACQUIRE) != SCOPEPROF__WRITER_NONE) return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* held here too: buf.lock is taken */
    int cancel; /* off while buf.lock is held: the wait below sleeps (state.h, scopeprof__hold) */
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
    pthread_mutex_lock(&g->buf.lock);
    if (g->wr.state == SCOPEPROF__WRITER_NONE) {
        pthread_attr_t a;
        pthread_t th;
        int ok = pthread_attr_init(&a) == 0;
        ok = ok && pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED) == 0 &&
             pthread_create(&th, &a, g->wr.main, g) == 0;
        pthread_attr_destroy(&a);
        __atomic_store_n(&g->wr.state, ok ? SCOPEPROF__WRITER_RUNNING : SCOPEPROF__WRITER_NEVER,
                         __ATOMIC_RELEASE);
        /* Wait (up to a second) until the writer runs its own code: the
         * thread's start-up before it, in the C library and in sanitizers'
         * runtimes, allocates. A fork that caught it there left the
         * allocator's lock held in the child under ASan, whose leak check
         * at exit then hung (tests/life, fork: 1 run in about 20). Slept
         * in steps of 20 us, not spun with sched_yield: on a machine whose
         * cores are all busy the writer needs this thread's CPU to start. */
        for (uint64_t t0 = scopeprof__mono_ns(); ok && !__atomic_load_n(&g->wr.up, __ATOMIC_ACQUIRE) &&
                                                  scopeprof__mono_ns() - t0 < 1000000000u;) {
            struct timespec step = {0, 20000};
            nanosleep(&step, NULL); /* a cancellation point: cancellation is off */
        }
    }
    pthread_mutex_unlock(&g->buf.lock);
    pthread_setcancelstate(cancel, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

#ifdef __cplusplus
}
#endif
#endif /* writer.h */
/* ==== part: include/parts/survival.h ==== */
/* survival.h: the program's life around the profiler: thread exit, process
 * exit, fork, signals. */
#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON
#ifdef __cplusplus
extern "C" {
#endif

/* Thread exit (pthread key destructor): close ranges left open, queue the
 * thread's partial chunk. The state stays in the registry for the output. */
/* Report and close the thread's PROFILE_BEGIN ranges still open when `when`
 * happened. Takes the lock to report (the site table may be growing in
 * another thread) and releases it to close them (closing may need a new
 * chunk, which takes the lock). */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__close_open_ranges(scopeprof__state *g, scopeprof__thread *t,
                                                      const char *when) {
    if (!t || !t->nranges) return;
    scopeprof__lock(g);
    for (uint32_t i = t->nranges; i-- > 0;) {
        const scopeprof__range *r = &t->ranges[i];
        const scopeprof__siterec *sr = scopeprof__site_find(g, r->site);
        scopeprof__warn("scopeprof: PROFILE_BEGIN(\"%s\") at %s:%u was still open when %s; "
                        "closed there", sr ? sr->name : "?", sr ? sr->file : "?",
                        sr ? sr->line : 0, when);
    }
    scopeprof__unlock(g);
    /* A range that scopes opened inside it outlive stays counted in the
     * depth (scopeprof__range_pop). Here the thread or the program ends:
     * those scopes never close, and the depth is theirs alone (the line on
     * scopes still open counted the range too). */
    uint32_t kept = 0;
    while (t->nranges) {
        kept += t->depth > t->ranges[t->nranges - 1].depth + 1;
        scopeprof__range_pop(t, scopeprof__ticks());
    }
    scopeprof__depth_set(t, t->depth > kept ? t->depth - kept : 0);
}

SCOPEPROF__INTERNAL void scopeprof__thread_exit(void *p) {
    scopeprof__thread *t = (scopeprof__thread *)p;
    scopeprof__state *g = scopeprof__g;
    if (!t || !g) return;
    scopeprof__tls_set(t);
    scopeprof__close_open_ranges(g, t, "its thread exited");
    scopeprof__lock(g);
    if (!t->explicit_name) scopeprof__self_name(t->name); /* may have been set since */
    if (t->depth > 0 && !g->life.finalized)
        /* pthread_exit or pthread_cancel inside scopes: C code built without
         * -fexceptions runs no cleanup on that unwinding, so they never
         * close. Their start and site live on the dead stack: say so. */
        scopeprof__warn("scopeprof: thread %llu ('%s') ended (pthread_exit or pthread_cancel) "
                        "inside %u open scope(s); they are not in the trace",
                        (unsigned long long)t->tid, t->name, t->depth);
    t->alive = 0;
    pthread_mutex_lock(&g->buf.lock);
    if (!g->life.finalized && t->chunk) {
        uint32_t n = (uint32_t)(__atomic_load_n(&t->cur, __ATOMIC_ACQUIRE) - t->chunk->ev);
        scopeprof__queue(g, t, t->chunk, n);
        t->chunk = NULL;
        t->cur = t->lim = NULL;
    }
    pthread_mutex_unlock(&g->buf.lock);
    free(t->ranges);
    t->ranges = NULL;
    t->nranges = t->rcap = 0;
    scopeprof__unlock(g);
    scopeprof__tls_set(NULL);
}

/* ---- Scopes left without closing ---------------------------------------------
 * A longjmp (error handling in libpng, libjpeg, Lua...) out of scopes skips
 * their cleanup: they never close, and their depth stays counted. The next
 * scope to close that encloses them finds the thread's depth above its own
 * plus one (scope_end, one compare) and restores it; the scopes that closed
 * inside the abandoned ones, and those opened after the jump (one level
 * deeper per scope left), count as its children (summary.h,
 * scopeprof__sum_gather). The abandoned scopes themselves are lost (their
 * starts and sites lived on the frames the jump discarded; keeping them
 * elsewhere would cost every scope): so they are counted and said at exit
 * (scopeprof__finalize), never silently missing. Ranges
 * (PROFILE_BEGIN) opened inside the closing scope and still open are not
 * abandoned scopes: they are told apart here. No lock, no allocation: this
 * may run in a signal handler. */
SCOPEPROF__API void scopeprof__scopes_left(scopeprof__thread *t, uint32_t depth, uint32_t site) {
    uint32_t ranges = 0;
    for (uint32_t i = 0; i < t->nranges; i++) ranges += t->ranges[i].depth > depth;
    if (t->depth <= depth + 1 + ranges) return;
    scopeprof__state *g = scopeprof__g;
    if (!g) return;
    uint64_t left = t->depth - depth - 1 - ranges;
    if (__atomic_fetch_add(&g->life.scopes_left, left, __ATOMIC_RELAXED) == 0) {
        g->life.left_site = site;
        g->life.left_tid = t->tid;
    }
}

/* A scope that closed on another thread than it opened on (scope_end): left
 * out, counted, said at exit. The thread it opened on keeps it in its depth,
 * so that thread's scopes after it are one level deeper until a scope of
 * that thread around it closes (which then counts it as left). No lock:
 * this may run in a signal handler. */
SCOPEPROF__API void scopeprof__scope_moved(uint32_t site) {
    scopeprof__state *g = scopeprof__g;
    if (g && __atomic_fetch_add(&g->life.moved, 1, __ATOMIC_RELAXED) == 0) g->life.moved_site = site;
}

/* At exit: how many scopes were left, and where it was first seen; how
 * many closed on another thread; how many were too deep for the exit
 * table's levels (summary.h). Lock held. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__say_scopes_left(scopeprof__state *g) {
    uint64_t moved = __atomic_load_n(&g->life.moved, __ATOMIC_RELAXED);
    const scopeprof__siterec *r = moved ? scopeprof__site_find(g, g->life.moved_site) : NULL;
    if (moved)
        scopeprof__warn("scopeprof: %llu scope(s) closed on another thread than the one they opened on (untied "
                        "OpenMP tasks that the runtime moved; tied tasks, the default, stay), first '%s' at "
                        "%s:%u: left out; the scopes that thread opened after one are one level deeper%s",
                        (unsigned long long)moved, r ? r->name : "?", r ? r->file : "?", r ? r->line : 0,
                        r ? "" : " (no such scope: a jump into a block past its PROFILE_SCOPE, whose close "
                                 "then read an unset variable?)");
    if (g->life.deep)
        scopeprof__warn("scopeprof: %llu scope(s) were %u or more deep, past the levels the exit table keeps (deep "
                        "recursion, or a scope that never closes in a loop): the table counts their time as self "
                        "time of the nearest scope around them within those levels; `scopeprof table` on the trace "
                        "has them exact", (unsigned long long)g->life.deep, g->life.deep_at);
    uint64_t n = __atomic_load_n(&g->life.scopes_left, __ATOMIC_RELAXED);
    if (!n) return;
    r = scopeprof__site_find(g, g->life.left_site);
    scopeprof__warn("scopeprof: %llu scope(s) were left without closing (a longjmp or a computed goto out of them; a "
                    "scope that closed on another thread, as an untied OpenMP task that moved does, "
                    "which is left out; or a range whose PROFILE_END came while a scope opened inside "
                    "it was open, which counts as one; first found on thread %llu when '%s' at %s:%u closed): "
                    "they are in neither the table nor the trace, and their own time counts as the self "
                    "time of the scope around them (docs/DESIGN.md)",
                    (unsigned long long)n, (unsigned long long)g->life.left_tid,
                    r ? r->name : "?", r ? r->file : "?", r ? r->line : 0);
}

/* fork(): the parent's lock is held across the fork so the child inherits a
 * consistent registry. The child starts a fresh profile: the parent's events
 * and other threads are dropped (they are the parent's to write), the sites
 * are kept (call sites cache their ids), and the output gets the child's pid. */
/* Every lock of the registry is held across the fork, in the lock order
 * (state.h, "Locks"). A lock left held by another
 * thread would stay held forever in the child (the first PROFILE_ALLOC
 * there hung when the fork came while a thread held mem.lock). */
SCOPEPROF__INTERNAL void scopeprof__atfork_prepare(void) {
    scopeprof__state *g = scopeprof__g;
    if (!g) return;
    scopeprof__lock(g);
    pthread_mutex_lock(&g->reg.lock);
    pthread_mutex_lock(&g->buf.lock);
    pthread_mutex_lock(&g->mem.lock);
}

SCOPEPROF__INTERNAL void scopeprof__atfork_parent(void) {
    scopeprof__state *g = scopeprof__g;
    if (!g) return;
    pthread_mutex_unlock(&g->mem.lock);
    pthread_mutex_unlock(&g->buf.lock);
    pthread_mutex_unlock(&g->reg.lock);
    scopeprof__unlock(g);
}

/* The child's memory figures start at zero: its peak is what it allocates.
 * Blocks the parent recorded are still live in the child's copy of the
 * memory; their entries stay, marked, so that freeing one is neither an
 * event nor an unknown free. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__atfork_child_memory(scopeprof__state *g) {
    pthread_mutex_init(&g->mem.lock, NULL);
    for (uint32_t i = 0; i < g->mem.live_cap; i++)
        if (g->mem.live[i].ptr) g->mem.live[i].bytes = SCOPEPROF__INHERITED;
    memset(g->mem.cur, 0, sizeof g->mem.cur);
    memset(g->mem.peak, 0, sizeof g->mem.peak);
    g->mem.used = 0;
    g->mem.unknown_frees = 0;
    g->mem.unknown_free_site = 0;
}

SCOPEPROF__INTERNAL void scopeprof__atfork_child(void) {
    scopeprof__state *g = scopeprof__g;
    if (!g) return;
    pthread_mutex_init(&g->lock, NULL);
    pthread_mutex_init(&g->reg.lock, NULL);
    /* What prepare's scopeprof__lock held goes back, as its unlock would
     * give it: the signals (a child born with all of them blocked ignored
     * SIGTERM and Ctrl-C) and the thread's cancelability. */
    scopeprof__in_lock = 0;
    scopeprof__sigs_release(scopeprof__lock_unblock);
    pthread_setcancelstate(scopeprof__lock_cancel, NULL);
    /* No writer in the child: its threads write their chunks themselves. */
    scopeprof__writer_init_locks(g);
    g->wr.state = SCOPEPROF__WRITER_NEVER;
    g->wr.cpu_ns = 0; /* the parent's writer's, not the child's cost */
    if (g->wr.touching) { /* the parent's writer was touching it: ours to free */
        munmap(g->wr.touching, sizeof *g->wr.touching);
        g->wr.touching = NULL;
    }
    g->wr.paused = 0;
    g->buf.queued = 0;
    g->buf.self_writes = 0;
    scopeprof__atfork_child_memory(g);
    __atomic_store_n(&g->life.sig_pending, 0, __ATOMIC_RELAXED); /* the parent's signal */
    scopeprof__thread *self = (scopeprof__thread *)pthread_getspecific(g->key);
    /* Every chunk but the forking thread's current one goes to the spare list. */
    while (g->buf.full_head) {
        scopeprof__chunk *c = g->buf.full_head;
        g->buf.full_head = c->next;
        scopeprof__spare_push(g, c);
    }
    g->buf.full_tail = NULL;
    /* The other threads do not exist in the child: their buffers go to the
     * spare list and their state is freed (their GPU state, if any, is left:
     * no GPU runtime survives a fork). */
    for (scopeprof__thread *t = g->reg.threads, *next; t; t = next) {
        next = t->next;
        if (t == self) continue;
        if (t->chunk) scopeprof__spare_push(g, t->chunk);
        free(t->ranges);
        scopeprof__thread_release(g, t);
    }
    g->reg.threads = NULL;
    g->reg.nthreads = 0;
    if (self) {
        self->next = NULL;
        self->nqueued = 0; /* its queued chunks went to the spare list above */
        self->index = g->reg.nthreads++;
        self->tid = scopeprof__gettid();
        self->inherited = self->depth; /* the parent records them (scopeprof__open_own), */
        self->nranges = 0;             /* and its ranges: not closed and recorded here at exit */
        g->reg.threads = self;
        if (self->chunk) {
            self->cur = self->chunk->ev; /* the parent's events are not ours */
            self->chunk->first = 0;
        }
    }
    scopeprof__file_reset(g); /* closes the parent's descriptor: never ours to write */
    g->pid = (int)getpid();
    g->life.parent_pid = (int)getppid();
    if (g->out.path_is_default) {
        scopeprof__default_path(g); /* in the parent's directory (g->out.dir) */
    } else if (!g->out.no_output) {
        /* Explicit SCOPEPROF_OUTPUT: the parent keeps the path and its claim. */
        struct stat st;
        if (g->out.claim_fd >= 0 && fstat(g->out.claim_fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
            (uint64_t)st.st_ino == g->out.claim_ino)
            close(g->out.claim_fd);
        g->out.claim_fd = -1;
        if (g->sched.on) memcpy(g->out.path, g->sched.base_path, sizeof g->out.path); /* not the cycle's (same size) */
        scopeprof__pid_path(g);
    }
    if (g->sched.on) scopeprof__sched_base(g); /* the child's cycles: after its own path, not the parent's */
}

/* The scopes open now on thread t that are its own to record: in a forked
 * child, not those it inherited open (a server forks its workers inside a
 * scope, and they exit inside it: the parent records it). A child that
 * leaves them and then opens scopes it never closes is not counted exactly
 * (knowing when it leaves them would cost every close a compare). */
static inline uint32_t scopeprof__open_own(const scopeprof__thread *t) {
    uint32_t d = __atomic_load_n(&t->depth, __ATOMIC_RELAXED);
    return d > t->inherited ? d - t->inherited : 0;
}

/* The scopes open now on the live threads other than `skip` (their depths,
 * which their own threads move: scopeprof__depth_set), in *threads of them,
 * the first such in *first. Lock held (the thread list). */
SCOPEPROF__INTERNAL uint64_t scopeprof__open_scopes(scopeprof__state *g, const scopeprof__thread *skip,
                                                    uint32_t *threads, const scopeprof__thread **first) {
    uint64_t open = 0;
    for (const scopeprof__thread *t = scopeprof__threads_head(g); t; t = t->next) {
        uint32_t d = t != skip && t->alive ? scopeprof__open_own(t) : 0;
        if (d && !(*threads)++) *first = t;
        open += d;
    }
    return open;
}

/* MEMORY chunk: peak and final net bytes per device used. No allocation. */
SCOPEPROF__INTERNAL void scopeprof__finalize(scopeprof__state *g) {
    if (!g->life.finalized) scopeprof__close_open_ranges(g, scopeprof__tls, "the program exited");
    scopeprof__lock(g);
    if (g->life.finalized) {
        scopeprof__unlock(g);
        return;
    }
    scopeprof__write_all_and_close(g);
    scopeprof__memsnap mem;
    scopeprof__mem_snapshot(g, &mem, 0);
    /* The job table printed at MPI_Finalize stands for rank 0's own; with
     * SCOPEPROF_SUMMARY=all each rank's own table says its rank (mpi.h). */
    char title[160];
    scopeprof__summary_print(g, &mem, g->sum.events != 0 && !g->job.table_printed,
                             scopeprof__rank_title(g, title, sizeof title), 1);
    pthread_mutex_lock(&g->buf.lock);
    uint64_t behind = g->buf.self_writes;
    pthread_mutex_unlock(&g->buf.lock);
    if (behind)
        scopeprof__warn("scopeprof: the background writer fell behind %llu time(s): recording "
                        "threads wrote a chunk themselves each time (nothing was lost)",
                        (unsigned long long)behind);
    scopeprof__say_scopes_left(g);
#if !defined(SCOPEPROF__MPI) && !defined(SCOPEPROF_NO_MPI)
    /* An MPI program whose implementation's file did not see <mpi.h>: none
     * of mpi.h was compiled, and nothing else would say so. Rank 0 (or a
     * singleton) says it, when the program called MPI_Init (MPI_Initialized
     * may be called after MPI_Finalize; a library that merely links MPI in
     * says nothing) and no other module's implementation took part in it
     * (the registry is the process's: a library's copy may finalize). */
    void *sym = g->out.rank <= 0 && !g->job.npts /* another module's MPI part ran */
                    ? dlsym((void *)0 /* RTLD_DEFAULT */, "PMPI_Initialized") : NULL;
    int (*initialized)(int *) = NULL, mpi_on = 0;
    memcpy(&initialized, &sym, sizeof sym); /* ISO C has no cast from an object pointer to a function's */
    if (initialized && initialized(&mpi_on) == 0 && mpi_on)
        scopeprof__warn("scopeprof: this program runs MPI, but the file that defines SCOPEPROF_IMPLEMENTATION did "
                        "not include <mpi.h> before scopeprof.h: no job table, no scopes of MPI calls, and the "
                        "ranks' clocks are aligned by their realtime clocks only (docs/MPI.md); include it there, "
                        "or define SCOPEPROF_MPI (SCOPEPROF_NO_MPI: without MPI on purpose)");
#endif
    /* A schedule that kept nothing because the run ended before or as its
     * first active step began: no file, no table; without this line,
     * nothing at all to say why. */
    int first_active = g->sched.skip_first + g->sched.wait + g->sched.warmup;
    if (g->sched.on && g->sched.cycle == 1 && !g->out.events_written && g->sched.step <= (uint64_t)first_active)
        scopeprof__warn("scopeprof: the run ended after %llu PROFILE_STEP call(s), before the schedule's first "
                        "active step was done (it comes after %d: skip_first=%d, wait=%d, warmup=%d): nothing was "
                        "recorded", (unsigned long long)g->sched.step, first_active, g->sched.skip_first,
                        g->sched.wait, g->sched.warmup);
    /* exit() (or MPI_Abort) called inside scopes of this thread: they never
     * close, and their starts live on its stack. */
    const scopeprof__thread *t = scopeprof__tls;
    if (t && scopeprof__open_own(t))
        scopeprof__warn("scopeprof: the program ended inside %u open scope(s) of thread %llu ('%s') (exit "
                        "or MPI_Abort called in them, or a range's END there): they are not in the trace or the table",
                        scopeprof__open_own(t), (unsigned long long)t->tid, t->name);
    /* Other threads still inside scopes (a worker's loop, a wait): those
     * scopes would close after the trace, so they are in neither. */
    uint32_t threads = 0;
    const scopeprof__thread *first = NULL;
    uint64_t open = scopeprof__open_scopes(g, t, &threads, &first);
    if (open)
        scopeprof__warn("scopeprof: %llu scope(s) were still open on %u other thread(s) when the program ended "
                        "(thread %llu ('%s') among them): a scope is recorded when it closes, so they are not in "
                        "the trace or the table", (unsigned long long)open, threads,
                        (unsigned long long)first->tid, first->name);
    scopeprof__unlock(g);
}

/* PROFILE_FINISH: what the exit does, now, for a process that ends without
 * it: _exit() (Redis's BGSAVE child, any forked child that must not run
 * its parent's atexit handlers) leaves no file otherwise. */
SCOPEPROF__ONCE SCOPEPROF__API void scopeprof__finish(void) {
    scopeprof__thread *t = scopeprof__tls;
    if (!scopeprof__g) return;
    if (t) scopeprof__close_open_ranges(scopeprof__g, t, "PROFILE_FINISH was called"), t->warned_end = 1; /* a later END */
    scopeprof__finalize(scopeprof__g);
}

/* ---- Signals -----------------------------------------------------------------
 * Terminating signals (SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT): write the
 * trace, then let the signal do what it would have done (the exit status is
 * the same as without the profiler). Crashes (SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL, SIGABRT): the same, best effort. The exit table is not printed
 * (stdio is not async-signal-safe).
 *
 * The trace is written under the registry's lock, and a handler must never
 * wait for a lock that the thread it interrupted may hold. So:
 * - lock free (trylock): the handler writes, with write(2) only;
 * - held by the interrupted thread itself (its slow path is half done): the
 *   handler leaves the signal pending in the registry and returns; that
 *   thread finishes its slow path, and scopeprof__unlock writes the trace
 *   and re-raises the signal before anyone else gets the lock;
 * - held by another thread: the handler leaves the signal pending and waits
 *   (trylock, nanosleep) for the holder's unlock, which does the same;
 *   or it gets the lock and writes itself. After 10 s (a holder stuck in a
 *   write to a full pipe, say) it gives up, says so, and lets the signal act.
 * Crash signals cannot return to the faulting code: held by the thread
 * itself, the trace is given up (said on stderr). */
SCOPEPROF__INTERNAL int scopeprof__signal_deferrable(int sig) {
    return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGPIPE || sig == SIGQUIT;
}


/* The signals the trace is written on, where the program has no handler of
 * its own (scopeprof__install_signals), and their names for the line that
 * says so (a handler has no strsignal). */
static const int scopeprof__sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT,
                                      SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static const char *const scopeprof__signames[] = {"SIGINT", "SIGTERM", "SIGHUP", "SIGPIPE", "SIGQUIT",
                                                  "SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT"};

/* The trace, from a handler or at the unlock after one, on signal sig:
 * write(2) only. Lock held. */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__signal_write(scopeprof__state *g, int sig) {
    if (g->life.finalized) return;
    g->life.in_signal = 1;
    /* A write past `ulimit -f` must not kill with SIGXFSZ instead (see
     * scopeprof__xfsz_take_back). Held until the handler returns (the
     * kernel gives its mask back) or the signal acts. */
    sigset_t xfsz;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &xfsz, NULL);
    scopeprof__write_all_and_close(g);
    /* No event kept, no file (a schedule's wait or warm-up, say), or
     * SCOPEPROF_OUTPUT=none: the signal is then not ours to mention. A
     * file that could not be made or written is said (a handler cannot
     * say why: strerror is not for handlers). */
    const char *name = "a signal";
    for (size_t i = 0; i < sizeof scopeprof__sigs / sizeof *scopeprof__sigs; i++)
        if (scopeprof__sigs[i] == sig) name = scopeprof__signames[i];
    int written = scopeprof__trace_written(g);
    if (written || (g->out.events_written && !g->out.no_output)) {
        scopeprof__sig_say("scopeprof: ", name, written ? " received; trace written to '"
                                                        : " received; the trace could not be written to '");
        scopeprof__sig_say(g->out.path, written ? "' (the scopes open at the signal are not in it)\n" : "'\n", NULL);
    }
}

/* Let sig act as if we had never caught it: default action, unblocked in
 * this thread, raised. Returns only for a signal whose default is to go on. */
static inline void scopeprof__reraise(int sig) {
    sigset_t set;
    signal(sig, SIG_DFL);
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
}

SCOPEPROF__INTERNAL void scopeprof__signal_finish(scopeprof__state *g) {
    int sig = __atomic_exchange_n(&g->life.sig_pending, 0, __ATOMIC_ACQ_REL);
    if (!sig) return;
    scopeprof__signal_write(g, sig);
    scopeprof__reraise(sig); /* lock held: nothing is written after the END chunk */
}

SCOPEPROF__INTERNAL void scopeprof__on_signal(int sig) {
    static volatile sig_atomic_t busy;
    int saved_errno = errno; /* a deferred signal returns to the program */
    scopeprof__state *g = scopeprof__g;
    if (busy || !g || g->pid != (int)getpid()) {
        scopeprof__reraise(sig);
        errno = saved_errno;
        return;
    }
    busy = 1;
    if (pthread_mutex_trylock(&g->lock) == 0) {
        scopeprof__signal_write(g, sig);
        scopeprof__reraise(sig);
        pthread_mutex_unlock(&g->lock);
        return;
    }
    int deferrable = scopeprof__signal_deferrable(sig);
    if (scopeprof__lock_mine(g, 1)) {
        if (deferrable) {
            __atomic_store_n(&g->life.sig_pending, sig, __ATOMIC_RELEASE); /* see scopeprof__unlock */
            errno = saved_errno;
            return;
        }
        scopeprof__sig_say("scopeprof: crash inside the profiler's locked code; trace not "
                           "completed\n", NULL, NULL);
        scopeprof__reraise(sig);
        return;
    }
    if (deferrable) __atomic_store_n(&g->life.sig_pending, sig, __ATOMIC_RELEASE);
    for (int i = 0; i < 10000; i++) { /* 10 s */
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        if (pthread_mutex_trylock(&g->lock) == 0) {
            /* The holder released it without finishing (it had checked
             * before we set the flag), or the signal is a crash. */
            __atomic_store_n(&g->life.sig_pending, 0, __ATOMIC_RELEASE);
            scopeprof__signal_write(g, sig);
            scopeprof__reraise(sig);
            pthread_mutex_unlock(&g->lock);
            return;
        }
    }
    scopeprof__sig_say("scopeprof: signal received while another thread held the profiler's lock "
                       "for 10 s; trace not completed\n", NULL, NULL);
    scopeprof__reraise(sig);
}

/* Install the handlers where the program has none (SIG_DFL), once. */
SCOPEPROF__INTERNAL void scopeprof__install_signals(scopeprof__state *g) {
    if (!g->cfg.signals) return;
    for (size_t i = 0; i < sizeof scopeprof__sigs / sizeof *scopeprof__sigs; i++) {
        struct sigaction old, sa;
        if (sigaction(scopeprof__sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL) continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = scopeprof__on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = (int)(SA_RESETHAND | SA_NODEFER); /* 0x80000000 > INT_MAX */
        sigaction(scopeprof__sigs[i], &sa, NULL);
    }
}

#ifdef __cplusplus
}
#endif
#endif /* survival.h */
/* ==== part: include/parts/mpi.h ==== */
/* mpi.h: ranks and clocks across a job (docs/MPI.md).
 * - The cross-rank table: per row, calls, self and total time as min / mean
 *   / max over the ranks, with the rank of each min and max, and the
 *   imbalance (max / mean of self time, Hatchet's load_imbalance); under it
 *   the straggler and, per MPI call, who waited. The job table at
 *   MPI_Finalize and `scopeprof table --per-rank` both print it with
 *   scopeprof_ranks_print, so the two always agree.
 * - The CLOCK chunk of every trace file: the host, the rank, and the offsets
 *   of this process's clock to rank 0's measured at MPI_Init and
 *   MPI_Finalize, from which the reporter puts every rank on rank 0's clock.
 * - With MPI (the implementation's file includes <mpi.h> before this header,
 *   or defines SCOPEPROF_MPI; SCOPEPROF_NO_MPI opts out): MPI_Init,
 *   MPI_Init_thread and MPI_Finalize through MPI's profiling interface
 *   (PMPI), the clock offsets and the job table there, and a scope of its
 *   own for each common MPI call the program makes. Without MPI none of
 *   that is compiled. */

/* SCOPEPROF__MPI, "with MPI", is decided in state.h (survival.h's exit
 * needs it too). */

/* ---- The cross-rank table: declarations (the reporter's too) -------------
 * Compiled for the reporter (SCOPEPROF_AGGREGATION) and MPI programs only:
 * a program without MPI never prints it. */
#if (defined(SCOPEPROF_AGGREGATION) || defined(SCOPEPROF__MPI)) && !defined(SCOPEPROF__RANKS_H)
#define SCOPEPROF__RANKS_H
#ifdef __cplusplus
extern "C" {
#endif

/* The table's columns are ranks (or files without one, in the reporter). A
 * row's figures for one metric over them: a column without the row counts
 * as 0 (that rank never ran it), so an idle rank shows as the min. */
typedef struct scopeprof_rank_stat {
    int64_t min, max, sum;
    uint32_t min_at, max_at; /* columns */
} scopeprof_rank_stat;
enum { SCOPEPROF_RANK_CALLS, SCOPEPROF_RANK_SELF, SCOPEPROF_RANK_TOTAL, SCOPEPROF_RANK_METRICS };
typedef struct scopeprof_rank_row {
    scopeprof_rank_stat s[SCOPEPROF_RANK_METRICS];
    uint32_t seen;    /* columns that ran the row */
    uint32_t next;    /* the column after the last one added */
    uint32_t missing; /* the first column without the row; UINT32_MAX: none */
} scopeprof_rank_row;
/* Rows are those of an aggregation (scopeprof_agg: key, name, the sums the
 * sort uses), kept by the caller; this holds what varies over columns. */
typedef struct scopeprof_ranks {
    uint32_t ncols;
    int32_t *rank;    /* per column: its rank, or -1 (then shown as file N) */
    int64_t *outside; /* per column: self time outside MPI calls */
    scopeprof_rank_row *rows;
    uint32_t cap;
} scopeprof_ranks;

/* 0, or -1 when out of memory. Columns start without a rank. */
int scopeprof_ranks_init(scopeprof_ranks *x, uint32_t ncols);
void scopeprof_ranks_free(scopeprof_ranks *x);
/* Column `col` ran the aggregation's row `row` (named `name`): its calls,
 * self and total time. Each column adds each row once, columns in
 * increasing order. Returns 0, or -1 when out of memory. */
int scopeprof_ranks_add(scopeprof_ranks *x, uint32_t row, uint32_t col, const char *name,
                        uint64_t calls, int64_t self_ns, int64_t total_ns);
/* After the last column: rows some column lacked get their 0 as the min. */
void scopeprof_ranks_done(scopeprof_ranks *x, uint32_t nrows);
/* Whether a row is an MPI call (the scopes mpi.h records: MPI_*). */
int scopeprof_ranks_is_mpi(const char *name);
/* max / mean of a row's self time over the columns (0 when the mean is 0). */
double scopeprof_ranks_imbalance(const scopeprof_ranks *x, const scopeprof_rank_row *r);
/* "rank 3", or "file 2" for a column without a rank. */
char *scopeprof_ranks_label(const scopeprof_ranks *x, uint32_t col, char *buf, size_t n);
/* The table (rows sorted by `key` on the aggregation's sums, row_limit <= 0:
 * all), its totals, the line `more` (the rows the limit left out; NULL:
 * none), then the straggler and who waited in each MPI call. */
void scopeprof_ranks_print(FILE *out, const scopeprof_agg *a, const scopeprof_ranks *x,
                           scopeprof_sort key, int row_limit, const char *more);

#ifdef __cplusplus
}
#endif
#endif /* cross-rank declarations */

/* ---- The cross-rank table --------------------------------------------------- */
#if defined(SCOPEPROF__IMPL) && (defined(SCOPEPROF_AGGREGATION) || defined(SCOPEPROF__MPI))
#ifdef __cplusplus
extern "C" {
#endif

SCOPEPROF__API int scopeprof_ranks_init(scopeprof_ranks *x, uint32_t ncols) {
    memset(x, 0, sizeof *x);
    x->ncols = ncols;
    x->rank = (int32_t *)malloc((ncols ? ncols : 1) * sizeof *x->rank);
    x->outside = (int64_t *)calloc(ncols ? ncols : 1, sizeof *x->outside);
    if (!x->rank || !x->outside) return scopeprof_ranks_free(x), -1;
    for (uint32_t c = 0; c < ncols; c++) x->rank[c] = -1;
    return 0;
}

SCOPEPROF__API void scopeprof_ranks_free(scopeprof_ranks *x) {
    free(x->rank);
    free(x->outside);
    free(x->rows);
    memset(x, 0, sizeof *x);
}

SCOPEPROF__API int scopeprof_ranks_is_mpi(const char *name) { return strncmp(name, "MPI_", 4) == 0; }

SCOPEPROF__API int scopeprof_ranks_add(scopeprof_ranks *x, uint32_t row, uint32_t col, const char *name,
                                       uint64_t calls, int64_t self_ns, int64_t total_ns) {
    if (row >= x->cap) {
        uint32_t cap = x->cap ? x->cap : 64;
        while (cap <= row) cap *= 2;
        scopeprof_rank_row *v = (scopeprof_rank_row *)realloc(x->rows, cap * sizeof *v);
        if (!v) return -1;
        memset(v + x->cap, 0, (cap - x->cap) * sizeof *v);
        x->rows = v;
        x->cap = cap;
    }
    scopeprof_rank_row *r = &x->rows[row];
    if (!r->seen) r->missing = UINT32_MAX;
    if (r->next < col && r->missing == UINT32_MAX) r->missing = r->next; /* columns skipped: 0 there */
    int64_t v[SCOPEPROF_RANK_METRICS] = {calls > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)calls,
                                         self_ns, total_ns};
    for (int m = 0; m < SCOPEPROF_RANK_METRICS; m++) {
        scopeprof_rank_stat *s = &r->s[m];
        if (!r->seen || v[m] < s->min) s->min = v[m], s->min_at = col;
        if (!r->seen || v[m] > s->max) s->max = v[m], s->max_at = col;
        if (__builtin_add_overflow(s->sum, v[m], &s->sum)) s->sum = INT64_MAX;
    }
    r->seen++;
    r->next = col + 1;
    if (col < x->ncols && !scopeprof_ranks_is_mpi(name)) x->outside[col] += self_ns;
    return 0;
}

SCOPEPROF__API void scopeprof_ranks_done(scopeprof_ranks *x, uint32_t nrows) {
    for (uint32_t i = 0; i < nrows && i < x->cap; i++) {
        scopeprof_rank_row *r = &x->rows[i];
        if (!r->seen) continue;
        if (r->next < x->ncols && r->missing == UINT32_MAX) r->missing = r->next;
        if (r->missing == UINT32_MAX) continue;
        for (int m = 0; m < SCOPEPROF_RANK_METRICS; m++)
            if (r->s[m].min > 0) r->s[m].min = 0, r->s[m].min_at = r->missing;
    }
}

SCOPEPROF__API double scopeprof_ranks_imbalance(const scopeprof_ranks *x, const scopeprof_rank_row *r) {
    double mean = (double)r->s[SCOPEPROF_RANK_SELF].sum / (double)(x->ncols ? x->ncols : 1);
    return mean > 0 ? (double)r->s[SCOPEPROF_RANK_SELF].max / mean : 0;
}

SCOPEPROF__API char *scopeprof_ranks_label(const scopeprof_ranks *x, uint32_t col, char *buf, size_t n) {
    if (col < x->ncols && x->rank[col] >= 0) snprintf(buf, n, "rank %d", (int)x->rank[col]);
    else snprintf(buf, n, "file %u", col + 1);
    return buf;
}

/* A min or max cell: the figure and where it is ("r3": rank 3; "f2": file
 * 2, which has no rank). */
static inline void scopeprof__rank_cell(char *buf, size_t n, const scopeprof_ranks *x, const char *fig,
                                        uint32_t col) {
    if (col < x->ncols && x->rank[col] >= 0) snprintf(buf, n, "%s r%d", fig, (int)x->rank[col]);
    else snprintf(buf, n, "%s f%u", fig, col + 1);
}

/* A metric's figure: a count, or a time in PyTorch's format. */
static inline void scopeprof__rank_fig(char *buf, size_t n, int metric, double v) {
    if (metric == SCOPEPROF_RANK_CALLS) snprintf(buf, n, "%.0f", v);
    else scopeprof_format_time(buf, n, v / 1e3);
}

/* The columns, briefly: "0-3", "0, 2, 5-7" when all have a rank, else
 * "rank 0, file 2"...; at most 8 items, then how many more. */
static inline void scopeprof__rank_list(char *buf, size_t n, const scopeprof_ranks *x) {
    size_t l = 0;
    uint32_t items = 0, nranked = 0;
    for (uint32_t c = 0; c < x->ncols; c++) nranked += x->rank[c] >= 0;
    buf[0] = 0;
    for (uint32_t c = 0; c < x->ncols && l < n; c++) {
        if (items == 8) {
            snprintf(buf + l, n - l, " and %u more", x->ncols - c);
            return;
        }
        const char *sep = items ? ", " : "";
        if (x->rank[c] < 0) {
            l += (size_t)snprintf(buf + l, n - l, "%sfile %u", sep, c + 1);
        } else if (nranked < x->ncols) { /* files, some with a rank */
            l += (size_t)snprintf(buf + l, n - l, "%srank %d", sep, (int)x->rank[c]);
        } else {
            uint32_t e = c; /* a run of consecutive ranks */
            while (e + 1 < x->ncols && x->rank[e + 1] == x->rank[e] + 1) e++;
            if (e > c + 1) l += (size_t)snprintf(buf + l, n - l, "%s%d-%d", sep, (int)x->rank[c], (int)x->rank[e]);
            else l += (size_t)snprintf(buf + l, n - l, "%s%d", sep, (int)x->rank[c]), e = c;
            c = e;
        }
        items++;
    }
}

SCOPEPROF__API void scopeprof_ranks_print(FILE *out, const scopeprof_agg *a, const scopeprof_ranks *x,
                                          scopeprof_sort key, int row_limit, const char *more) {
    enum { NUM_W = 12, AT_W = 16, NCOL = 10 };
    static const char *const heads[NCOL] = {"Calls min", "Calls mean", "Calls max", "Self min",
                                            "Self mean", "Self max",   "Total min", "Total mean",
                                            "Total max", "Imbalance"};
    int w[NCOL];
    for (int c = 0; c < NCOL; c++) { /* a min or max with its rank is wider (a count less so) */
        w[c] = c % 3 == 1 || c == NCOL - 1 ? NUM_W : c < 3 ? NUM_W : AT_W;
        if ((int)strlen(heads[c]) > w[c]) w[c] = (int)strlen(heads[c]);
    }
    uint32_t *idx = scopeprof_agg_sorted(a, key);
    if (!idx) return;
    uint32_t nshow = scopeprof__rows_shown(a->nrows, row_limit);
    int name_w = 4;
    for (uint32_t i = 0; i < a->nrows; i++) {
        int l = (int)scopeprof__escaped(NULL, 0, a->rows[i].name) + 4; /* as scopeprof__name_cell shows it */
        if (a->rows[i].extra) l += (int)scopeprof__escaped(NULL, 0, a->rows[i].extra) + 3;
        if (l > name_w) name_w = l;
    }
    if (name_w > SCOPEPROF__NAME_W) name_w = SCOPEPROF__NAME_W;
    char sep[512], b[96], fig[48];
    size_t sl = 0;
    memset(sep, '-', (size_t)name_w);
    sl = (size_t)name_w;
    for (int c = 0; c < NCOL; c++) {
        sep[sl++] = ' ', sep[sl++] = ' ';
        memset(sep + sl, '-', (size_t)w[c]);
        sl += (size_t)w[c];
    }
    sep[sl] = 0;
    scopeprof__rank_list(b, sizeof b, x);
    int files = 0, last = 0; /* columns without a rank: files, in the reporter; the last rank: the key's example */
    uint32_t ranks = 0;       /* distinct: fewer than the columns when a rank's cycles or forked children are files */
    for (uint32_t c = 0; c < x->ncols; c++) {
        files |= x->rank[c] < 0, last = x->rank[c] > last ? x->rank[c] : last;
        uint32_t k = 0;
        while (k < c && x->rank[k] != x->rank[c]) k++;
        ranks += k == c;
    }
    char of[32] = "";
    if (!files && ranks < x->ncols) snprintf(of, sizeof of, " of %u rank%s", ranks, ranks == 1 ? "" : "s");
    fprintf(out, "Across %u %s%s%s (%s); Self and Total are CPU time; a min or max names its %s (r%d: rank %d%s)\n",
            x->ncols, files || of[0] ? "file" : "rank", x->ncols == 1 ? "" : "s", of, b, files ? "file" : "rank",
            last, last, files ? ", f2: file 2, which has no rank" : "");
    fprintf(out, "%s\n%-*s", sep, name_w, "Name");
    for (int c = 0; c < NCOL; c++) fprintf(out, "  %*s", w[c], heads[c]);
    fprintf(out, "\n%s\n", sep);
    double ncols = x->ncols ? (double)x->ncols : 1.0;
    for (uint32_t i = 0; i < nshow; i++) {
        const scopeprof_row *row = &a->rows[idx[i]];
        char name[SCOPEPROF__NAME_W + 1], full[512];
        snprintf(full, sizeof full, "%s%s%s", row->name, row->extra ? " | " : "", row->extra ? row->extra : "");
        fprintf(out, "%-*s", name_w, scopeprof__name_cell(name, full, name_w));
        static scopeprof_rank_row none; /* zero: a row no column added (out of memory); never written */
        const scopeprof_rank_row *r = idx[i] < x->cap ? &x->rows[idx[i]] : &none;
        for (int m = 0; m < SCOPEPROF_RANK_METRICS; m++) {
            const scopeprof_rank_stat *s = &r->s[m];
            scopeprof__rank_fig(fig, sizeof fig, m, (double)s->min);
            scopeprof__rank_cell(b, sizeof b, x, fig, s->min_at);
            fprintf(out, "  %*s", w[3 * m], b);
            if (m == SCOPEPROF_RANK_CALLS) snprintf(fig, sizeof fig, "%.2f", (double)s->sum / ncols);
            else scopeprof__rank_fig(fig, sizeof fig, m, (double)s->sum / ncols);
            fprintf(out, "  %*s", w[3 * m + 1], fig);
            scopeprof__rank_fig(fig, sizeof fig, m, (double)s->max);
            scopeprof__rank_cell(b, sizeof b, x, fig, s->max_at);
            fprintf(out, "  %*s", w[3 * m + 2], b);
        }
        double imb = scopeprof_ranks_imbalance(x, r); /* 0: no self time anywhere (0 / 0) */
        fprintf(out, "  %*s\n", w[NCOL - 1], imb > 0 ? (snprintf(b, sizeof b, "%.2f", imb), b) : "-");
    }
    fprintf(out, "%s\n", sep);
    int64_t total = scopeprof_agg_self_total(a);
    fprintf(out, "Self CPU time total: %s (mean per %s %s); Imbalance: max / mean of self CPU time\n",
            scopeprof_format_time(b, sizeof b, (double)total / 1e3), files ? "file" : "rank",
            scopeprof_format_time(fig, sizeof fig, (double)total / 1e3 / ncols));
    if (a->has_gpu)
        fprintf(out, "Self GPU time total: %s\n",
                scopeprof_format_time(b, sizeof b, (double)scopeprof_agg_gpu_self_total(a) / 1e3));
    if (more) fprintf(out, "%s\n", more);
    /* The straggler: the column with the most self time outside MPI calls
     * (time in MPI calls is mostly waiting for it). */
    int any_mpi = 0;
    for (uint32_t i = 0; i < a->nrows; i++) any_mpi |= scopeprof_ranks_is_mpi(a->rows[i].name);
    if (x->ncols > 1) {
        uint32_t hi = 0, lo = 0;
        double sum = 0;
        for (uint32_t c = 0; c < x->ncols; c++) {
            sum += (double)x->outside[c];
            if (x->outside[c] > x->outside[hi]) hi = c;
            if (x->outside[c] < x->outside[lo]) lo = c;
        }
        char who[32], least[32], mean[32], lt[32];
        scopeprof_ranks_label(x, hi, who, sizeof who);
        scopeprof_ranks_label(x, lo, least, sizeof least);
        scopeprof_format_time(b, sizeof b, (double)x->outside[hi] / 1e3);
        scopeprof_format_time(mean, sizeof mean, sum / ncols / 1e3);
        scopeprof_format_time(lt, sizeof lt, (double)x->outside[lo] / 1e3);
        fprintf(out, "Straggler: %s, %s of self CPU time%s (%.2fx the mean, %s; least: %s, %s)\n", who, b,
                any_mpi ? " outside MPI calls" : "", sum > 0 ? (double)x->outside[hi] * ncols / sum : 0.0,
                mean, least, lt);
    }
    /* Who waited: per MPI call, the columns with the most and the least
     * time in it, the calls in the table's order (not MPI_Init*: start-up,
     * not a wait for another rank). */
    for (uint32_t i = 0; i < a->nrows && x->ncols > 1; i++) {
        const scopeprof_row *row = &a->rows[idx[i]];
        if (!scopeprof_ranks_is_mpi(row->name) || strncmp(row->name, "MPI_Init", 8) == 0 || idx[i] >= x->cap)
            continue;
        const scopeprof_rank_stat *s = &x->rows[idx[i]].s[SCOPEPROF_RANK_TOTAL];
        char most[32], least[32], tm[32], tl[32];
        fprintf(out, "Waited in %s%s%s: %s longest (%s), %s shortest (%s)\n", row->name,
                row->extra ? " " : "", row->extra ? row->extra : "",
                scopeprof_ranks_label(x, s->max_at, most, sizeof most),
                scopeprof_format_time(tm, sizeof tm, (double)s->max / 1e3),
                scopeprof_ranks_label(x, s->min_at, least, sizeof least),
                scopeprof_format_time(tl, sizeof tl, (double)s->min / 1e3));
    }
    free(idx);
}

#ifdef __cplusplus
}
#endif
#endif /* the cross-rank table */

/* ---- Every trace file: the CLOCK chunk, a rank's table title ---------------- */
#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON
#include <sys/utsname.h>
#ifdef __cplusplus
extern "C" {
#endif

/* CLOCK chunk (docs/FORMAT.md): u32 rank, u32 ranks in the job (0: not an
 * MPI job), u32 points, u32 host length, the points (32 bytes each), the
 * host. Written right after the file's header, and again when MPI_Init or
 * MPI_Finalize measured an offset: the last one in a file holds all it
 * knows. Lock held; no allocation, no stdio (uname(2) and write(2): it can
 * run in a signal handler, when the final write opens the file). */
SCOPEPROF__ONCE SCOPEPROF__INTERNAL void scopeprof__write_clock(scopeprof__state *g) {
    if (g->out.fd < 0) return;
    struct utsname u;
    uint32_t hl = uname(&u) == 0 ? (uint32_t)strnlen(u.nodename, sizeof u.nodename) : 0;
    uint32_t n = g->job.npts < 2 ? g->job.npts : 2;
    unsigned char b[SCOPEPROF_CLOCK_FIXED + 2 * SCOPEPROF_CLOCK_POINT + sizeof u.nodename];
    int rank = g->job.size > 0 ? g->job.rank : g->out.rank;
    scopeprof__put32(b, rank >= 0 ? (uint32_t)rank : 0xFFFFFFFFu);
    scopeprof__put32(b + 4, (uint32_t)g->job.size);
    scopeprof__put32(b + 8, n);
    scopeprof__put32(b + 12, hl);
    unsigned char *p = b + SCOPEPROF_CLOCK_FIXED;
    for (uint32_t i = 0; i < n; i++, p += SCOPEPROF_CLOCK_POINT) {
        scopeprof__put64(p, g->job.pt[i].local_ns);
        scopeprof__put64(p + 8, (uint64_t)g->job.pt[i].offset_ns);
        scopeprof__put64(p + 16, g->job.pt[i].rtt_ns);
        scopeprof__put32(p + 24, i);
        scopeprof__put32(p + 28, 0);
    }
    memcpy(p, u.nodename, hl);
    scopeprof__write_chunk(g, SCOPEPROF_CHUNK_CLOCK, b, (uint32_t)(p + hl - b));
}

/* The exit table's title on every rank (SCOPEPROF_SUMMARY=all): which rank
 * printed it; in a forked child outside a job, which process. NULL when
 * there is nothing to say. */
SCOPEPROF__INTERNAL const char *scopeprof__rank_title(const scopeprof__state *g, char *buf, size_t n) {
    int rank = g->job.size > 0 ? g->job.rank : g->out.rank;
    if (rank < 0 && g->life.parent_pid) { /* whose table, among its parent's and siblings' */
        snprintf(buf, n, "scopeprof: process %d (forked from %d), its own table", g->pid, g->life.parent_pid);
        return buf;
    }
    if (!g->cfg.summary_all || rank < 0) return NULL;
    struct utsname u;
    snprintf(buf, n, "scopeprof: rank %d (pid %d on %s), its own table", rank, g->pid,
             uname(&u) == 0 ? u.nodename : "?");
    return buf;
}

#ifdef __cplusplus
}
#endif
#endif /* the CLOCK chunk */

/* ---- MPI -------------------------------------------------------------------- */
#if defined(SCOPEPROF__MPI) && !defined(SCOPEPROF__MPI_DONE)
#define SCOPEPROF__MPI_DONE
#include <mpi.h>
#ifdef __cplusplus
extern "C" {
#endif

/* The wrappers take the MPI functions' names (the profiling interface: the
 * program's calls reach them, they call the PMPI_ entry points). Weak, so a
 * module that defines the implementation in two files links, and another
 * PMPI tool linked in wins; visible, as the MPI library's own are. */
#define SCOPEPROF__PMPI __attribute__((weak, visibility("default")))

/* Our own communicator (a duplicate of MPI_COMM_WORLD): our messages never
 * match a receive of the program's. */
__attribute__((weak, visibility("hidden"))) MPI_Comm scopeprof__mpi_comm;
__attribute__((weak, visibility("hidden"))) int scopeprof__mpi_on;
enum { SCOPEPROF__SYNC_ROUNDS = 16, SCOPEPROF__SYNC_TAG = 23 };

/* ---- Clock offsets ---------------------------------------------------------
 * As Score-P measures them: rank 0 sends rank r a ping, r answers with its
 * CLOCK_MONOTONIC, rank 0 reads its own before and after; of 16 round trips
 * the shortest wins (the least disturbed), and its offset is rank 0's
 * midpoint minus r's time: exact when the two legs take equally long, and
 * never off by more than half the round trip. Ranks one after another: the
 * job waits (size - 1) * 16 round trips. */
SCOPEPROF__INTERNAL void scopeprof__mpi_sync(int rank, int size, uint64_t *local, int64_t *offset,
                                             uint64_t *rtt) {
    MPI_Comm comm = scopeprof__mpi_comm;
    uint64_t res[3] = {scopeprof__mono_ns(), 0, 0};
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            uint64_t best = UINT64_MAX, at = 0, their = 0;
            for (int k = 0; k < SCOPEPROF__SYNC_ROUNDS; k++) {
                uint64_t t1 = scopeprof__mono_ns();
                PMPI_Send(&k, 1, MPI_INT, r, SCOPEPROF__SYNC_TAG, comm);
                PMPI_Recv(&their, 1, MPI_UINT64_T, r, SCOPEPROF__SYNC_TAG, comm, MPI_STATUS_IGNORE);
                uint64_t t2 = scopeprof__mono_ns();
                if (t2 - t1 < best) best = t2 - t1, at = their, res[1] = (uint64_t)((int64_t)(t1 + (t2 - t1) / 2 - their));
            }
            uint64_t back[3] = {at, res[1], best};
            PMPI_Send(back, 3, MPI_UINT64_T, r, SCOPEPROF__SYNC_TAG, comm);
        }
        res[1] = 0; /* rank 0's clock is the job's */
    } else if (size > 1) {
        for (int k = 0, ping; k < SCOPEPROF__SYNC_ROUNDS; k++) {
            PMPI_Recv(&ping, 1, MPI_INT, 0, SCOPEPROF__SYNC_TAG, comm, MPI_STATUS_IGNORE);
            uint64_t now = scopeprof__mono_ns();
            PMPI_Send(&now, 1, MPI_UINT64_T, 0, SCOPEPROF__SYNC_TAG, comm);
        }
        PMPI_Recv(res, 3, MPI_UINT64_T, 0, SCOPEPROF__SYNC_TAG, comm, MPI_STATUS_IGNORE);
    }
    *local = res[0];
    *offset = (int64_t)res[1];
    *rtt = res[2];
}

/* Measure a point (0: MPI_Init, 1: MPI_Finalize), keep it in the registry and
 * write it to the file if it is open (else its opening writes it). */
SCOPEPROF__INTERNAL void scopeprof__mpi_point(scopeprof__state *g, int rank, int size, uint32_t i) {
    uint64_t local, rtt;
    int64_t offset;
    scopeprof__mpi_sync(rank, size, &local, &offset, &rtt);
    scopeprof__lock(g);
    g->job.pt[i].local_ns = local;
    g->job.pt[i].offset_ns = offset;
    g->job.pt[i].rtt_ns = rtt;
    g->job.npts = i + 1;
    if (g->out.fd >= 0) scopeprof__write_clock(g);
    scopeprof__unlock(g);
}

/* After MPI_Init: the rank and size, the file's name when the rank was not
 * known from the launcher (a singleton, a launcher without the usual
 * variables), the first clock offset. */
SCOPEPROF__INTERNAL void scopeprof__mpi_start(void) {
    scopeprof__state *g = scopeprof__state_get();
    int rank = 0, size = 1;
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &scopeprof__mpi_comm) != MPI_SUCCESS) return;
    scopeprof__mpi_on = 1;
    PMPI_Comm_rank(scopeprof__mpi_comm, &rank);
    PMPI_Comm_size(scopeprof__mpi_comm, &size);
    scopeprof__lock(g);
    g->job.rank = rank;
    g->job.size = size;
    if (g->out.rank < 0) {
        g->out.rank = rank; /* the exit table prints on rank 0 only */
        /* A file already open keeps its name (its CLOCK chunk says the rank). */
        if (g->out.fd == -1) scopeprof__rank_rename(g);
    } else if (g->out.rank != rank) {
        scopeprof__warn("scopeprof: the launcher said rank %d, MPI says %d: the file keeps its "
                        "name '%s'; the job table and the clocks use MPI's", g->out.rank, rank,
                        g->out.path);
    }
    scopeprof__unlock(g);
    scopeprof__mpi_point(g, rank, size, 0);
}

/* ---- The job table at MPI_Finalize ------------------------------------------
 * Every rank sends rank 0 its rows as they are (the scopes closed by then:
 * scopes still open, like main's, are not in it, and the line under the
 * table counts them), with its calibration and clock figures; rank 0
 * prints one table for the job in place of its own exit table. */
typedef struct scopeprof__mpi_buf {
    unsigned char *p;
    size_t n, cap;
    int oom;
} scopeprof__mpi_buf;
static inline void scopeprof__mpi_put(scopeprof__mpi_buf *b, const void *v, size_t n) {
    if (b->oom) return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->n + n) cap *= 2;
        unsigned char *q = (unsigned char *)realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, v, n);
    b->n += n;
}
static inline void scopeprof__mpi_put64(scopeprof__mpi_buf *b, uint64_t v) {
    unsigned char q[8];
    scopeprof__put64(q, v);
    scopeprof__mpi_put(b, q, 8);
}

/* This rank's part: u64 open scopes, u64 compensation (state, lo ps), u64
 * hi ps, u64 the short class's (lo, hi ps; 0: none), u64 largest |offset|,
 * u64 best round trip, u64 rows; per row u64 calls, self, total, name
 * length (its top bit: the row was clamped, scopeprof__comp_clamped), then
 * the name. Lock held. */
SCOPEPROF__INTERNAL void scopeprof__mpi_pack(scopeprof__state *g, scopeprof__mpi_buf *b) {
    const scopeprof_agg *a = &g->sum.agg;
    uint32_t threads = 0;
    const scopeprof__thread *first = NULL;
    uint64_t open = scopeprof__open_scopes(g, NULL, &threads, &first), off = 0, rtt = 0;
    for (uint32_t i = 0; i < g->job.npts; i++) {
        int64_t o = g->job.pt[i].offset_ns;
        if ((uint64_t)(o < 0 ? -o : o) > off) off = (uint64_t)(o < 0 ? -o : o);
        if (g->job.pt[i].rtt_ns > rtt) rtt = g->job.pt[i].rtt_ns;
    }
    scopeprof__mpi_put64(b, open);
    scopeprof__mpi_put64(b, (uint64_t)(uint32_t)a->comp_state | (uint64_t)a->comp_lo_ps << 32);
    scopeprof__mpi_put64(b, a->comp_hi_ps);
    scopeprof__mpi_put64(b, (uint64_t)a->comp_short_lo_ps | (uint64_t)a->comp_short_hi_ps << 32);
    scopeprof__mpi_put64(b, off);
    scopeprof__mpi_put64(b, rtt);
    scopeprof__mpi_put64(b, a->nrows);
    for (uint32_t i = 0; i < a->nrows; i++) {
        const scopeprof_row *r = &a->rows[i];
        size_t l = strlen(r->name);
        scopeprof__mpi_put64(b, r->count);
        scopeprof__mpi_put64(b, (uint64_t)r->self_ns);
        scopeprof__mpi_put64(b, (uint64_t)r->total_ns);
        scopeprof__mpi_put64(b, l | (uint64_t)scopeprof__comp_clamped(a, r) << 63); /* the job table's notes */
        scopeprof__mpi_put(b, r->name, l);
    }
}

/* Rank 0: the ranks' parts (all[displ[c]..], len[c] bytes) into one table. */
SCOPEPROF__INTERNAL void scopeprof__mpi_table(scopeprof__state *g, const unsigned char *all, const int *len,
                                              const int *displ, int size) {
    scopeprof_agg m;
    scopeprof_ranks x;
    scopeprof_agg_init(&m);
    if (scopeprof_ranks_init(&x, (uint32_t)size) != 0) return;
    uint64_t open = 0, off = 0, rtt = 0;
    int bad = 0;
    char name[1024];
    for (int c = 0; c < size && !bad; c++) {
        const unsigned char *p = all + displ[c], *end = p + len[c];
        x.rank[c] = c;
        if (end - p < 56) {
            bad = 1;
            break;
        }
        open += scopeprof__get64(p);
        uint64_t comp = scopeprof__get64(p + 8), hi = scopeprof__get64(p + 16), sh = scopeprof__get64(p + 24);
        if ((int)(uint32_t)comp == SCOPEPROF_COMP_ON) {
            scopeprof_agg_calibration(&m, (uint32_t)(comp >> 32), 0, 0);
            scopeprof_agg_calibration(&m, (uint32_t)hi, 0, 0);
            if (sh >> 32) { /* the short class's range (never applied: the rows are shown times) */
                scopeprof_agg_short_class(&m, (uint32_t)sh, 0, 1);
                scopeprof_agg_short_class(&m, (uint32_t)(sh >> 32), 0, 1);
            }
            m.comp_state = SCOPEPROF_COMP_ON;
        } else if (c == 0) {
            m.comp_state = (int)(uint32_t)comp;
        }
        if (scopeprof__get64(p + 32) > off) off = scopeprof__get64(p + 32);
        if (scopeprof__get64(p + 40) > rtt) rtt = scopeprof__get64(p + 40);
        uint64_t nrows = scopeprof__get64(p + 48);
        p += 56;
        for (uint64_t i = 0; i < nrows && !bad; i++) {
            if (end - p < 32) {
                bad = 1;
                break;
            }
            uint64_t calls = scopeprof__get64(p), named = scopeprof__get64(p + 24), l = named & INT64_MAX;
            int64_t self = (int64_t)scopeprof__get64(p + 8), total = (int64_t)scopeprof__get64(p + 16);
            if ((uint64_t)(end - p - 32) < l) {
                bad = 1;
                break;
            }
            snprintf(name, sizeof name, "%.*s", (int)(l < sizeof name ? l : sizeof name - 1), (const char *)p + 32);
            p += 32 + l;
            uint32_t row = scopeprof_agg_row(&m, name, name, NULL);
            if (row == UINT32_MAX || scopeprof_ranks_add(&x, row, (uint32_t)c, name, calls, self, total) != 0) {
                bad = 1;
                break;
            }
            scopeprof_row *r = &m.rows[row];
            r->comp_clamped |= (int)(named >> 63);
            r->count += calls;
            r->self_ns += self;
            r->total_ns += total;
        }
    }
    if (!bad) {
        scopeprof_ranks_done(&x, m.nrows);
        struct utsname u;
        fflush(stdout);
        scopeprof__text text;
        FILE *out = scopeprof__text_begin(&text);
        fprintf(out, "scopeprof: the MPI job's table (%d rank%s, rank 0 on %s), scopes closed by "
                        "MPI_Finalize\n", size, size == 1 ? "" : "s", uname(&u) == 0 ? u.nodename : "?");
        char more[96];
        if (m.nrows) {
            scopeprof_ranks_print(out, &m, &x, g->cfg.sort, g->cfg.row_limit,
                                  scopeprof__more_rows(g, m.nrows, more, sizeof more));
            scopeprof_table_notes_shown(out, &m, g->cfg.sort, g->cfg.row_limit);
        } else { /* a schedule's sums go with each cycle's file (CoMD's job showed an empty table) */
            fprintf(out, "No rows: %s\n", g->sched.on ? "each schedule cycle's table was printed as it ended; "
                            "for one cycle across the ranks: scopeprof table --per-rank on its files"
                                                         : "no scope closed before MPI_Finalize");
        }
        /* Rank 0 wrote a file (its current one just now, scopeprof__flush,
         * or a schedule's cycles before it): the ranks' files are there
         * unless one could not be written. */
        int files = !g->out.no_output && g->out.files && !g->out.create_err && !g->out.write_err;
        if (open)
            fprintf(out, "Not counted: %llu scope(s) still open at MPI_Finalize (main's, say)%s\n",
                    (unsigned long long)open, files ? ", which each rank's trace file has" : "");
        if (files && g->out.events_written)
            fprintf(out, "Trace files: one per rank, as rank 0's '%s'\n", g->out.path);
        else if (files)
            fprintf(out, "Trace files: one per rank and schedule cycle\n");
        char o[32], t[32];
        if (size > 1 && files)
            fprintf(out, "Clocks: each rank's offset to rank 0's clock measured at MPI_Init and "
                            "MPI_Finalize (the largest %s; the best round trip at most %s: the ranks' "
                            "trace files align within half of it)\n",
                    scopeprof_format_time(o, sizeof o, (double)off / 1e3),
                    scopeprof_format_time(t, sizeof t, (double)rtt / 1e3));
        scopeprof__text_end(&text);
    } else {
        scopeprof__warn("scopeprof: the job table is left out: a rank's rows did not arrive whole");
    }
    scopeprof_ranks_free(&x);
    scopeprof_agg_free(&m);
}

/* Before PMPI_Finalize: the second clock point, everything recorded so far
 * written (the rows then hold every closed scope), the rows gathered on
 * rank 0, which prints the job table. Every rank takes part whatever its
 * environment says (the calls are collective); only printing obeys
 * SCOPEPROF_SUMMARY. */
SCOPEPROF__INTERNAL void scopeprof__mpi_finish(void) {
    if (!scopeprof__mpi_on) return;
    scopeprof__mpi_on = 0;
    scopeprof__state *g = scopeprof__state_get();
    MPI_Comm comm = scopeprof__mpi_comm;
    int rank = 0, size = 1;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    scopeprof__mpi_point(g, rank, size, 1);
    scopeprof__flush();
    scopeprof__mpi_buf b = {NULL, 0, 0, 0};
    scopeprof__lock(g);
    scopeprof__sum_fold(g, 0); /* the rows, from the exit summary's site sums: by name, as the job table */
    scopeprof__mpi_pack(g, &b);
    scopeprof__unlock(g);
    int n = b.oom || b.n > (size_t)0x7FFFFFFF ? 0 : (int)b.n;
    int *len = rank == 0 ? (int *)calloc((size_t)size, sizeof *len) : NULL;
    int *displ = rank == 0 ? (int *)calloc((size_t)size, sizeof *displ) : NULL;
    int ok = rank != 0 || (len && displ);
    /* Rank 0 says whether it can take the rows, so that nobody waits. */
    PMPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    if (ok) {
        PMPI_Gather(&n, 1, MPI_INT, len, 1, MPI_INT, 0, comm);
        unsigned char *all = NULL;
        if (rank == 0) {
            size_t at = 0;
            for (int c = 0; c < size; c++) displ[c] = (int)at, at += (size_t)len[c];
            all = (unsigned char *)malloc(at ? at : 1);
            ok = all && at <= 0x7FFFFFFF;
        }
        PMPI_Bcast(&ok, 1, MPI_INT, 0, comm);
        if (ok) {
            PMPI_Gatherv(b.p, n, MPI_BYTE, all, len, displ, MPI_BYTE, 0, comm);
            if (rank == 0) {
                scopeprof__lock(g);
                if (g->cfg.summary && size > 1) { /* one rank: its own exit table, as without MPI */
                    scopeprof__mpi_table(g, all, len, displ, size);
                    if (!g->cfg.summary_all) g->job.table_printed = 1;
                }
                scopeprof__unlock(g);
            }
        }
        free(all);
    }
    if (!ok && rank == 0) scopeprof__warn("scopeprof: out of memory: no job table");
    free(len);
    free(displ);
    free(b.p);
    PMPI_Comm_free(&scopeprof__mpi_comm);
}

/* ---- The wrappers -------------------------------------------------------------
 * MPI_Init and MPI_Init_thread, MPI_Finalize: the job's start and end. The
 * MPI calls a program waits in most (point to point, collectives, waits)
 * are scopes named after the call, so the table shows communication
 * without a scope of the program's own. Calls through PMPI_ (ours, the MPI
 * library's) are not recorded. */
SCOPEPROF__PMPI int MPI_Init(int *argc, char ***argv) {
    int rc;
    {
        PROFILE_SCOPE("MPI_Init");
        rc = PMPI_Init(argc, argv);
    }
    if (rc == MPI_SUCCESS) scopeprof__mpi_start();
    return rc;
}

SCOPEPROF__PMPI int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int rc;
    {
        PROFILE_SCOPE("MPI_Init_thread");
        rc = PMPI_Init_thread(argc, argv, required, provided);
    }
    if (rc == MPI_SUCCESS) scopeprof__mpi_start();
    return rc;
}

SCOPEPROF__PMPI int MPI_Finalize(void) {
    scopeprof__mpi_finish();
    PROFILE_SCOPE("MPI_Finalize");
    return PMPI_Finalize();
}

/* MPI_Abort ends the process without its exit handlers (and mpirun ends the
 * other ranks with SIGTERM, whose handler writes theirs): this rank's trace
 * is written first, and its summary printed, as at exit. No job table: that
 * takes every rank. */
SCOPEPROF__PMPI int MPI_Abort(MPI_Comm comm, int errorcode) {
    scopeprof__mpi_on = 0;
    scopeprof__state *g = scopeprof__g;
    /* Not from a signal handler that interrupted this thread inside the
     * profiler (its lock held): the trace is then given up, as a crash's. */
    if (g && !scopeprof__cloned(g) && !g->life.finalized && !scopeprof__in_lock) {
        scopeprof__finalize(g);
        if (scopeprof__trace_written(g))
            scopeprof__warn("scopeprof: MPI_Abort(%d) on rank %d: trace written to '%s'", errorcode,
                            g->out.rank, g->out.path);
    }
    return PMPI_Abort(comm, errorcode);
}

#define SCOPEPROF__MPI_CALL(name, call)                                             \
    {                                                                               \
        PROFILE_SCOPE(name);                                                        \
        return call;                                                                \
    }
SCOPEPROF__PMPI int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
    SCOPEPROF__MPI_CALL("MPI_Send", PMPI_Send(buf, count, type, dest, tag, comm))
SCOPEPROF__PMPI int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
    SCOPEPROF__MPI_CALL("MPI_Ssend", PMPI_Ssend(buf, count, type, dest, tag, comm))
SCOPEPROF__PMPI int MPI_Recv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
                             MPI_Status *status)
    SCOPEPROF__MPI_CALL("MPI_Recv", PMPI_Recv(buf, count, type, src, tag, comm, status))
SCOPEPROF__PMPI int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
                                 void *rbuf, int rcount, MPI_Datatype rtype, int src, int rtag,
                                 MPI_Comm comm, MPI_Status *status)
    SCOPEPROF__MPI_CALL("MPI_Sendrecv", PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount,
                                                      rtype, src, rtag, comm, status))
SCOPEPROF__PMPI int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                              MPI_Request *req)
    SCOPEPROF__MPI_CALL("MPI_Isend", PMPI_Isend(buf, count, type, dest, tag, comm, req))
SCOPEPROF__PMPI int MPI_Irecv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
                              MPI_Request *req)
    SCOPEPROF__MPI_CALL("MPI_Irecv", PMPI_Irecv(buf, count, type, src, tag, comm, req))
SCOPEPROF__PMPI int MPI_Wait(MPI_Request *req, MPI_Status *status)
    SCOPEPROF__MPI_CALL("MPI_Wait", PMPI_Wait(req, status))
SCOPEPROF__PMPI int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[])
    SCOPEPROF__MPI_CALL("MPI_Waitall", PMPI_Waitall(n, reqs, statuses))
SCOPEPROF__PMPI int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status)
    SCOPEPROF__MPI_CALL("MPI_Waitany", PMPI_Waitany(n, reqs, index, status))
SCOPEPROF__PMPI int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
    SCOPEPROF__MPI_CALL("MPI_Waitsome", PMPI_Waitsome(n, reqs, outcount, indices, statuses))
SCOPEPROF__PMPI int MPI_Barrier(MPI_Comm comm) SCOPEPROF__MPI_CALL("MPI_Barrier", PMPI_Barrier(comm))
SCOPEPROF__PMPI int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
    SCOPEPROF__MPI_CALL("MPI_Bcast", PMPI_Bcast(buf, count, type, root, comm))
SCOPEPROF__PMPI int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                               MPI_Comm comm)
    SCOPEPROF__MPI_CALL("MPI_Reduce", PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm))
SCOPEPROF__PMPI int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                                  MPI_Comm comm)
    SCOPEPROF__MPI_CALL("MPI_Allreduce", PMPI_Allreduce(sbuf, rbuf, count, type, op, comm))
SCOPEPROF__PMPI int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                               MPI_Datatype rtype, int root, MPI_Comm comm)
    SCOPEPROF__MPI_CALL("MPI_Gather", PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm))
SCOPEPROF__PMPI int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                                  MPI_Datatype rtype, MPI_Comm comm)
    SCOPEPROF__MPI_CALL("MPI_Allgather", PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm))
SCOPEPROF__PMPI int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                                MPI_Datatype rtype, int root, MPI_Comm comm)
    SCOPEPROF__MPI_CALL("MPI_Scatter", PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm))
SCOPEPROF__PMPI int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                                 MPI_Datatype rtype, MPI_Comm comm)
    SCOPEPROF__MPI_CALL("MPI_Alltoall", PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm))
#undef SCOPEPROF__MPI_CALL

#ifdef __cplusplus
}
#endif
#endif /* MPI */
/* ==== part: include/parts/gpu.h ==== */
#if defined(SCOPEPROF__IMPL) && SCOPEPROF__ON && (defined(PROFILE_HIP) || defined(PROFILE_CUDA))
#include <dlfcn.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The runtime functions used: X(name, required). The optional ones are newer
 * than some runtimes we support (hipStreamGetDevice is not in HIP 5.2). */
#define SCOPEPROF__G_FUNCS(X)                                                       \
    X(EventCreateWithFlags, 1) X(EventRecord, 1) X(EventQuery, 1)                   \
    X(EventSynchronize, 1) X(EventElapsedTime, 1) X(EventDestroy, 1)                \
    X(GetDeviceCount, 1) X(GetDevice, 1) X(SetDevice, 1) X(GetDeviceProperties, 1)  \
    X(StreamCreateWithFlags, 1) X(GetErrorString, 1) X(StreamGetDevice, 0)          \
    X(StreamIsCapturing, 0) X(ThreadExchangeStreamCaptureMode, 0)

#define SCOPEPROF__G_STR2(x) #x
#define SCOPEPROF__G_STR(x) SCOPEPROF__G_STR2(x) /* expand (cuda*_v2, *_ptsz), then quote */
#if defined(PROFILE_HIP)
#define SCOPEPROF__G_CAT(f) hip##f
#else
#define SCOPEPROF__G_CAT(f) cuda##f
#endif

typedef struct scopeprof__gapi {
    scopeprof__gerr (*EventCreateWithFlags)(scopeprof__gevent *, unsigned);
    scopeprof__gerr (*EventRecord)(scopeprof__gevent, scopeprof__gstream);
    scopeprof__gerr (*EventQuery)(scopeprof__gevent);
    scopeprof__gerr (*EventSynchronize)(scopeprof__gevent);
    scopeprof__gerr (*EventElapsedTime)(float *, scopeprof__gevent, scopeprof__gevent);
    scopeprof__gerr (*EventDestroy)(scopeprof__gevent);
    scopeprof__gerr (*GetDeviceCount)(int *);
    scopeprof__gerr (*GetDevice)(int *);
    scopeprof__gerr (*SetDevice)(int);
    scopeprof__gerr (*GetDeviceProperties)(scopeprof__gprop *, int);
    scopeprof__gerr (*StreamCreateWithFlags)(scopeprof__gstream *, unsigned);
    const char *(*GetErrorString)(scopeprof__gerr);
    scopeprof__gerr (*StreamGetDevice)(scopeprof__gstream, int *);
    scopeprof__gerr (*StreamIsCapturing)(scopeprof__gstream, scopeprof__gcapstatus *);
    scopeprof__gerr (*ThreadExchangeStreamCaptureMode)(scopeprof__gcapmode *);
} scopeprof__gapi;


struct scopeprof__ganchor { /* typedef in gpu_api.h */
    scopeprof__gevent ev;
    uint64_t tick;    /* time of ev, in the CPU scopes' ticks */
    uint64_t born_ns; /* CLOCK_MONOTONIC when made: its age */
    int refs;         /* open or pending scopes timed against it, +1 while current */
};

/* GPU record status of a scope whose stream was being captured into a graph:
 * its GPU work runs when the graph is launched, not here. */
#define SCOPEPROF__G_CAPTURED 2u

typedef struct scopeprof__gpending {
    scopeprof__gevent start, end;
    scopeprof__gevent base; /* the outermost same-stream scope's start (or start) */
    scopeprof__ganchor *anchor;
    uint64_t launch_tick, stream;
    uint64_t anchor_tick; /* copied at resolve: the anchor may go first */
    uint32_t site, device;
    int resolved;
    /* Once resolved: start_ns and end_ns relative to anchor_tick; made
     * absolute, and launch_ns filled, at take. */
    scopeprof_gpu_record rec;
} scopeprof__gpending;

typedef struct scopeprof__gpool { /* one thread's idle events of one device */
    scopeprof__gevent *ev;
    uint32_t n, cap;
} scopeprof__gpool;

typedef struct scopeprof__gopen { /* a timed GPU scope still open */
    uint64_t stream;
    int device;
    scopeprof__gevent base;
    scopeprof__ganchor *anchor;
} scopeprof__gopen;

typedef struct scopeprof__gthread { /* per thread; lock: owner vs. writer */
    pthread_mutex_t lock;
    scopeprof__gopen *open; /* the thread's own: its open timed scopes, innermost last */
    uint32_t nopen, open_cap;
    scopeprof__gpool *pools; /* by device */
    uint32_t npools;
    scopeprof__gpending *q; /* FIFO in close order: q[head .. head+n) mod cap */
    uint32_t head, n, cap;
    uint32_t nresolved; /* the first nresolved of the FIFO are resolved: polls
                         * start after them, so each scope is polled O(1) times */
    uint32_t closes;
} scopeprof__gthread;

typedef struct scopeprof__gdev { /* one device, in the module's table */
    scopeprof__ganchor *anchor;
    scopeprof__gstream astream; /* private, non-blocking */
    int astream_ok, renewing;
} scopeprof__gdev;

#define SCOPEPROF__G_NAMED 16 /* devices whose names the registry holds */
typedef struct scopeprof__gmod { /* this module's backend; zero is "not started" */
    int status; /* 0: not started, 1: on, -1: off (said why), -2: closed at exit */
    scopeprof__gapi api;
    scopeprof__gdev *dev; /* by device, grown as devices are seen; m->lock */
    uint32_t ndev;
    int warned_elapsed;
    char names[SCOPEPROF__G_NAMED][64]; /* device names, until published */
    uint32_t named, published;
} scopeprof__gmod;
__attribute__((weak, visibility("hidden"))) scopeprof__gmod scopeprof__gm;
__attribute__((weak, visibility("hidden"))) pthread_mutex_t scopeprof__gm_lock = PTHREAD_MUTEX_INITIALIZER;

/* Copy device names into the registry. Never called with the module lock
 * held (lock order: registry lock, then never the module lock). */
SCOPEPROF__INTERNAL void scopeprof__gpu_publish_names(void) {
    scopeprof__gmod *m = &scopeprof__gm;
    /* Unlocked first look: this runs at every scope's open. */
    if (!(__atomic_load_n(&m->named, __ATOMIC_ACQUIRE) & ~__atomic_load_n(&m->published, __ATOMIC_ACQUIRE)))
        return;
    pthread_mutex_lock(&scopeprof__gm_lock);
    uint32_t todo = m->named & ~m->published;
    char names[SCOPEPROF__G_NAMED][64];
    if (todo) memcpy(names, m->names, sizeof names);
    __atomic_or_fetch(&m->published, todo, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&scopeprof__gm_lock);
    if (!todo) return;
    scopeprof__state *g = scopeprof__state_get();
    scopeprof__lock(g);
    for (int d = 0; d < SCOPEPROF__G_NAMED; d++)
        if (todo >> d & 1) memcpy(g->gpu.names[d], names[d], sizeof names[d]);
    g->gpu.named |= todo;
    scopeprof__unlock(g);
}

/* Turn GPU timing off for the rest of the run, with one line saying why. */
SCOPEPROF__INTERNAL void scopeprof__gpu_off(const char *what, scopeprof__gerr err) {
    int was = __atomic_load_n(&scopeprof__gm.status, __ATOMIC_ACQUIRE);
    if (was < 0 || !__atomic_compare_exchange_n(&scopeprof__gm.status, &was, -1, 0, __ATOMIC_ACQ_REL,
                                                __ATOMIC_ACQUIRE))
        return;
    const char *msg = scopeprof__gm.api.GetErrorString ? scopeprof__gm.api.GetErrorString(err) : "";
    scopeprof__warn("scopeprof: %s%s%s (error %d%s%s); GPU scopes record their CPU side only",
                    SCOPEPROF__G_NAME, " error in ", what, (int)err, msg ? ": " : "", msg ? msg : "");
}

/* Destroying an event has no fallback: a failure is reported once and the
 * event leaked; GPU timing goes on. After the exit handler the runtime may be
 * going: events are left to it. */
SCOPEPROF__INTERNAL void scopeprof__gpu_destroy(scopeprof__gevent ev) {
    static int warned;
    if (__atomic_load_n(&scopeprof__gm.status, __ATOMIC_ACQUIRE) == -2) return;
    scopeprof__gerr err = scopeprof__gm.api.EventDestroy(ev);
    if (err == SCOPEPROF__G_OK || __atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED)) return;
    const char *msg = scopeprof__gm.api.GetErrorString ? scopeprof__gm.api.GetErrorString(err) : NULL;
    scopeprof__warn("scopeprof: %s error in EventDestroy (error %d%s%s); the event is leaked, "
                    "GPU timing goes on", SCOPEPROF__G_NAME, (int)err, msg ? ": " : "", msg ? msg : "");
}

/* The calling thread's capture mode set to relaxed (returned: the mode to put
 * back), so that a query or wait of ours is legal while a global-mode capture
 * runs anywhere in the process. */
static inline scopeprof__gcapmode scopeprof__gpu_relax(void) {
    scopeprof__gcapmode mode = SCOPEPROF__G_CAP_RELAXED;
    if (scopeprof__gm.api.ThreadExchangeStreamCaptureMode)
        (void)scopeprof__gm.api.ThreadExchangeStreamCaptureMode(&mode); /* best effort */
    return mode;
}
static inline void scopeprof__gpu_unrelax(scopeprof__gcapmode mode) {
    if (scopeprof__gm.api.ThreadExchangeStreamCaptureMode)
        (void)scopeprof__gm.api.ThreadExchangeStreamCaptureMode(&mode); /* best effort */
}

/* Run with `dev` current: events and streams belong to the device current
 * when they are made. Returns the device to put back (-1: none needed); on
 * an error, *what names the call that failed. */
SCOPEPROF__INTERNAL int scopeprof__gpu_enter_device(int dev, scopeprof__gerr *err, const char **what) {
    int cur = -1;
    *what = "GetDevice";
    *err = scopeprof__gm.api.GetDevice(&cur);
    if (*err != SCOPEPROF__G_OK || cur == dev) return -1;
    *what = "SetDevice";
    *err = scopeprof__gm.api.SetDevice(dev);
    return *err == SCOPEPROF__G_OK ? cur : -1;
}
static inline void scopeprof__gpu_leave_device(int prev) {
    if (prev >= 0) (void)scopeprof__gm.api.SetDevice(prev);
}

SCOPEPROF__INTERNAL uint32_t scopeprof__gpu_take(scopeprof__state *g, scopeprof__thread *t,
                                                 scopeprof_gpu_record *out, uint32_t n);
SCOPEPROF__INTERNAL int scopeprof__gpu_ready(scopeprof__state *g, scopeprof__thread *t, uint32_t n);
SCOPEPROF__INTERNAL void scopeprof__gpu_unref(scopeprof__ganchor *a);
SCOPEPROF__INTERNAL void scopeprof__gpu_at_exit(void);
SCOPEPROF__INTERNAL void scopeprof__gpu_resolve_all(void);

/* The runtime's functions into m->api. Returns NULL, or why not found. */
SCOPEPROF__INTERNAL const char *scopeprof__gpu_load(scopeprof__gapi *api) {
#if defined(SCOPEPROF__G_DIRECT)
    api->EventCreateWithFlags = cudaEventCreateWithFlags;
    api->EventRecord = cudaEventRecord;
    api->EventQuery = cudaEventQuery;
    api->EventSynchronize = cudaEventSynchronize;
    api->EventElapsedTime = cudaEventElapsedTime;
    api->EventDestroy = cudaEventDestroy;
    api->GetDeviceCount = cudaGetDeviceCount;
    api->GetDevice = cudaGetDevice;
    api->SetDevice = cudaSetDevice;
    api->GetDeviceProperties = cudaGetDeviceProperties;
    api->StreamCreateWithFlags = cudaStreamCreateWithFlags;
    api->GetErrorString = cudaGetErrorString;
#if CUDART_VERSION >= 12080
    api->StreamGetDevice = cudaStreamGetDevice;
#endif
    api->StreamIsCapturing = cudaStreamIsCapturing;
    api->ThreadExchangeStreamCaptureMode = cudaThreadExchangeStreamCaptureMode;
    return NULL;
#else
    /* What the program loaded (linked -lamdhip64 / -lcudart, or a library it
     * uses did), then the runtime library itself. Never a weak reference to
     * the runtime's names: that would make the program's own calls weak, and
     * a linker with --as-needed would drop the library they need. */
    static const char *const libs[] = SCOPEPROF__G_LIBS;
    const char *why = "not found";
#ifdef RTLD_DEFAULT
    void *h = RTLD_DEFAULT;
#else
    void *h = NULL; /* glibc's RTLD_DEFAULT, declared only under _GNU_SOURCE */
#endif
    for (int i = -1; i < 0 || libs[i]; i++) {
        if (i >= 0 && !(h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL))) {
            why = dlerror();
            continue;
        }
        int found = 1;
#define SCOPEPROF__G_DLSYM(f, required)                                             \
        {                                                                           \
            void *sym_ = dlsym(h, SCOPEPROF__G_STR(SCOPEPROF__G_CAT(f)));           \
            memcpy(&api->f, &sym_, sizeof sym_);                                    \
            if (required && !sym_) found = 0;                                       \
        }
        SCOPEPROF__G_FUNCS(SCOPEPROF__G_DLSYM)
#undef SCOPEPROF__G_DLSYM
        if (found) return NULL;
        if (i >= 0) why = "missing functions";
    }
    return why ? why : "not found";
#endif
}

/* Find the runtime and a device, once. Returns 1 if GPU timing is on. */
SCOPEPROF__INTERNAL int scopeprof__gpu_start(void) {
    scopeprof__gmod *m = &scopeprof__gm;
    scopeprof__state *g = scopeprof__state_get();
    pthread_mutex_lock(&scopeprof__gm_lock);
    int status = __atomic_load_n(&m->status, __ATOMIC_ACQUIRE);
    if (status != 0) {
        pthread_mutex_unlock(&scopeprof__gm_lock);
        return status == 1;
    }
    const char *why = scopeprof__gpu_load(&m->api);
    if (why) {
        __atomic_store_n(&m->status, -1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&scopeprof__gm_lock);
        scopeprof__warn("scopeprof: no %s runtime library (%s); GPU scopes record their CPU "
                        "side only", SCOPEPROF__G_NAME, why);
        return 0;
    }
    int count = 0;
    scopeprof__gerr err = m->api.GetDeviceCount(&count);
    if (err != SCOPEPROF__G_OK || count <= 0) {
        __atomic_store_n(&m->status, -1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&scopeprof__gm_lock);
        const char *msg = err != SCOPEPROF__G_OK ? m->api.GetErrorString(err) : "0 devices";
        scopeprof__warn("scopeprof: no %s device (%sGetDeviceCount: %s); GPU scopes record their "
                        "CPU side only", SCOPEPROF__G_NAME, SCOPEPROF__G_NAME[0] == 'H' ? "hip" : "cuda",
                        msg ? msg : "?");
        return 0;
    }
    /* After the runtime's first call, so after it registered its own exit
     * teardown: handlers run in reverse, ours first. */
    atexit(scopeprof__gpu_at_exit);
    /* Release: a thread that reads status 1 without the lock sees m->api. */
    __atomic_store_n(&m->status, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&scopeprof__gm_lock);
    scopeprof__lock(g); /* not under the module lock: lock order */
    if (!g->gpu.take) {
        g->gpu.take = scopeprof__gpu_take;
        g->gpu.ready = scopeprof__gpu_ready;
    }
    scopeprof__unlock(g);
    return 1;
}

/* A new anchor for `dev`: its private stream made if needed, an event
 * recorded there and waited for. No lock held (the wait is for the GPU). */
SCOPEPROF__INTERNAL scopeprof__ganchor *scopeprof__gpu_new_anchor(int dev, scopeprof__gstream *stream,
                                                                  int *stream_made) {
    scopeprof__gmod *m = &scopeprof__gm;
    scopeprof__gerr err;
    const char *what;
    int prev = scopeprof__gpu_enter_device(dev, &err, &what);
    scopeprof__ganchor *n = NULL;
    scopeprof__gcapmode mode = scopeprof__gpu_relax();
    if (err == SCOPEPROF__G_OK && !*stream_made) {
        /* Non-blocking: a blocking stream's work waits for the null stream's,
         * and the anchor would wait for (and be placed after) user work. */
        what = "StreamCreateWithFlags";
        if ((err = m->api.StreamCreateWithFlags(stream, SCOPEPROF__G_NON_BLOCKING)) == SCOPEPROF__G_OK) {
            *stream_made = 1;
            scopeprof__gprop *prop = (scopeprof__gprop *)calloc(1, sizeof *prop);
            if (prop && dev < SCOPEPROF__G_NAMED && m->api.GetDeviceProperties(prop, dev) == SCOPEPROF__G_OK) {
                pthread_mutex_lock(&scopeprof__gm_lock);
                snprintf(m->names[dev], sizeof m->names[dev], "%.63s", prop->name);
                __atomic_or_fetch(&m->named, 1u << dev, __ATOMIC_RELEASE); /* see gpu_publish_names */
                pthread_mutex_unlock(&scopeprof__gm_lock);
            }
            free(prop);
        }
    }
    if (err == SCOPEPROF__G_OK && !(n = (scopeprof__ganchor *)calloc(1, sizeof *n))) what = NULL;
    if (n && (err = m->api.EventCreateWithFlags(&n->ev, 0)) != SCOPEPROF__G_OK) {
        what = "EventCreateWithFlags";
        free(n);
        n = NULL;
    }
    /* Record and wait; the tick read right after the wait is the anchor's
     * time (the latest it can have completed). A wait much longer than an
     * idle device needs (the thread was preempted, say) would place every
     * GPU time of the next second late by as much: try again, up to 4 times
     * (the event is re-recorded; the last try counts). */
    uint64_t tick = 0;
    for (int try_ = 0; n && try_ < 4; try_++) {
        uint64_t t0 = scopeprof__mono_ns();
        err = m->api.EventRecord(n->ev, *stream);
        if (err == SCOPEPROF__G_OK) err = m->api.EventSynchronize(n->ev);
        tick = scopeprof__ticks();
        if (err != SCOPEPROF__G_OK || scopeprof__mono_ns() - t0 <= 50000u) break;
    }
    if (n && err != SCOPEPROF__G_OK) {
        what = "EventRecord (clock anchor)";
        scopeprof__gpu_destroy(n->ev);
        free(n);
        n = NULL;
    }
    scopeprof__gpu_unrelax(mode);
    scopeprof__gpu_leave_device(prev);
    if (!n) {
        if (what) scopeprof__gpu_off(what, err);
        return NULL;
    }
    n->tick = tick;
    n->born_ns = scopeprof__mono_ns();
    return n;
}

/* The device's current anchor with a reference for the caller, renewed when
 * older than a second. The wait for a new one is made without the lock;
 * meanwhile other threads go on with the old one. */
SCOPEPROF__INTERNAL scopeprof__ganchor *scopeprof__gpu_anchor(int dev) {
    scopeprof__gmod *m = &scopeprof__gm;
    pthread_mutex_lock(&scopeprof__gm_lock);
    for (;;) {
        if ((uint32_t)dev >= m->ndev) {
            uint32_t nd = (uint32_t)dev + 1 > m->ndev * 2 ? (uint32_t)dev + 1 : m->ndev * 2;
            scopeprof__gdev *v = (scopeprof__gdev *)realloc(m->dev, nd * sizeof *v);
            if (!v) {
                pthread_mutex_unlock(&scopeprof__gm_lock);
                return NULL;
            }
            memset(v + m->ndev, 0, (nd - m->ndev) * sizeof *v);
            m->dev = v;
            m->ndev = nd;
        }
        scopeprof__gdev *d = &m->dev[dev];
        scopeprof__ganchor *a = d->anchor;
        if (a && (d->renewing || scopeprof__mono_ns() - a->born_ns < 1000000000u)) {
            __atomic_add_fetch(&a->refs, 1, __ATOMIC_ACQ_REL);
            pthread_mutex_unlock(&scopeprof__gm_lock);
            return a;
        }
        if (!d->renewing) break;
        /* The device's first anchor is being made by another thread. */
        pthread_mutex_unlock(&scopeprof__gm_lock);
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&scopeprof__gm_lock);
        if (__atomic_load_n(&m->status, __ATOMIC_ACQUIRE) != 1) {
            pthread_mutex_unlock(&scopeprof__gm_lock);
            return NULL;
        }
    }
    m->dev[dev].renewing = 1;
    scopeprof__gstream stream = m->dev[dev].astream;
    int made = m->dev[dev].astream_ok;
    pthread_mutex_unlock(&scopeprof__gm_lock);
    scopeprof__ganchor *n = scopeprof__gpu_new_anchor(dev, &stream, &made);
    pthread_mutex_lock(&scopeprof__gm_lock);
    scopeprof__gdev *d = &m->dev[dev]; /* m->dev may have moved */
    scopeprof__ganchor *old = NULL;
    d->renewing = 0;
    d->astream = stream;
    d->astream_ok = made;
    if (n) {
        n->refs = 2; /* current, and the caller's */
        old = d->anchor;
        d->anchor = n;
    }
    pthread_mutex_unlock(&scopeprof__gm_lock);
    if (old) scopeprof__gpu_unref(old);
    return n;
}

/* Anchors are counted atomically: the writer drops references while holding
 * the registry's lock, and must not take the module lock under it (a thread
 * opening a scope holds the module lock and may then need the registry's). */
SCOPEPROF__INTERNAL void scopeprof__gpu_unref(scopeprof__ganchor *a) {
    if (__atomic_sub_fetch(&a->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        scopeprof__gpu_destroy(a->ev);
        free(a);
    }
}

/* An event of device `dev` from the thread's pool (created, on that device,
 * only while the pool warms up). */
SCOPEPROF__INTERNAL int scopeprof__gpu_event(scopeprof__gthread *gt, int dev, scopeprof__gevent *ev) {
    pthread_mutex_lock(&gt->lock);
    scopeprof__gpool *p = (uint32_t)dev < gt->npools ? &gt->pools[dev] : NULL;
    int have = p && p->n > 0;
    if (have) *ev = p->ev[--p->n];
    pthread_mutex_unlock(&gt->lock);
    if (have) return 1;
    scopeprof__gerr err;
    const char *what;
    int prev = scopeprof__gpu_enter_device(dev, &err, &what);
    if (err == SCOPEPROF__G_OK) what = "EventCreateWithFlags", err = scopeprof__gm.api.EventCreateWithFlags(ev, 0);
    scopeprof__gpu_leave_device(prev);
    if (err != SCOPEPROF__G_OK) {
        scopeprof__gpu_off(what, err);
        return 0;
    }
    return 1;
}

/* Lock: gt->lock. */
static inline void scopeprof__gpu_release(scopeprof__gthread *gt, uint32_t dev, scopeprof__gevent ev) {
    if (dev >= gt->npools) {
        uint32_t n = dev + 1;
        scopeprof__gpool *v = (scopeprof__gpool *)realloc(gt->pools, n * sizeof *v);
        if (!v) {
            scopeprof__gpu_destroy(ev);
            return;
        }
        memset(v + gt->npools, 0, (n - gt->npools) * sizeof *v);
        gt->pools = v;
        gt->npools = n;
    }
    scopeprof__gpool *p = &gt->pools[dev];
    if (p->n == p->cap) {
        uint32_t cap = p->cap ? p->cap * 2 : 64;
        scopeprof__gevent *v = (scopeprof__gevent *)realloc(p->ev, cap * sizeof *v);
        if (!v) {
            scopeprof__gpu_destroy(ev);
            return;
        }
        p->ev = v;
        p->cap = cap;
    }
    p->ev[p->n++] = ev;
}

SCOPEPROF__INTERNAL scopeprof__gthread *scopeprof__gpu_thread(scopeprof__thread *t) {
    if (t->gpu) return (scopeprof__gthread *)t->gpu;
    scopeprof__gthread *gt = (scopeprof__gthread *)calloc(1, sizeof *gt);
    if (!gt) return NULL;
    pthread_mutex_init(&gt->lock, NULL);
    scopeprof__state *g = scopeprof__state_get();
    scopeprof__lock(g); /* the writer reads t->gpu under this lock */
    t->gpu = gt;
    scopeprof__unlock(g);
    return gt;
}

/* Resolve one pending scope; `wait` blocks until the GPU has passed its end
 * event. Returns 0 if not ready. Lock: gt->lock; the caller has relaxed its
 * capture mode (scopeprof__gpu_relax). */
SCOPEPROF__INTERNAL int scopeprof__gpu_resolve(scopeprof__gthread *gt, scopeprof__gpending *p, int wait) {
    scopeprof__gapi *api = &scopeprof__gm.api;
    if (p->resolved) return 1;
    scopeprof__gerr err = wait ? api->EventSynchronize(p->end) : api->EventQuery(p->end);
    if (err == SCOPEPROF__G_NOT_READY && !wait) return 0;
    /* From the anchor to the base (the outermost same-stream scope's start),
     * then from the base to each end: float milliseconds round the same way
     * for the same time, so a nested interval stays inside its parent
     * (anchor-to-start plus start-to-end rounds twice, and could pass the
     * parent's end), and the offsets from the base are short and precise. */
    float ms_base = 0, ms_start = 0, ms_end = 0;
    if (err == SCOPEPROF__G_OK) err = api->EventElapsedTime(&ms_base, p->anchor->ev, p->base);
    if (err == SCOPEPROF__G_OK && p->base != p->start)
        err = api->EventElapsedTime(&ms_start, p->base, p->start);
    if (err == SCOPEPROF__G_OK) err = api->EventElapsedTime(&ms_end, p->base, p->end);
    memset(&p->rec, 0, sizeof p->rec);
    p->rec.stream = p->stream;
    p->rec.site = p->site;
    p->rec.device = p->device;
    if (err == SCOPEPROF__G_OK) {
        int64_t b = (int64_t)((double)ms_base * 1e6);
        int64_t st = (int64_t)((double)(ms_start > 0 ? ms_start : 0) * 1e6);
        int64_t en = (int64_t)((double)ms_end * 1e6);
        p->anchor_tick = p->anchor->tick;
        p->rec.start_ns = (uint64_t)(b + st);
        p->rec.end_ns = (uint64_t)(b + (en > st ? en : st));
    } else {
        p->rec.status = 1;
        if (!scopeprof__gm.warned_elapsed) {
            scopeprof__gm.warned_elapsed = 1;
            scopeprof__warn("scopeprof: %s error %d timing a GPU scope (%s); that scope keeps its "
                            "CPU side only", SCOPEPROF__G_NAME, (int)err,
                            api->GetErrorString ? api->GetErrorString(err) : "");
        }
    }
    scopeprof__gpu_release(gt, p->device, p->start);
    scopeprof__gpu_release(gt, p->device, p->end);
    scopeprof__gpu_unref(p->anchor);
    p->resolved = 1;
    return 1;
}

/* Resolve, without waiting, what the GPU has finished. Streams run their own
 * work in order, so past the first unfinished scope of a stream the same
 * stream's later scopes are skipped, while other streams' are still
 * resolved. Lock: gt->lock. */
SCOPEPROF__INTERNAL void scopeprof__gpu_poll(scopeprof__gthread *gt, uint32_t upto) {
    uint64_t busy[8][2]; /* (stream, device) found unfinished */
    uint32_t nbusy = 0, i = gt->nresolved;
    int prefix = 1;
    if (upto > gt->n) upto = gt->n;
    if (i >= upto) return;
    scopeprof__gcapmode mode = scopeprof__gpu_relax();
    for (; i < upto; i++) {
        scopeprof__gpending *p = &gt->q[(gt->head + i) % gt->cap];
        int skip = 0;
        for (uint32_t k = 0; k < nbusy && !skip; k++) skip = busy[k][0] == p->stream && busy[k][1] == p->device;
        if (!skip && scopeprof__gpu_resolve(gt, p, 0)) {
            if (prefix) gt->nresolved = i + 1;
            continue;
        }
        prefix = 0;
        if (skip) continue;
        if (nbusy == 8) break; /* many busy streams: the rest waits for the next poll */
        busy[nbusy][0] = p->stream;
        busy[nbusy][1] = p->device;
        nbusy++;
    }
    scopeprof__gpu_unrelax(mode);
}

/* The writer's hook (g->lock held): the thread's next n GPU records. */
SCOPEPROF__INTERNAL uint32_t scopeprof__gpu_take(scopeprof__state *g, scopeprof__thread *t,
                                                 scopeprof_gpu_record *out, uint32_t n) {
    scopeprof__gthread *gt = (scopeprof__gthread *)t->gpu;
    uint32_t i = 0;
    if (!gt) return 0;
    pthread_mutex_lock(&gt->lock);
    int calls = n && gt->n && __atomic_load_n(&scopeprof__gm.status, __ATOMIC_ACQUIRE) != -2;
    scopeprof__gcapmode mode = calls ? scopeprof__gpu_relax() : SCOPEPROF__G_CAP_RELAXED;
    for (; i < n && gt->n; i++) {
        scopeprof__gpending *p = &gt->q[gt->head];
        scopeprof__gpu_resolve(gt, p, 1);
        out[i] = p->rec;
        out[i].launch_ns = scopeprof__to_ns(g, p->launch_tick);
        if (out[i].status == 0) {
            /* The anchor's tick goes through the same conversion as the CPU
             * scopes' ticks, so any error in it moves CPU and GPU alike. */
            uint64_t base = scopeprof__to_ns(g, p->anchor_tick);
            out[i].start_ns += base;
            out[i].end_ns += base;
        }
        gt->head = (gt->head + 1) % gt->cap;
        gt->n--;
        if (gt->nresolved) gt->nresolved--;
    }
    if (calls) scopeprof__gpu_unrelax(mode);
    pthread_mutex_unlock(&gt->lock);
    return i;
}

/* The writer's check (g->lock held): are the thread's next n GPU scopes
 * finished? Resolves those that are, never waits. */
SCOPEPROF__INTERNAL int scopeprof__gpu_ready(scopeprof__state *g, scopeprof__thread *t, uint32_t n) {
    scopeprof__gthread *gt = (scopeprof__gthread *)t->gpu;
    (void)g;
    if (!gt) return 1;
    pthread_mutex_lock(&gt->lock);
    scopeprof__gpu_poll(gt, n);
    int ready = gt->nresolved >= n || gt->nresolved >= gt->n;
    pthread_mutex_unlock(&gt->lock);
    return ready;
}

/* atexit, registered at the first GPU scope: wait for every pending scope
 * while the runtime still answers (in the ELF destructor that writes the
 * profile, nvcc's static CUDA runtime is already gone). Scopes queued before
 * GPU timing went off for an error are resolved too. GPU scopes opened after
 * this record their CPU side only, and the runtime is not called again. */
SCOPEPROF__INTERNAL void scopeprof__gpu_at_exit(void) {
    int status = __atomic_load_n(&scopeprof__gm.status, __ATOMIC_ACQUIRE);
    if (status == 1 || status == -1) scopeprof__gpu_resolve_all();
    __atomic_store_n(&scopeprof__gm.status, -2, __ATOMIC_RELEASE);
}

/* Wait for every thread's pending scopes (no registry lock held meanwhile). */
SCOPEPROF__INTERNAL void scopeprof__gpu_resolve_all(void) {
    scopeprof__state *g = scopeprof__g;
    if (!g || g->pid != (int)getpid()) return;
    scopeprof__lock(g);
    uint32_t n = 0;
    for (scopeprof__thread *t = scopeprof__threads_head(g); t; t = t->next) n += t->gpu != NULL;
    scopeprof__gthread **v = (scopeprof__gthread **)malloc((n ? n : 1) * sizeof *v);
    n = 0;
    for (scopeprof__thread *t = scopeprof__threads_head(g); t && v; t = t->next)
        if (t->gpu) v[n++] = (scopeprof__gthread *)t->gpu;
    scopeprof__unlock(g);
    if (!v) return;
    scopeprof__gcapmode mode = scopeprof__gpu_relax();
    for (uint32_t k = 0; k < n; k++) {
        scopeprof__gthread *gt = v[k];
        pthread_mutex_lock(&gt->lock);
        for (uint32_t i = 0; i < gt->n; i++) scopeprof__gpu_resolve(gt, &gt->q[(gt->head + i) % gt->cap], 1);
        gt->nresolved = gt->n;
        pthread_mutex_unlock(&gt->lock);
    }
    scopeprof__gpu_unrelax(mode);
    free(v);
}

/* Is `stream` being captured into a graph? 1: yes (or the runtime said a
 * call on it would break a capture), 0: no, -1: GPU timing went off. */
SCOPEPROF__INTERNAL int scopeprof__gpu_capturing(scopeprof__gstream stream) {
    scopeprof__gapi *api = &scopeprof__gm.api;
    if (!api->StreamIsCapturing) return 0;
    scopeprof__gcapstatus st = SCOPEPROF__G_CAP_NONE;
    scopeprof__gerr err = api->StreamIsCapturing(stream, &st);
    if (err == SCOPEPROF__G_OK) return st != SCOPEPROF__G_CAP_NONE;
    if (SCOPEPROF__G_CAP_ERR(err)) return 1; /* the legacy stream while a capture runs */
    scopeprof__gpu_off("StreamIsCapturing", err);
    return -1;
}

/* Out of line: the GPU half of a scope's open. Returns 1 if it is timed or
 * captured (gs->captured). */
SCOPEPROF__INTERNAL int scopeprof__gpu_open(scopeprof_gpu_scope *gs) {
    scopeprof__gmod *m = &scopeprof__gm;
    int status = __atomic_load_n(&m->status, __ATOMIC_ACQUIRE);
    if (status == 0 && !scopeprof__gpu_start()) return 0;
    if (__atomic_load_n(&m->status, __ATOMIC_ACQUIRE) != 1) return 0;
    scopeprof__gthread *gt = scopeprof__gpu_thread(scopeprof__tls);
    int dev = 0;
    scopeprof__gerr err;
    if (!gt) return 0;
    int capturing = scopeprof__gpu_capturing(gs->stream);
    if (capturing < 0) return 0;
    if (capturing) return gs->captured = 1;
    err = m->api.StreamGetDevice ? m->api.StreamGetDevice(gs->stream, &dev) : m->api.GetDevice(&dev);
    if (err != SCOPEPROF__G_OK) {
        scopeprof__gpu_off(m->api.StreamGetDevice ? "StreamGetDevice" : "GetDevice", err);
        return 0;
    }
    if (dev < 0) return 0;
    /* Inside a timed scope on the same stream: its base and anchor. */
    const scopeprof__gopen *outer = NULL;
    for (uint32_t i = gt->nopen; i-- > 0 && !outer;)
        if (gt->open[i].stream == (uint64_t)(uintptr_t)gs->stream && gt->open[i].device == dev)
            outer = &gt->open[i];
    if (gt->nopen == gt->open_cap) {
        uint32_t cap = gt->open_cap ? gt->open_cap * 2 : 8;
        scopeprof__gopen *v = (scopeprof__gopen *)realloc(gt->open, cap * sizeof *v);
        if (!v) return 0;
        outer = outer ? v + (outer - gt->open) : NULL;
        gt->open = v;
        gt->open_cap = cap;
    }
    scopeprof__ganchor *a = outer ? outer->anchor : scopeprof__gpu_anchor(dev);
    if (outer) __atomic_add_fetch(&a->refs, 1, __ATOMIC_ACQ_REL);
    scopeprof__gpu_publish_names();
    if (!a) return 0;
    if (!scopeprof__gpu_event(gt, dev, &gs->start)) {
        scopeprof__gpu_unref(a);
        return 0;
    }
    if ((err = m->api.EventRecord(gs->start, gs->stream)) != SCOPEPROF__G_OK) {
        pthread_mutex_lock(&gt->lock);
        scopeprof__gpu_release(gt, (uint32_t)dev, gs->start);
        pthread_mutex_unlock(&gt->lock);
        scopeprof__gpu_unref(a);
        scopeprof__gpu_off("EventRecord", err);
        return 0;
    }
    gs->anchor = a;
    gs->device = dev;
    gs->base = outer ? outer->base : gs->start;
    gs->slot = gt->nopen;
    scopeprof__gopen *o = &gt->open[gt->nopen++];
    o->stream = (uint64_t)(uintptr_t)gs->stream;
    o->device = dev;
    o->base = gs->base;
    o->anchor = a;
    return 1;
}

/* Out of line: the GPU half of a scope's close. Returns 1 if queued. */
SCOPEPROF__INTERNAL int scopeprof__gpu_close(scopeprof_gpu_scope *gs) {
    scopeprof__gmod *m = &scopeprof__gm;
    scopeprof__gthread *gt = (scopeprof__gthread *)scopeprof__tls->gpu;
    scopeprof__gevent end;
    scopeprof__gerr err = SCOPEPROF__G_OK;
    uint32_t dev = (uint32_t)gs->device;
    int ok = __atomic_load_n(&m->status, __ATOMIC_ACQUIRE) == 1;
    int captured = gs->captured;
    if (!gs->captured) gt->nopen = gs->slot; /* closes are LIFO: it and any inner are gone */
    if (ok && !captured) {
        /* A capture begun inside the scope: the end would be a graph node. */
        int capturing = scopeprof__gpu_capturing(gs->stream);
        if (capturing < 0) ok = 0;
        else if (capturing) captured = 1;
    }
    int timed = ok && !captured;
    if (timed && !scopeprof__gpu_event(gt, (int)dev, &end)) ok = timed = 0;
    if (timed && (err = m->api.EventRecord(end, gs->stream)) != SCOPEPROF__G_OK) {
        pthread_mutex_lock(&gt->lock);
        scopeprof__gpu_release(gt, dev, end);
        pthread_mutex_unlock(&gt->lock);
        scopeprof__gpu_off("EventRecord", err);
        ok = timed = 0;
    }
    pthread_mutex_lock(&gt->lock);
    if (ok && gt->n == gt->cap) {
        uint32_t cap = gt->cap ? gt->cap * 2 : 256;
        scopeprof__gpending *q = (scopeprof__gpending *)malloc(cap * sizeof *q);
        if (q) {
            for (uint32_t i = 0; i < gt->n; i++) q[i] = gt->q[(gt->head + i) % gt->cap];
            free(gt->q);
            gt->q = q;
            gt->cap = cap;
            gt->head = 0;
        } else {
            if (timed) scopeprof__gpu_release(gt, dev, end);
            ok = timed = 0;
        }
    }
    if (!timed && !gs->captured) { /* the start event and anchor go back */
        /* Unless a capture began inside: a scope nested in this one may use
         * its start as a base, so it is left out of the pool (one event). */
        if (!captured) scopeprof__gpu_release(gt, dev, gs->start);
        pthread_mutex_unlock(&gt->lock);
        scopeprof__gpu_unref(gs->anchor);
        pthread_mutex_lock(&gt->lock);
    }
    if (!ok) {
        pthread_mutex_unlock(&gt->lock);
        return 0;
    }
    scopeprof__gpending *p = &gt->q[(gt->head + gt->n++) % gt->cap];
    memset(p, 0, sizeof *p);
    p->launch_tick = gs->cpu.start;
    p->stream = (uint64_t)(uintptr_t)gs->stream;
    p->site = gs->cpu.site;
    p->device = dev;
    if (timed) {
        p->start = gs->start;
        p->base = gs->base;
        p->end = end;
        p->anchor = gs->anchor;
    } else { /* captured: resolved already, with no GPU time */
        p->rec.stream = p->stream;
        p->rec.site = p->site;
        p->rec.device = dev;
        p->rec.status = SCOPEPROF__G_CAPTURED;
        p->resolved = 1;
    }
    /* Every 64 closes, resolve what the GPU has finished, without waiting,
     * so that events return to the pool. */
    if (++gt->closes % 64 == 0) scopeprof__gpu_poll(gt, gt->n);
    pthread_mutex_unlock(&gt->lock);
    return 1;
}

#ifdef __cplusplus
}
#endif
#endif /* GPU backend */
/* ==== part: include/parts/wrap.h ==== */
/* wrap.h: the opt-in allocation wrappers. Last of all (after the
 * implementation, whose own allocations must not be wrapped): from here on,
 * malloc and friends in the including file are recorded. */
/* #define SCOPEPROF_WRAP_MALLOC before including the header (enabled build)
 * and malloc/calloc/realloc/free calls in that file are recorded as
 * PROFILE_ALLOC/PROFILE_FREE; SCOPEPROF_WRAP_GPU_MALLOC does the same for
 * hipMalloc/hipFree or cudaMalloc/cudaFree. Include this header after other
 * headers that declare these functions (it includes <stdlib.h> itself). */
#if SCOPEPROF__ON && !defined(SCOPEPROF__WRAPPED)
/* A call fn(args..., &site) through a wrapper, with a call site of its own.
 * The site's name is unique (__COUNTER__): wrapped calls nest, as in
 * free(realloc(malloc(1), 2)), and a shared name would be -Wshadow. */
#define SCOPEPROF__WRAPPED(nm, fn, ...) SCOPEPROF__WRAPPED_ID(__COUNTER__, nm, fn, __VA_ARGS__)
#define SCOPEPROF__WRAPPED_ID(id, nm, fn, ...)                                      \
    __extension__({                                                                 \
        SCOPEPROF__SITE(SCOPEPROF__V(scopeprof__site_w, id), nm);                   \
        fn(__VA_ARGS__, &SCOPEPROF__V(scopeprof__site_w, id));                      \
    })
#endif

#if SCOPEPROF__ON && defined(SCOPEPROF_WRAP_MALLOC) && !defined(SCOPEPROF__WRAP_DONE)
#define SCOPEPROF__WRAP_DONE
#include <stdlib.h> /* opt-in: malloc must be declared before it is wrapped */
static inline void *scopeprof__malloc(size_t n, scopeprof_site *s) {
    void *p = malloc(n);
    scopeprof__mem_alloc(s, (scopeprof__uptr)p, n, 0);
    return p;
}
static inline void *scopeprof__calloc(size_t k, size_t n, scopeprof_site *s) {
    void *p = calloc(k, n);
    scopeprof__mem_alloc(s, (scopeprof__uptr)p, (scopeprof__u64)k * n, 0);
    return p;
}
static inline void *scopeprof__realloc(void *old, size_t n, scopeprof_site *s) {
    scopeprof__uptr old_addr = (scopeprof__uptr)old; /* taken before: old is dead after realloc */
    void *p = realloc(old, n);
    if (p || n == 0) scopeprof__mem_free(s, old_addr, 0); /* the old block is gone */
    scopeprof__mem_alloc(s, (scopeprof__uptr)p, n, 0);
    return p;
}
static inline void scopeprof__free(void *p, scopeprof_site *s) {
    scopeprof__mem_free(s, (scopeprof__uptr)p, 0);
    free(p);
}
#define malloc(n) SCOPEPROF__WRAPPED("malloc", scopeprof__malloc, (n))
#define calloc(k, n) SCOPEPROF__WRAPPED("calloc", scopeprof__calloc, (k), (n))
#define realloc(p, n) SCOPEPROF__WRAPPED("realloc", scopeprof__realloc, (p), (n))
#define free(p) SCOPEPROF__WRAPPED("free", scopeprof__free, (p))
#endif

#if SCOPEPROF__ON && defined(SCOPEPROF_WRAP_GPU_MALLOC) && defined(SCOPEPROF__GPU_DONE) && \
    !defined(SCOPEPROF__GWRAP_DONE)
#define SCOPEPROF__GWRAP_DONE
static inline scopeprof__gerr scopeprof__gpu_malloc(void **pp, scopeprof__size n, scopeprof_site *s) {
    scopeprof__gerr err = SCOPEPROF__G(Malloc)(pp, n);
    int dev = 0;
    if (err == SCOPEPROF__G_OK && SCOPEPROF__G(GetDevice)(&dev) == SCOPEPROF__G_OK)
        scopeprof__mem_alloc(s, (scopeprof__uptr)*pp, n, dev + 1);
    return err;
}
static inline scopeprof__gerr scopeprof__gpu_free(void *p, scopeprof_site *s) {
    int dev = 0;
    if (p && SCOPEPROF__G(GetDevice)(&dev) == SCOPEPROF__G_OK) scopeprof__mem_free(s, (scopeprof__uptr)p, dev + 1);
    return SCOPEPROF__G(Free)(p);
}
#if defined(PROFILE_HIP)
#define hipMalloc(pp, n) SCOPEPROF__WRAPPED("hipMalloc", scopeprof__gpu_malloc, (void **)(pp), (n))
#define hipFree(p) SCOPEPROF__WRAPPED("hipFree", scopeprof__gpu_free, (p))
#else
#define cudaMalloc(pp, n) SCOPEPROF__WRAPPED("cudaMalloc", scopeprof__gpu_malloc, (void **)(pp), (n))
#define cudaFree(p) SCOPEPROF__WRAPPED("cudaFree", scopeprof__gpu_free, (p))
#endif
#endif
/* ==== part: include/parts/end.h ==== */
/* end.h: the last part. This inclusion's implementation is done; the
 * warnings the header silenced for its own lines are back. */
#undef SCOPEPROF__IMPL
#pragma GCC diagnostic pop /* pushed in api.h */
