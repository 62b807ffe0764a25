/* Sums 1..N in chunks on a pool of two workers, twice: once waiting for the
 * pool to go idle, once letting pool_destroy drain the queue. */
#include "pool.h"

#include <assert.h>
#include <stdio.h>

#define CHUNKS 4
#define PER_CHUNK 25

struct chunk {
    int first, count;
    long sum;
};

static void sum_chunk(void *arg) {
    struct chunk *chunk = arg;
    long sum = 0;
    for (int i = 0; i < chunk->count; i++)
        sum += chunk->first + i;
    chunk->sum = sum;
}

static long run(int drain_by_destroy) {
    struct chunk chunks[CHUNKS];
    struct pool *pool = pool_create(2);
    assert(pool != NULL);
    for (int c = 0; c < CHUNKS; c++) {
        chunks[c] = (struct chunk){.first = 1 + c * PER_CHUNK, .count = PER_CHUNK};
        int submitted = pool_submit(pool, sum_chunk, &chunks[c]);
        assert(submitted == 0);
    }
    if (!drain_by_destroy)
        pool_wait(pool);
    pool_destroy(pool);
    long total = 0;
    for (int c = 0; c < CHUNKS; c++)
        total += chunks[c].sum;
    return total;
}

int main(void) {
    const long n = CHUNKS * PER_CHUNK, expected = n * (n + 1) / 2;
    long waited = run(0), drained = run(1);
    printf("sum of 1..%ld: %ld (waited), %ld (drained)\n", n, waited, drained);
    assert(waited == expected && drained == expected);
    return 0;
}
