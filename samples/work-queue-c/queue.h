/* A bounded blocking queue of ints for several producers and consumers,
 * closed by the producers' side when the work is all queued. */
#ifndef QUEUE_H
#define QUEUE_H

#include <stdbool.h>
#include <stddef.h>

struct queue;

struct queue *queue_new(size_t capacity);
void queue_free(struct queue *q);

/* Blocks while the queue is full; false once it is closed. */
bool queue_push(struct queue *q, int item);

/* Blocks while the queue is empty and open; false once it is closed and
 * empty. */
bool queue_pop(struct queue *q, int *item);

/* No more pushes: wakes every blocked consumer. */
void queue_close(struct queue *q);

#endif
