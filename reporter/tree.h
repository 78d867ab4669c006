/* tree.h -- per-thread buffering of whole top-level subtrees.
 *
 * Events arrive in the order their thread closed them: children before their
 * parent. Whoever needs the ancestors of an event (stack grouping, folded
 * stacks) or the events in start order (the trace JSON) must wait for the
 * parent: a thread's events are buffered until a scope at depth 0 closes,
 * and the finished subtree is handed over at once, with each event's parent.
 * Memory is therefore proportional to the largest top-level subtree, not to
 * the file. A thread whose outermost scope never closed (still open when the
 * file was written) is handed over at the end; a subtree larger than `limit`
 * events (a quarter of the machine's memory) is handed over early, its
 * events then lack the ancestors that had not closed yet (counted in `cut`,
 * for the caller to say). */
#ifndef SP_TREE_H
#define SP_TREE_H

#include "read.h"

#define SP_NO_PARENT UINT32_MAX

/* ev: n events of one thread in close order; parent[i]: index in ev of the
 * scope that directly encloses ev[i] (a scope, or for SP_MEM records the
 * scope they were made in), or SP_NO_PARENT. */
typedef int (*sp_tree_fn)(void *ctx, uint32_t thread, const sp_event *ev, const uint32_t *parent,
                          uint32_t n);

typedef struct sp_tree_thread {
    sp_event *ev;
    uint32_t n, cap;
} sp_tree_thread;

typedef struct sp_tree {
    sp_tree_fn fn;
    void *ctx;
    uint32_t limit; /* events buffered per thread before an early hand-over */
    uint64_t cut;   /* events handed over early: without the ancestors not closed yet */
    sp_tree_thread *t;
    uint32_t nt;
    uint32_t held;          /* threads holding a buffer */
    uint32_t *parent, *anc; /* scratch */
    uint32_t parent_cap, anc_cap;
} sp_tree;

void sp_tree_init(sp_tree *tr, sp_tree_fn fn, void *ctx);
/* Add events of thread `thread` (a caller-chosen small integer). Returns the
 * callback's non-zero result, or -1 when out of memory, else 0. */
int sp_tree_add(sp_tree *tr, uint32_t thread, const sp_event *ev, uint32_t n);
/* Inside the callback: n words the callback may use as it likes (the tree's
 * own scratch, free while the callback runs), so that a per-event word costs
 * no memory beyond the two the limit counts. */
static inline uint32_t *sp_tree_scratch(sp_tree *tr) { return tr->anc; }
/* Room for n words in *v (*cap of them), grown by doubling: 0, or -1 when
 * out of memory (*v unchanged). The tree's arrays', and its users'. */
int sp_grow_u32(uint32_t **v, uint32_t *cap, uint32_t n);
/* Hand over everything still buffered (at the end of a file). */
int sp_tree_flush_all(sp_tree *tr);
void sp_tree_free(sp_tree *tr);

#endif
