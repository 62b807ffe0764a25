/* Peterson's algorithm, generalised to N threads as the filter lock: a
 * thread climbs N - 1 levels, and at each waits while it is the level's
 * victim and another thread stands at that level or above. For two
 * threads it is Peterson's two-process algorithm. Broken: the victim is
 * named before the level is taken, so a thread may read the other's old
 * level after the other named itself victim and both pass. */
#include "shared.h"

static shared_int level[N];
static shared_int victim[N];

static int another_at_or_above(int me, int l) {
    for (int k = 0; k < N; k++)
        if (k != me && LOAD(level[k]) >= l)
            return 1;
    return 0;
}

static void *worker(void *arg) {
    int me = (int)(long)arg;
    for (int l = 1; l < N; l++) {
#ifdef BROKEN
        STORE(victim[l], me);
        STORE(level[me], l);
#else
        STORE(level[me], l);
        STORE(victim[l], me);
#endif
        while (LOAD(victim[l]) == me && another_at_or_above(me, l)) {
        }
    }
    critical_section();
    STORE(level[me], 0);
    return 0;
}
