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
