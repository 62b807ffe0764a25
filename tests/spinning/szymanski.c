/* Szymański's algorithm for N threads: a waiting room with a door. A
 * thread announces itself (1), waits for the door to open (no flag at 3
 * or above), stands in the doorway (3); if another thread is waiting (1)
 * it waits (2) until one has closed the door behind it (4); then it
 * closes the door (4), waits for the threads of lower id to leave, and
 * enters. On the way out it waits for the threads of higher id in the
 * waiting room to pass the door. Broken: a thread that closed the door
 * does not wait for those of lower id, which may be inside. */
#include "shared.h"

static shared_int flag[N];

static int any_flag_at_least(int at_least) {
    for (int j = 0; j < N; j++)
        if (LOAD(flag[j]) >= at_least)
            return 1;
    return 0;
}

static int any_flag_is(int me, int value) {
    for (int j = 0; j < N; j++)
        if (j != me && LOAD(flag[j]) == value)
            return 1;
    return 0;
}

/* Whether thread j stands in the waiting room or the doorway (its flag
 * read once: read twice, it may pass from 3 to 2 between the reads and be
 * missed). */
static int waiting_to_pass_the_door(int j) {
    int f = LOAD(flag[j]);
    return f == 2 || f == 3;
}

static void *worker(void *arg) {
    int me = (int)(long)arg;
    STORE(flag[me], 1);
    while (any_flag_at_least(3)) {
    }
    STORE(flag[me], 3);
    if (any_flag_is(me, 1)) {
        STORE(flag[me], 2);
        while (!any_flag_is(me, 4)) {
        }
    }
    STORE(flag[me], 4);
#ifndef BROKEN
    for (int j = 0; j < me; j++)
        while (LOAD(flag[j]) >= 2) {
        }
#endif
    critical_section();
    for (int j = me + 1; j < N; j++)
        while (waiting_to_pass_the_door(j)) {
        }
    STORE(flag[me], 0);
    return 0;
}
