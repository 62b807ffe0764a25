/* A fixed ring of formatted records, guarded by its owner's lock. */
#ifndef RING_H
#define RING_H

#include <stdbool.h>
#include <stddef.h>

#define RING_SLOTS 4
#define RECORD_LEN 64

struct ring {
    char records[RING_SLOTS][RECORD_LEN];
    size_t head, len;
};

bool ring_full(const struct ring *ring);
bool ring_empty(const struct ring *ring);
/* The slot the next record goes to (the ring must not be full). */
char *ring_reserve(struct ring *ring);
/* Copies the oldest record to `out` and drops it (the ring must not be
 * empty). */
void ring_take(struct ring *ring, char out[RECORD_LEN]);

#endif
