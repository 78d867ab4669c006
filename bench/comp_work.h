/* comp_work.h -- the two builds of bench/comp_work.c, as the driver
 * bench/compensation.c calls them. */
#ifndef COMP_WORK_H
#define COMP_WORK_H
#include <stdint.h>

#define COMP_CAT2(a, b) a##_##b
#define COMP_CAT(a, b) COMP_CAT2(a, b)
#ifdef COMP_VARIANT
#define COMP(name) COMP_CAT(COMP_VARIANT, name)
#endif

enum { COMP_ISSUE_CALLS = 1000000, COMP_NESTED_MIDS = 20000 };
/* Iterations of work per call (volatile: the compiler cannot fold them). */
extern volatile int comp_iters_child, comp_iters_parent, comp_iters_mid, comp_iters_leaf,
    comp_iters_tiny;

#define COMP_DECLARE(v)                                                                    \
    void v##_child(void);                                                                 \
    void v##_parent(void);                                                                \
    void v##_tiny(void);                                                                  \
    void v##_leaf(void);                                                                  \
    void v##_mid(void);                                                                   \
    void v##_top(void);
COMP_DECLARE(plain)
COMP_DECLARE(prof)
#endif
