/* A test-and-set spin lock: a thread swaps 1 into the lock word until it
 * swapped out a 0. Broken: the lock is tested and then set in two steps,
 * so two threads may both see it free. */
#include "shared.h"
#include <stdatomic.h>

static atomic_int locked;

static void *worker(void *arg) {
    (void)arg;
#ifdef BROKEN
    while (atomic_load(&locked)) {
    }
    atomic_store(&locked, 1);
#else
    while (atomic_exchange(&locked, 1)) {
    }
#endif
    critical_section();
    atomic_store(&locked, 0);
    return 0;
}
