/* A fixed-size pool of worker threads running submitted tasks in order of
 * submission. */
#ifndef POOL_H
#define POOL_H

#include <stddef.h>

typedef void (*task_fn)(void *arg);

struct pool;

/* Starts `workers` threads; NULL when a thread or memory is missing. */
struct pool *pool_create(size_t workers);

/* Queues `fn(arg)`; returns 0, or -1 once the pool is shutting down. */
int pool_submit(struct pool *pool, task_fn fn, void *arg);

/* Returns when every task submitted so far has finished. */
void pool_wait(struct pool *pool);

/* Lets the workers finish the queued tasks, joins them and frees the pool. */
void pool_destroy(struct pool *pool);

#endif
