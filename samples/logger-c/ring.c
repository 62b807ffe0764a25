#include "ring.h"

#include <string.h>

bool ring_full(const struct ring *ring) { return ring->len == RING_SLOTS; }

bool ring_empty(const struct ring *ring) { return ring->len == 0; }

char *ring_reserve(struct ring *ring) {
    char *slot = ring->records[(ring->head + ring->len) % RING_SLOTS];
    ring->len++;
    return slot;
}

void ring_take(struct ring *ring, char out[RECORD_LEN]) {
    memcpy(out, ring->records[ring->head], RECORD_LEN);
    ring->head = (ring->head + 1) % RING_SLOTS;
    ring->len--;
}
