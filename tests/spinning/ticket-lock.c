/* A ticket lock: a thread draws the next ticket and waits until it is
 * served; leaving serves the next. Broken: the ticket is drawn with a
 * load and a store instead of one fetch-and-add, so two threads may draw
 * the same ticket and enter together. */
#include "shared.h"
#include <stdatomic.h>

static atomic_int next_ticket, now_serving;

static void *worker(void *arg) {
    (void)arg;
#ifdef BROKEN
    int mine = atomic_load(&next_ticket);
    atomic_store(&next_ticket, mine + 1);
#else
    int mine = atomic_fetch_add(&next_ticket, 1);
#endif
    while (atomic_load(&now_serving) != mine) {
    }
    critical_section();
    atomic_store(&now_serving, mine + 1);
    return 0;
}
