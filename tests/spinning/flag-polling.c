/* A reader polling a flag: thread 0 writes a message and raises a flag;
 * the other threads poll the flag and then read the message. Broken: the
 * flag is raised before the message is written. (No critical section:
 * each thread counts itself in under the flag's protocol instead.) */
#include "shared.h"

static shared_int ready;
static shared_int message;
static shared_int readers_done;

static void *worker(void *arg) {
    int me = (int)(long)arg;
    if (me == 0) {
#ifdef BROKEN
        STORE(ready, 1);
        STORE(message, 42);
#else
        STORE(message, 42);
        STORE(ready, 1);
#endif
        while (LOAD(readers_done) != N - 1) {
        }
        critical_section();
        return 0;
    }
    while (!LOAD(ready)) {
    }
    assert(LOAD(message) == 42);
    /* Readers take turns by id to count themselves done. */
    while (LOAD(readers_done) != me - 1) {
    }
    critical_section();
    STORE(readers_done, me);
    return 0;
}
